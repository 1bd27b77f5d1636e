"""Statistics of a session: what ``pi-session info`` shows, for library users
(:meth:`pi_session.SessionManager.stats`), and the token and cost sums the
HTML viewer's header shows too (:class:`UsageTotals`, :func:`entry_usage`:
one rule for both)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.text import field_text
from ..entries.questions import ASSISTANT, BRANCH_SUMMARY, COMPACTION, MESSAGE, TOOL_RESULT, USAGE, USER, is_assistant, is_tool_result

__all__ = ["SessionStats", "count_entry_types", "UsageTotals", "entry_usage", "MessageStats", "message_stats"]


def count_entry_types(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Count entries by type, messages by role.

    Args:
        entries: session entries (header excluded).

    Returns:
        ``{key: count}`` in first-seen order, where key is the entry's
        ``type`` (``"?"`` when missing), or ``"message:<role>"`` for a message
        entry whose ``message`` is an object (``"message:None"`` without a
        role).
    """
    counts: dict[str, int] = {}
    for entry in entries:
        key = entry.get("type", "?")
        message = entry.get("message")
        if key == MESSAGE and isinstance(message, dict):
            key = f"message:{field_text(message.get('role'))}"
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass
class UsageTotals:
    """Token and cost sums: ``input``, ``output``, ``cache_read``,
    ``cache_write``, ``total`` (tokens; ``totalTokens``, else the sum of the
    four), ``cost`` (``cost.total``, in the provider's currency, USD for
    pi's built-in models), ``requests`` (usage objects counted). Negative,
    non-numeric and missing values count as 0."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0
    cost: float = 0.0
    requests: int = 0

    def add(self, usage: Any) -> None:
        """Add one usage object (anything else is ignored)."""
        if not isinstance(usage, dict):
            return
        parts = []
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            value = usage.get(key)
            parts.append(value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0)
        self.input += int(parts[0])
        self.output += int(parts[1])
        self.cache_read += int(parts[2])
        self.cache_write += int(parts[3])
        total = usage.get("totalTokens")
        self.total += int(total) if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0 else int(sum(parts))
        cost = usage.get("cost")
        if isinstance(cost, dict):
            value = cost.get("total")
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value > 0:
                self.cost += float(value)
        self.requests += 1

    @property
    def prompt(self) -> int:
        """The prompt volume, as pi's ``/session`` calls "Input": input plus
        cache read plus cache write tokens."""
        return self.input + self.cache_read + self.cache_write

    def describe(self) -> str:
        """The token line ``pi-session info`` and the HTML viewer's header
        both show, in the words of pi's usage fields: ``"input 1,200, cache
        read 30,000, cache write 500, output 800, total 32,500"`` (total:
        :attr:`sum`)."""
        return (
            f"input {self.input:,}, cache read {self.cache_read:,}, cache write {self.cache_write:,}, "
            f"output {self.output:,}, total {self.sum:,}"
        )

    def describe_cost(self, digits: int = 3) -> str | None:
        """The cost line ``pi-session info`` and the HTML viewer's header
        both show: ``"$0.123"`` (``digits`` decimals); when requests used
        tokens but recorded no cost (imports from other agents, a model pi
        did not price) it says so, and where a price is found, rather than
        show $0; None without any request."""
        if self.cost > 0:
            return f"${self.cost:,.{digits}f}"
        if self.sum:
            return "not recorded in the session (`pi-session usage session` prices it offline)"
        return None

    @property
    def sum(self) -> int:
        """Input + output + cache read + cache write (pi's ``/session``
        total; :attr:`total` prefers each request's ``totalTokens``)."""
        return self.input + self.output + self.cache_read + self.cache_write


def entry_usage(entry: Mapping[str, Any]) -> Any:
    """The usage object ``entry`` paid for, as pi 1.6's ``/session`` counts
    it (``AgentSession.getSessionStats``): an assistant or tool-result
    message's ``usage``, a ``usage`` entry's, a compaction's or a branch
    summary's; None for anything else."""
    etype = entry.get("type")
    if etype == MESSAGE:
        message = entry.get("message")
        if isinstance(message, dict) and (is_assistant(message) or is_tool_result(message)):
            return message.get("usage")
        return None
    if etype in (USAGE, COMPACTION, BRANCH_SUMMARY):
        return entry.get("usage")
    return None


@dataclass(frozen=True)
class MessageStats:
    """What pi's ``/session`` counts over every entry of a session (all
    branches): ``messages`` (message entries), ``user``, ``assistant``,
    ``tool_calls`` (``toolCall`` blocks of assistant messages),
    ``tool_results``, and ``usage`` (:class:`UsageTotals` of every paid
    request, :func:`entry_usage`)."""

    messages: int = 0
    user: int = 0
    assistant: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)


