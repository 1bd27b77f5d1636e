"""What the viewer shows, before any HTML: the tree in display order, the
context edits that hide content, and the session's facts.

Pure functions over plain entries and :class:`pi_session.session.tree.TreeNode`
roots (``SessionManager.get_tree()``).

Context edits: the page holds every branch, so an entry's content is
rendered once for all views. An entry that *any* counted ``context_edit`` of
the file targets (same rule as :func:`pi_session.session.context.collect_context_edits`)
is shown as that edit leaves it: replaced content, or nothing when omitted.
Its original text is never written to the page, even on a branch or at a
point where the edit does not change the model's context: an edit is how a
user removes a secret or a huge output, and a shared page must not bring it
back. The deciding edit is the one that applies at the current leaf
(:func:`pi_session.session.context.applied_context_edits`), else the last one in
file order.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast, overload

from ..session.context import applied_context_edits, counted_edits, edited_entry, text_content
from ..session.stats import UsageTotals, count_entry_types, entry_usage
from ..core.gc_pause import gc_paused
from ..core.timestamps import iso_to_ms
from ..session.tree import TreeNode
from ..session.conversation import HIDDEN_BY_DEFAULT, ConversationView
from ..core.text import field_text
from ..entries.questions import ASSISTANT, MESSAGE, SESSION_INFO, USER

__all__ = ["Row", "Facts", "TreeLayout", "tree_rows", "hiding_edits", "session_facts", "UsageTotals", "title_of"]


@dataclass(slots=True)
class Row:
    """One sidebar line: ``index`` (display order), ``parent`` (index of the
    tree parent, -1 for a root), ``prefix`` (the ``├─``/``│`` guides of
    ``pi-session tree``), ``entry``, ``label``, ``depth`` (branch depth: how
    many forks lie above it), ``hidden`` (left out of the conversation view
    unless every entry is shown: :func:`pi_session.session.conversation.hidden_by_default`),
    ``shown_prefix`` (the guides in the conversation view, where hidden
    entries pass their children up; None for a hidden row)."""

    index: int
    parent: int
    prefix: str
    entry: Mapping[str, Any]
    label: str | None
    depth: int
    hidden: bool = False
    shown_prefix: str | None = None


class TreeLayout(Sequence[Row]):
    """The rows of :func:`tree_rows`, each made when asked for: ``layout[i]``
    is row ``i`` of the full layout (the same values), made without making
    the others, so a page of a 100,000-entry tree costs a page of rows.

    Construction walks the tree once, depth first, keeping for each row only
    its node, its parent row, its guides and its depth (strings of one chain
    are shared); no entry of a lazily read session is decoded but
    ``session_info`` ones. The conversation view's guides
    (``Row.shown_prefix``) are the tree's when ``view`` hides nothing, else
    laid out by the same rules over the rows it shows, found in one pass
    (:meth:`ConversationView.hidden_rows
    <pi_session.session.conversation.ConversationView.hidden_rows>`, which
    also completes ``view.hidden``).

    Args:
        roots: the tree (``SessionManager.get_tree()``).
        view: the conversation view of ``roots``, as for :func:`tree_rows`.
        kinds: the entry types of the session, when known (e.g.
            ``set(EntrySource.types())``: read from a lazy index without
            visiting the nodes): when none is of a type the view may leave
            out (:data:`pi_session.session.conversation.HIDDEN_BY_DEFAULT`,
            ``session_info``), the nodes' types are not read.

    Indexing with an int gives a :class:`Row` (a new object each time);
    a slice, a list of them; iteration, every row in order.

    Attributes:
        nodes: each row's tree node, in display order.
        parents: each row's parent row (-1 for a root).
    """

    __slots__ = ("nodes", "parents", "_prefixes", "_depths", "_shown", "_index_of")

    def __init__(self, roots: Sequence[TreeNode], view: ConversationView | None = None, *, kinds: Collection[Any] | None = None) -> None:
        nodes: list[TreeNode] = []
        parents: list[int] = []
        prefixes: list[str] = []
        depths: list[int] = []
        add_node, add_parent, add_prefix, add_depth = nodes.append, parents.append, prefixes.append, depths.append
        stack: list[tuple[TreeNode, int, str, str, int]] = []
        push, pop = stack.append, stack.pop
        multi = len(roots) > 1
        for i in reversed(range(len(roots))):
            last = i == len(roots) - 1
            if multi:
                push((roots[i], -1, "└─ " if last else "├─ ", "   " if last else "│  ", 1))
            else:
                push((roots[i], -1, "", "", 0))
        # no cyclic GC passes over the growing lists (100,000 rows' tuples)
        with gc_paused():
            while stack:
                node, parent, prefix, child_prefix, depth = pop()
                index = len(nodes)
                add_node(node)
                add_parent(parent)
                add_prefix(prefix)
                add_depth(depth)
                children = node.children
                if len(children) == 1:
                    push((children[0], index, child_prefix, child_prefix, depth))
                else:
                    for j in range(len(children) - 1, -1, -1):
                        last = j == len(children) - 1
                        push((children[j], index, child_prefix + ("└─ " if last else "├─ "), child_prefix + ("   " if last else "│  "), depth + 1))
        self.nodes = nodes
        self.parents = parents
        self._prefixes = prefixes
        self._depths = depths
        self._shown: list[str | None] | None = None
        if view is not None:
            hidden = view.hidden_rows(nodes, parents) if _may_hide(kinds) else []
            # the view is the tree when it hides nothing: its guides are the tree's
            self._shown = _shown_prefixes(parents, hidden) if hidden else cast("list[str | None]", prefixes)
        self._index_of: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...
    def __getitem__(self, i: int | slice) -> Row | list[Row]:
        if isinstance(i, slice):
            return [self.row(j) for j in range(*i.indices(len(self.nodes)))]
        if i < 0:
            i += len(self.nodes)
        if not 0 <= i < len(self.nodes):
            raise IndexError(i)
        return self.row(i)

    def __iter__(self) -> Iterator[Row]:
        return map(self.row, range(len(self.nodes)))

    def row(self, i: int) -> Row:
        """Row ``i`` (0 ≤ ``i`` < ``len(self)``), as :func:`tree_rows` lays it out."""
        node = self.nodes[i]
        row = Row(i, self.parents[i], self._prefixes[i], node.entry, node.label, self._depths[i])
        shown = self._shown
        if shown is not None:
            row.shown_prefix = shown[i]
            row.hidden = row.shown_prefix is None
        return row

    def hidden(self, i: int) -> bool:
        """Whether row ``i`` is left out of the conversation view (False
        without a view), without making the row."""
        shown = self._shown
        return shown is not None and shown[i] is None

    def entry_id(self, i: int) -> Any:
        """The id of row ``i``'s entry, without decoding it."""
        return self.nodes[i].id

    def decode(self, indices: Iterable[int]) -> None:
        """Decode the entries of the rows at ``indices`` together (one read
        per run of adjacent lines of a lazily read session,
        :meth:`TreeNode.decode_entries`), before their rows are made."""
        nodes = self.nodes
        TreeNode.decode_entries([nodes[i] for i in indices])

    @property
    def index_of(self) -> dict[str, int]:
        """Entry id → its first row (string ids only; made once)."""
        out = self._index_of
        if out is None:
            ids = [node.id for node in self.nodes]
            # the first row of an id wins: the last written of the reversed pairs
            out = dict(zip(reversed(ids), range(len(ids) - 1, -1, -1)))
            if any(eid.__class__ is not str for eid in out):
                out = {eid: i for eid, i in out.items() if eid.__class__ is str}
            self._index_of = out
        return out

    def path_to(self, i: int) -> list[int]:
        """Row numbers from the root to row ``i`` (empty when ``i`` is out of range)."""
        out: list[int] = []
        parents = self.parents
        n = len(parents)
        while 0 <= i < n and len(out) <= n:
            out.append(i)
            i = parents[i]
        return out[::-1]


