"""The entry model (``pi_session.entries``): every record type pi writes
has a descriptor; the one text-field walk finds text planted in every
declared text field of every type, role and block, and nothing planted in
the structural ones; every key of the real sessions (pi's fixtures, the
goldens) is declared; the descriptors' context contributions are pi's."""

from __future__ import annotations

import itertools
import json
import typing
from pathlib import Path

import pytest

from shared_paths import FIXTURES
from pi_session import entries
from pi_session.entries import DESCRIPTORS, ENTRY_TYPES, FIELD_KINDS, descriptor_for, entry_type, replace_strings, text_fields
from pi_session.entries.base import BINARY, JSON, PLAIN, SIGNATURE, TEXT, Content, Shape, Variant
from pi_session.entries.registry import RECORD, UNKNOWN
from pi_session.entries.records import HEADER_TYPE

ROOT = Path(__file__).resolve().parent
WIRE_TYPES = {"session", *ENTRY_TYPES}


def _real_records() -> list[dict]:
    """Every record of pi's fixture sessions and of the goldens' sessions."""
    paths = sorted((ROOT / "goldens").rglob("*.jsonl")) + sorted(FIXTURES.glob("*.jsonl"))
    out = []
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
    return out


def test_every_type_pi_writes_has_a_descriptor_and_nothing_else_does():
    assert set(DESCRIPTORS) == WIRE_TYPES
    assert set(typing.get_args(entries.EntryType)) == set(ENTRY_TYPES)
    for wire, descriptor in DESCRIPTORS.items():
        assert descriptor.TYPE == wire and descriptor.summary
        assert descriptor_for(wire) is descriptor and descriptor_for({"type": wire}) is descriptor
        module = __import__(f"pi_session.entries.{'header' if wire == 'session' else wire}", fromlist=["TYPE"])
        assert module.TYPE == wire and module.DESCRIPTOR is descriptor
        shape = descriptor.shape
        assert typing.get_type_hints(shape)["type"] == typing.Literal[wire]
    for odd in ("weird", None, 3, "", "Message"):
        assert descriptor_for({"type": odd}) is UNKNOWN and entry_type({"type": odd}) == "unknown"
    assert entry_type("not a record") == "unknown" and descriptor_for([]) is UNKNOWN
    assert entries.header.TYPE == HEADER_TYPE


def test_every_type_of_the_real_sessions_is_known():
    kinds = {r.get("type") for r in _real_records()}
    assert {k for k in kinds if k not in DESCRIPTORS} <= {"weird\x1b[1mtype"}  # one golden's deliberately odd type
    assert WIRE_TYPES <= kinds  # the fixtures hold every type: the test below walks real records of each


# --- planting text in every declared field --------------------------------

_counter = itertools.count()


def _token(prefix: str) -> str:
    return f"{prefix}{next(_counter)}"


def _samples(role) -> list[tuple[object, set[str]]]:
    """Values for a field of ``role``, each with the text the walk must find
    in it: one per alternative (variant tag, content form)."""
    if role is PLAIN or role is BINARY:
        return [(_token("plain-"), set())]  # an id or a name: no blanks, short
    if role is TEXT:
        text = _token("text ")
        return [(text, {text})]
    if role is SIGNATURE:
        opaque, inner = _token("sig-"), _token("reasoning ")
        return [(opaque, {opaque}), (json.dumps({"type": "reasoning", "id": "rs", "summary": [{"text": inner}]}), {inner, "reasoning", "rs"})]
    if role is JSON:
        # names that are structural elsewhere are text inside free JSON
        a, b, c = _token("json "), _token("id-"), _token("model-")
        return [({"note": a, "id": b, "provider": {"model": [c]}}, {a, b, c})]
    if isinstance(role, Content):
        text = _token("content ")
        return [(text, {text})] + [([value], found) for value, found in _samples(role.blocks)]
    if isinstance(role, Variant):
        out = []
        for tag, shape in [*role.shapes.items(), (_token("new-"), role.other)]:
            for value, found in _samples(shape):
                out.append(({**value, role.key: tag}, found))
        return out
    assert isinstance(role, Shape), role
    per_field = {key: _samples(sub) for key, sub in role.fields.items()}
    n = max((len(v) for v in per_field.values()), default=1)
    out = []
    for i in range(n):
        value, found = {}, set()
        for key, alternatives in per_field.items():
            v, f = alternatives[i % len(alternatives)]
            value[key] = v
            found |= f
        extra = _token("undeclared ")  # a field pi adds later is text until declared
        value["newField"] = extra
        out.append((value, found | {extra}))
    return out


@pytest.mark.parametrize("wire", sorted(WIRE_TYPES | {"unknown"}))
def test_the_walk_finds_text_in_every_declared_field_and_nothing_else(wire):
    descriptor = UNKNOWN if wire == "unknown" else DESCRIPTORS[wire]
    samples = _samples(descriptor.fields)
    assert samples
    for record, planted in samples:
        record["type"] = "a-new-type" if wire == "unknown" else wire
        fields = list(text_fields(record))
        assert {f.text for f in fields} == planted, record
        assert all(f.kind in FIELD_KINDS for f in fields)
        # the rewrite walks the same fields
        changed = replace_strings(record, lambda path, text: f"<{text}>")
        assert {f.text for f in text_fields(changed)} == {f"<{t}>" for t in planted}
        assert replace_strings(record, lambda path, text: text) is record


