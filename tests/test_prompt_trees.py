"""Directory trees for the prompt tests, and the golden generator.

Trees are built under a root directory given by the caller; goldens store
paths with that root replaced by ``<ROOT>``. Regenerate the goldens (needs
node and ../shared/pi-oracle) with::

    python tests/test_prompt_trees.py

"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

GOLDENS = Path(__file__).parent / "goldens" / "prompt"
ORACLE = Path("/work/shared/pi-oracle/pi-oracle")
GEN_ROOT = Path("/tmp/pi-session-prompt-goldens/root")
ROOT_TOKEN = "<ROOT>"


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")


def skill_md(name: str | None = None, description: str | None = None, extra: str = "", body: str = "Body.\n") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n" + body


# --------------------------------------------------------------------------- context files

CONTEXT_SCENARIOS: dict[str, tuple[str, str]] = {
    # name: (cwd relative to root, agent dir relative to root)
    "deep": ("proj/a/b/c/d", "agent"),
    "cwd-is-agent": ("agent", "agent"),
    "no-agent": ("proj/a", "missing-agent"),
    "claude-agent": ("proj/a/b", "agent-claude"),
    "upper": ("upper/x", "missing-agent"),
    "sibling": ("proj/sib", "agent"),
}


def build_context_tree(root: Path) -> None:
    """Nested AGENTS.md/CLAUDE.md files at several levels (see CONTEXT_SCENARIOS)."""
    _write(root / "agent" / "AGENTS.md", "global agents file\n")
    _write(root / "agent" / "CLAUDE.md", "global claude file (shadowed)\n")
    _write(root / "agent-claude" / "CLAUDE.md", "only a claude file in this agent dir\n")
    _write(root / "proj" / "AGENTS.md", "project root\r\nwith CRLF\r\n")
    _write(root / "proj" / "CLAUDE.md", "shadowed by AGENTS.md\n")
    _write(root / "proj" / "a" / "CLAUDE.md", "level a (claude)\n")
    # b: AGENTS.md is a directory (exists, cannot be read) -> warning, CLAUDE.md used
    (root / "proj" / "a" / "b" / "AGENTS.md").mkdir(parents=True, exist_ok=True)
    _write(root / "proj" / "a" / "b" / "CLAUDE.md", "level b: non-UTF-8 byte \xff follows: ".encode() + b"\xff\n")
    # c: AGENTS.md is a broken symlink (counts as absent) -> CLAUDE.MD used
    c = root / "proj" / "a" / "b" / "c"
    c.mkdir(parents=True, exist_ok=True)
    os.symlink(root / "nowhere", c / "AGENTS.md")
    _write(c / "CLAUDE.MD", "level c, upper-case extension\n")
    # d: AGENTS.md symlinked to proj/AGENTS.md (different path -> loaded again)
    d = c / "d"
    d.mkdir(parents=True, exist_ok=True)
    os.symlink(root / "proj" / "AGENTS.md", d / "AGENTS.md")
    # sibling directory without its own file
    (root / "proj" / "sib").mkdir(parents=True, exist_ok=True)
    # AGENTS.MD only
    _write(root / "upper" / "AGENTS.MD", "upper-case AGENTS.MD\n")
    (root / "upper" / "x").mkdir(parents=True, exist_ok=True)


# --------------------------------------------------------------------------- skills

LONG = "x" * 1100


def build_skills_tree(root: Path) -> None:
    """A user skills dir full of valid and broken skills, a project skills dir
    and extra paths."""
    s = root / "agent" / "skills"
    _write(s / "good-one" / "SKILL.md", skill_md("good-one", "A good skill."))
    _write(s / "bad_Name" / "SKILL.md", skill_md("bad_Name", "Bad characters in the name."))
    _write(s / "mismatch" / "SKILL.md", skill_md("other-name", "Name differs from the directory."))
    _write(s / "no-desc" / "SKILL.md", skill_md("no-desc"))
    _write(s / "empty-desc" / "SKILL.md", skill_md("empty-desc", '"   "'))
    _write(s / "bad-yaml" / "SKILL.md", "---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n")
    _write(s / "no-frontmatter" / "SKILL.md", "Just text, no frontmatter.\n")
    _write(s / "unclosed-frontmatter" / "SKILL.md", "---\nname: unclosed-frontmatter\ndescription: never closed\n")
    _write(s / "unknown-fields" / "SKILL.md", skill_md("unknown-fields", "Has extra keys.", "colour: blue\nlicense: MIT"))
    _write(s / "hidden-skill" / "SKILL.md", skill_md("hidden-skill", "Only by command.", "disable-model-invocation: true"))
    _write(s / "yes-flag" / "SKILL.md", skill_md("yes-flag", "yes is a string in YAML 1.2.", "disable-model-invocation: yes"))
    _write(s / "long-desc" / "SKILL.md", skill_md("long-desc", LONG))
    _write(s / "-dash-" / "SKILL.md", skill_md(None, "Name from a directory with hyphens at the ends."))
    _write(s / "double--hyphen" / "SKILL.md", skill_md(None, "Two hyphens in a row."))
    _write(s / "num-name" / "SKILL.md", skill_md("123", "Numeric name."))
    _write(s / "list-desc" / "SKILL.md", skill_md("list-desc", "[a, b]"))
    _write(s / "date-desc" / "SKILL.md", skill_md("date-desc", "2024-01-01"))
    _write(s / "xml-chars" / "SKILL.md", skill_md("xml-chars", "'Uses <tags> & \"quotes\" and ''apostrophes'''"))
    _write(s / "dup-key" / "SKILL.md", skill_md("dup-key", "first", "description: second"))
    _write(s / "crlf" / "SKILL.md", skill_md("crlf", "Windows line endings.").replace("\n", "\r\n"))
    _write(s / "bom" / "SKILL.md", "\ufeff" + skill_md("bom", "Starts with a byte order mark."))
    _write(s / "name-fallback" / "SKILL.md", skill_md(None, "No name key, so the directory name is used."))
    _write(s / "nested" / "group" / "deep-skill" / "SKILL.md", skill_md("deep-skill", "Found by recursion."))
    _write(s / "nested" / "group" / "notes.md", skill_md("notes", "Not a root file: ignored."))
    _write(s / "with-sub" / "SKILL.md", skill_md("with-sub", "Outer skill."))
    _write(s / "with-sub" / "inner" / "SKILL.md", skill_md("inner", "Never reached."))
    _write(s / "root-file.md", skill_md("root-file", "A markdown file at the root of a skills dir."))
    _write(s / "not-markdown.txt", "ignored\n")
    _write(s / ".hidden" / "SKILL.md", skill_md(".hidden", "Dot directories are skipped."))
    _write(s / "node_modules" / "pkg" / "SKILL.md", skill_md("pkg", "node_modules is skipped."))
    _write(s / "ignored-skill" / "SKILL.md", skill_md("ignored-skill", "Excluded by .gitignore."))
    _write(s / "ignored-file" / "SKILL.md", skill_md("ignored-file", "Excluded by a nested .ignore."))
    _write(s / "ignored-file" / ".ignore", "SKILL.md\n")
    _write(s / "kept-by-negation" / "SKILL.md", skill_md("kept-by-negation", "Re-included with !."))
    _write(s / ".gitignore", "# comment\nignored-skill/\nkept-*/\n!kept-by-negation/\n")
    (s / "dir-skill" / "SKILL.md").mkdir(parents=True, exist_ok=True)
    _write(s / "dir-skill" / "SKILL.md" / "SKILL.md", skill_md(None, "SKILL.md is a directory here."))
    os.symlink(s / "good-one", s / "link-to-good")
    os.symlink(root / "nowhere", s / "broken-link")
    _write(s / "a-collide" / "SKILL.md", skill_md("shared-name", "First of two with one name."))
    _write(s / "z-collide" / "SKILL.md", skill_md("shared-name", "Second of two with one name."))

    p = root / "proj" / ".pi" / "skills"
    _write(p / "good-one" / "SKILL.md", skill_md("good-one", "Project copy, loses the collision."))
    _write(p / "proj-skill" / "SKILL.md", skill_md("proj-skill", "A project skill."))

    e = root / "extra"
    _write(e / "extra-skill" / "SKILL.md", skill_md("extra-skill", "From an extra path."))
    _write(e / "single.md", skill_md("single", "A single markdown file given as a path."))
    _write(e / "no-desc.md", skill_md("no-desc-file"))
    _write(e / "plain.txt", "not markdown\n")
    _write(e / "top" / "SKILL.md", skill_md("top", "A skill dir given directly."))


SKILL_SCENARIOS: dict[str, dict] = {
    "defaults": {"cwd": "proj", "agent": "agent", "paths": [], "defaults": True},
    "paths": {
        "cwd": "proj",
        "agent": "agent",
        "paths": ["../extra", "../extra/single.md", "../extra/no-desc.md", "../extra/plain.txt", "missing", "../extra/top"],
        "defaults": True,
    },
    "no-defaults": {
        "cwd": "proj",
        "agent": "agent",
        "paths": ["ROOT/agent/skills/good-one", ".pi/skills/proj-skill", "../extra/extra-skill"],
        "defaults": False,
    },
}


# --------------------------------------------------------------------------- system prompt

SNIPPETS = {t: f"snippet text for {t}" for t in ("read", "bash", "edit", "write", "grep", "find", "ls")}
CTX = [{"path": "/p/AGENTS.md", "content": "ctx one"}, {"path": "/p/sub/CLAUDE.md", "content": "ctx two\n"}]
SKILLS = [
    {"name": "alpha", "description": "Alpha <skill> & co", "filePath": "/s/alpha/SKILL.md", "baseDir": "/s/alpha",
     "disableModelInvocation": False},
    {"name": "beta", "description": "Hidden", "filePath": "/s/beta/SKILL.md", "baseDir": "/s/beta",
     "disableModelInvocation": True},
]

PROMPT_SCENARIOS: dict[str, dict] = {
    "minimal": {"cwd": "/w"},
    "default-snippets": {"cwd": "/w", "toolSnippets": SNIPPETS},
    "no-tools": {"cwd": "/w", "selectedTools": [], "toolSnippets": SNIPPETS, "skills": SKILLS},
    "bash-only": {"cwd": "/w", "selectedTools": ["bash"], "toolSnippets": SNIPPETS},
    "bash-grep": {"cwd": "/w", "selectedTools": ["read", "bash", "grep", "find"], "toolSnippets": SNIPPETS},
    "ls-no-bash": {"cwd": "/w", "selectedTools": ["ls", "read"], "toolSnippets": {"ls": "x"}},
    "partial-snippets": {"cwd": "/w", "selectedTools": ["read", "bash", "custom"], "toolSnippets": {"custom": "c", "bash": ""}},
    "guidelines": {
        "cwd": "/w",
        "selectedTools": ["read", "bash", "ls"],
        "toolSnippets": SNIPPETS,
        "promptGuidelines": ["  first  ", "second", "", "   ", "first", "third"],
    },
    "everything": {
        "cwd": "C:\\Users\\me\\proj",
        "toolSnippets": SNIPPETS,
        "promptGuidelines": ["caller rule"],
        "appendSystemPrompt": "APPENDED\n\nsecond paragraph",
        "contextFiles": CTX,
        "skills": SKILLS,
    },
    "skills-without-read": {"cwd": "/w", "selectedTools": ["bash"], "skills": SKILLS, "contextFiles": CTX},
    "hidden-skills-only": {"cwd": "/w", "skills": [SKILLS[1]]},
    "custom": {"cwd": "/w", "customPrompt": "CUSTOM PROMPT", "appendSystemPrompt": "APP", "contextFiles": CTX, "skills": SKILLS},
    "custom-no-read": {"cwd": "/w", "customPrompt": "CUSTOM", "selectedTools": ["bash"], "skills": SKILLS},
    "custom-empty-tools": {"cwd": "/w", "customPrompt": "CUSTOM", "selectedTools": [], "skills": SKILLS},
    "custom-with-read": {"cwd": "/w/", "customPrompt": "CUSTOM", "selectedTools": ["read"], "skills": SKILLS, "promptGuidelines": ["ignored"]},
}


# --------------------------------------------------------------------------- helpers


def normalise(value, root: Path):
    """Replace the tree root in every string of a JSON value with ``<ROOT>``."""
    text = str(root)
    if isinstance(value, str):
        return value.replace(text, ROOT_TOKEN)
    if isinstance(value, list):
        return [normalise(v, root) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v, root) for k, v in value.items()}
    return value


def build_all(root: Path) -> None:
    build_context_tree(root)
    build_skills_tree(root)


def _oracle(*args: str) -> str:
    for _attempt in range(3):  # the oracle has been seen to print nothing once under load
        proc = subprocess.run([str(ORACLE), *args], capture_output=True, text=True, check=True)
        if proc.stdout.strip():
            break
    return proc.stdout


def regenerate() -> None:  # pragma: no cover - run by hand
    if GEN_ROOT.exists():
        shutil.rmtree(GEN_ROOT)
    GEN_ROOT.mkdir(parents=True)
    build_all(GEN_ROOT)
    GOLDENS.mkdir(parents=True, exist_ok=True)
    ctx = {}
    for name, (cwd, agent) in CONTEXT_SCENARIOS.items():
        out = json.loads(_oracle("context-files", "--cwd", str(GEN_ROOT / cwd), "--agent-dir", str(GEN_ROOT / agent)))
        ctx[name] = normalise(out, GEN_ROOT)
    (GOLDENS / "context_files.json").write_text(json.dumps(ctx, indent=1, ensure_ascii=False) + "\n")
    sk = {}
    for name, sc in SKILL_SCENARIOS.items():
        args = ["skills", "--cwd", str(GEN_ROOT / sc["cwd"]), "--agent-dir", str(GEN_ROOT / sc["agent"])]
        for p in sc["paths"]:
            args += ["--path", p.replace("ROOT", str(GEN_ROOT))]
        if not sc["defaults"]:
            args.append("--no-defaults")
        sk[name] = normalise(json.loads(_oracle(*args)), GEN_ROOT)
    (GOLDENS / "skills.json").write_text(json.dumps(sk, indent=1, ensure_ascii=False) + "\n")
    prompts = {}
    tmp = GEN_ROOT.parent / "options.json"
    for name, options in PROMPT_SCENARIOS.items():
        tmp.write_text(json.dumps(options))
        prompts[name] = {"options": options, "prompt": _oracle("system-prompt", str(tmp))}
    (GOLDENS / "system_prompt.json").write_text(json.dumps(prompts, indent=1, ensure_ascii=False) + "\n")


def test_trees_build(tmp_path: Path) -> None:
    build_all(tmp_path)
    assert (tmp_path / "proj" / "a" / "b" / "AGENTS.md").is_dir()
    assert os.path.islink(tmp_path / "agent" / "skills" / "link-to-good")
    assert not (tmp_path / "nowhere").exists()


if __name__ == "__main__":  # pragma: no cover
    regenerate()
    print(f"goldens written to {GOLDENS}", file=sys.stderr)
