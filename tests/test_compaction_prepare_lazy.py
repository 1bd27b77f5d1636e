"""prepare_compaction works on a lazy view of the projection (for speed on
long paths); here it is compared with the plain plan over the whole
projection (the way it was computed before, with the public functions
over projection items), on generated sessions with pi 1.6 entries
(context edits, system messages, usage entries, nested calls)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.compaction import (
    FileOps,
    extract_file_ops_from_message,
    find_projected_cut_point,
    keep_projected_tool_calls_with_results,
    prepare_compaction,
)
from pi_session.compaction.prepare import ProjectionItems
from pi_session.session.context import (
    collect_context_edits,
    context_entries_and_edits,
    context_entries_from_path,
    projection_from_path,
)
from pi_session.session.settings import CompactionSettings
from pi_session.session.tokens import estimate_projected_context_tokens
from pi_session.session.tree import SessionTree

import sessiongen


def _reference_plan(entries, keep, keep_tool_pairs):
    """The plan built over the whole projection (no laziness)."""
    if entries and entries[-1].get("type") == "compaction":
        return None
    projection = projection_from_path(entries)
    items = projection["entries"]
    prev_index = next(
        (i for i, item in enumerate(items) if item["sourceEntry"].get("type") == "compaction" and item["messages"]), -1
    )
    start = prev_index + 1
    end = len(items)
    tokens = estimate_projected_context_tokens(projection, entries)["tokens"]
    cut = find_projected_cut_point(items, start, end, keep)
    if keep_tool_pairs:
        cut = keep_projected_tool_calls_with_results(items, start, end, cut)
    if cut.first_kept_entry_index >= end:
        return None
    first_kept_id = items[cut.first_kept_entry_index]["sourceEntry"].get("id")
    if not first_kept_id or not isinstance(first_kept_id, str):
        return None

    def summary(begin, stop):
        return [
            m
            for item in items[begin:stop]
            if item["sourceEntry"].get("type") != "compaction"
            for m in item["messages"]
            if m.get("role") != "system"
        ]

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = summary(start, history_end)
    prefix = summary(cut.turn_start_index, cut.first_kept_entry_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    file_ops = FileOps()
    if prev_index >= 0:
        prev = items[prev_index]["sourceEntry"]
        if not prev.get("fromHook") and prev.get("details"):
            file_ops.add_details(prev.get("details"))
    for msg in to_summarize + prefix:
        extract_file_ops_from_message(msg, file_ops)
    return {
        "firstKeptEntryId": first_kept_id,
        "index": (cut.first_kept_entry_index, cut.turn_start_index, start),
        "messagesToSummarize": to_summarize,
        "turnPrefixMessages": prefix,
        "isSplitTurn": cut.is_split_turn,
        "tokensBefore": tokens,
        "fileOps": file_ops.to_json(),
        "fileOpsOrder": (list(file_ops.read), list(file_ops.written), list(file_ops.edited)),
        "items": items,
    }


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([0, 1, 50, 400, 3000, 10**9]), st.booleans())
def test_lazy_plan_matches_the_plan_over_the_whole_projection(seed, keep, keep_tool_pairs):
    _h, entries = sessiongen.generate_session(seed, pi16=True)
    path = SessionTree(entries).branch(entries[-1]["id"])
    want = _reference_plan(path, keep, keep_tool_pairs)
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep), keep_tool_pairs=keep_tool_pairs)
    if want is None:
        assert prep is None
        return
    got = prep.to_json()
    keys = ("firstKeptEntryId", "messagesToSummarize", "turnPrefixMessages", "isSplitTurn", "tokensBefore", "fileOps")
    for key in keys:
        assert got[key] == want[key], key
    assert (prep.first_kept_entry_index, prep.turn_start_index, prep.boundary_start) == want["index"]
    assert (list(prep.file_ops.read), list(prep.file_ops.written), list(prep.file_ops.edited)) == want["fileOpsOrder"]
    assert prep.projection_entries == want["items"]


def test_projection_items_behave_as_a_list():
    entries = sessiongen.generate_session(7, pi16=True)[1]
    path = SessionTree(entries).branch(entries[-1]["id"])
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=0))
    assert prep is not None
    items = prep.projection_entries
    want = projection_from_path(path)["entries"]
    assert isinstance(items, ProjectionItems)
    assert len(items) == len(want) and items == want and list(items) == want
    assert items[-1] == want[-1] and items[1:3] == want[1:3] and items[::-2] == want[::-2]
    assert items != want[:-1]
    try:
        items[len(want)]
    except IndexError:
        pass
    else:  # pragma: no cover
        raise AssertionError("no IndexError")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_context_entries_and_edits_in_one_scan(seed, compactions):
    _h, entries = sessiongen.generate_session(seed, pi16=True, compactions=compactions)
    path = SessionTree(entries).branch(entries[-1]["id"])
    got_entries, got_edits = context_entries_and_edits(path)
    want_entries = context_entries_from_path(path)
    assert [id(e) for e in got_entries] == [id(e) for e in want_entries]
    assert got_edits == collect_context_edits(want_entries)


def test_context_entries_and_edits_edge_cases():
    def e(i, etype, **kw):
        return {"type": etype, "id": f"x{i}", "parentId": f"x{i - 1}" if i else None, **kw}

    msg = {"role": "user", "content": "hi"}
    no_compaction = [e(0, "message", message=msg), e(1, "context_edit", targetId="x0", replacement=None)]
    assert context_entries_and_edits(no_compaction) == (no_compaction, {"x0": None})
    # an edit before the compaction, in its kept range, still counts
    kept_edit = [
        e(0, "message", message=msg),
        e(1, "context_edit", targetId="x0", replacement=None),
        e(2, "compaction", summary="s", firstKeptEntryId="x0", tokensBefore=1),
    ]
    assert context_entries_and_edits(kept_edit) == ([kept_edit[2], *kept_edit[:2]], {"x0": None})
    assert context_entries_and_edits([]) == ([], {})
