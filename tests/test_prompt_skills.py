"""Skills: discovery and validation against pi 1.6's goldens, the prompt
block (three loading hints), frontmatter parsing (byte-order marks, CRLF,
YAML block scalars), ignore files, and properties."""

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
from pi_session.prompt.ignore import IgnoreMatcher
from pi_session.prompt.skills import FrontmatterError
from shared_paths import needs_oracle
from test_prompt_trees import (
    GOLDENS,
    ORACLE,
    RUNTIME_SKILL_SCENARIOS,
    SKILL_SCENARIOS,
    build_all,
    normalise,
    oracle_package_dir,
    run_runtime_skills,
    skill_args,
    skill_md,
)

GOLDEN = json.loads((GOLDENS / "skills.json").read_text())
RUNTIME_GOLDEN = json.loads((GOLDENS / "skills_runtime.json").read_text())["scenarios"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills") / "root"
    root.mkdir()
    build_all(root)
    return root


def run_scenario(root: Path, name: str):
    """A scenario through :func:`load_skills`; ``resource_loader=False`` is the
    order of pi's exported ``loadSkills`` (what ``pi-oracle skills`` runs)."""
    sc = SKILL_SCENARIOS[name]
    return load_skills(
        cwd=str(root / sc["cwd"]),
        agent_dir=str(root / sc["agent"]),
        skill_paths=[p.replace("ROOT", str(root)) for p in sc["paths"]],
        include_defaults=sc["defaults"],
        resource_loader=False,
    )


def runtime_view(result: dict) -> dict:
    """What pi's run-time skill list decides: which skill holds each name, in
    which order, and the collisions (warnings are compared against loadSkills)."""
    return {
        "skills": [(s["name"], s["filePath"]) for s in result["skills"]],
        "collisions": [d["collision"] for d in result["diagnostics"] if d["type"] == "collision"],
    }


def xml_part(block: str) -> str:
    return block[block.index("<available_skills>") :] if block else ""


def hint(block: str) -> str:
    """Which loading hint a block's second intro line gives (by the tool it names)."""
    line = block.lstrip("\n").split("\n")[1].lower()
    return "bash" if "bash" in line else "read" if "read tool" in line else "indirect"


def strip_messages(diags: list[dict]) -> list[dict]:
    return [{k: v for k, v in d.items() if k != "message"} for d in diags]


@pytest.mark.parametrize("name", sorted(SKILL_SCENARIOS))
def test_skills_match_pi(tree: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree / "home"))  # "~/hs"
    gold = GOLDEN[name]
    result = run_scenario(tree, name)
    ours = normalise(result.to_dict(), tree)
    assert ours["skills"] == gold["skills"]
    # Messages are our own words; type, path, order and collision details match pi.
    assert strip_messages(ours["diagnostics"]) == strip_messages(gold["diagnostics"])
    assert all(d["message"] for d in ours["diagnostics"])
    block = normalise(format_skills_for_prompt(result.skills, SKILL_SCENARIOS[name]["read_tool"]), tree)
    assert xml_part(block) == xml_part(gold["prompt"])
    if gold["prompt"]:
        intro = lambda b: b[: b.index("<available_skills>")]  # noqa: E731
        assert intro(block).startswith("\n\n") and intro(gold["prompt"]).startswith("\n\n")
        assert intro(block).count("\n") == intro(gold["prompt"]).count("\n")
        assert hint(block) == hint(gold["prompt"]) == SKILL_SCENARIOS[name]["read_tool"]


