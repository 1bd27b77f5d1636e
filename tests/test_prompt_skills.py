"""Skills: discovery and validation against pi's goldens, the prompt block,
frontmatter parsing, ignore files, and properties."""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pi_session.prompt import (
    Skill,
    escape_xml,
    format_skills_for_prompt,
    load_skill_from_file,
    load_skills,
    load_skills_from_dir,
    parse_frontmatter,
)
from pi_session.prompt._ignore import IgnoreMatcher
from pi_session.prompt.skills import FrontmatterError
from test_prompt_trees import GOLDENS, ORACLE, SKILL_SCENARIOS, build_all, normalise, skill_md

GOLDEN = json.loads((GOLDENS / "skills.json").read_text())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills") / "root"
    root.mkdir()
    build_all(root)
    return root


def run_scenario(root: Path, name: str):
    sc = SKILL_SCENARIOS[name]
    return load_skills(
        cwd=str(root / sc["cwd"]),
        agent_dir=str(root / sc["agent"]),
        skill_paths=[p.replace("ROOT", str(root)) for p in sc["paths"]],
        include_defaults=sc["defaults"],
    )


def xml_part(block: str) -> str:
    return block[block.index("<available_skills>") :] if block else ""


@pytest.mark.parametrize("name", sorted(SKILL_SCENARIOS))
def test_skills_match_pi(tree: Path, name: str) -> None:
    gold = GOLDEN[name]
    result = run_scenario(tree, name)
    ours = normalise(result.to_dict(), tree)
    assert ours["skills"] == gold["skills"]
    # Messages are our own words; type, path, order and collision details match pi.
    strip = lambda ds: [{k: v for k, v in d.items() if k != "message"} for d in ds]  # noqa: E731
    assert strip(ours["diagnostics"]) == strip(gold["diagnostics"])
    assert all(d["message"] for d in ours["diagnostics"])
    block = normalise(format_skills_for_prompt(result.skills), tree)
    assert xml_part(block) == xml_part(gold["prompt"])
    if gold["prompt"]:
        intro = lambda b: b[: b.index("<available_skills>")]  # noqa: E731
        assert intro(block).startswith("\n\n") and intro(gold["prompt"]).startswith("\n\n")
        assert intro(block).count("\n") == intro(gold["prompt"]).count("\n")


def test_golden_covers_the_interesting_cases() -> None:
    gold = GOLDEN["defaults"]
    names = [s["name"] for s in gold["skills"]]
    assert "hidden-skill" in names and "<name>hidden-skill</name>" not in gold["prompt"]
    assert "yes-flag" in names and "<name>yes-flag</name>" in gold["prompt"]
    assert names.count("good-one") == 1 and names.count("shared-name") == 1
    for absent in ("inner", "pkg", ".hidden", "ignored-skill", "ignored-file", "no-desc", "bad-yaml", "notes"):
        assert absent not in names
    assert [d["type"] for d in gold["diagnostics"]].count("collision") == 2


# --------------------------------------------------------------------------- single files


def one(tmp_path: Path, dirname: str, text: str | bytes, **kw):
    path = tmp_path / dirname / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return load_skill_from_file(str(path), **kw)


def test_valid_skill(tmp_path: Path) -> None:
    skill, diags = one(tmp_path, "ok", skill_md("ok", "Does things."))
    assert diags == []
    assert skill is not None and skill.name == "ok" and skill.base_dir == str(tmp_path / "ok")
    assert skill.to_dict()["sourceInfo"] == {
        "path": str(tmp_path / "ok" / "SKILL.md"),
        "source": "local",
        "scope": "temporary",
        "origin": "top-level",
        "baseDir": str(tmp_path / "ok"),
    }


