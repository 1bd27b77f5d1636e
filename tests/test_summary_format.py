"""The summary format is one table (pi_session.compaction.summary_format)
that the prompts, the parser, the repair of a model's summary, the
extractive summarizer and the probes all read: their headings, sections and
limits are computed from it here, and a copy of the table with one more
section changes what the table-driven functions produce."""

from __future__ import annotations

import asyncio
import dataclasses
import re

from pi_session.compaction import (
    HISTORY_FORMAT,
    SECTIONS,
    TURN_PREFIX_FORMAT,
    TURN_PREFIX_SECTIONS,
    SummarySection,
    ensure_sections,
    format_template,
    parse_summary_sections,
)
from pi_session.compaction.branch_summary import BRANCH_INSTRUCTIONS
from pi_session.compaction.probes import PROBE_KINDS, PROBE_SECTIONS, compute_probes
from pi_session.compaction.summary import (
    HISTORY_INSTRUCTIONS,
    SUMMARY_SECTIONS,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_INSTRUCTIONS,
    build_summary_request,
)
from pi_session.compaction.summary_format import FILE_LIST_TAGS, section, section_keys
from pi_session.llm import ExtractiveSummarizer

HEADING = re.compile(r"^#{2,3} .+$", re.M)


def headings(text: str) -> list[str]:
    return HEADING.findall(text)


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "x",
        "provider": "x",
        "model": "x",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }


def summarize(kind: str, messages: list[dict]) -> str:
    request = build_summary_request(kind, messages)
    return asyncio.run(ExtractiveSummarizer().summarize(request))


HISTORY = [
    user("Please add a --json flag to the export command so scripts can read it"),
    assistant("I'll use the existing json writer. Next I will add the flag to export."),
    user("You must never change the default output format of export."),
]


def test_wire_headings_are_pi_1_6s():
    assert SUMMARY_SECTIONS == (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    )
    assert [s.heading for s in TURN_PREFIX_SECTIONS] == [
        "## Original Request",
        "## Progress So Far",
        "## Context Needed to Continue",
    ]
    assert FILE_LIST_TAGS == ("read-files", "modified-files")


def test_prompt_headings_are_the_tables():
    table = [s.heading for s in SECTIONS]
    for instructions in (HISTORY_INSTRUCTIONS, UPDATE_INSTRUCTIONS, BRANCH_INSTRUCTIONS):
        assert headings(instructions) == table
    assert headings(TURN_PREFIX_INSTRUCTIONS) == [s.heading for s in TURN_PREFIX_SECTIONS]
    for s in SECTIONS:
        if not s.container:
            assert f"{s.heading}\n{s.hint}" in HISTORY_INSTRUCTIONS


def test_extractive_output_headings_are_the_tables():
    assert headings(summarize("history", HISTORY)) == [s.heading for s in HISTORY_FORMAT.sections]
    assert headings(summarize("update", HISTORY)) == [s.heading for s in HISTORY_FORMAT.sections]
    assert headings(summarize("branch", HISTORY)) == [s.heading for s in SECTIONS if s.in_branch]
    assert headings(summarize("turn_prefix", HISTORY)) == [s.heading for s in TURN_PREFIX_FORMAT.sections]


def test_parser_reads_every_section_of_the_table():
    text = "\n\n".join(
        s.heading if s.container else f"{s.heading}\n- item of {s.key}" for s in SECTIONS
    )
    parsed = parse_summary_sections(text)
    assert list(parsed) == section_keys(SECTIONS)
    assert parsed == {k: [f"item of {k}"] for k in section_keys(SECTIONS)}
    for s in SECTIONS + TURN_PREFIX_SECTIONS:
        for title in (s.title, *s.aliases):
            if not s.container:
                assert parse_summary_sections(f"## {title}\n- x")[s.key] == ["x"]
    # the extractive summary parses back into the same sections
    parsed = parse_summary_sections(summarize("history", HISTORY))
    assert parsed["goal"][0].startswith("Please add a --json flag")
    assert parsed["constraints"] == ["You must never change the default output format of export."]


def test_repair_adds_the_tables_headings():
    repaired = ensure_sections("## Goal\n- x")
    assert headings(repaired) == list(SUMMARY_SECTIONS)


def test_probe_kinds_belong_to_sections_of_the_table():
    claimed = [k for s in SECTIONS for k in s.probes]
    assert len(claimed) == len(set(claimed))
    assert set(PROBE_SECTIONS) == set(PROBE_KINDS)
    keys = {s.key for s in SECTIONS}
    for kind, where in PROBE_SECTIONS.items():
        assert where in keys or where in FILE_LIST_TAGS, kind


def test_probe_and_extractive_limits_are_the_tables():
    limit = section("constraints").max_items
    assert limit
    said = [
        "You must keep Python 3.9 support in setup.cfg.",
        "Never push directly to the release branch.",
        "Always run ruff before committing changes.",
        "Only touch files under src/exporter for this task.",
        "You must write docstrings for public functions.",
        "Never print secrets from environment variables.",
        "Always quote shell arguments inside scripts.",
        "Only use httpx for network calls, not requests.",
        "You must preserve byte order marks in fixtures.",
        "Never delete golden files during refactors.",
        "Always prefer pathlib over os.path helpers.",
        "Only add dependencies that ship wheels for arm64.",
    ]
    assert len(said) > limit
    messages = [user(s) for s in said]
    probes = [p for p in compute_probes(messages) if p.kind == "constraint"]
    assert [p.expected for p in probes] == said[-limit:]
    parsed = parse_summary_sections(summarize("history", messages))
    assert len(parsed["constraints"]) == limit


def test_a_copy_of_the_table_with_one_more_section_drives_prompt_parser_and_repair():
    extra = SummarySection("risks", "## Risks", "- <what could go wrong>", aliases=("open risks",))
    table = (*SECTIONS, extra)
    template = format_template(table)
    assert template.endswith("## Risks\n- <what could go wrong>")
    assert headings(template) == [s.heading for s in table]
    parsed = parse_summary_sections("## Goal\n- g\n## Open Risks\n- r", formats=(table,))
    assert list(parsed) == section_keys(table) and parsed["risks"] == ["r"] and parsed["goal"] == ["g"]
    assert headings(ensure_sections("## Goal\n- g", [s.heading for s in table]))[-1] == "## Risks"
    # a changed limit is a different row, not another file to edit
    tighter = dataclasses.replace(section("constraints"), max_items=2)
    assert tighter.max_items == 2 and section("constraints").max_items != 2
