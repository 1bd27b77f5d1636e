"""Summarizers: the models that write compaction and branch summaries."""

from .base import Summarizer, SummarizerError, SummaryRequest

__all__ = ["Summarizer", "SummarizerError", "SummaryRequest"]
