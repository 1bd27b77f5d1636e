"""Provider request adapters that always produce a valid request (**beyond pi**).

A session context (``build_session_context(...)["messages"]``) is a list of
agent messages. Turning it into a provider request can fail in ways pi's own
files make easy to hit: an assistant message that was aborted or errored
leaves tool calls without results, a compaction can keep a tool result whose
call was summarized away, a user message can land between a call and its
result, a file edited by hand can repeat a result. The adapters here fix the
tool-call pairing, report every repair, and render the request pieces for
three APIs:

* :func:`to_openai_chat` → OpenAI Chat Completions ``messages``;
* :func:`to_openai_responses` → OpenAI Responses ``input`` items (+ ``instructions``);
* :func:`to_anthropic_messages` → Anthropic Messages ``messages`` (+ ``system``).

Each returns an :class:`AdapterResult`; ``result.payload()`` is the dict to
spread into the SDK call (``client.chat.completions.create(model=...,
**result.payload())``). The matching validators
(:func:`validate_openai_chat`, :func:`validate_openai_responses`,
:func:`validate_anthropic_messages`) list the rules a payload breaks; an
adapter's output always validates clean.

Pairing rules applied for every provider (all repairs are reported as
:class:`Repair`, ``message_index`` pointing into the ``messages`` argument):

* ``orphan_result_dropped``: a toolResult whose call id was not made by an
  earlier assistant message in the context (including one that only appears
  *after* the result) is dropped.
* ``duplicate_result_dropped``: a second result for an already answered call
  is dropped (the first one wins).
* ``result_moved``: a result separated from its call by a user turn (or a
  later assistant turn) is moved back to directly after its call.
* ``missing_result_inserted``: a call that never gets a result (typical for
  aborted/errored assistant messages and interrupted tool runs) is answered
  with an error result saying no result was recorded.
* ``duplicate_call_id_renamed`` / ``missing_call_id_assigned``: calls sharing
  an id, or without one, get a fresh unique id (results pair with the first
  unanswered call of that id).

Other normalizations: thinking blocks are dropped by default (Anthropic only
accepts them with the provider's signature, OpenAI Chat has no place for
them, Responses needs encrypted reasoning items); ``thinking="text"`` turns
non-empty ones into plain text instead. Empty and whitespace-only text
blocks are dropped; an assistant message left with neither text nor tool
calls is dropped (``empty_assistant_dropped``), an empty user message too
(``empty_user_dropped``). Images with a type the APIs do not accept (only
PNG, JPEG, GIF and WebP are) or without data become a short text note
(``image_replaced``). Tool-call arguments that are not a JSON object
(``arguments_coerced``) are parsed when they are a JSON object's text,
else become ``{}`` (null, "") or ``{"value": original}``. Tool-call ids are made provider-safe
(``[A-Za-z0-9_-]``, at most 40 characters for Chat, 64 otherwise; the part
after ``|`` of an OpenAI Responses ``call|item`` id is dropped) and kept
unique; this is not reported. An empty tool result gets the text
``(no output)``.

Text is always valid Unicode (**beyond pi**): a lone UTF-16 surrogate (half
of a character, e.g. an emoji a tool cut in two, stored in the file as a
JSON escape like ``\ud83d``) cannot be encoded as UTF-8, and the official
SDKs raise ``UnicodeEncodeError`` before sending it. Every string of the
request (texts, tool names, ids, tool-call arguments, also arguments parsed
from JSON text, the system prompt) is made well formed with
:func:`pi_session.core.text.well_formed`: a lone surrogate becomes U+FFFD, a
surrogate pair its character (``lone_surrogates_replaced``, per message;
``message_index`` None for the system prompt). The session is not changed.
Every payload an adapter returns encodes as UTF-8; the validators report
lone surrogates.

These are pure functions: no I/O, inputs are never mutated.
Modules: :mod:`.canonical` (result types, the canonical turn/call/result
form, lone surrogates, system prompt replay), :mod:`.pairing` (pairing
checks and the result of a call), one renderer per provider
(:mod:`.openai_chat`, :mod:`.openai_responses`, :mod:`.anthropic`) and
:mod:`.validate` (the three validators over shared checks).
"""

from __future__ import annotations

from .anthropic import to_anthropic_messages
from .canonical import SUPPORTED_IMAGE_TYPES, AdapterResult, Repair
from .openai_chat import to_openai_chat
from .openai_responses import to_openai_responses
from .pairing import MISSING_RESULT_TEXT, orphan_tool_results, unanswered_tool_calls
from .validate import validate_anthropic_messages, validate_openai_chat, validate_openai_responses

__all__ = [
    "Repair",
    "AdapterResult",
    "to_openai_chat",
    "to_openai_responses",
    "to_anthropic_messages",
    "validate_openai_chat",
    "validate_openai_responses",
    "validate_anthropic_messages",
    "unanswered_tool_calls",
    "orphan_tool_results",
    "SUPPORTED_IMAGE_TYPES",
    "MISSING_RESULT_TEXT",
]