def message_stats(entries: Iterable[Mapping[str, Any]]) -> MessageStats:
    """:class:`MessageStats` of ``entries`` (header excluded)."""
    usage = UsageTotals()
    messages = user = assistant = tool_calls = tool_results = 0
    for entry in entries:
        usage.add(entry_usage(entry))
        message = entry.get("message") if entry.get("type") == MESSAGE else None
        if not isinstance(message, dict):
            continue
        messages += 1
        role = message.get("role")
        if role == USER:
            user += 1
        elif role == TOOL_RESULT:
            tool_results += 1
        elif role == ASSISTANT:
            assistant += 1
            content = message.get("content")
            if isinstance(content, list):
                tool_calls += sum(1 for block in content if isinstance(block, dict) and block.get("type") == "toolCall")
    return MessageStats(messages, user, assistant, tool_calls, tool_results, usage)


@dataclass(frozen=True)
class SessionStats:
    """A session's header facts, size and shape.

    Attributes:
        path: the session file (None: in memory).
        id: the session id.
        version: the file's own format version (an older file is read as the
            current version, migrated in memory).
        cwd, created, parent_session: from the header (``cwd``,
            ``timestamp``, ``parentSession``), None when absent.
        name: from the latest ``session_info`` entry, or None.
        size_bytes: the file's size in bytes (0 in memory or when missing).
        entries: number of entries, header excluded.
        counts: see :func:`count_entry_types`.
        leaf_id: the current leaf, or None.
        branch_length: entries on the root→leaf path.
        labels: ``{entry id: label}`` in effect.
        problems: damaged or repaired lines, each
            ``{"line": int | None, "kind", "message", "recovered"}``.
        messages: what pi's ``/session`` counts (:func:`message_stats`).
    """

    path: str | None
    id: str
    version: Any
    cwd: Any
    created: Any
    parent_session: Any
    name: str | None
    size_bytes: int
    entries: int
    counts: dict[str, int] = field(default_factory=dict)
    leaf_id: str | None = None
    branch_length: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    messages: MessageStats = field(default_factory=MessageStats)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``pi-session info --json``: ``path`` (the string
        ``"None"`` in memory, as the CLI has always printed it), ``id``,
        ``version``, ``cwd``, ``created``, ``parentSession``, ``name``,
        ``sizeBytes``, ``entries``, ``counts``, ``leafId``, ``branchLength``,
        ``labels``, ``problems``, then pi's ``/session`` figures under pi's
        names (``SessionStats`` of pi 1.6): ``userMessages``,
        ``assistantMessages``, ``toolCalls``, ``toolResults``,
        ``totalMessages``, ``tokens`` (``input``, ``output``, ``cacheRead``,
        ``cacheWrite``, ``total``: their sum) and ``cost``, in that order."""
        m, u = self.messages, self.messages.usage
        return {
            "path": str(self.path),
            "id": self.id,
            "version": self.version,
            "cwd": self.cwd,
            "created": self.created,
            "parentSession": self.parent_session,
            "name": self.name,
            "sizeBytes": self.size_bytes,
            "entries": self.entries,
            "counts": dict(self.counts),
            "leafId": self.leaf_id,
            "branchLength": self.branch_length,
            "labels": dict(self.labels),
            "problems": [dict(p) for p in self.problems],
            "userMessages": m.user,
            "assistantMessages": m.assistant,
            "toolCalls": m.tool_calls,
            "toolResults": m.tool_results,
            "totalMessages": m.messages,
            "tokens": {"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write, "total": u.sum},
            "cost": u.cost,
        }