def _may_hide(kinds: Collection[Any] | None) -> bool:
    """Whether entries of these types may be left out of the conversation
    view (None: not known, so they may)."""
    return kinds is None or any(kind.__class__ is str and (kind in HIDDEN_BY_DEFAULT or kind == SESSION_INFO) for kind in kinds)


def _shown_prefixes(parents: Sequence[int], hidden: Iterable[int]) -> list[str | None]:
    """Each row's guides in the conversation view (None for a row it
    leaves out): the rows in display order (``parents``: each one's parent
    row) without the ``hidden`` ones, whose children go up to their nearest
    shown ancestor, laid out by the rules of :class:`TreeLayout`."""
    n = len(parents)
    shown = [True] * n
    for i in hidden:
        shown[i] = False
    up = [-1] * n  # each row's nearest shown ancestor-or-self (-1: none)
    kids: dict[int, list[int]] = {}  # shown row (-1: the roots) -> its shown children, in order
    for i in range(n):
        parent = parents[i]
        above = up[parent] if parent >= 0 else -1
        if shown[i]:
            up[i] = i
            kids.setdefault(above, []).append(i)
        else:
            up[i] = above
    out: list[str | None] = [None] * n
    child_prefix: list[str] = [""] * n
    roots = kids.get(-1, [])
    multi = len(roots) > 1
    for j, i in enumerate(roots):
        last = j == len(roots) - 1
        out[i] = ("└─ " if last else "├─ ") if multi else ""
        child_prefix[i] = ("   " if last else "│  ") if multi else ""
    for i in range(n):  # a shown row's parent comes before it: its guides are known
        if not shown[i]:
            continue
        children = kids.get(i)
        if not children:
            continue
        base = child_prefix[i]
        if len(children) == 1:
            out[children[0]] = child_prefix[children[0]] = base
        else:
            for j, k in enumerate(children):
                last = j == len(children) - 1
                out[k] = base + ("└─ " if last else "├─ ")
                child_prefix[k] = base + ("   " if last else "│  ")
    return out