def test_a_structural_string_with_blanks_or_too_long_is_text():
    record = {"type": "label", "id": "an id with blanks", "parentId": "x" * 300, "timestamp": "t", "targetId": "a", "label": "l"}
    assert [f.path for f in text_fields(record)] == ["id", "parentId", "label"]


def test_the_kinds_follow_the_role_and_the_block():
    record = {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": {
        "role": "assistant", "errorMessage": "went wrong", "content": [
            {"type": "text", "text": "hello there"},
            {"type": "thinking", "thinking": "let me see", "thinkingSignature": json.dumps({"summary": [{"text": "raw thought"}]})},
            {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls -la"}},
            {"type": "image", "data": "iVBORw0KGgo" * 10, "mimeType": "image/png"},
        ]}}
    assert [(f.path, f.kind) for f in text_fields(record)] == [
        ("message.errorMessage", "assistant text"),
        ("message.content[0].text", "assistant text"),
        ("message.content[1].thinking", "thinking"),
        ("message.content[1].thinkingSignature.summary[0].text", "thinking"),
        ("message.content[2].arguments.command", "tool-call arguments"),
    ]


def test_every_key_of_the_real_sessions_is_declared():
    """The declarations cover what pi writes: no key of a real record falls
    to a shape's ``rest`` (a new key pi writes shows up here)."""
    undeclared: set[tuple[str, str]] = set()

    def walk(value, role, where):
        if isinstance(value, dict) and isinstance(role, (Shape, Variant)):
            shape = role if isinstance(role, Shape) else role.shapes.get(value.get(role.key), role.other)
            for key, item in value.items():
                if key in shape.fields:
                    walk(item, shape.fields[key], f"{where}.{key}")
                else:
                    undeclared.add((where, key))
        elif isinstance(value, list) and isinstance(role, Content):
            for block in value:
                walk(block, role.blocks, f"{where}[]")

    for record in _real_records():
        if record.get("type") in DESCRIPTORS:
            walk(record, RECORD, str(record.get("type")))
    # deliberately odd records of the goldens
    assert undeclared <= {("message.message", "extra"), ("message.message", "content"), ("context_edit.replacement", "nocontent")}


def test_the_descriptors_contribute_the_context_messages_pi_does():
    """What each type contributes (pi 1.6's sessionEntryToContextMessages;
    the projection goldens check whole contexts against pi)."""
    base = {"id": "e", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}
    user = {"role": "user", "content": None, "timestamp": 1}
    system = {"role": "system", "content": "prompt", "timestamp": 1}
    compaction = {**base, "type": "compaction", "summary": "s", "firstKeptEntryId": "e", "tokensBefore": 5, "systemMessage": system}
    cases = {
        "message": ({**base, "type": "message", "message": user}, [{**user, "content": []}], [{**user, "content": []}]),
        "custom_message": ({**base, "type": "custom_message", "customType": "x", "content": "c", "display": True}, 1, 1),
        "branch_summary": ({**base, "type": "branch_summary", "fromId": "e", "summary": ""}, [], []),
        "compaction": (compaction, [], 2),
    }
    for wire, (entry, elsewhere, leading) in cases.items():
        for flag, want in ((False, elsewhere), (True, leading)):
            got = entries.entry_messages(entry, leading=flag)
            assert (len(got) if isinstance(want, int) else got) == want, (wire, flag)
    assert entries.entry_messages(compaction, leading=True)[0] is system
    assert entries.entry_messages(compaction, leading=True)[1]["role"] == "compactionSummary"
    for wire in ("thinking_level_change", "model_change", "custom", "label", "session_info", "context_edit", "usage", "new"):
        assert entries.entry_messages({**base, "type": wire, "message": user, "summary": "s"}, leading=True) == []


def test_only_entries_with_cut_roles_may_be_cut_points():
    assert {t for t, d in DESCRIPTORS.items() if d.cut_point} == {"message", "custom_message", "branch_summary"}
    assert not DESCRIPTORS["compaction"].cut_point
    assert entries.TURN_START_ROLES < entries.CUT_POINT_ROLES <= entries.MESSAGE_ROLES


def test_questions_answer_from_the_descriptors():
    """The named types and roles are the descriptors' own; a predicate never
    raises on a record that is not an object or holds an unhashable type/role."""
    from pi_session.entries import MESSAGE_ROLES, questions as q

    assert {q.USER, q.ASSISTANT, q.TOOL_RESULT, q.BASH_EXECUTION, q.CUSTOM_ROLE, q.HOOK_MESSAGE, q.SYSTEM, *q.SUMMARY_ROLES} <= MESSAGE_ROLES
    assert q.SUMMARY_TYPES | q.SETTING_TYPES <= set(ENTRY_TYPES)
    assert q.CONTEXT_TYPES == {"message", "custom_message", "branch_summary", "compaction"}
    assert q.may_contribute({"type": "custom_message"}) and not q.may_contribute({"type": ["message"]})
    assert q.is_summary({"type": "compaction"}) and q.is_summary({"type": "branch_summary"})
    assert not q.is_summary({"type": ["compaction"]}) and not q.is_summary("compaction")
    assert q.is_summary_message({"role": "compactionSummary"}) and not q.is_summary_message({"role": {}})
    assert q.message_of({"type": "message", "message": "text"}) is None
    assert q.is_tool_result(q.message_of({"type": "message", "message": {"role": "toolResult"}}))
    assert not q.is_assistant(None)