@pytest.mark.parametrize("name", RUNTIME_SKILL_SCENARIOS)
def test_default_order_matches_pi_resource_loader(tree: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # pi 1.6 lists project skills before user skills at run time, so a project
    # skill wins a name it shares with a user skill.
    monkeypatch.setenv("HOME", str(tree / "home"))
    sc = SKILL_SCENARIOS[name]
    result = load_skills(cwd=str(tree / sc["cwd"]), agent_dir=str(tree / sc["agent"]),
                         skill_paths=[p.replace("ROOT", str(tree)) for p in sc["paths"]],
                         include_defaults=sc["defaults"])
    gold = RUNTIME_GOLDEN[name]
    ours = normalise(result.to_dict(), tree)
    assert runtime_view(ours) == runtime_view(gold)
    assert [s["sourceInfo"]["scope"] for s in ours["skills"]] == [s["scope"] for s in gold["skills"]]


@pytest.mark.oracle
@pytest.mark.skipif(not (oracle_package_dir() / "package.json").exists(),
                    reason="pi 1.6 not installed by ../shared/pi-oracle (run it once with PI_ORACLE_PI=1.6.0)")
def test_live_resource_loader_skills(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live = run_runtime_skills(tree)  # finds the oracle's install under the real home
    monkeypatch.setenv("HOME", str(tree / "home"))
    for name in RUNTIME_SKILL_SCENARIOS:
        sc = SKILL_SCENARIOS[name]
        result = load_skills(cwd=str(tree / sc["cwd"]), agent_dir=str(tree / sc["agent"]),
                             skill_paths=[p.replace("ROOT", str(tree)) for p in sc["paths"]],
                             include_defaults=sc["defaults"])
        assert runtime_view(normalise(result.to_dict(), tree)) == runtime_view(live[name]), name


def test_runtime_golden_has_a_user_project_collision() -> None:
    (collision,) = [c for c in runtime_view(RUNTIME_GOLDEN["defaults"])["collisions"] if c["name"] == "good-one"]
    assert collision["winnerPath"] == "<ROOT>/proj/.pi/skills/good-one/SKILL.md"
    assert collision["loserPath"] == "<ROOT>/agent/skills/good-one/SKILL.md"


def test_golden_covers_the_interesting_cases() -> None:
    gold = GOLDEN["defaults"]
    names = [s["name"] for s in gold["skills"]]
    assert "hidden-skill" in names and "<name>hidden-skill</name>" not in gold["prompt"]
    assert "yes-flag" in names and "<name>yes-flag</name>" in gold["prompt"]
    assert names.count("good-one") == 1 and names.count("shared-name") == 1
    for absent in ("inner", "pkg", ".hidden", "ignored-skill", "ignored-file", "no-desc", "bad-yaml", "notes",
                   "notes-list-desc", "list-desc", "num-desc"):
        assert absent not in names
    # 1.6: a BOM is fine, a name differing from its directory is fine, a non-string name falls back
    assert {"bom", "other-name", "num-name", "bool-name"} <= set(names)
    warned = {d["path"].split("/skills/")[1] for d in gold["diagnostics"] if d["type"] == "warning"}
    assert not any(p.startswith(("notes-", "mismatch/")) for p in warned)
    assert {"list-desc/SKILL.md", "num-desc/SKILL.md", "bad-yaml/SKILL.md"} <= warned
    assert [d["type"] for d in gold["diagnostics"]].count("collision") == 2
    editors = {s["name"]: s["description"] for s in GOLDEN["editors"]["skills"]}
    assert editors["bom-crlf"] == "literal one\nliteral two\n" and editors["keep"] == "kept\n"
    assert editors["crlf-folded"] == "a b" and "root-note" in editors
    yaml_read = {s["name"]: s["description"] for s in GOLDEN["yaml"]["skills"]}
    assert yaml_read["tab-separator"] == "value\twith\ttabs" and yaml_read["unknown-tag"] == "d"
    assert yaml_read["merge-plain"] == "m" and "merge" not in yaml_read and "hex" not in yaml_read
    assert [hint(GOLDEN[n]["prompt"]) for n in ("defaults", "defaults-bash", "defaults-indirect")] == [
        "read", "bash", "indirect"]


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


PI_SKILL_FIXTURES = Path("/work/shared/fixtures/pi-tests/skills")


@pytest.mark.parametrize(
    "source,expected",
    [
        # what pi 1.6's loadSkillsFromDir({dir, source}) puts in sourceInfo (checked with node)
        ("test", ("test", "temporary")),
        ("cli", ("cli", "temporary")),
        ("npm:foo", ("npm:foo", "temporary")),
        ("user", ("local", "user")),
        ("project", ("local", "project")),
        ("path", ("local", "temporary")),
    ],
)
def test_load_skills_from_dir_keeps_the_source_name(tmp_path: Path, source: str, expected: tuple[str, str]) -> None:
    if PI_SKILL_FIXTURES.is_dir():
        shutil.copytree(PI_SKILL_FIXTURES, tmp_path / "skills")
    else:  # pi's fixtures live in ../shared; one skill is enough to hold the promise
        (tmp_path / "skills" / "valid-skill").mkdir(parents=True)
        (tmp_path / "skills" / "valid-skill" / "SKILL.md").write_text(skill_md("valid-skill", "d"))
    skills, _ = load_skills_from_dir(tmp_path / "skills", source)
    assert skills
    for skill in skills:
        info = skill.to_dict()["sourceInfo"]
        assert (info["source"], info["scope"]) == expected
        assert info["origin"] == "top-level" and info["baseDir"] == skill.base_dir
        assert Skill.from_dict(skill.to_dict()).to_dict() == skill.to_dict()  # the name survives pi's JSON
    one_file, _ = load_skill_from_file(skills[0].file_path, source)
    assert one_file is not None and one_file.to_dict()["sourceInfo"]["source"] == expected[0]


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
        ("a", skill_md("b", "d"), True, 0),  # 1.6: a name may differ from its directory
        ("x--y", skill_md(None, "d"), True, 1),
        ("-x", skill_md(None, "d"), True, 1),
        ("a_b", skill_md("a_b", "d"), True, 1),
        ("a", skill_md("42", "d"), True, 0),  # 1.6: a non-string name falls back to the directory
        ("a", skill_md(None, "d", "name: true"), True, 0),
        ("A", skill_md("", "d"), True, 1),  # empty name: the directory's, which is invalid here
        ("a", skill_md("a", "x" * 1025), True, 1),  # too long, still loaded
        ("a", skill_md("a", "x" * 1024), True, 0),
        ("a", "---\nname: a\ndescription: [oops\n---\n", False, 1),  # invalid YAML
        ("a", "---\nname: a\nname: a\ndescription: d\n---\n", False, 1),  # duplicate key
        ("a", "---\n- just\n- a list\n---\n", False, 1),  # not a mapping
        ("a", "no frontmatter", False, 1),
        ("a", "---\n---\nbody", False, 1),
        ("a", b"---\nname: a\ndescription: caf\xe9\n---\n", True, 0),  # bad UTF-8 replaced
        ("a", b"\xef\xbb\xbf---\r\nname: a\r\ndescription: d\r\n---\r\n", True, 0),  # BOM + CRLF
        ("a", skill_md("a", "[x]", "name: [1]"), False, 1),  # only the description is reported
    ],
)
def test_broken_variants(tmp_path: Path, dirname: str, text, loaded: bool, n_warnings: int) -> None:
    skill, diags = one(tmp_path, dirname, text)
    assert (skill is not None) == loaded
    assert len(diags) == n_warnings
    assert all(d["type"] == "warning" and d["path"].endswith("SKILL.md") and d["message"] for d in diags)


