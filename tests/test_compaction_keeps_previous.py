"""Beyond pi: every compaction keeps what earlier summaries knew.

Whatever the shape of the plan — history only, split turn with history,
split turn with nothing new before the turn (only a turn prefix), repeated
compactions — no fact of the previous summary may disappear from the context
after the new compaction (the offline summarizer: as long as the previous
summary's items fit their share of its size bound). Each shape is run with the offline extractive
summarizer and with a fake model behind the real OpenAI SDK
(``tests/fake_providers.py``): one that merges as the update prompt asks,
and one that ignores the prompt and always answers the same text (the
shapes where the model is not asked to merge must still keep every fact).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from fake_providers import fake_provider  # noqa: F401  (fixture)
from pi_session.compaction import compact, prepare_compaction
from pi_session.compaction.summary import NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR
from pi_session.session.context import context_from_path
from pi_session.llm import ExtractiveSummarizer, OpenAISummarizer
from pi_session.session.settings import CompactionSettings

TS = "2026-11-30T12:00:00.000Z"
FACTS = ("FACT-ALPHA-17", "FACT-BETA-99", "FACT-GAMMA-3")
PREVIOUS = (
    "Work so far, in prose before any heading: FACT-GAMMA-3 is the release tag.\n\n"
    "## Goal\n- Ship the exporter FACT-ALPHA-17\n\n"
    "## Critical Context\n- the API token FACT-BETA-99 must never be logged"
)


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"e{self.n:03d}"


def _msg(role: str, text: str) -> dict[str, Any]:
    if role == "assistant":
        return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop",
                "api": "x", "provider": "x", "model": "x", "timestamp": 1}
    return {"role": role, "content": text, "timestamp": 1}


def _append(path: list[dict[str, Any]], ids: _Ids, etype: str = "message", **fields: Any) -> dict[str, Any]:
    entry = {"type": etype, "id": ids(), "parentId": path[-1]["id"] if path else None, "timestamp": TS, **fields}
    path.append(entry)
    return entry


def _say(path, ids, role, words: str, n: int = 120) -> None:
    _append(path, ids, message=_msg(role, (words + " ") * n))


def _base(previous: str = PREVIOUS) -> tuple[list[dict[str, Any]], _Ids]:
    """An old exchange, compacted away entirely ("keep nothing")."""
    ids = _Ids()
    path: list[dict[str, Any]] = []
    _say(path, ids, "user", "old request")
    _say(path, ids, "assistant", "old answer")
    c = _append(path, ids, "compaction", summary=previous, firstKeptEntryId="", tokensBefore=1000)
    c["firstKeptEntryId"] = c["id"]
    return path, ids


def shape_history() -> list[dict[str, Any]]:
    """New history to summarize; the cut lands at a user message (no split)."""
    path, ids = _base()
    _say(path, ids, "user", "second request")
    _say(path, ids, "assistant", "second answer")
    _say(path, ids, "user", "third request")
    return path


def shape_split_with_history() -> list[dict[str, Any]]:
    """History before the turn, and a split turn."""
    path, ids = _base()
    _say(path, ids, "user", "second request")
    _say(path, ids, "assistant", "second answer")
    _say(path, ids, "user", "third request")
    _say(path, ids, "assistant", "step one")
    _say(path, ids, "assistant", "step two")
    return path


def shape_only_turn_prefix() -> list[dict[str, Any]]:
    """Nothing new before the turn: the plan is only a turn prefix."""
    path, ids = _base()
    _say(path, ids, "user", "long request")
    _say(path, ids, "assistant", "step one")
    _say(path, ids, "assistant", "step two")
    _say(path, ids, "assistant", "step three")
    return path


SHAPES = {
    "history": (shape_history, False, True),
    "split-with-history": (shape_split_with_history, True, True),
    "only-turn-prefix": (shape_only_turn_prefix, True, False),
}
"""name -> (builder, is a split turn, has history to summarize)."""

KEEP = CompactionSettings(keep_recent_tokens=200)


def _compact_path(path: list[dict[str, Any]], summarizer: Any, ids: _Ids | None = None) -> list[dict[str, Any]]:
    prep = prepare_compaction(path, KEEP)
    assert prep is not None and prep.previous_summary is not None
    result = asyncio.run(compact(prep, summarizer))
    new = list(path)
    new.append({"type": "compaction", "id": f"c{len(path):03d}", "parentId": path[-1]["id"], "timestamp": TS,
                "summary": result.summary, "firstKeptEntryId": result.first_kept_entry_id,
                "tokensBefore": result.tokens_before, "details": result.details})
    return new


def _context_text(path: list[dict[str, Any]]) -> str:
    parts = []
    for m in context_from_path(path)["messages"]:
        if m.get("role") == "compactionSummary":
            parts.append(m["summary"])
        elif isinstance(m.get("content"), str):
            parts.append(m["content"])
        elif isinstance(m.get("content"), list):
            parts += [b.get("text", "") for b in m["content"] if isinstance(b, dict)]
    return "\n".join(parts)


def _assert_facts_kept(path: list[dict[str, Any]], facts=FACTS) -> None:
    text = _context_text(path)
    for fact in facts:
        assert fact in text, f"{fact} lost from the context"


@pytest.mark.parametrize("shape", SHAPES)
def test_shapes_are_what_they_claim(shape):
    build, split, history = SHAPES[shape]
    prep = prepare_compaction(build(), KEEP)
    assert prep is not None
    assert prep.previous_summary == PREVIOUS
    assert prep.is_split_turn is split
    assert bool(prep.messages_to_summarize) is history
    if split:
        assert prep.turn_prefix_messages


@pytest.mark.parametrize("shape", SHAPES)
def test_extractive_keeps_previous_facts(shape):
    path = SHAPES[shape][0]()
    _assert_facts_kept(_compact_path(path, ExtractiveSummarizer()))


def test_extractive_keeps_a_long_previous_summary_within_the_bound():
    # more previous items than the extractive size bound holds: the goal and
    # the first items (a summary states what matters most first) stay whole,
    # and the summary stays within the bound (docs/eval-compaction.md)
    from pi_session.llm.extractive import HISTORY_MAX_TOKENS

    items = "\n".join(f"- item {i} FACT-{i:04d} " + "detail " * 60 for i in range(200))
    previous = f"## Goal\n- the goal\n\n## Critical Context\n{items}"
    path, ids = _base(previous)
    _say(path, ids, "user", "second request")
    _say(path, ids, "assistant", "second answer")
    _say(path, ids, "user", "third request")
    new = _compact_path(path, ExtractiveSummarizer())
    summary = new[-1]["summary"].split("<read-files>")[0].split("<modified-files>")[0]
    assert len(summary) <= HISTORY_MAX_TOKENS * 4
    assert "## Goal\n- the goal\n" in summary
    whole = [i for i in range(200) if f"item {i} FACT-{i:04d} " + "detail " * 59 in summary]
    assert len(whole) >= 5 and whole == list(range(len(whole))), whole


def test_repeated_compactions_carry_every_earlier_fact():
    for summarizer in (ExtractiveSummarizer(),):
        path = shape_history()
        ids = _Ids()
        ids.n = 500
        facts = list(FACTS)
        for round_ in range(3):
            path = _compact_path(path, summarizer)
            _assert_facts_kept(path, facts)
            fact = f"FACT-ROUND-{round_}"
            facts.append(fact)
            # the next stretch of work, with a new fact the user states
            _append(path, ids, message=_msg("user", f"Remember that {fact} must always hold. " + "more work " * 120))
            _say(path, ids, "assistant", "done that")
            _say(path, ids, "user", "next request")
            _say(path, ids, "assistant", "next answer")
            _say(path, ids, "user", "last request")
        path = _compact_path(path, summarizer)
        _assert_facts_kept(path, facts[:-1] + [facts[-1]])


def test_only_turn_prefix_carries_the_previous_summary_verbatim():
    prep = prepare_compaction(shape_only_turn_prefix(), KEEP)

    class Ignorant:
        name = "ignorant"
        kinds: list[str] = []

        async def summarize(self, request):
            self.kinds.append(request.kind)
            return "## Original Request\n- something"

    s = Ignorant()
    result = asyncio.run(compact(prep, s))
    assert s.kinds == ["turn_prefix"]  # the model is not asked about the history
    assert result.summary.startswith(PREVIOUS + SPLIT_TURN_SEPARATOR)
    # with no previous summary the fixed text stands in
    path, ids = [], _Ids()
    _say(path, ids, "user", "long request")
    for step in ("one", "two", "three"):
        _say(path, ids, "assistant", f"step {step}")
    prep = prepare_compaction(path, KEEP)
    assert prep.is_split_turn and not prep.messages_to_summarize and prep.previous_summary is None
    assert asyncio.run(compact(prep, Ignorant())).summary.startswith(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR)


def test_only_turn_prefix_writes_one_cumulative_file_list():
    # pi 1.6 carries the previous summary with its <read-files>/<modified-files>
    # blocks and appends the new ones, so the summary holds two of each; we
    # carry the text without its lists and write one cumulative block
    lists = "\n\n<read-files>\nold/read.py\n</read-files>\n\n<modified-files>\nold/edit.py\n</modified-files>"
    path, ids = _base(PREVIOUS + lists)
    path[-1]["details"] = {"readFiles": ["old/read.py"], "modifiedFiles": ["old/edit.py"]}
    _say(path, ids, "user", "long request")
    call = _msg("assistant", "reading " * 60)
    call["content"].append({"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "new/read.py"}})
    _append(path, ids, message=call)
    _append(path, ids, message={"role": "toolResult", "toolCallId": "t1", "toolName": "read",
                                "content": [{"type": "text", "text": "file body " * 60}], "isError": False, "timestamp": 1})
    for step in ("two", "three"):
        _say(path, ids, "assistant", f"step {step}")
    prep = prepare_compaction(path, KEEP)
    assert prep is not None and prep.is_split_turn and not prep.messages_to_summarize
    assert prep.previous_summary == PREVIOUS + lists
    result = asyncio.run(compact(prep, ExtractiveSummarizer()))
    summary = result.summary
    assert summary.startswith(PREVIOUS + SPLIT_TURN_SEPARATOR)
    assert summary.count("<read-files>") == 1 and summary.count("<modified-files>") == 1
    assert summary.endswith("<read-files>\nnew/read.py\nold/read.py\n</read-files>\n\n"
                            "<modified-files>\nold/edit.py\n</modified-files>")
    assert result.details == {"readFiles": ["new/read.py", "old/read.py"], "modifiedFiles": ["old/edit.py"]}


# --------------------------------------------------------------------------- fake model over HTTP

_PREV_RE = re.compile(r"<previous-summary>\n(.*?)\n</previous-summary>", re.S)


def _merging_model(server) -> None:
    """Make the fake server answer like a model that follows the update
    prompt: the previous summary it was given, plus a new line."""
    plain = server._success

    def success(body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        reply = plain(body, anthropic)
        prompt = body["messages"][-1]["content"]
        m = _PREV_RE.search(prompt if isinstance(prompt, str) else "")
        text = (m.group(1) + "\n- merged new work") if m else "## Original Request\n- from the fake model"
        reply["choices"][0]["message"]["content"] = text
        return reply

    server._success = success


def _model(server) -> OpenAISummarizer:
    return OpenAISummarizer("test-model", base_url=server.openai_base_url, api_key="sk-test", max_retries=0)


@pytest.mark.parametrize("shape", SHAPES)
def test_fake_model_that_merges_keeps_previous_facts(fake_provider, shape):
    _merging_model(fake_provider)
    build, _split, history = SHAPES[shape]
    new = _compact_path(build(), _model(fake_provider))
    _assert_facts_kept(new)
    prompts = [r.json["messages"][-1]["content"] for r in fake_provider.posts()]
    # the previous summary goes to the model exactly when it is asked to merge
    assert sum(f"<previous-summary>\n{PREVIOUS}\n</previous-summary>" in p for p in prompts) == (1 if history else 0)


def test_fake_model_that_ignores_the_prompt_only_turn_prefix(fake_provider):
    # a model that knows nothing of the previous summary: where it is not asked
    # to merge (only a turn prefix), the facts are still all there
    fake_provider.reply_text = "## Original Request\n- whatever the fake model says"
    new = _compact_path(shape_only_turn_prefix(), _model(fake_provider))
    _assert_facts_kept(new)
    assert len(fake_provider.posts()) == 1
