"""pi sessions for the OpenAI Agents SDK (``pip install 'pi-session[agents]'``;
**beyond pi**).

:class:`PiSession` follows the SDK's session protocol (``get_items``,
``add_items``, ``pop_item``, ``clear_session``) over a pi session tree:
the file opens in pi, compaction follows pi's trigger and summary format,
and history is never deleted (popping and clearing move the leaf).

Example::

    from agents import Agent, Runner
    from pi_session.integrations.openai_agents import PiSession

    session = PiSession("support-42", context_window=128_000)
    result = await session.run(agent, "Where is my order?")  # Runner.run + one retry on overflow

Modules: :mod:`.convert` (items ⇄ pi messages), :mod:`.overlay` (what
the pi form cannot hold), :mod:`.render` (the context as the items
that were added), :mod:`.session` (the session class, compaction, branching).
"""

from __future__ import annotations

from .convert import ITEM_CUSTOM_TYPE, ITEM_KEY, MARK_CUSTOM_TYPE, InvalidItemError
from .render import RenderedItem, render_items
from .session import (
    CompactionEvent,
    CompactionListener,
    PiSession,
    is_context_overflow_error,
    pi_session_id_for,
)

__all__ = [
    "PiSession",
    "InvalidItemError",
    "CompactionEvent",
    "CompactionListener",
    "is_context_overflow_error",
    "pi_session_id_for",
    "render_items",
    "RenderedItem",
    "ITEM_KEY",
    "ITEM_CUSTOM_TYPE",
    "MARK_CUSTOM_TYPE",
]