def tree_rows(roots: Sequence[TreeNode], view: ConversationView | None = None) -> list[Row]:
    """The tree in display order, laid out as ``pi-session tree`` does: a
    chain stays at one indentation, only the children of a fork are indented
    (with ``├─ ``/``└─ `` guides), several roots are drawn as siblings.
    Iterative (any depth). Every row of :class:`TreeLayout`, which makes
    a page of them without the others.

    Args:
        view: the conversation view of ``roots``
            (:class:`pi_session.session.conversation.ConversationView`): marks the rows it
            hides and gives the others their guides in it
            (``Row.hidden``, ``Row.shown_prefix``).
    """
    return list(TreeLayout(roots, view))


def hiding_edits(entries: Sequence[Mapping[str, Any]], leaf_path: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Target id → (id of the deciding edit, replacement: None = omitted,
    else ``{"content": ...}``) for every entry a counted context edit of
    the file targets (see the module doc for the rule)."""
    out: dict[str, tuple[str, Any]] = {}
    for edit in counted_edits(entries):
        target = edit["targetId"]
        if target.__class__ is str:
            out[target] = (str(edit.get("id")), edit["replacement"])
    if out and leaf_path:
        out.update(applied_context_edits(leaf_path))
    return out


ACTIVITY_TYPES = frozenset({"message", "custom_message", "compaction", "branch_summary", "model_change", "thinking_level_change"})
"""The entries whose times make a session's duration: the conversation, its
summaries and the model settings it ran with; not labels, names, context
edits, ``usage`` or ``custom`` entries, which may be added to a session
long after (a label set a year on would make a session of hours last a
year)."""


@dataclass
class Facts:
    """The session facts of the page header: ``cwd``, ``session_id``,
    ``created`` (header timestamp), ``first_ms``/``last_ms`` (earliest and
    latest timestamps of the :data:`ACTIVITY_TYPES` entries, else of any
    entry, ms, None when none parse), ``models``
    (``"provider/model"`` → assistant messages), ``usage`` (every paid
    request in the file, all branches, as ``pi-session info`` counts them:
    :func:`pi_session.session.stats.entry_usage`), ``counts``
    (:func:`pi_session.session.stats.count_entry_types`), ``entries``, ``branches``
    (leaves of the tree)."""

    cwd: Any = None
    session_id: Any = None
    created: Any = None
    first_ms: int | None = None
    last_ms: int | None = None
    models: dict[str, int] = field(default_factory=dict)
    usage: UsageTotals = field(default_factory=UsageTotals)
    counts: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    branches: int = 0

    @property
    def duration_ms(self) -> int | None:
        """Latest minus earliest message time (ms, see ``first_ms``), None
        when unknown."""
        if self.first_ms is None or self.last_ms is None:
            return None
        return self.last_ms - self.first_ms


def session_facts(header: Mapping[str, Any] | None, entries: Sequence[Mapping[str, Any]], rows: Sequence[Row]) -> Facts:
    """Collect :class:`Facts` from the header, every entry (file order) and
    the tree rows (for the number of branches)."""
    header = header or {}
    facts = Facts(cwd=header.get("cwd"), session_id=header.get("id"), created=header.get("timestamp"))
    facts.counts = count_entry_types(e for e in entries if e.get("type", "?").__hash__ is not None)
    facts.entries = len(entries)
    has_child = {row.parent for row in rows}
    facts.branches = sum(1 for row in rows if row.index not in has_child)
    first = last = None
    usage = facts.usage
    models = facts.models
    any_first = any_last = None
    for entry in entries:
        etype = entry.get("type")
        ms = iso_to_ms(entry.get("timestamp"))
        if ms is not None:
            if etype.__class__ is str and etype in ACTIVITY_TYPES:
                first = ms if first is None or ms < first else first
                last = ms if last is None or ms > last else last
            else:
                any_first = ms if any_first is None or ms < any_first else any_first
                any_last = ms if any_last is None or ms > any_last else any_last
        if etype == MESSAGE:
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == ASSISTANT:
                key = f"{field_text(message.get('provider', '?'))}/{field_text(message.get('model', '?'))}"
                models[key] = models.get(key, 0) + 1
        usage.add(entry_usage(entry))
    if first is None:  # no message at all: the other entries' times
        first, last = any_first, any_last
    facts.first_ms, facts.last_ms = first, last
    return facts


def title_of(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    name: str | None = None,
    edits: Mapping[str, tuple[str, Any]] | None = None,
) -> str:
    """The session name, else the first user message's first line (≤ 80
    characters) as the model sees it after context edits, else the session
    id.

    Args:
        edits: target id → (edit id, replacement or None for omitted); by
            default the edits that apply on ``entries``
            (:func:`pi_session.session.context.applied_context_edits`).
    """
    if name:
        return name
    if edits is None:
        edits = applied_context_edits(entries)
    for entry in entries:
        entry_id = entry.get("id")
        edit = edits.get(entry_id) if isinstance(entry_id, str) else None
        if edit is not None:
            if edit[1] is None:
                continue
            entry = edited_entry(entry, edit[1])
        message = entry.get("message") if entry.get("type") == MESSAGE else None
        if isinstance(message, dict) and message.get("role") == USER:
            first = text_content(message.get("content"), "\n").strip().split("\n", 1)[0]
            if first:
                return first[:80]
    return f"Session {header.get('id') if header else ''}".strip()
