"""Branch summaries: collecting the abandoned branch, budgeted preparation,
generation with preamble and file lists."""

from __future__ import annotations

import asyncio

from pi_session.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from pi_session.compaction.branch_summary import NO_BRANCH_CONTENT
from pi_session.compaction.summary import ensure_sections
from pi_session.llm.base import SummaryRequest
from pi_session.session.tree import SessionTree

TS = "2025-01-01T00:00:00.000Z"


def e(eid, parent, role="user", text="x" * 40, **msg_extra):
    msg = {"role": role, "timestamp": 1}
    if role == "assistant":
        msg["content"] = msg_extra.pop("content", [{"type": "text", "text": text}])
    elif role == "toolResult":
        msg.update(toolCallId="c", toolName="read", content=[{"type": "text", "text": text}], isError=False)
    else:
        msg["content"] = text
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": TS, "message": msg}


def tree():
    #   a - b - c - d        (old leaf d)
    #        \- x - y        (target y)
    entries = [
        e("a", None), e("b", "a", "assistant"), e("c", "b"),
        e("d", "c", "assistant", content=[{"type": "toolCall", "id": "1", "name": "write", "arguments": {"path": "w.py"}}]),
        e("x", "b"), e("y", "x", "assistant"),
    ]
    return SessionTree(entries)


def test_collect_between_branches():
    col = collect_entries_for_branch_summary(tree(), "d", "y")
    assert col.common_ancestor_id == "b"
    assert [x["id"] for x in col.entries] == ["c", "d"]
    # navigating to an ancestor of the old leaf
    col = collect_entries_for_branch_summary(tree(), "d", "b")
    assert [x["id"] for x in col.entries] == ["c", "d"]
    assert collect_entries_for_branch_summary(tree(), None, "y").entries == []
    # target on the same path below: nothing to summarize
    assert collect_entries_for_branch_summary(tree(), "b", "d").entries == []


def test_collect_survives_parent_cycle():
    entries = [e("a", "b"), e("b", "a")]
    col = collect_entries_for_branch_summary(SessionTree(entries), "a", "zzz")
    assert len(col.entries) <= 2


def test_prepare_skips_tool_results_and_respects_budget():
    entries = [
        e("a", None, text="a" * 400),  # 100 tokens
        e("b", "a", "toolResult", "r" * 4000),
        {"type": "branch_summary", "id": "s", "parentId": "b", "timestamp": TS, "fromId": "a", "summary": "s" * 80,
         "details": {"readFiles": ["r.py"], "modifiedFiles": ["m.py"]}},
        {"type": "branch_summary", "id": "h", "parentId": "s", "timestamp": TS, "fromId": "a", "summary": "",
         "details": {"readFiles": ["hook.py"]}, "fromHook": True},
        e("c", "h", text="c" * 40),  # 10 tokens
    ]
    prep = prepare_branch_entries(entries)
    assert [m["role"] for m in prep.messages] == ["user", "branchSummary", "branchSummary", "user"]
    assert prep.total_tokens == 100 + 20 + 0 + 10
    assert prep.file_ops.to_json() == {"read": ["r.py"], "written": [], "edited": ["m.py"]}
    # budget 40: c (10) + h (0) + s (20) = 30; a (100) does not fit and is not a summary
    prep = prepare_branch_entries(entries, 40)
    assert prep.total_tokens == 30 and len(prep.messages) == 3
    # budget 25: s (20) would exceed 25 after 10 but, being a summary, fits while total < 22.5
    prep = prepare_branch_entries(entries, 25)
    assert prep.total_tokens == 30
    # budget 11: total 10 >= 9.9, the summary is not forced in
    prep = prepare_branch_entries(entries, 11)
    assert prep.total_tokens == 10


class Fake:
    name = "fake"

    def __init__(self):
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request):
        self.requests.append(request)
        return "## Goal\nstuff"


def test_generate_branch_summary():
    col = collect_entries_for_branch_summary(tree(), "d", "y")
    fake = Fake()
    res = asyncio.run(generate_branch_summary(col.entries, fake, custom_instructions="the write"))
    assert res.summary == BRANCH_SUMMARY_PREAMBLE + ensure_sections("## Goal\nstuff") + "\n\n<modified-files>\nw.py\n</modified-files>"
    assert res.details == {"readFiles": [], "modifiedFiles": ["w.py"]}
    req = fake.requests[0]
    assert req.kind == "branch" and req.max_tokens is None  # no 2048 cap since pi 1.6
    assert res.usage is None  # the fake reports none
    assert "the write" in req.prompt and "## Critical Context" in req.prompt
    fake2 = Fake()
    res = asyncio.run(generate_branch_summary(col.entries, fake2, custom_instructions="ONLY THIS", replace_instructions=True))
    assert fake2.requests[0].prompt.endswith("</conversation>\n\nONLY THIS")
    res = asyncio.run(generate_branch_summary([], Fake()))
    assert res.summary == NO_BRANCH_CONTENT


def test_prepare_applies_edits_among_the_collected_entries():
    call = [{"type": "toolCall", "id": "k", "name": "edit", "arguments": {"path": "edited.py"}}]
    entries = [
        e("a", None, text="original request"),
        e("b", "a", "assistant", content=[{"type": "toolCall", "id": "j", "name": "read", "arguments": {"path": "old.py"}}]),
        {"type": "custom_message", "id": "m", "parentId": "b", "timestamp": TS, "customType": "n", "content": "note",
         "display": True},
        {"type": "branch_summary", "id": "s", "parentId": "m", "timestamp": TS, "fromId": "a", "summary": "kept summary"},
        e("y", "s", "system", text="prompt"),
        {"type": "context_edit", "id": "x1", "parentId": "y", "timestamp": TS, "targetId": "a", "replacement": {"content": "first edit"}},
        {"type": "context_edit", "id": "x2", "parentId": "x1", "timestamp": TS, "targetId": "a", "replacement": {"content": "REPLACED"}},
        {"type": "context_edit", "id": "x3", "parentId": "x2", "timestamp": TS, "targetId": "b", "replacement": {"content": call}},
        {"type": "context_edit", "id": "x4", "parentId": "x3", "timestamp": TS, "targetId": "m", "replacement": None},
        {"type": "context_edit", "id": "x5", "parentId": "x4", "timestamp": TS, "targetId": "s", "replacement": None},
    ]
    prep = prepare_branch_entries(entries)
    # the last edit per target wins; the omitted custom message is skipped;
    # an edit of a branch_summary is ignored; the system message is included
    assert [m["role"] for m in prep.messages] == ["user", "assistant", "branchSummary", "system"]
    assert prep.messages[0]["content"] == "REPLACED"
    assert prep.messages[1]["content"] == call
    # file ops from the replaced content's tool calls, not the original's
    assert prep.file_ops.to_json() == {"read": [], "written": [], "edited": ["edited.py"]}
    # the entries themselves are not changed
    assert entries[0]["message"]["content"] != "REPLACED"


def test_generate_branch_summary_carries_usage():
    from pi_session.llm.base import SummaryText, make_usage

    class WithUsage(Fake):
        async def summarize(self, request):
            self.requests.append(request)
            return SummaryText("## Goal\nstuff", make_usage(7, 3))

    col = collect_entries_for_branch_summary(tree(), "d", "y")
    res = asyncio.run(generate_branch_summary(col.entries, WithUsage()))
    assert res.usage == make_usage(7, 3) and res.usage["totalTokens"] == 10
