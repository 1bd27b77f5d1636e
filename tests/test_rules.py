"""Each rule pi-session applies in several places has one home; these test
the homes, and the cases where the copies they replaced disagreed, against
pi 1.6 (goldens made with pi-oracle under PI_ORACLE_PI=1.6.0; see each
golden's ``about``)."""

from __future__ import annotations

import copy
import json
import os
import pickle

import pytest
from conftest import GOLDENS

import pi_session
from pi_session import SessionManager
from pi_session.check.report import check_session
from pi_session.stores.listing import list_session_dir
from pi_session.core.paths import paths_equal, resolve_path
from pi_session.storage.problems import CheckProblem, Problem
from pi_session.entries.records import UNDEFINED, Undefined, is_session_header
from pi_session.storage import LineProblem
from pi_session.core.text import js_trim
from pi_session.core.timestamps import MISSING
from pi_session.session.tokens import usage_trusted
from pi_session.session.tree import SessionTree, TreeProblem, find_orphans

RULES = GOLDENS / "rules"


def _session(path, name, session_id="s1", cwd="/x"):
    records = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1767225601000}},
    ]
    if name is not None:
        records.append({"type": "session_info", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z", "name": name})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --------------------------------------------------------------------------- session-name trimming


def test_js_trim_is_javascripts_trim() -> None:
    assert js_trim("\x1cname\x1f") == "\x1cname\x1f"  # str.strip() would remove both
    assert js_trim("\x85a\x85") == "\x85a\x85"
    assert js_trim("\ufeff\u3000\u2028 a\t\n\xa0") == "a"  # str.strip() keeps U+FEFF
    assert js_trim("\u180ea\u200b") == "\u180ea\u200b"


def test_session_names_read_as_pi_16_reads_them(tmp_path) -> None:
    """pi 1.6 trims a session name with JavaScript's trim in getSessionName,
    the listing and appendSessionInfo; the manager and the listing agree
    (they used to differ on "\\x1cname")."""
    golden = json.loads((RULES / "session_names.json").read_text())
    directory = tmp_path / "sessions"
    directory.mkdir()
    for i, (name, listed, got) in enumerate(zip(golden["names"], golden["listed"], golden["getSessionName"])):
        path = _session(directory / f"2026-01-01_s{i}.jsonl", name, f"s{i}")
        manager = SessionManager.open(path, read_only=True)
        assert manager.get_session_name() == got, name
        assert SessionTree(manager.get_entries()).session_name() == got
        assert listed == got
    infos = {info["id"]: info.get("name") for info in list_session_dir(directory)}
    assert [infos[f"s{i}"] for i in range(len(golden["names"]))] == golden["listed"]
    for name, (written, got) in zip(golden["names"], golden["appendSessionInfo"]):
        manager = SessionManager.in_memory("/x")
        manager.append_session_info(name)
        assert manager.get_entries()[-1]["name"] == written
        assert manager.get_session_name() == got


# --------------------------------------------------------------------------- resolve_path


def test_resolve_path_answers_as_pi_16() -> None:
    """Where the two copies disagreed (``//srv/x``, ``file://host/x``) and
    around: pi 1.6's resolvePath(path, cwd, {trim: true})."""
    golden = json.loads((RULES / "resolve_path.json").read_text())
    for case in golden["cases"]:
        if "error" in case:
            with pytest.raises(ValueError):
                resolve_path(case["path"], golden["cwd"], trim=True)
        else:
            assert resolve_path(case["path"], golden["cwd"], trim=True) == case["resolved"], case


def test_resolve_path_home_and_cwd(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert resolve_path("~") == str(tmp_path / "home")
    assert resolve_path("~/a/") == str(tmp_path / "home" / "a")
    assert resolve_path("~x") == str(tmp_path / "~x")
    assert resolve_path("x", "~/b") == str(tmp_path / "home" / "b" / "x")
    assert resolve_path("rel") == str(tmp_path / "rel")
    assert resolve_path("//srv/x") == "/srv/x"
    assert paths_equal("//srv/x/", "file:///srv/x")
    with pytest.raises(ValueError, match="host"):
        paths_equal("file://host/x", "/x")


def test_listing_passes_over_a_header_cwd_pi_cannot_resolve(tmp_path) -> None:
    """pi 1.6's filtered listing throws on a header cwd ``file://host/x``;
    pi-session does not let one file hide the others: it matches nothing."""
    directory = tmp_path / "sessions"
    directory.mkdir()
    _session(directory / "a.jsonl", None, "bad", cwd="file://host/srv/x")
    _session(directory / "b.jsonl", None, "url", cwd="file:///srv/x")
    _session(directory / "c.jsonl", None, "slashes", cwd="//srv/x")
    assert sorted(i["id"] for i in list_session_dir(directory, cwd="/srv/x")) == ["slashes", "url"]


def test_resolve_path_against_the_live_oracle(oracle) -> None:
    """The golden above still matches pi 1.6 (a few cases, one oracle run)."""
    golden = json.loads((RULES / "resolve_path.json").read_text())
    cases = [c for c in golden["cases"] if c["path"] in ("//srv/x", "file:///a%20b", " ./x\u00a0\u2028")]
    for case in cases:
        out = json.loads(oracle("skills", "--cwd", golden["cwd"], "--agent-dir", "/nonexistent-pi-rules/agent",
                                "--no-defaults", "--path", case["path"], pi="1.6.0"))
        assert out["diagnostics"][0]["path"] == case["resolved"] == resolve_path(case["path"], golden["cwd"], trim=True)


# --------------------------------------------------------------------------- header, undefined


def test_is_session_header() -> None:
    assert is_session_header({"type": "session", "id": "x"})
    assert not is_session_header({"type": "session", "id": 1})
    assert not is_session_header({"type": "message", "id": "x"})
    assert not is_session_header(["session"])
    assert not is_session_header(None)


def test_one_typed_undefined() -> None:
    assert Undefined() is UNDEFINED
    assert copy.copy(UNDEFINED) is UNDEFINED and copy.deepcopy([UNDEFINED])[0] is UNDEFINED
    assert pickle.loads(pickle.dumps(UNDEFINED)) is UNDEFINED
    assert pi_session.UNSET is UNDEFINED and MISSING is UNDEFINED
    from pi_session.manager.session_manager import OMITTED

    assert OMITTED is UNDEFINED
    assert repr(UNDEFINED) == "UNDEFINED"


# --------------------------------------------------------------------------- usage trust


def _entry(eid, etype="message", **fields):
    return {"type": etype, "id": eid, "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z", **fields}


def test_usage_trusted_only_after_the_last_edit_or_compaction() -> None:
    a, b = _entry("a"), _entry("b")
    edit, compaction = _entry("e", "context_edit"), _entry("c", "compaction")
    assert usage_trusted(b, [a, b])
    assert usage_trusted(None, [a, b])  # nothing that could make it stale
    assert not usage_trusted(a, [a, edit, b])
    assert usage_trusted(b, [a, compaction, b])
    assert not usage_trusted(None, [a, compaction, b])
    assert usage_trusted({"id": "b"}, [a, edit, b])  # a copy of the entry: matched by its id
    assert not usage_trusted({"id": 7}, [a, edit, _entry(7)])  # only string ids match


# --------------------------------------------------------------------------- orphans and problems


def test_orphans_one_rule_for_the_manager_and_check(tmp_path) -> None:
    path = tmp_path / "o.jsonl"
    _session(path, None)
    with open(path, "a") as f:
        f.write(json.dumps(_entry("b", "custom", parentId="gone", customType="t")) + "\n")
        f.write(json.dumps(_entry("c", "custom", parentId=[1], customType="t")) + "\n")
    manager = SessionManager.open(path, read_only=True)
    from_manager = [(p.line, p.message) for p in manager.problems if p.kind == "orphan"]
    report = check_session(path)
    from_check = [(p.line, p.message) for p in report.problems if p.kind == "orphan"]
    assert from_manager == from_check == [
        (3, "entry b has parentId 'gone', which is not in the file; it is read as a root"),
        (4, "entry c has parentId [1], which is not an id; it is read as a root"),
    ]
    entries = manager.get_entries()
    tree = SessionTree(entries)
    assert [p.entry_id for p in find_orphans(entries, tree.by_id)] == ["b", "c"]
    assert find_orphans(entries[:1], tree.by_id) == []


def test_one_problem_type_one_to_json() -> None:
    line = LineProblem(3, "blank", "blank line skipped")
    tree = TreeProblem(None, "cycle", "entry x closes a cycle", "x")
    check = CheckProblem(None, "leftover-temp", "leftover temp file", True)
    assert all(isinstance(p, Problem) for p in (line, tree, check))
    assert line.to_json() == {"line": 3, "kind": "blank", "message": "blank line skipped", "recovered": False}
    assert LineProblem(0, "cycle", "m", recovered=True).to_json()["line"] is None  # 0: no line
    assert tree.to_json() == {"line": None, "kind": "cycle", "message": "entry x closes a cycle", "entryId": "x"}
    assert check.to_json() == {"line": None, "kind": "leftover-temp", "message": "leftover temp file", "fixable": True, "entryId": None}
    assert line.format("f.jsonl") == "f.jsonl:3: blank line skipped"
    assert check.format("f.jsonl") == "f.jsonl: leftover temp file"
    assert line.format(None) == "<session>:3: blank line skipped"


def test_format_version_one_home() -> None:
    from pi_session.entries.records import CURRENT_SESSION_VERSION, header_version

    assert pi_session.CURRENT_SESSION_VERSION == CURRENT_SESSION_VERSION == 3
    assert header_version({"type": "session"}) == 1
    assert header_version({"version": True}) == 1
    assert header_version({"version": 2}) == 2


def test_no_cross_module_private_imports_in_the_rule_modules() -> None:
    """The modules these rules live in import no other module's ``_name``."""
    import ast
    from pathlib import Path

    src = Path(pi_session.__file__).parent
    owned = [
        "session/tree.py", "stores/listing.py", "entries/records.py", "session/tokens.py", "storage/problems.py", "core/text.py", "storage/versions.py", "core/paths.py",
        "session/context.py", "entries/agent_messages.py", "session/context_edits.py", "entries/system_messages.py", "session/info.py",
        "check/repair.py", "check/report.py", "check/lines.py", "check/records.py", "storage/temps.py",
        "storage/lines.py", "storage/reader.py", "storage/scan.py", "storage/decode.py", "storage/model.py",
        "storage/migration.py",
    ]
    found = []
    for name in owned:
        tree = ast.parse((src / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                found += [f"{name}: {a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