@pytest.mark.parametrize(
    "dirname,text,loaded,n_warnings",
    [
        ("a", skill_md("a"), False, 1),  # no description
        ("a", skill_md("a", "''"), False, 1),  # empty description
        ("a", skill_md("a", "0"), False, 1),  # falsy number counts as missing
        ("a", skill_md("a", "[x]"), False, 1),  # list description
        ("a", skill_md("a", "{k: v}"), False, 1),  # mapping description
        ("a", skill_md(None, "d"), True, 0),  # name from directory
        ("Bad", skill_md(None, "d"), True, 1),  # upper case
        ("a", skill_md("b", "d"), True, 1),  # mismatch
        ("x--y", skill_md(None, "d"), True, 1),
        ("-x", skill_md(None, "d"), True, 1),
        ("a_b", skill_md("a_b", "d"), True, 1),
        ("a", skill_md("42", "d"), False, 1),  # non-string name
        ("a", skill_md(None, "d", "name: true"), False, 1),
        ("a", skill_md("a", "x" * 1025), True, 1),  # too long, still loaded
        ("a", skill_md("a", "x" * 1024), True, 0),
        ("a", "---\nname: a\ndescription: [oops\n---\n", False, 1),  # invalid YAML
        ("a", "---\nname: a\nname: a\ndescription: d\n---\n", False, 1),  # duplicate key
        ("a", "---\n- just\n- a list\n---\n", False, 1),  # not a mapping
        ("a", "no frontmatter", False, 1),
        ("a", "---\n---\nbody", False, 1),
        ("a", b"---\nname: a\ndescription: caf\xe9\n---\n", True, 0),  # bad UTF-8 replaced
    ],
)
def test_broken_variants(tmp_path: Path, dirname: str, text, loaded: bool, n_warnings: int) -> None:
    skill, diags = one(tmp_path, dirname, text)
    assert (skill is not None) == loaded
    assert len(diags) == n_warnings
    assert all(d["type"] == "warning" and d["path"].endswith("SKILL.md") and d["message"] for d in diags)


def test_long_name_counts_utf16_units(tmp_path: Path) -> None:
    name = "a" * 65
    _, diags = one(tmp_path, name, skill_md(None, "d"))
    assert len(diags) == 1 and "64" in diags[0]["message"]


def test_yaml_12_scalars(tmp_path: Path) -> None:
    skill, _ = one(tmp_path, "a", skill_md("a", "2024-01-01", "disable-model-invocation: on"))
    assert skill is not None and skill.description == "2024-01-01" and not skill.disable_model_invocation
    skill, _ = one(tmp_path, "b", skill_md("b", "d", "disable-model-invocation: True"))
    assert skill is not None and skill.disable_model_invocation
    skill, _ = one(tmp_path, "c", skill_md("c", "d", "disable-model-invocation: 1"))
    assert skill is not None and not skill.disable_model_invocation
    assert parse_frontmatter("---\nn: 012\nh: 0x1f\no: 0o17\nf: 1.5e3\nt: yes\n---\n")[0] == {
        "n": 12, "h": 31, "o": 15, "f": 1500.0, "t": "yes"
    }


def test_unknown_fields_opt_in(tmp_path: Path) -> None:
    text = skill_md("a", "d", "license: MIT\ncolour: blue")
    assert one(tmp_path, "a", text)[1] == []
    diags = one(tmp_path, "a", text, warn_unknown_fields=True)[1]
    assert len(diags) == 1 and "colour" in diags[0]["message"]


def test_parse_frontmatter() -> None:
    assert parse_frontmatter("---\r\na: 1\r\n---\r\n\r\nbody\r\n") == ({"a": 1}, "body")
    assert parse_frontmatter("text") == ({}, "text")
    assert parse_frontmatter("---\nunterminated") == ({}, "---\nunterminated")
    with pytest.raises(FrontmatterError, match="line"):
        parse_frontmatter("---\na: [\n---\n")


# --------------------------------------------------------------------------- discovery


def test_missing_and_file_roots(tmp_path: Path) -> None:
    assert load_skills_from_dir(tmp_path / "nope") == ([], [])
    (tmp_path / "f").write_text("x")
    assert load_skills_from_dir(tmp_path / "f") == ([], [])


