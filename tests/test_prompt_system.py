"""The sectioned system prompt: structure compared with pi 1.6's (goldens of
``pi-oracle system-prompt-sections``), plus unit and property tests.

pi's prose differs from ours, so results are reduced to a structure before
comparing: section names and order, tag wrapping, the state's shape, exact
caller-provided text (tool lines, guidelines, addendum, context files, extra
sections, cwd, skills XML), the rule bullets' order and dedup (built-in
bullets classified by the shells they name), which skills loading hint is
used, and the patch's keys."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_session.prompt import (
    DEFAULT_TOOLS,
    SECTION_NAME_RE,
    BuildSystemPromptOptions,
    DocsLocations,
    Skill,
    build_system_prompt,
    build_system_prompt_sections,
    build_system_prompt_state,
    package_docs_locations,
    describe_system_prompt,
    diff_system_prompt_sections,
    format_context_files,
    render_system_prompt_state,
    skill_read_tool,
)
from shared_paths import needs_oracle
from test_prompt_trees import GOLDENS, ORACLE, PATCH_SCENARIOS, PROMPT_SCENARIOS, SKILLS

GOLDEN = json.loads((GOLDENS / "system_prompt.json").read_text())
PROMPTS = GOLDEN["prompts"]


# --------------------------------------------------------------------------- structure


def _trim_trailing_lines(text: str) -> str:
    """Content as compared: pi keeps a context file's final newline (and
    blank lines) before the closing tag, pi-session leaves them out."""
    body = text.rstrip()
    tail = text[len(body):]
    return body if ("\n" in tail or "\r" in tail) else text


def _unwrap(name: str, text: str) -> str:
    assert text.startswith(f"<{name}>\n") and text.endswith(f"\n</{name}>"), (name, text)
    return text[len(name) + 3 : -(len(name) + 4)]


def _shells(text: str) -> str:
    low = text.lower()
    named = [shell for shell in ("bash", "powershell") if shell in low]
    return "builtin" + (":" + "+".join(named) if named else "")


def _context(body: str) -> dict:
    heading, _, rest = body.partition("\n\n")
    blocks = []
    while rest:
        prefix = '<project_instructions path="'
        assert rest.startswith(prefix), rest[:80]
        path_end = rest.index('">\n')
        end = rest.index("\n</project_instructions>", path_end + 2)
        blocks.append([rest[len(prefix) : path_end], _trim_trailing_lines(rest[path_end + 3 : end])])
        rest = rest[end + len("\n</project_instructions>") :]
        if rest:
            assert rest.startswith("\n\n")
            rest = rest[2:]
    return {"heading_lines": len(heading.split("\n")), "files": blocks}


def _skills(body: str) -> dict:
    intro, _, xml = body.partition("\n\n<available_skills>")
    lines = intro.split("\n")
    loading = lines[1].lower() if len(lines) > 1 else ""
    hint = "bash" if "bash" in loading else "read" if "read tool" in loading else "indirect"
    return {"intro_lines": len(lines), "hint": hint, "xml": "<available_skills>" + xml}


def section_structure(name: str, text: str, options: dict) -> object:
    """One section reduced to what must agree with pi."""
    extra = {k: v for k, v in (options.get("sections") or {}).items() if v}
    if name == "preamble":
        return options["customPrompt"] if options.get("customPrompt") else ("<default>", text.count("\n\n"))
    body = _unwrap(name, text)
    if name in extra:
        return body
    if name == "tools":
        listed, _, note = body.partition("\n\n")
        return {"listed": listed, "note_lines": len(note.split("\n"))}
    if name == "rules":
        caller = {g.strip() for gs in (options.get("toolGuidelines") or {}).values() for g in gs}
        caller |= {g.strip() for g in options.get("promptGuidelines") or []}
        caller.discard("")
        lines = body.split("\n")
        assert all(line.startswith("- ") for line in lines), lines
        return [f"caller:{line[2:]}" if line[2:] in caller else _shells(line[2:]) for line in lines]
    if name == "docs":
        return "<docs>"
    if name == "project_context":
        return _context(body)
    if name == "skills":
        return _skills(body)
    return body  # addendum, cwd


def structure(result: dict, options: dict) -> dict:
    """A ``system-prompt-sections`` result reduced to what must agree with pi."""
    if "error" in result:
        return {"error": True}
    sections, state = result["sections"], result["state"]
    assert result["order"] == list(sections)
    forced = "sections" not in state
    if not forced:
        assert state == {"content": "", "sections": sections}
    rendered = render_system_prompt_state(state)
    assert result["text"] == rendered, "text must be the render of the state"
    return {
        "order": result["order"],
        "state": sorted(state),
        "forced": state["content"] if forced else None,
        "sections": {name: section_structure(name, text, options) for name, text in sections.items()},
    }


PI_DOCS = {"readme": "/pi/README.md", "docs": "/pi/docs", "examples": "/pi/examples"}
"""pi names its own package directory in the docs section; ours has that
section only when given it, so comparisons with pi give it."""


def ours(options: dict, previous: dict | None = None) -> dict:
    try:
        return describe_system_prompt({**options, "docs": PI_DOCS}, previous)
    except ValueError as exc:
        return {"error": str(exc)}


@pytest.mark.parametrize("name", sorted(PROMPT_SCENARIOS))
def test_structure_matches_pi(name: str) -> None:
    case = PROMPTS[name]
    assert case["options"] == PROMPT_SCENARIOS[name], "goldens are stale: regenerate them"
    assert structure(ours(case["options"]), case["options"]) == structure(case["result"], case["options"])


def _previous(spec: dict, result_of) -> dict:
    return result_of(spec["@"])["sections"] if "@" in spec else spec


def patch_structure(patch: dict | None, sections: dict) -> list | None:
    if patch is None:
        return None
    return [[name, None if text is None else ("current" if text == sections.get(name) else text)] for name, text in patch.items()]


@pytest.mark.parametrize("name", sorted(PATCH_SCENARIOS))
def test_patch_matches_pi(name: str) -> None:
    options_name, previous = PATCH_SCENARIOS[name]
    gold = GOLDEN["patches"][name]
    assert gold["options"] == options_name and gold["previous"] == previous, "goldens are stale: regenerate them"
    options = PROMPT_SCENARIOS[options_name]
    mine = ours(options, _previous(previous, lambda n: ours(PROMPT_SCENARIOS[n])))
    theirs_sections = PROMPTS[options_name]["result"]["sections"]
    assert patch_structure(mine["patch"], mine["sections"]) == patch_structure(gold["patch"], theirs_sections)


def test_goldens_cover_the_interesting_cases() -> None:
    # Each file-operations rule variant, an error, a forced state, a replaced and an appended built-in.
    rules = {n: structure(PROMPTS[n]["result"], PROMPTS[n]["options"])["sections"]["rules"] for n in
             ("bash-only", "powershell-only", "bash-powershell", "bash-grep", "bash-hidden-grep", "hidden-bash")}
    assert rules["bash-only"][0] == "builtin:bash"
    assert rules["powershell-only"][0] == "builtin:powershell"
    assert rules["bash-powershell"][0] == "builtin:bash+powershell"
    assert rules["bash-hidden-grep"][0] == "builtin:bash"
    assert rules["bash-grep"] == rules["hidden-bash"] == ["builtin", "builtin"]
    assert PROMPTS["bad-name-upper"]["result"].keys() == {"error"}
    assert "sections" not in PROMPTS["force"]["result"]["state"]
    assert PROMPTS["sections-builtin-absent"]["result"]["order"][-3:] == ["skills", "project_context", "addendum"]
    hints = {n: structure(PROMPTS[n]["result"], PROMPTS[n]["options"])["sections"]["skills"]["hint"]
             for n in ("everything", "skills-bash", "hidden-read", "hidden-bash", "custom-hidden-read")}
    assert hints == {"everything": "read", "skills-bash": "bash", "hidden-read": "bash", "hidden-bash": "indirect",
                     "custom-hidden-read": "indirect"}
    assert [p["patch"] is None for p in GOLDEN["patches"].values()].count(True) == 1


def test_structure_detects_differences() -> None:
    opts = PROMPT_SCENARIOS["tool-guidelines"]
    base = structure(ours(opts), opts)
    fewer = dict(opts, promptGuidelines=["TG read one"])
    assert structure(ours(fewer), opts) != base
    shuffled = dict(opts, selectedTools=["edit", "read", "bash", "write"])
    assert structure(ours(shuffled), opts) != base
    no_shell = dict(opts, selectedTools=["read", "edit"])
    assert structure(ours(no_shell), opts) != base
    ctx = PROMPT_SCENARIOS["everything"]
    changed = dict(ctx, contextFiles=[dict(ctx["contextFiles"][0], content="other")])
    assert structure(ours(changed), ctx) != structure(ours(ctx), ctx)


# --------------------------------------------------------------------------- unit tests

DOCS = DocsLocations("/d/README.md", "/d/docs", "/d/examples")


def sections(**kw) -> dict[str, str]:
    kw.setdefault("cwd", "/w")
    kw.setdefault("docs", DOCS)
    return build_system_prompt_sections(BuildSystemPromptOptions(**kw))


def body(kw_sections: dict[str, str], name: str) -> str:
    return _unwrap(name, kw_sections[name])


def test_default_sections_and_order() -> None:
    s = sections()
    assert list(s) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert not s["preamble"].startswith("<")
    assert s["cwd"] == "<cwd>\n/w\n</cwd>"
    text = build_system_prompt(cwd="/w", docs=DOCS)
    assert text == "\n\n".join(s.values())
    assert "Current date" not in text and "Current working directory" not in text


def test_cwd_backslashes() -> None:
    assert body(sections(cwd="C:\\a\\b"), "cwd") == "C:/a/b"


def test_tools_listed_only_when_declared_with_snippets_in_selected_order() -> None:
    s = sections(selected_tools=["write", "read", "zzz", "bash"], hidden_tools=["bash"],
                 tool_snippets={"read": "R", "write": "W", "bash": "B", "zzz": ""})
    assert body(s, "tools").startswith("- write: W\n- read: R\n\n")
    assert body(sections(selected_tools=["read"]), "tools").startswith("(none)\n\n")


def test_default_tool_set_is_pis() -> None:
    assert DEFAULT_TOOLS == ("read", "bash", "edit", "write")
    s = sections(tool_snippets={t: t.upper() for t in ("read", "bash", "edit", "write", "grep")})
    assert body(s, "tools").startswith("- read: READ\n- bash: BASH\n- edit: EDIT\n- write: WRITE\n\n")


def rules(**kw) -> list[str]:
    return [line[2:] for line in body(sections(**kw), "rules").split("\n")]


def test_rule_order_and_dedup() -> None:
    got = rules(
        selected_tools=["bash", "read", "edit"],
        hidden_tools=["edit"],
        tool_guidelines={"read": [" r1 ", "shared"], "bash": ["b1", "", "shared"], "edit": ["hidden"], "x": ["x"]},
        prompt_guidelines=["p1", "r1", "  "],
    )
    assert got[0].lower().count("bash") == 1  # the file-operations rule
    assert got[1:5] == ["b1", "shared", "r1", "p1"]
    assert len(got) == 7


def test_file_operation_rule_variants() -> None:
    first = lambda tools, hidden=(): rules(selected_tools=tools, hidden_tools=list(hidden))  # noqa: E731
    bash, ps, both = first(["bash"])[0], first(["powershell"])[0], first(["bash", "powershell"])[0]
    assert len({bash, ps, both}) == 3
    assert "bash" in bash.lower() and "powershell" in ps.lower() and "bash" in both.lower() and "powershell" in both.lower()
    assert first(["bash", "grep"], ["grep"])[0] == bash
    assert len(first(["bash", "ls"])) == 2 and len(first(["bash"], ["bash"])) == 2 and len(first([])) == 2


def test_custom_prompt_drops_tools_rules_docs() -> None:
    skill = Skill("s", "desc", "/s/SKILL.md", "/s")
    s = sections(custom_prompt="MINE", append_system_prompt="MORE", context_files=[{"path": "/p/AGENTS.md", "content": "C"}],
                 skills=[skill], prompt_guidelines=["never shown"])
    assert list(s) == ["preamble", "addendum", "project_context", "skills", "cwd"]
    assert s["preamble"] == "MINE" and body(s, "addendum") == "MORE"
    assert "never shown" not in "".join(s.values())
    # 1.6: a custom prompt gets skills whenever a reader is selected
    assert "skills" in sections(custom_prompt="MINE", skills=[skill], selected_tools=["bash"])
    assert "skills" not in sections(custom_prompt="MINE", skills=[skill], selected_tools=["edit"])
    assert "skills" not in sections(skills=[skill], selected_tools=[])
    assert sections(custom_prompt="") == sections()


def test_skill_read_tool_choice() -> None:
    assert skill_read_tool(["bash", "read"]) == "read"
    assert skill_read_tool(["read", "bash"], ["read"]) == "bash"
    assert skill_read_tool(["read", "bash"], ["read", "bash"]) == "indirect"
    assert skill_read_tool(["edit"], ["read"]) is None
    assert skill_read_tool([]) is None


def test_project_context_blocks_have_no_stray_blank_lines() -> None:
    block = format_context_files([{"path": "/a", "content": "x\n"}, {"path": "/b", "content": "y\r\n\n  \n"},
                                  {"path": "/c", "content": ""}])
    intro, rest = block.split("\n\n", 1)
    assert intro and "\n" not in intro
    assert rest == ('<project_instructions path="/a">\nx\n</project_instructions>\n\n'
                    '<project_instructions path="/b">\ny\n</project_instructions>\n\n'
                    '<project_instructions path="/c">\n\n</project_instructions>')
    assert format_context_files([]) == ""
    text = build_system_prompt(cwd="/w", docs=DOCS, context_files=[{"path": "/a", "content": "x\n\n"}])
    assert "\n\n\n" not in text and "x\n\n</project_instructions>" not in text


def test_extra_sections() -> None:
    s = sections(sections={"zeta": "Z", "rules": "R", "empty": "", "addendum": "A"})
    assert list(s) == ["preamble", "tools", "rules", "docs", "cwd", "zeta", "addendum"]
    assert s["rules"] == "<rules>\nR\n</rules>" and s["zeta"] == "<zeta>\nZ\n</zeta>"
    assert "tools" in sections(sections={"tools": ""})


@pytest.mark.parametrize("name", ["Bad", "preamble", "1x", "a b", "", "a.b", "_x", "-x", "é"])
def test_bad_section_names(name: str) -> None:
    with pytest.raises(ValueError, match="section name"):
        sections(sections={name: "x"})
    with pytest.raises(ValueError):
        build_system_prompt({"cwd": "/w", "sections": {name: ""}})
    # a forced prompt never builds sections
    assert build_system_prompt({"cwd": "/w", "forceSystemPrompt": "F", "sections": {name: "x"}}) == "F"


@given(st.from_regex(SECTION_NAME_RE, fullmatch=True).filter(lambda n: n != "preamble"))
def test_good_section_names(name: str) -> None:
    assert sections(sections={name: "x"})[name] == f"<{name}>\nx\n</{name}>"


def test_state_and_forced_prompt() -> None:
    assert build_system_prompt_state(cwd="/w", force_system_prompt="") == {"content": ""}
    assert build_system_prompt(cwd="/w", force_system_prompt="  raw\n") == "  raw\n"
    state = build_system_prompt_state(cwd="/w", docs=DOCS)
    assert state == {"content": "", "sections": sections()}
    assert render_system_prompt_state({"content": [{"type": "text", "text": "A"}], "sections": {"x": "B", "y": None, "z": ""}}) == "A\n\nB"


def test_diff() -> None:
    cur = {"preamble": "p", "cwd": "c", "new": "n"}
    assert diff_system_prompt_sections(cur, cur) is None
    assert diff_system_prompt_sections({"cwd": "old", "preamble": "p", "gone": "g", "was-null": None}, cur) == {
        "cwd": "c", "new": "n", "gone": None, "was-null": None
    }
    assert list(diff_system_prompt_sections({"gone": "g", "preamble": "x"}, cur)) == ["preamble", "cwd", "new", "gone"]


def test_options_accept_camel_and_snake_case_and_reject_unknown() -> None:
    a = build_system_prompt({"cwd": "/w", "selectedTools": ["bash"], "hiddenTools": ["bash"], "toolGuidelines": {}})
    b = build_system_prompt(cwd="/w", selected_tools=["bash"], hidden_tools=["bash"], tool_guidelines={})
    assert a == b
    assert build_system_prompt({"cwd": "/w", "date": "2024-03-05"}) == build_system_prompt({"cwd": "/w"})  # date is ignored
    with pytest.raises(ValueError, match="unknownOption"):
        build_system_prompt({"cwd": "/w", "unknownOption": 1})


def test_no_docs_section_unless_the_harness_docs_are_given(tmp_path: Path) -> None:
    # a library user building their own agent's prompt gets no docs section,
    # and never pi-session's own README
    readme = str(Path(__file__).resolve().parent.parent / "README.md")
    for text in (build_system_prompt(cwd="/w"), build_system_prompt({"cwd": "/w"})):
        assert "<docs>" not in text and readme not in text and "pi-session" not in text
    assert list(build_system_prompt_sections(cwd="/w")) == ["preamble", "tools", "rules", "cwd"]
    assert "docs" not in build_system_prompt_sections(cwd="/w", docs=DocsLocations(None, None, None))
    # pi's package directory: the section names what is there, in pi's place
    pkg = tmp_path / "pi-coding-agent"
    (pkg / "docs").mkdir(parents=True)
    (pkg / "README.md").write_text("pi\n")
    for docs in (pkg, str(pkg), {"readme": str(pkg / "README.md"), "docs": str(pkg / "docs"), "examples": None}):
        s = build_system_prompt_sections({"cwd": "/w", "docs": docs})
        assert list(s) == ["preamble", "tools", "rules", "docs", "cwd"]
        assert f"{pkg}/README.md" in s["docs"] and f"{pkg}/docs" in s["docs"] and "- Examples" not in s["docs"]
    assert package_docs_locations(pkg) == DocsLocations(str(pkg / "README.md"), str(pkg / "docs"), None)
    assert package_docs_locations(tmp_path / "missing") == DocsLocations(None, None, None)
    assert "docs" not in build_system_prompt_sections(cwd="/w", docs=tmp_path / "missing")


def test_inputs_not_mutated() -> None:
    opts = dict(PROMPT_SCENARIOS["everything"])
    snapshot = json.dumps(opts, sort_keys=True)
    build_system_prompt(opts)
    assert json.dumps(opts, sort_keys=True) == snapshot


@given(st.lists(st.text(alphabet="ab \t", max_size=4), max_size=8), st.lists(st.text(alphabet="ab ", max_size=3), max_size=4))
def test_rules_property(prompt_items: list[str], tool_items: list[str]) -> None:
    got = rules(selected_tools=["read"], tool_guidelines={"read": tool_items}, prompt_guidelines=prompt_items)
    expected: list[str] = []
    for item in [*tool_items, *prompt_items]:
        if item.strip() and item.strip() not in expected:
            expected.append(item.strip())
    assert got[: len(expected)] == expected
    assert len(got) == len(expected) + 2 and len(set(got)) == len(got)


@given(st.dictionaries(st.sampled_from(["preamble", "tools", "cwd", "a", "b"]), st.one_of(st.none(), st.text(max_size=2))),
       st.dictionaries(st.sampled_from(["preamble", "tools", "cwd", "a", "c"]), st.text(max_size=2)))
def test_diff_property(previous: dict, current: dict) -> None:
    patch = diff_system_prompt_sections(previous, current)
    applied = {k: v for k, v in {**previous, **(patch or {})}.items() if v is not None}
    assert applied == {k: v for k, v in current.items()}
    assert (patch is None) == (previous == current)


# --------------------------------------------------------------------------- live oracle


@pytest.mark.oracle
@needs_oracle
def test_live_oracle_structure(tmp_path: Path) -> None:
    """Every scenario (and one more) through the live pi 1.6 oracle, in one batch."""
    import os

    scenarios = dict(PROMPT_SCENARIOS)
    scenarios["live-extra"] = {
        "cwd": "/live",
        "selectedTools": ["read", "bash", "find", "powershell"],
        "hiddenTools": ["find"],
        "toolSnippets": {"read": "r", "find": "f"},
        "toolGuidelines": {"bash": ["live b"], "find": ["live f"]},
        "promptGuidelines": ["one", "two", "one"],
        "appendSystemPrompt": "tail",
        "contextFiles": [{"path": "/x/AGENTS.md", "content": "c\n"}],
        "skills": SKILLS,
        "sections": {"late": "L", "cwd": "/elsewhere"},
    }
    calls = []
    for name, options in scenarios.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(options))
        calls.append(["system-prompt-sections", str(tmp_path / f"{name}.json")])
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    env = dict(os.environ, PI_ORACLE_PI="1.6.0")
    out = json.loads(subprocess.run([str(ORACLE), "batch", str(tmp_path / "calls.json")], capture_output=True,
                                    text=True, check=True, env=env).stdout)
    for (name, options), item in zip(scenarios.items(), out):
        assert structure(ours(options), options) == structure(item["json"], options), name
