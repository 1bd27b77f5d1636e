"""Skills: discovery of ``SKILL.md`` files, frontmatter validation and the
``<available_skills>`` block of the system prompt (pi's ``core/skills.js``).

Frontmatter parsing (YAML 1.2, as pi reads it) lives in
:mod:`pi_session.prompt.frontmatter`.

Discovery (per root directory):

* if a directory holds a file ``SKILL.md`` (not excluded by ignore files), that
  file is the skill and the directory is not searched further;
* otherwise, in the root directory only, every other ``*.md`` file that has
  a description is a skill (one without, or that does not parse, is skipped
  silently: it is just a markdown file);
* subdirectories are searched recursively (names starting with ``.`` and
  ``node_modules`` are skipped; symlinks are followed, broken ones skipped);
* ``.gitignore`` / ``.ignore`` / ``.fdignore`` files along the way exclude paths.

Roots, in order: ``<cwd>/.pi/skills`` (source "project") and
``<agent dir>/skills`` (source "user") when defaults are included, then each
given path (a directory, or a single ``.md`` file). A project skill thus wins
a name shared with a user skill, as in the skills pi 1.6 lists at run time (its
resource loader); ``resource_loader=False`` gives the order of pi's exported
``loadSkills`` (user first). A name that is already taken keeps the first
skill and yields a ``collision`` diagnostic; the same file reached twice
(same real path) is loaded once, silently. Files may carry a byte-order mark
and CRLF line ends; they read like the plain file.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, TypedDict

from ..core.jsonio import js_len
from ..core import paths
from ..entries.records import StrPath
from ._paths import canonical_path, resolve_path
from .frontmatter import FrontmatterError, parse_frontmatter
from .ignore import IgnoreMatcher

__all__ = [
    "Skill",
    "SkillDiagnostic",
    "LoadSkillsResult",
    "load_skills",
    "load_skills_from_dir",
    "load_skill_from_file",
    "parse_frontmatter",
    "FrontmatterError",
    "format_skills_for_prompt",
    "escape_xml",
    "MAX_NAME_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "CONFIG_DIR_NAME",
    "SKILL_READ_TOOLS",
]

MAX_NAME_LENGTH = 64
"""Longest allowed skill name, in UTF-16 code units (Agent Skills spec)."""
MAX_DESCRIPTION_LENGTH = 1024
"""Longest allowed description, in UTF-16 code units (Agent Skills spec)."""
CONFIG_DIR_NAME = ".pi"
"""Per-project configuration directory; project skills live in ``<cwd>/.pi/skills``."""

SkillSource = str
"""Where a skill was found: ``"user"`` (``<agent dir>/skills``), ``"project"``
(``<cwd>/.pi/skills``), ``"path"`` (a path given by the caller), or any other
name a caller passes (pi's ``loadSkillsFromDir({source})``: e.g. ``"cli"`` or a
package name), kept as ``sourceInfo.source``."""
_LOCAL_SOURCES = frozenset({"user", "project", "path"})
_KNOWN_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools", "disable-model-invocation"}
)
_NAME_RE = re.compile(r"[a-z0-9-]+")


class SkillDiagnostic(TypedDict, total=False):
    """One problem found while loading skills.

    ``type`` is ``"warning"`` (skill invalid or suspicious) or ``"collision"``
    (a second skill with a name already taken; ``collision`` then holds
    ``{resourceType: "skill", name, winnerPath, loserPath}``). ``path`` is the
    file or path concerned."""

    type: str
    message: str
    path: str
    collision: dict[str, str]


@dataclass
class Skill:
    """A loaded skill. :meth:`to_dict` gives pi's JSON shape
    (``name, description, filePath, baseDir, sourceInfo, disableModelInvocation``)."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source: SkillSource = "path"
    disable_model_invocation: bool = False

    @property
    def source_info(self) -> dict[str, str]:
        """pi 1.6's ``sourceInfo``: ``{path, source, scope, origin: "top-level", baseDir}``.
        For ``user`` and ``project`` skills source is ``"local"`` and scope that
        name; for ``path`` source ``"local"`` and scope ``"temporary"``; any other
        source name is kept as ``source``, with scope ``"temporary"``."""
        local = self.source in _LOCAL_SOURCES
        return {
            "path": self.file_path,
            "source": "local" if local else self.source,
            "scope": self.source if self.source in ("user", "project") else "temporary",  # not an entry literal: a skill scope
            "origin": "top-level",
            "baseDir": self.base_dir,
        }

    def to_dict(self) -> dict[str, Any]:
        """The skill as pi serialises it (camelCase keys)."""
        return {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "sourceInfo": self.source_info,
            "disableModelInvocation": self.disable_model_invocation,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Skill":
        """Build a skill from pi's JSON shape (or from snake_case keys).

        The source comes from ``sourceInfo``: a ``"local"`` one gives ``user`` or
        ``project`` by its scope, else ``path``; another source name is kept.
        Without ``sourceInfo``, a ``source`` key (default ``"path"``)."""
        info = data.get("sourceInfo") or {}
        source: SkillSource
        if info.get("source") == "local":
            source = info["scope"] if info.get("scope") in ("user", "project") else "path"  # not an entry literal: a skill scope
        elif isinstance(info.get("source"), str) and info["source"]:
            source = info["source"]
        else:
            source = data.get("source", "path")
        return cls(
            name=data["name"],
            description=data["description"],
            file_path=data.get("filePath", data.get("file_path", "")),
            base_dir=data.get("baseDir", data.get("base_dir", "")),
            source=source,
            disable_model_invocation=bool(
                data.get("disableModelInvocation", data.get("disable_model_invocation", False))
            ),
        )


@dataclass
class LoadSkillsResult:
    """What :func:`load_skills` returns: skills in discovery order, then the
    diagnostics (warnings in discovery order, followed by collisions)."""

    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[SkillDiagnostic] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """``{skills: [pi skill JSON], diagnostics: [...]}``."""
        return {"skills": [s.to_dict() for s in self.skills], "diagnostics": list(self.diagnostics)}


# --------------------------------------------------------------------------- validation


def _name_problems(name: str) -> list[str]:
    problems = []
    if js_len(name) > MAX_NAME_LENGTH:
        problems.append(f"skill name is longer than {MAX_NAME_LENGTH} characters ({js_len(name)})")
    if not _NAME_RE.fullmatch(name):
        problems.append("skill name may only use lowercase letters a-z, digits 0-9 and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("skill name must not begin or end with a hyphen")
    if "--" in name:
        problems.append("skill name must not contain two hyphens in a row")
    return problems


def load_skill_from_file(
    file_path: str,
    source: SkillSource = "path",
    *,
    warn_unknown_fields: bool = False,
) -> tuple[Skill | None, list[SkillDiagnostic]]:
    """Load one skill file (pi 1.6's ``loadSkillFromFile``).

    Returns ``(skill or None, diagnostics)``. The text is read as UTF-8 with
    any byte-order mark and CRLF line ends normalised away (see
    :func:`parse_frontmatter`). The description must be a non-empty string
    (else no skill); the name is the frontmatter ``name`` when that is a
    non-empty string, else the directory's name (a name differing from the
    directory is fine). A file named ``SKILL.md`` that does not parse or has
    no description gives a warning; any other ``.md`` file is then skipped
    silently (it is simply not a skill). A too-long description or a name
    breaking the Agent Skills rules only give warnings. Unreadable files give
    a warning and no skill. ``warn_unknown_fields`` (beyond pi, off by
    default) adds a warning per frontmatter key outside the Agent Skills
    spec. Never raises."""
    diagnostics: list[SkillDiagnostic] = []
    declared = os.path.basename(file_path) == "SKILL.md"

    def warn(message: str) -> None:
        diagnostics.append({"type": "warning", "message": message, "path": file_path})

    try:
        with open(file_path, encoding="utf-8", errors="replace", newline="") as fh:
            raw = fh.read()
    except OSError as exc:
        warn(f"cannot read skill file: {exc.strerror or exc}")
        return None, diagnostics
    try:
        parsed, _body = parse_frontmatter(raw)
    except FrontmatterError as exc:
        if declared:
            warn(str(exc))
        return None, diagnostics
    meta: Mapping[Any, Any] = parsed if isinstance(parsed, dict) else {}
    base_dir = os.path.dirname(file_path)

    description = meta.get("description")
    has_description = isinstance(description, str) and description.strip() != ""
    if not declared and not has_description:
        return None, diagnostics
    if not has_description:
        if description is None or isinstance(description, str):
            warn("skill has no description (the frontmatter needs a non-empty 'description')")
        else:
            warn(f"skill has no description: 'description' must be text, not {_yaml_kind(description)}")
    elif isinstance(description, str) and js_len(description) > MAX_DESCRIPTION_LENGTH:
        warn(f"skill description is longer than {MAX_DESCRIPTION_LENGTH} characters ({js_len(description)})")

    raw_name = meta.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name else os.path.basename(base_dir)
    for problem in _name_problems(name):
        warn(problem)

    if warn_unknown_fields:
        for key in meta:
            if key not in _KNOWN_FIELDS:
                warn(f"unknown frontmatter field {key!r}")

    if not has_description or not isinstance(description, str):  # str test narrows for mypy
        return None, diagnostics
    skill = Skill(
        name=name,
        description=description,
        file_path=file_path,
        base_dir=base_dir,
        source=source,
        disable_model_invocation=meta.get("disable-model-invocation") is True,
    )
    return skill, diagnostics


def _yaml_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


# --------------------------------------------------------------------------- discovery


def _join(*parts: str) -> str:
    return os.path.normpath(os.path.join(*parts))


def _posix_rel(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def _entry_kind(entry: os.DirEntry[str]) -> tuple[bool, bool] | None:
    """``(is_dir, is_file)`` following symlinks; ``None`` for a broken link."""
    try:
        if entry.is_symlink():
            st = os.stat(entry.path)
            return stat.S_ISDIR(st.st_mode), stat.S_ISREG(st.st_mode)
        return entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
    except OSError:
        return None


def _load_dir(
    directory: str,
    source: SkillSource,
    include_root_files: bool,
    matcher: IgnoreMatcher,
    root: str,
    warn_unknown_fields: bool,
) -> tuple[list[Skill], list[SkillDiagnostic]]:
    skills: list[Skill] = []
    diagnostics: list[SkillDiagnostic] = []
    if not os.path.exists(directory):
        return skills, diagnostics
    matcher.add_rules_from_dir(directory, root)
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
    except OSError:
        return skills, diagnostics

    def load_file(path: str) -> None:
        skill, diags = load_skill_from_file(path, source, warn_unknown_fields=warn_unknown_fields)
        if skill is not None:
            skills.append(skill)
        diagnostics.extend(diags)

    for entry in entries:
        if entry.name != "SKILL.md":
            continue
        full = _join(directory, entry.name)
        kind = _entry_kind(entry)
        if kind is None:
            continue
        if not kind[1] or matcher.ignores(_posix_rel(full, root)):
            continue
        load_file(full)
        return skills, diagnostics

    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        full = _join(directory, entry.name)
        kind = _entry_kind(entry)
        if kind is None:
            continue
        is_dir, is_file = kind
        rel = _posix_rel(full, root)
        if matcher.ignores(rel + "/" if is_dir else rel):
            continue
        if is_dir:
            sub_skills, sub_diags = _load_dir(full, source, False, matcher, root, warn_unknown_fields)
            skills.extend(sub_skills)
            diagnostics.extend(sub_diags)
            continue
        if not is_file or not include_root_files or not entry.name.endswith(".md"):
            continue
        load_file(full)
    return skills, diagnostics


def load_skills_from_dir(
    directory: StrPath, source: SkillSource = "path", *, warn_unknown_fields: bool = False
) -> tuple[list[Skill], list[SkillDiagnostic]]:
    """Discover skills under one root directory (see the module docstring).

    ``source`` names where the skills come from and is kept in each skill's
    ``sourceInfo`` (see :attr:`Skill.source_info`; pi's ``loadSkillsFromDir``).
    Returns ``(skills, diagnostics)`` in discovery order (entries sorted by
    name, byte order). A missing directory gives nothing. Never raises."""
    root = os.fspath(directory)
    return _load_dir(root, source, True, IgnoreMatcher(), root, warn_unknown_fields)


def _is_under(target: str, root: str) -> bool:
    root = os.path.abspath(root)
    if target == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return target.startswith(prefix)


def load_skills(
    cwd: StrPath | None = None,
    agent_dir: StrPath | None = None,
    skill_paths: Iterable[StrPath] = (),
    include_defaults: bool = True,
    *,
    resource_loader: bool = True,
    warn_unknown_fields: bool = False,
) -> LoadSkillsResult:
    """Load skills from all configured places (pi's ``loadSkills``).

    Arguments: ``cwd`` (default: the process's cwd), ``agent_dir`` (default:
    :func:`pi_session.core.paths.agent_dir`), both resolved first (``~``,
    relative paths); ``skill_paths`` (directories or ``.md`` files; trimmed,
    ``~`` and ``~/`` expanded, ``file://`` URLs accepted, relative ones
    resolved against ``cwd``); ``include_defaults`` (search
    ``<cwd>/.pi/skills`` and ``<agent dir>/skills`` first); ``resource_loader``
    (default ``True``: as pi 1.6's resource loader decides what its system
    prompt lists: the project directory before the user one, so a project
    skill wins a shared name, and a file reached twice counts once even when
    it lost a name collision the first time; ``False``: as pi's exported
    ``loadSkills``: user first, and only a loaded file is remembered).

    Returns :class:`LoadSkillsResult`. Diagnostics: ``warning`` for invalid
    skill files, missing paths and non-markdown files; ``collision`` for a
    name already taken (the first skill wins). A file reached a second time
    (same real path, e.g. through a symlink) is skipped without diagnostic. Never raises for bad
    files; only reads the filesystem."""
    cwd_s = resolve_path(cwd if cwd is not None else os.getcwd())
    agent_s = resolve_path(agent_dir if agent_dir is not None else paths.agent_dir())
    by_name: dict[str, Skill] = {}
    seen_real: set[str] = set()
    diagnostics: list[SkillDiagnostic] = []
    collisions: list[SkillDiagnostic] = []

    def add(skills: list[Skill], diags: list[SkillDiagnostic]) -> None:
        diagnostics.extend(diags)
        for skill in skills:
            real = canonical_path(os.path.abspath(skill.file_path))
            if real in seen_real:
                continue
            winner = by_name.get(skill.name)
            if winner is not None:
                if resource_loader:  # pi's run time drops repeated files before loading any
                    seen_real.add(real)
                collisions.append(
                    {
                        "type": "collision",
                        "message": f'skill name "{skill.name}" is already taken; keeping the first one',
                        "path": skill.file_path,
                        "collision": {
                            "resourceType": "skill",
                            "name": skill.name,
                            "winnerPath": winner.file_path,
                            "loserPath": skill.file_path,
                        },
                    }
                )
            else:
                by_name[skill.name] = skill
                seen_real.add(real)

    user_dir = _join(agent_s, "skills")
    project_dir = os.path.abspath(os.path.join(cwd_s, CONFIG_DIR_NAME, "skills"))
    if include_defaults:
        roots: list[tuple[str, SkillSource]] = [(user_dir, "user"), (project_dir, "project")]
        for root, source in reversed(roots) if resource_loader else roots:
            add(*load_skills_from_dir(root, source, warn_unknown_fields=warn_unknown_fields))

    def source_for(resolved: str) -> SkillSource:
        if not include_defaults:
            if _is_under(resolved, user_dir):
                return "user"
            if _is_under(resolved, project_dir):
                return "project"
        return "path"

    for raw in skill_paths:
        resolved = resolve_path(raw, cwd_s, trim=True)
        if not os.path.exists(resolved):
            diagnostics.append({"type": "warning", "message": "skill path not found", "path": resolved})
            continue
        source = source_for(resolved)
        if os.path.isdir(resolved):
            add(*load_skills_from_dir(resolved, source, warn_unknown_fields=warn_unknown_fields))
        elif os.path.isfile(resolved) and resolved.endswith(".md"):
            skill, diags = load_skill_from_file(resolved, source, warn_unknown_fields=warn_unknown_fields)
            if skill is not None:
                add([skill], diags)
            else:
                diagnostics.extend(diags)
        else:
            diagnostics.append(
                {"type": "warning", "message": "skill path is neither a directory nor a .md file", "path": resolved}
            )
    return LoadSkillsResult(list(by_name.values()), diagnostics + collisions)


# --------------------------------------------------------------------------- prompt block


def escape_xml(text: str) -> str:
    """Escape ``& < > " '`` as XML entities. Pure function."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


_SKILLS_INTRO = "Skills below hold specialised instructions for particular kinds of task."
_SKILLS_LOADING = {
    "read": "When a task fits a skill's description, open its file with the read tool first.",
    "bash": "When a task fits a skill's description, print its file with bash first.",
    "indirect": "When a task fits a skill's description, load its file first.",
}
_SKILLS_PATHS = (
    "A relative path inside a skill file starts at the folder holding that file; give tools absolute paths."
)
SKILL_READ_TOOLS = tuple(_SKILLS_LOADING)
"""The loading hints :func:`format_skills_for_prompt` knows: ``read``, ``bash``, ``indirect``."""


def _as_skill(value: Skill | Mapping[str, Any]) -> Skill:
    return value if isinstance(value, Skill) else Skill.from_dict(value)


def format_skills_for_prompt(skills: Iterable[Skill | Mapping[str, Any]], tool: str = "read") -> str:
    """The skills block of the system prompt (pi 1.6's ``formatSkillsForPrompt``).

    Accepts :class:`Skill` objects or pi's skill JSON. Skills with
    ``disable_model_invocation`` are left out; when none remain the result is
    ``""``. Otherwise: two newlines, an introduction line, a loading line, a
    path line (our wording), an empty line, then ``<available_skills>`` with
    one ``<skill>`` holding ``<name>``, ``<description>`` and ``<location>``
    (XML-escaped) per skill. ``tool`` picks the loading line: ``"read"`` (name
    the read tool), ``"bash"`` (name bash) or ``"indirect"`` (name no tool:
    the reader is reachable only through another tool). No trailing newline.
    Pure function.

    Raises ``ValueError`` for another ``tool``."""
    if tool not in _SKILLS_LOADING:
        raise ValueError(f"unknown skill read tool {tool!r} (expected one of {', '.join(SKILL_READ_TOOLS)})")
    visible = [s for s in map(_as_skill, skills) if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = ["\n\n" + _SKILLS_INTRO, _SKILLS_LOADING[tool], _SKILLS_PATHS, "", "<available_skills>"]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape_xml(skill.name)}</name>",
            f"    <description>{escape_xml(skill.description)}</description>",
            f"    <location>{escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