def test_symlinked_duplicate_loaded_once(tmp_path: Path) -> None:
    real = tmp_path / "agent" / "skills" / "real"
    real.mkdir(parents=True)
    (real / "SKILL.md").write_text(skill_md("real", "d"))
    extra = tmp_path / "extra"
    extra.mkdir()
    os.symlink(real, extra / "real")
    res = load_skills(cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"), skill_paths=[str(extra)])
    assert [s.name for s in res.skills] == ["real"]
    assert res.diagnostics == []


def test_collision_keeps_first(tmp_path: Path) -> None:
    for where in ("agent/skills/x", ".pi/skills/x"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "SKILL.md").write_text(skill_md("x", where))
    res = load_skills(cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"))
    assert [(s.description, s.source) for s in res.skills] == [("agent/skills/x", "user")]
    (diag,) = res.diagnostics
    assert diag["type"] == "collision"
    assert diag["collision"] == {
        "resourceType": "skill",
        "name": "x",
        "winnerPath": str(tmp_path / "agent/skills/x/SKILL.md"),
        "loserPath": str(tmp_path / ".pi/skills/x/SKILL.md"),
    }


def test_tilde_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "s" / "t").mkdir(parents=True)
    (tmp_path / "s" / "t" / "SKILL.md").write_text(skill_md("t", "d"))
    res = load_skills(cwd="/", agent_dir=str(tmp_path / "none"), skill_paths=["~/s"], include_defaults=False)
    assert [s.file_path for s in res.skills] == [str(tmp_path / "s" / "t" / "SKILL.md")]


@pytest.mark.parametrize(
    "rules,path,ignored",
    [
        (["foo"], "foo", True),
        (["foo"], "a/foo/", True),
        (["foo/"], "foo", False),
        (["foo/"], "foo/", True),
        (["foo/"], "foo/SKILL.md", True),
        (["a/foo"], "b/a/foo", False),
        (["*.md"], "x/y.MD", True),
        (["s?ill"], "skill/", True),
        (["[ab]c"], "bc", True),
        (["[!ab]c"], "bc", False),
        (["**/deep"], "x/y/deep/", True),
        (["a/**"], "a/", False),
        (["a/**"], "a/b", True),
        (["x*", "!xy"], "xy", False),
        (["x*/", "!xy/"], "xy/z", False),
        (["d/", "!d/f"], "d/f", True),
        (["\\!bang"], "!bang", False),  # pi strips the backslash first: a negation at the root
    ],
)
def test_ignore_matcher(tmp_path: Path, rules: list[str], path: str, ignored: bool) -> None:
    (tmp_path / ".gitignore").write_text("\n".join(rules) + "\n")
    m = IgnoreMatcher()
    m.add_rules_from_dir(str(tmp_path), str(tmp_path))
    assert m.ignores(path) is ignored


def test_nested_ignore_rules_are_rooted_at_their_dir(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".ignore").write_text("skip\n/top\n")
    m = IgnoreMatcher()
    m.add_rules_from_dir(str(tmp_path / "sub"), str(tmp_path))
    assert m.ignores("sub/skip/")
    assert m.ignores("sub/top")
    assert not m.ignores("skip/")
    assert not m.ignores("sub/deeper/skip/")  # pi's prefixing anchors the pattern


# --------------------------------------------------------------------------- prompt block


def test_prompt_block_escapes_and_hides() -> None:
    skills = [
        Skill("a&b", "<d> \"q\" 'a'", "/p/<x>/SKILL.md", "/p/<x>"),
        Skill("h", "hidden", "/h/SKILL.md", "/h", disable_model_invocation=True),
    ]
    block = format_skills_for_prompt(skills)
    assert block.startswith("\n\n")
    assert block.endswith(
        "<available_skills>\n  <skill>\n    <name>a&amp;b</name>\n"
        "    <description>&lt;d&gt; &quot;q&quot; &apos;a&apos;</description>\n"
        "    <location>/p/&lt;x&gt;/SKILL.md</location>\n  </skill>\n</available_skills>"
    )
    assert format_skills_for_prompt(skills[1:]) == ""
    assert format_skills_for_prompt([]) == ""
    assert format_skills_for_prompt([skills[0].to_dict()]) == format_skills_for_prompt(skills[:1])


@given(st.text())
def test_escape_xml_round_trips(text: str) -> None:
    escaped = escape_xml(text)
    assert not set("<>\"'") & set(escaped)
    assert html.unescape(escaped) == text


@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=70),
    st.text(min_size=1, max_size=200).filter(lambda s: s.strip() and "\r" not in s and "\x85" not in s),
)
def test_frontmatter_round_trip_and_validation(tmp_path_factory: pytest.TempPathFactory, name: str, desc: str) -> None:
    text = "---\n" + yaml.safe_dump({"name": name, "description": desc}, allow_unicode=True, default_style='"') + "---\nbody\n"
    meta, body = parse_frontmatter(text)
    assert meta == {"name": name, "description": desc} and body == "body"
    base = tmp_path_factory.mktemp("prop")
    skill, diags = one(base, name, text)
    assert skill is not None and skill.name == name and skill.description == desc
    valid = len(name) <= 64 and not name.startswith("-") and not name.endswith("-") and "--" not in name
    assert (diags == []) == (valid and len(desc.encode("utf-16-le")) // 2 <= 1024)


# --------------------------------------------------------------------------- live oracle


@pytest.mark.oracle
@pytest.mark.skipif(shutil.which("node") is None or not ORACLE.exists(), reason="node or pi-oracle missing")
def test_live_oracle_skills(tree: Path) -> None:
    sc = SKILL_SCENARIOS["paths"]
    args = [str(ORACLE), "skills", "--cwd", str(tree / sc["cwd"]), "--agent-dir", str(tree / sc["agent"])]
    for p in sc["paths"]:
        args += ["--path", p]
    theirs = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    ours = run_scenario(tree, "paths").to_dict()
    assert ours["skills"] == theirs["skills"]
    assert [(d["type"], d["path"]) for d in ours["diagnostics"]] == [(d["type"], d["path"]) for d in theirs["diagnostics"]]
