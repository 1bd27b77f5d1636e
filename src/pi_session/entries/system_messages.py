"""System messages (pi 1.6): the prompt state a message list replays to
(pi-ai's ``getCurrentSystemMessage``: :func:`get_current_system_message`)
and its text (:func:`system_message_text`). Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .agent_messages import text_content

__all__ = ["get_current_system_message", "system_message_text"]

def get_current_system_message(messages: Iterable[Any]) -> dict[str, Any] | None:
    """The prompt state a message list replays to (pi-ai's
    ``getCurrentSystemMessage``, pi 1.6), or None without system messages.

    Walks every ``system`` message in order: non-empty content texts (a
    string, or text blocks joined by ``"\n"``) are joined by a blank line;
    ``sections`` patches one ordered map (a replaced name keeps its place, a
    None value removes the name, a name added after a removal goes to the
    end); ``toolsRemoved`` then ``toolsAdded`` change the tool set by name.

    Returns:
        ``{"role": "system", "content", "sections"?, "toolsAdded"?,
        "timestamp"?}``: sections only if any remain, ``toolsAdded`` the
        current tools only if any, ``timestamp`` the first one found.
    """
    seen = False
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for msg in messages:
        if not isinstance(msg, dict) or msg.get("role") != "system":
            continue
        seen = True
        text = _system_content_text(msg.get("content"))
        if text:
            texts.append(text)
        patch = msg.get("sections")
        if isinstance(patch, dict):
            for name, value in patch.items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        removed = msg.get("toolsRemoved")
        for tool in removed if isinstance(removed, list) else ():
            if isinstance(tool, dict) and tool.get("name").__hash__ is not None:
                tools.pop(tool.get("name"), None)
        added = msg.get("toolsAdded")
        for tool in added if isinstance(added, list) else ():
            if isinstance(tool, dict) and tool.get("name").__hash__ is not None:
                tools[tool.get("name")] = tool
        if timestamp is None:
            timestamp = msg.get("timestamp")
    if not seen:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    if timestamp is not None:
        out["timestamp"] = timestamp
    return out


def _system_content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return text_content(content, "\n")


def system_message_text(message: Mapping[str, Any]) -> str:
    """The prompt text of a (replayed) system message: its content, then
    every non-null section value, non-empty parts joined by a blank line
    (pi 1.6's rendering of a prompt state)."""
    parts = [_system_content_text(message.get("content"))]
    sections = message.get("sections")
    if isinstance(sections, dict):
        parts.extend(v for v in sections.values() if isinstance(v, str))
    return "\n\n".join(p for p in parts if p)
