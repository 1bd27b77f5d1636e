"""pi 0.58.3's ``packages/coding-agent/test/skills.test.ts`` against
pi-session's skills (:mod:`pi_session.prompt.skills`), on pi's own fixture
skills (``../shared/fixtures/pi-tests/skills``).

Diagnostics are our own words, so where pi's test looks for a phrase these
check that there is one warning for that skill file and, where it matters,
its fact (a position, a number). Decided by pi 1.6 (see ``README.md``): a
skill whose name differs from its directory loads without a warning."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_session.prompt import Skill, SkillDiagnostic, format_skills_for_prompt, load_skills, load_skills_from_dir
from shared_paths import SHARED, shared_missing

PI_TESTS = SHARED / "fixtures" / "pi-tests"
SKILLS = PI_TESTS / "skills"
COLLISION = PI_TESTS / "skills-collision"
EMPTY_AGENT = PI_TESTS / "empty-agent"
EMPTY_CWD = PI_TESTS / "empty-cwd"

pytestmark = pytest.mark.skipif(shared_missing(SKILLS) is not None, reason=shared_missing(SKILLS) or "")


def load(name: str) -> tuple[list[Skill], list[SkillDiagnostic]]:
    return load_skills_from_dir(SKILLS / name, "test")


def warnings_for(diagnostics: list[SkillDiagnostic], name: str) -> list[SkillDiagnostic]:
    path = str(SKILLS / name / "SKILL.md")
    return [d for d in diagnostics if d.get("type") == "warning" and d.get("path") == path]


def skill(name: str, description: str, where: str, hidden: bool = False) -> Skill:
    return Skill(
        name=name,
        description=description,
        file_path=f"{where}/SKILL.md",
        base_dir=where,
        source="test",
        disable_model_invocation=hidden,
    )


# ------------------------------------------------------------ loadSkillsFromDir


def test_skills_dir_loads_a_valid_skill() -> None:
    skills, diagnostics = load("valid-skill")
    assert [s.name for s in skills] == ["valid-skill"]
    assert skills[0].description == "A valid skill for testing purposes."
    assert skills[0].source == "test"
    assert diagnostics == []


def test_skills_dir_name_unlike_its_directory_loads_without_warning() -> None:
    # pi 0.58's test expects a warning here; pi 1.6 gives none (pi-oracle
    # skills --path .../name-mismatch), and so do we
    skills, diagnostics = load("name-mismatch")
    assert [s.name for s in skills] == ["different-name"]
    assert diagnostics == []


def test_skills_dir_warns_about_invalid_name_characters() -> None:
    skills, diagnostics = load("invalid-name-chars")
    assert len(skills) == 1
    assert len(warnings_for(diagnostics, "invalid-name-chars")) == 1


def test_skills_dir_warns_about_a_name_over_64_characters() -> None:
    skills, diagnostics = load("long-name")
    assert len(skills) == 1
    found = warnings_for(diagnostics, "long-name")
    assert len(found) == 1
    assert "64" in found[0]["message"]


def test_skills_dir_skips_a_skill_without_description_and_warns() -> None:
    skills, diagnostics = load("missing-description")
    assert skills == []
    assert len(warnings_for(diagnostics, "missing-description")) == 1


def test_skills_dir_ignores_unknown_frontmatter_fields() -> None:
    skills, diagnostics = load("unknown-field")
    assert len(skills) == 1
    assert diagnostics == []


def test_skills_dir_finds_nested_skills() -> None:
    skills, diagnostics = load("nested")
    assert [s.name for s in skills] == ["child-skill"]
    assert diagnostics == []


def test_skills_dir_root_skill_file_hides_nested_ones() -> None:
    skills, diagnostics = load("root-skill-preferred")
    assert [s.name for s in skills] == ["root-skill-preferred"]
    assert skills[0].description == "Root skill should win."
    assert diagnostics == []


def test_skills_dir_skips_a_file_without_frontmatter() -> None:
    skills, diagnostics = load("no-frontmatter")
    assert skills == []
    assert len(warnings_for(diagnostics, "no-frontmatter")) == 1


def test_skills_dir_skips_invalid_yaml_and_says_where() -> None:
    skills, diagnostics = load("invalid-yaml")
    assert skills == []
    found = warnings_for(diagnostics, "invalid-yaml")
    assert len(found) == 1
    # the position pi 1.6 reports for this file
    assert "line 2, column 31" in found[0]["message"]


def test_skills_dir_keeps_multiline_descriptions() -> None:
    skills, diagnostics = load("multiline-description")
    assert len(skills) == 1
    assert "\n" in skills[0].description
    assert "This is a multiline description." in skills[0].description
    assert diagnostics == []


def test_skills_dir_warns_about_consecutive_hyphens() -> None:
    skills, diagnostics = load("consecutive-hyphens")
    assert len(skills) == 1
    assert len(warnings_for(diagnostics, "consecutive-hyphens")) == 1


def test_skills_dir_loads_every_described_fixture_skill() -> None:
    skills, _ = load_skills_from_dir(SKILLS, "test")
    assert len(skills) >= 6
    names = {s.name for s in skills}
    assert {"valid-skill", "different-name", "child-skill", "unknown-field"} <= names


def test_skills_dir_missing_directory_gives_nothing() -> None:
    assert load_skills_from_dir("/non/existent/path", "test") == ([], [])


def test_skills_dir_name_defaults_to_the_directory_name() -> None:
    skills, _ = load("valid-skill")
    assert [s.name for s in skills] == ["valid-skill"]


def test_skills_dir_reads_disable_model_invocation() -> None:
    skills, diagnostics = load("disable-model-invocation")
    assert [s.name for s in skills] == ["disable-model-invocation"]
    assert skills[0].disable_model_invocation is True
    assert diagnostics == []


def test_skills_dir_disable_model_invocation_defaults_to_false() -> None:
    skills, _ = load("valid-skill")
    assert skills[0].disable_model_invocation is False


# ----------------------------------------------------------- formatSkillsForPrompt


def test_skills_prompt_of_no_skills_is_empty() -> None:
    assert format_skills_for_prompt([]) == ""


def test_skills_prompt_is_xml() -> None:
    out = format_skills_for_prompt([skill("test-skill", "A test skill.", "/path/to/skill")])
    for part in (
        "<available_skills>",
        "</available_skills>",
        "<skill>",
        "<name>test-skill</name>",
        "<description>A test skill.</description>",
        "<location>/path/to/skill/SKILL.md</location>",
    ):
        assert part in out


def test_skills_prompt_has_an_introduction_before_the_xml() -> None:
    # pi's introduction is pi's prose; ours says the same in our words:
    # what skills are, and to load one with the read tool
    out = format_skills_for_prompt([skill("test-skill", "A test skill.", "/path/to/skill")])
    intro = out[: out.index("<available_skills>")]
    assert "skill" in intro.lower()
    assert "read tool" in intro


def test_skills_prompt_escapes_xml_characters() -> None:
    out = format_skills_for_prompt([skill("test-skill", 'A skill with <special> & "characters".', "/path/to/skill")])
    assert "&lt;special&gt;" in out
    assert "&amp;" in out
    assert "&quot;characters&quot;" in out


def test_skills_prompt_lists_several_skills() -> None:
    out = format_skills_for_prompt(
        [skill("skill-one", "First skill.", "/path/one"), skill("skill-two", "Second skill.", "/path/two")]
    )
    assert "<name>skill-one</name>" in out
    assert "<name>skill-two</name>" in out
    assert out.count("<skill>") == 2


def test_skills_prompt_leaves_out_model_invocation_disabled_skills() -> None:
    out = format_skills_for_prompt(
        [
            skill("visible-skill", "A visible skill.", "/path/visible"),
            skill("hidden-skill", "A hidden skill.", "/path/hidden", hidden=True),
        ]
    )
    assert "<name>visible-skill</name>" in out
    assert "<name>hidden-skill</name>" not in out
    assert out.count("<skill>") == 1


def test_skills_prompt_is_empty_when_every_skill_is_hidden() -> None:
    assert format_skills_for_prompt([skill("hidden-skill", "A hidden skill.", "/path/hidden", hidden=True)]) == ""


# ----------------------------------------------------------- loadSkills options


def test_load_skills_from_an_explicit_path() -> None:
    result = load_skills(cwd=EMPTY_CWD, agent_dir=EMPTY_AGENT, skill_paths=[SKILLS / "valid-skill"])
    assert len(result.skills) == 1
    assert result.skills[0].source == "path"
    assert result.diagnostics == []


def test_load_skills_warns_about_a_missing_path() -> None:
    result = load_skills(cwd=EMPTY_CWD, agent_dir=EMPTY_AGENT, skill_paths=["/non/existent/path"])
    assert result.skills == []
    assert [(d["type"], d.get("path")) for d in result.diagnostics] == [("warning", "/non/existent/path")]


def test_load_skills_expands_tilde_in_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pi's case uses the real home; here HOME is a temporary directory that
    # holds one skill, so the two spellings must both find it
    home_skills = tmp_path / ".pi" / "agent" / "skills"
    (home_skills / "home-skill").mkdir(parents=True)
    (home_skills / "home-skill" / "SKILL.md").write_text("---\ndescription: From home.\n---\nBody\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    with_tilde = load_skills(cwd=EMPTY_CWD, agent_dir=EMPTY_AGENT, skill_paths=["~/.pi/agent/skills"])
    without = load_skills(cwd=EMPTY_CWD, agent_dir=EMPTY_AGENT, skill_paths=[os.fspath(home_skills)])
    assert len(with_tilde.skills) == len(without.skills) == 1


# -------------------------------------------------------------- collisions


def test_skills_name_collision_keeps_the_first_and_reports_it() -> None:
    # pi's case re-enacts loadSkills' collision rule by hand over two
    # directories; here load_skills applies it to the two paths in order
    result = load_skills(
        cwd=EMPTY_CWD,
        agent_dir=EMPTY_AGENT,
        skill_paths=[COLLISION / "first", COLLISION / "second"],
        include_defaults=False,
    )
    assert [s.name for s in result.skills] == ["calendar"]
    assert result.skills[0].file_path == str(COLLISION / "first" / "calendar" / "SKILL.md")
    collisions = [d for d in result.diagnostics if d["type"] == "collision"]
    assert len(collisions) == 1
    assert collisions[0].get("path") == str(COLLISION / "second" / "calendar" / "SKILL.md")
