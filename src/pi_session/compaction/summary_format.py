"""The structured summary format: one table that every writer and reader of
a compaction summary uses.

A compaction (and a branch summary) asks the model for a Markdown text with
fixed section headings; pi 1.6's compact reads them back, and so do we. The
headings, and the ``<read-files>`` / ``<modified-files>`` blocks appended
after them, are wire facts: they are kept byte for byte. Everything else in
a row of the table is our own: the hint the prompt shows under the heading,
the other titles accepted when a summary is parsed, and the limits the
offline extractive summarizer and the probes apply.

Readers of the table:

- the prompts (:func:`format_template`, used by
  :mod:`pi_session.compaction.summary` and branch summaries);
- the parser (:func:`parse_summary_sections`) and the repair of a model's
  summary (:func:`ensure_sections`);
- the extractive summarizer (:mod:`pi_session.llm.extractive`: headings,
  item markers, limits, which items give way first);
- the probes (:mod:`pi_session.compaction.probes`: the most constraints,
  errors and decisions probed; which section answers which probe).

Adding a section is adding a row to :data:`SECTIONS`; the prompt, the
parser, the extractive output and the probes follow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = [
    "SummarySection",
    "SummaryFormat",
    "SECTIONS",
    "TURN_PREFIX_SECTIONS",
    "HISTORY_FORMAT",
    "TURN_PREFIX_FORMAT",
    "FILE_LIST_TAGS",
    "FILE_LIST_PROBES",
    "EXTRACTIVE_NOTE",
    "MISSING_SECTION_PLACEHOLDER",
    "SUMMARY_SECTIONS",
    "GOAL",
    "CONSTRAINTS",
    "PROGRESS",
    "DONE",
    "IN_PROGRESS",
    "BLOCKED",
    "DECISIONS",
    "NEXT",
    "CRITICAL",
    "section",
    "item_sections",
    "section_keys",
    "heading_title",
    "strip_marker",
    "heading_key",
    "title_to_key",
    "format_template",
    "strip_file_lists",
    "strip_trailing_file_lists",
    "parse_summary_sections",
    "ensure_sections",
]

# section keys
GOAL: Final = "goal"
CONSTRAINTS: Final = "constraints"
PROGRESS: Final = "progress"
DONE: Final = "done"
IN_PROGRESS: Final = "in_progress"
BLOCKED: Final = "blocked"
DECISIONS: Final = "decisions"
NEXT: Final = "next"
CRITICAL: Final = "critical"


@dataclass(frozen=True)
class SummarySection:
    """One section of the structured summary.

    Attributes:
        key: our name for the section (``"goal"``); the keys of
            :func:`parse_summary_sections`' result.
        heading: the Markdown heading line, a wire fact (``"## Goal"``).
        hint: what the prompt shows under the heading (``""`` for a
            container such as ``## Progress``).
        aliases: other titles (lower case, no ``#``) read as this section
            when a summary is parsed (``"constraints and preferences"``).
        container: the heading only groups the following deeper ones
            (``## Progress``): it has no items of its own.
        bullet: the item marker the extractive summarizer writes
            (``"- "``, ``"- [x] "``, ``"- [ ] "``, or ``"1. "`` for a numbered
            list).
        empty: the line the extractive summarizer writes for a section
            with no items.
        max_items: most items the extractive summarizer keeps (the
            latest; for ``goal`` the first one and the latest others),
            None: no fixed number.
        item_chars: longest item the extractive summarizer writes
            (characters).
        first_item_chars: longest first item, when it differs.
        drop_rank: when the extractive text is over its budget, sections
            give up items in increasing rank (0 first).
        keep_first: when items are dropped, the first one stays (the
            original goal) and the next oldest goes.
        carried: the previous summary's items of the section are kept
            whole by an uncapped update (facts), within the share of the
            size bound :data:`pi_session.llm.extractive.KEPT_SHARE`; False
            for state that an update rewrites (In Progress, Next Steps).
        probes: the probe kinds (:data:`pi_session.compaction.probes.PROBE_KINDS`)
            whose answer belongs in this section.
        in_branch: the section is written in a branch summary by the
            extractive summarizer.
    """

    key: str
    heading: str
    hint: str = ""
    aliases: tuple[str, ...] = ()
    container: bool = False
    bullet: str = "- "
    empty: str = "- (none found)"
    max_items: int | None = None
    item_chars: int = 240
    first_item_chars: int | None = None
    drop_rank: int = 0
    keep_first: bool = False
    carried: bool = True
    probes: tuple[str, ...] = ()
    in_branch: bool = True

    @property
    def level(self) -> int:
        """The heading's level (number of ``#``)."""
        return len(self.heading) - len(self.heading.lstrip("#"))

    @property
    def title(self) -> str:
        """The heading without its ``#`` marks (``"Goal"``)."""
        return self.heading.lstrip("#").strip()


SECTIONS: tuple[SummarySection, ...] = (
    SummarySection(
        GOAL,
        "## Goal",
        "<what the user wants done; list several goals if the session moved between tasks>",
        max_items=5,
        item_chars=240,
        first_item_chars=300,
        drop_rank=2,
        keep_first=True,
        probes=("first_request", "latest_request"),
    ),
    SummarySection(
        CONSTRAINTS,
        "## Constraints & Preferences",
        '- <requirements, limits and preferences the user stated; write "(none)" if there were none>',
        aliases=("constraints and preferences", "constraints"),
        empty="- (none)",
        max_items=8,
        item_chars=220,
        drop_rank=5,
        probes=("constraint",),
    ),
    SummarySection(PROGRESS, "## Progress", container=True, carried=False),
    SummarySection(
        DONE,
        "### Done",
        "- [x] <finished work and changes made>",
        bullet="- [x] ",
        max_items=13,
        item_chars=140,
        drop_rank=1,
        probes=("artifact",),
    ),
    SummarySection(
        IN_PROGRESS,
        "### In Progress",
        "- [ ] <work under way at the end of the transcript>",
        bullet="- [ ] ",
        item_chars=240,
        drop_rank=7,
        carried=False,
    ),
    SummarySection(
        BLOCKED,
        "### Blocked",
        "- <anything stopping progress; leave empty if nothing is>",
        empty="- (none)",
        max_items=5,
        item_chars=240,
        drop_rank=4,
        probes=("unresolved_error",),
    ),
    SummarySection(
        DECISIONS,
        "## Key Decisions",
        "- **<decision>**: <why it was made, in a few words>",
        aliases=("decisions",),
        max_items=5,
        item_chars=220,
        drop_rank=3,
        probes=("decision",),
    ),
    SummarySection(
        NEXT,
        "## Next Steps",
        "1. <the next actions, in the order they should happen>",
        bullet="1. ",
        max_items=3,
        item_chars=240,
        drop_rank=6,
        carried=False,
        probes=("next_step",),
    ),
    SummarySection(
        CRITICAL,
        "## Critical Context",
        '- <facts, data, examples or references needed to carry on; write "(none)" if there are none>',
        empty="- (none)",
        item_chars=300,
        drop_rank=0,
        in_branch=False,
        probes=("identifier",),
    ),
)
"""The sections of a history, update or branch summary, in order (pi 1.6
compact's structured format)."""

TURN_PREFIX_SECTIONS: tuple[SummarySection, ...] = (
    SummarySection(GOAL, "## Original Request", "<what the user asked for in this turn>", item_chars=400),
    SummarySection(
        DONE,
        "## Progress So Far",
        "- <work done and decisions made in the part shown>",
        aliases=("early progress",),
        item_chars=200,
    ),
    SummarySection(
        CRITICAL,
        "## Context Needed to Continue",
        "- <what someone reading only the kept messages would need to know>",
        aliases=("context for suffix",),
        empty="- (none)",
        item_chars=200,
    ),
)
"""The sections of the summary of a split turn's prefix (pi 1.6 compact's
turn-prefix headings). Their keys are those of the main sections they are
read as (``## Original Request`` is a goal); ``early progress`` and
``context for suffix`` are pi 0.73's titles."""


@dataclass(frozen=True)
class SummaryFormat:
    """A summary format: its sections and the extractive summarizer's size
    bound.

    Attributes:
        sections: the rows, in order.
        max_tokens: most tokens the extractive summarizer writes (about 4
            UTF-16 code units each), the file lists not counted.
    """

    sections: tuple[SummarySection, ...]
    max_tokens: int


HISTORY_FORMAT = SummaryFormat(SECTIONS, 1850)
"""History, update and branch summaries."""

TURN_PREFIX_FORMAT = SummaryFormat(TURN_PREFIX_SECTIONS, 600)
"""The summary of a split turn's prefix."""

FILE_LIST_TAGS = ("read-files", "modified-files")
"""The XML tags of the file-list blocks appended after the sections (pi 1.6
compact's ``formatFileOperations``), a wire fact."""

FILE_LIST_PROBES = {"read-files": "read_files", "modified-files": "modified_files"}
"""Which probe kind each file-list block answers."""

EXTRACTIVE_NOTE = (
    "_Extractive summary: put together offline from excerpts of the conversation "
    "by fixed rules, without a language model._"
)
"""First line of every extractive summary (skipped when a summary is parsed)."""

MISSING_SECTION_PLACEHOLDER = "- (not provided by the summarizer)"
"""Body given to a heading of :data:`SUMMARY_SECTIONS` that a model left out."""

SUMMARY_SECTIONS = tuple(s.heading for s in SECTIONS)
"""The headings of the structured summary format, in order."""


def section(key: str, sections: Sequence[SummarySection] = SECTIONS) -> SummarySection:
    """The row of ``sections`` with ``key``.

    Raises:
        KeyError: no such section.
    """
    for s in sections:
        if s.key == key:
            return s
    raise KeyError(key)


def item_sections(sections: Sequence[SummarySection] = SECTIONS) -> tuple[SummarySection, ...]:
    """The rows that hold items (containers left out), in order."""
    return tuple(s for s in sections if not s.container)


def section_keys(sections: Sequence[SummarySection] = SECTIONS) -> list[str]:
    """The keys of :func:`item_sections`, in order."""
    return [s.key for s in item_sections(sections)]


def heading_title(title: str) -> str:
    """Normalized heading title: bold markers, a trailing colon and case
    dropped, spaces collapsed (``"**Done**:"`` -> ``"done"``)."""
    title = title.strip().rstrip(":").strip().strip("*_").strip().rstrip(":")
    return " ".join(title.lower().split())


def heading_key(heading: str) -> str:
    """:func:`heading_title` of a heading line with its ``#`` marks."""
    return heading_title(heading.lstrip("#"))


def title_to_key(
    formats: Sequence[Sequence[SummarySection]] = (SECTIONS, TURN_PREFIX_SECTIONS),
) -> dict[str, str | None]:
    """Lower-case heading title (and alias) -> section key, for the parser;
    a container's title maps to None (its items belong to the deeper
    headings). Earlier formats win."""
    out: dict[str, str | None] = {}
    for sections in formats:
        for s in sections:
            for title in (s.title.lower(), *s.aliases):
                out.setdefault(title, None if s.container else s.key)
    return out


@lru_cache(maxsize=16)
def _titles(formats: tuple[tuple[SummarySection, ...], ...]) -> dict[str, str | None]:
    return title_to_key(formats)


def format_template(sections: Sequence[SummarySection] = SECTIONS) -> str:
    """The sections as the prompt shows them: each heading with its hint
    below, a blank line between sections, a container heading directly
    above its first deeper one."""
    blocks: list[str] = []
    pending = ""
    for s in sections:
        if s.container:
            pending += s.heading + "\n"
            continue
        blocks.append(f"{pending}{s.heading}\n{s.hint}")
        pending = ""
    return "\n\n".join(blocks)


_FILE_BLOCK_RE = re.compile(
    "<(" + "|".join(re.escape(t) for t in FILE_LIST_TAGS) + r")>.*?</\1>", re.S
)
_MARKER_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?")
_OMITTED_RE = re.compile(r"^\(\d+ (?:more|earlier) .*omitted.*\)$")
_EMPTY_ITEMS = ("none", "none found", "n/a", "nothing")


def strip_file_lists(summary: str) -> str:
    """``summary`` without its file-list blocks (the blank lines before
    them removed too)."""
    tags = "|".join(re.escape(t) for t in FILE_LIST_TAGS)
    return re.sub(r"\n*<(" + tags + r")>.*?</\1>", "", summary, flags=re.S)


def strip_trailing_file_lists(summary: str) -> str:
    """``summary`` without the file-list blocks at its end (as
    :func:`pi_session.compaction.compact` appends them), and the blank lines
    before them; a block elsewhere in the text stays."""
    tags = "|".join(re.escape(t) for t in FILE_LIST_TAGS)
    return re.sub(r"(?:\s*<(" + tags + r")>.*?</\1>)+\s*\Z", "", summary, flags=re.S)


def strip_marker(item: str) -> str:
    """``item`` without a leading list marker (``-``, ``1.``, ``- [x]``)."""
    return _MARKER_RE.sub("", item)


def parse_summary_sections(
    summary: str,
    *,
    keep_leading: bool = False,
    formats: Sequence[Sequence[SummarySection]] = (SECTIONS, TURN_PREFIX_SECTIONS),
) -> dict[str, list[str]]:
    """Items of a structured summary by section key (``goal``,
    ``constraints``, ``done``, ``in_progress``, ``blocked``, ``decisions``,
    ``next``, ``critical``: :func:`section_keys`).

    Headings are recognised case-insensitively at any level by their title
    or an alias of :data:`SECTIONS` or :data:`TURN_PREFIX_SECTIONS` (the
    turn-prefix headings fold into the main sections; unknown headings go
    to ``critical``). List markers (``-``, ``1.``, ``[x]``) are removed;
    other non-empty lines are items too. File-list blocks, text before the
    first heading (unless ``keep_leading``: then its lines are ``critical``
    items, so a summary without headings loses nothing), ``---``
    separators, bold-only labels, "omitted" markers, the
    :data:`EXTRACTIVE_NOTE` and ``(none)`` placeholders are skipped. Pure
    function.

    ``formats`` are the tables read (the first one gives the keys of the
    result); the default is the summary format and the turn-prefix one.
    """
    summary = _FILE_BLOCK_RE.sub("", summary)
    titles = _titles(tuple(tuple(f) for f in formats))
    out: dict[str, list[str]] = {k: [] for k in section_keys(formats[0])}
    current: str | None = CRITICAL if keep_leading else None
    for raw in summary.splitlines():
        line = raw.strip()
        if not line or line == "---":
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            title = m.group(2).strip().strip("*").strip().lower()
            current = titles.get(title, CRITICAL)
            continue
        if current is None:
            continue
        if re.fullmatch(r"\*\*[^*]+\*\*:?", line):
            continue
        item = _MARKER_RE.sub("", line).strip()
        if not item or item.lower().strip("()_. ") in _EMPTY_ITEMS:
            continue
        if item == EXTRACTIVE_NOTE or _OMITTED_RE.match(item):
            continue
        out.setdefault(current, []).append(item)
    return out


_HEADING_LINE_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


def ensure_sections(
    text: str,
    sections: Sequence[str] = SUMMARY_SECTIONS,
    placeholder: str = MISSING_SECTION_PLACEHOLDER,
) -> str:
    """Return ``text`` with every heading of ``sections`` present.

    A model (a small one especially) may leave sections out of the
    structured format. The model's text is kept as written; each missing
    heading is added with ``placeholder`` as its body, in the canonical
    order: just before the next heading of ``sections`` that the text does
    have, or at the end when none follows. A heading followed by deeper
    ones in ``sections`` (``## Progress``) gets no body of its own. A
    heading counts as present when a line outside code fences is a
    markdown heading (any level) whose title matches, ignoring case, bold
    markers and a trailing colon (so ``## goal:`` or ``### **Done**``
    count). Pure function.

    Args:
        text: the summary written by a model.
        sections: headings in their canonical order (``"## Goal"`` ...).
        placeholder: body line(s) for an added heading.

    Returns:
        The completed text (``text`` unchanged when nothing is missing).
    """
    wanted = [(h, heading_key(h)) for h in sections]
    lines = text.split("\n")
    found: dict[str, int] = {}
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _HEADING_LINE_RE.match(line)
        if m:
            found.setdefault(heading_title(m.group(2)), i)
    missing = [k for k, (_h, key) in enumerate(wanted) if key not in found]
    if not missing:
        return text
    # line index -> headings to insert before it (None: at the end)
    inserts: dict[int | None, list[str]] = {}
    for k in missing:
        before = next((found[key] for _h, key in wanted[k + 1 :] if key in found), None)
        inserts.setdefault(before, []).append(wanted[k][0])

    def level(heading: str) -> int:
        return len(heading) - len(heading.lstrip("#"))

    # a heading directly followed by deeper ones (## Progress) has no body of its own
    containers = {h for h, nxt in zip(sections, list(sections[1:])) if level(nxt) > level(h)}

    def block(headings: list[str]) -> list[str]:
        out: list[str] = []
        for h in headings:
            out += [h] if h in containers else [h, placeholder, ""]
        return out

    result: list[str] = []
    for i, line in enumerate(lines):
        if i in inserts:
            if result and result[-1].strip() and not _HEADING_LINE_RE.match(result[-1]):
                result.append("")
            result += block(inserts[i])
        result.append(line)
    if None in inserts:
        while result and not result[-1].strip():
            result.pop()
        if result:
            result.append("")
        result += block(inserts[None])
        if result and not result[-1]:
            result.pop()  # no blank line after the last placeholder
    return "\n".join(result)
