"""End to end with a real (tiny) model: OpenAISummarizer against
llama-cpp-python's server running SmolLM2-135M-Instruct, offline."""

from __future__ import annotations

import asyncio

import pytest
from llama_server import llama_server  # noqa: F401  (fixture)

from pi_session.llm import OpenAISummarizer, SummarizerError, SummaryRequest

pytestmark = pytest.mark.slow

SYSTEM = "You summarize conversations between a user and a coding assistant. Output only the summary."
PROMPT = (
    "<conversation>\n[User]: Please rename the function parse_args to read_options in cli.py.\n"
    "[Assistant]: Done, I renamed it and updated the two call sites.\n</conversation>\n\n"
    "Write a short summary with a '## Goal' section."
)


def test_openai_summarizer_against_llama_cpp(llama_server):
    s = OpenAISummarizer(base_url=llama_server, timeout=120, max_retries=1)
    assert s.token_param == "max_tokens"  # a compatible server gets max_tokens
    try:
        text = asyncio.run(s.summarize(SummaryRequest("history", SYSTEM, PROMPT, max_tokens=48)))
    except SummarizerError as exc:
        # a reply cut at the budget is refused, never returned half-written (pi 1.6)
        assert exc.kind == "length", str(exc)
        assert s.model
        return
    assert isinstance(text, str) and text.strip()
    assert s.model  # taken from the server's model list
    # the budget is honoured: 48 tokens are far fewer than 48*8 characters
    assert len(text) < 48 * 8


def test_context_overflow_from_real_server(llama_server):
    s = OpenAISummarizer(base_url=llama_server, timeout=120, max_retries=0)
    huge = "[User]: " + "lorem ipsum dolor sit amet " * 2000  # far beyond n_ctx=2048
    with pytest.raises(SummarizerError) as ei:
        asyncio.run(s.summarize(SummaryRequest("history", SYSTEM, huge, max_tokens=16)))
    assert ei.value.kind == "context_overflow", str(ei.value)
    assert "\n" not in str(ei.value)
