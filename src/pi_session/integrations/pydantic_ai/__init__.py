"""Pydantic AI conversations kept as pi sessions (``pip install
'pi-session[pydantic-ai]'``; **beyond pi**).

:class:`PiConversationStore` is a Pydantic AI ``ConversationStore`` over
any pi-session store (session files, SQLite, PostgreSQL): each
conversation is a pi session that pi opens with the context the
conversation holds, and that ``pi-session`` lists, shows, searches and
compacts.

Example::

    from pydantic_ai import Agent
    from pydantic_ai.conversation import Conversation
    from pi_session.integrations.pydantic_ai import PiConversationStore

    store = PiConversationStore("sqlite:///chats.db")
    conversation = await store.load("chat-42") or Conversation(conversation_id="chat-42")
    result = await agent.run("Hello", conversation=conversation)
    await store.save(result)

:class:`PiCompaction` is pi-session's compaction as a Pydantic AI
capability; saved in the store, its summaries are pi compaction entries.

Modules: :mod:`.convert` (messages as pi messages, their JSON),
:mod:`.layout` (the lines of a conversation's session), :mod:`.store`
(the store), :mod:`.compaction` (the capability).
"""

from __future__ import annotations

from .compaction import PiCompaction
from .convert import UnstorableValueError
from .layout import MESSAGE_KEY, MESSAGE_TYPE, RECORD_TYPE, ConversationDataError, MissingEntryError, pi_session_id_for
from .store import PiConversationStore

__all__ = [
    "PiConversationStore",
    "PiCompaction",
    "ConversationDataError",
    "MissingEntryError",
    "UnstorableValueError",
    "pi_session_id_for",
    "MESSAGE_KEY",
    "MESSAGE_TYPE",
    "RECORD_TYPE",
]
