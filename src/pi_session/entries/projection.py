"""What the context builders return (:class:`SessionContext`,
:class:`SessionProjection`), in terms of the entry and message shapes."""

from __future__ import annotations

from typing import TypedDict

from .message import AgentMessage
from .registry import SessionEntry

__all__ = ["ModelRef", "ProjectionEntry", "SessionContext", "SessionProjection"]


class ModelRef(TypedDict):
    provider: str
    modelId: str


class SessionContext(TypedDict):
    """What :func:`pi_session.build_session_context` returns."""

    messages: list[AgentMessage]
    thinkingLevel: str
    model: ModelRef | None


class ProjectionEntry(TypedDict):
    """One context entry of a projection and the messages it contributes
    after context edits (``[]`` for state-only entries and omissions)."""

    sourceEntry: SessionEntry
    messages: list[AgentMessage]


class SessionProjection(TypedDict):
    """What :func:`pi_session.build_session_projection` returns (pi 1.6's
    ``buildSessionProjection``); ``messages`` is the concatenation of the
    entries' messages."""

    entries: list[ProjectionEntry]
    messages: list[AgentMessage]
    thinkingLevel: str
    model: ModelRef | None