def test_non_skill_markdown_files_are_skipped_silently(tmp_path: Path) -> None:
    cases = {
        "plain.md": "# Just notes\n",
        "bad-yaml.md": "---\ndescription: [oops\n---\n",
        "list-desc.md": skill_md("x", "[a]"),
        "empty-desc.md": skill_md("x", "''"),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        assert load_skill_from_file(str(tmp_path / name)) == (None, [])
    (tmp_path / "ok.md").write_text(skill_md(None, "d"))
    skill, diags = load_skill_from_file(str(tmp_path / "ok.md"))
    assert skill is not None and skill.name == tmp_path.name  # the directory's name
    assert all(d["type"] == "warning" for d in diags)  # "_" in a pytest directory name is not allowed
    skills, diags = load_skills_from_dir(tmp_path)
    assert [s.file_path for s in skills] == [str(tmp_path / "ok.md")]


@pytest.mark.parametrize(
    "yaml_text,description",
    [
        ("description: |\n  one\n  two", "one\ntwo\n"),  # literal block ending the frontmatter keeps its newline
        ("description: >\n  one\n  two", "one two\n"),
        ("description: |-\n  one", "one"),
        ("description: |+\n  one\n", "one\n"),
        ("description: |\n  one\n\nname: n", "one\n"),
        ("description: plain", "plain"),
        ('description: "quoted"', "quoted"),
    ],
)
def test_block_scalars_read_as_pi_reads_them(tmp_path: Path, yaml_text: str, description: str) -> None:
    plain = "---\n" + yaml_text + "\n---\nBody.\n"
    assert parse_frontmatter(plain)[0]["description"] == description
    windows = "\ufeff" + plain.replace("\n", "\r\n")
    assert parse_frontmatter(windows) == parse_frontmatter(plain)
    old_mac = plain.replace("\n", "\r")
    assert parse_frontmatter(old_mac) == parse_frontmatter(plain)


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
    assert parse_frontmatter("\ufeff---\na: 1\n---\nbody") == ({"a": 1}, "body")
    assert parse_frontmatter("x\ufeff---\na: 1\n---\n")[0] == {}  # only a leading BOM goes
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


@pytest.mark.parametrize("resource_loader", [True, False])
def test_collision_keeps_first(tmp_path: Path, resource_loader: bool) -> None:
    # pi 1.6 at run time keeps the project skill; its exported loadSkills the user one
    for where in ("agent/skills/x", ".pi/skills/x"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "SKILL.md").write_text(skill_md("x", where))
    res = load_skills(cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"), resource_loader=resource_loader)
    winner, loser = ("project", "user") if resource_loader else ("user", "project")
    where = {"user": "agent/skills/x", "project": ".pi/skills/x"}
    assert [(s.description, s.source) for s in res.skills] == [(where[winner], winner)]
    (diag,) = res.diagnostics
    assert diag["type"] == "collision"
    assert diag["collision"] == {
        "resourceType": "skill",
        "name": "x",
        "winnerPath": str(tmp_path / where[winner] / "SKILL.md"),
        "loserPath": str(tmp_path / where[loser] / "SKILL.md"),
    }
    prompt = format_skills_for_prompt(res.skills)
    assert f"<location>{tmp_path / where[winner] / 'SKILL.md'}</location>" in prompt


def test_tilde_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "s" / "t").mkdir(parents=True)
    (tmp_path / "s" / "t" / "SKILL.md").write_text(skill_md("t", "d"))
    res = load_skills(cwd="/", agent_dir=str(tmp_path / "none"), skill_paths=["~/s"], include_defaults=False)
    assert [s.file_path for s in res.skills] == [str(tmp_path / "s" / "t" / "SKILL.md")]
    # cwd and agent dir are resolved too
    (tmp_path / "agent" / "skills" / "u").mkdir(parents=True)
    (tmp_path / "agent" / "skills" / "u" / "SKILL.md").write_text(skill_md("u", "d"))
    monkeypatch.chdir(tmp_path)
    res = load_skills(cwd="~", agent_dir="agent")
    assert [(s.name, s.source) for s in res.skills] == [("u", "user")]
    assert res.skills[0].file_path == str(tmp_path / "agent" / "skills" / "u" / "SKILL.md")


def test_same_file_by_two_spellings_loaded_once(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "one.md").write_text(skill_md("one", "d"))
    res = load_skills(cwd=str(tmp_path), agent_dir=str(tmp_path / "none"), include_defaults=False,
                      skill_paths=["s/one.md", " ./s/../s/one.md ", f"file://{tmp_path}/s/one.md"])
    assert [s.name for s in res.skills] == ["one"] and res.diagnostics == []


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
    blocks = {tool: format_skills_for_prompt(skills, tool) for tool in ("read", "bash", "indirect")}
    assert blocks["read"] == block
    assert len(set(blocks.values())) == 3
    assert {tool: hint(b) for tool, b in blocks.items()} == {"read": "read", "bash": "bash", "indirect": "indirect"}
    assert len({xml_part(b) for b in blocks.values()}) == 1
    with pytest.raises(ValueError, match="grep"):
        format_skills_for_prompt(skills, "grep")


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
@needs_oracle
def test_live_oracle_skills(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The oracle's install stays where it is ($PI_ORACLE_HOME, else under the real home).
    env = dict(os.environ, PI_ORACLE_PI="1.6.0", HOME=str(tree / "home"))
    env.setdefault("PI_ORACLE_HOME", os.path.expanduser("~/.cache/pi-oracle"))
    monkeypatch.setenv("HOME", str(tree / "home"))
    names = sorted(SKILL_SCENARIOS)
    (tree.parent / "skill-calls.json").write_text(json.dumps([skill_args(tree, SKILL_SCENARIOS[n]) for n in names]))
    out = json.loads(subprocess.run([str(ORACLE), "batch", str(tree.parent / "skill-calls.json")], capture_output=True,
                                    text=True, check=True, env=env, cwd=tree).stdout)
    for name, item in zip(names, out):
        theirs = item["json"]
        result = run_scenario(tree, name)
        assert result.to_dict()["skills"] == theirs["skills"], name
        assert strip_messages(result.to_dict()["diagnostics"]) == strip_messages(theirs["diagnostics"]), name
        block = format_skills_for_prompt(result.skills, SKILL_SCENARIOS[name]["read_tool"])
        assert xml_part(block) == xml_part(theirs["prompt"]) and hint(block) == hint(theirs["prompt"])
