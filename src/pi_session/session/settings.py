"""Compaction and branch-summary settings, read as pi's ``SettingsManager`` reads them.

pi reads ``<agent dir>/settings.json`` (global) and ``<cwd>/.pi/settings.json``
(project) and merges them with ``deepMergeSettings``: a project key replaces
the global one, except when both values are plain objects, which are merged
one level deep (``{**global[key], **project[key]}``). A file that is missing
or empty counts as ``{}``; a file that does not parse also counts as ``{}``
and pi records an error it shows the user. We do the same: the file is
ignored and a one-line warning naming it is returned in
:attr:`LoadedSettings.warnings` (the CLI prints these).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..core import jsonio, paths
from ..errors import PiSessionError
from ..entries.records import StrPath

__all__ = [
    "CompactionSettings",
    "BranchSummarySettings",
    "LoadedSettings",
    "SettingsError",
    "coerce_compaction_settings",
    "coerce_branch_summary_settings",
    "deep_merge_settings",
    "read_settings_file",
    "load_settings",
    "default_agent_dir",
]

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000


_TYPED_KEYS: dict[str, dict[str, type]] = {
    "compaction": {"enabled": bool, "reserveTokens": int, "keepRecentTokens": int},
    "branchSummary": {"reserveTokens": int, "skipPrompt": bool},
}


class SettingsError(PiSessionError, ValueError):
    """A settings file could not be read or parsed; the message names the file."""


@dataclass(frozen=True)
class CompactionSettings:
    """pi's ``CompactionSettings``: ``enabled`` (True), ``reserve_tokens``
    (16384 tokens kept free for the summary / next response) and
    ``keep_recent_tokens`` (20000 tokens of recent messages kept verbatim)."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    def to_json(self) -> dict[str, Any]:
        """The settings object as pi writes it: ``{enabled, reserveTokens,
        keepRecentTokens}`` (this key order)."""
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any] | None) -> CompactionSettings:
        """Build from a ``compaction`` settings object; missing keys take
        the defaults (pi's ``?? default``: only null/absent fall back)."""
        value = value if isinstance(value, Mapping) else {}
        return cls(
            enabled=_or(value.get("enabled"), True),
            reserve_tokens=_or(value.get("reserveTokens"), DEFAULT_RESERVE_TOKENS),
            keep_recent_tokens=_or(value.get("keepRecentTokens"), DEFAULT_KEEP_RECENT_TOKENS),
        )


@dataclass(frozen=True)
class BranchSummarySettings:
    """pi's branch-summary settings: ``reserve_tokens`` (16384; the token
    budget for the branch is context window minus this) and ``skip_prompt``
    (False; pi's UI option to not ask whether to summarize)."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    skip_prompt: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{reserveTokens, skipPrompt}``."""
        return {"reserveTokens": self.reserve_tokens, "skipPrompt": self.skip_prompt}

    @classmethod
    def from_json(cls, value: Mapping[str, Any] | None) -> BranchSummarySettings:
        """Build from a ``branchSummary`` settings object (defaults for
        missing keys)."""
        value = value if isinstance(value, Mapping) else {}
        return cls(
            reserve_tokens=_or(value.get("reserveTokens"), DEFAULT_RESERVE_TOKENS),
            skip_prompt=_or(value.get("skipPrompt"), False),
        )


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _number_field(value: Mapping[str, Any], camel: str, snake: str, default: int) -> Any:
    """A token count from a settings mapping: the camelCase key (pi's
    name), else the snake_case one; a value that is not a number (strings,
    booleans, null) gives ``default``."""
    for key in (camel, snake):
        if key in value:
            v = value[key]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
                return v
            return default
    return default


def _flag_field(value: Mapping[str, Any], camel: str, snake: str, default: bool) -> bool:
    """A flag from a settings mapping (camelCase key, else snake_case);
    missing or null gives ``default``, anything else its truthiness (pi tests
    these flags with ``!settings.x``)."""
    for key in (camel, snake):
        if key in value and value[key] is not None:
            return bool(value[key])
    return default


_S = TypeVar("_S", "CompactionSettings", "BranchSummarySettings")


def _coerce(
    settings: Any,
    cls: type[_S],
    from_mapping: Callable[[Mapping[str, Any]], _S],
    attributes: Mapping[str, str],
    what: str,
) -> _S:
    """The one coercion rule of both settings kinds: None gives ``cls()``, a
    ``cls`` is returned as is, a mapping goes through ``from_mapping``, an
    object with all ``attributes`` (attribute -> pi's key) is read as that
    mapping; anything else raises ``TypeError``."""
    if settings is None:
        return cls()
    if isinstance(settings, cls):
        return settings
    if isinstance(settings, Mapping):
        return from_mapping(settings)
    if all(hasattr(settings, name) for name in attributes):
        return from_mapping({key: getattr(settings, name) for name, key in attributes.items()})
    raise TypeError(f"{what} settings must be a mapping or {cls.__name__}, not {type(settings).__name__}")


def coerce_compaction_settings(settings: Any) -> CompactionSettings:
    """Compaction settings from whatever a caller passes.

    Args:
        settings: None (the defaults), a :class:`CompactionSettings` (returned
            as is), or a mapping in pi's shape ``{"enabled", "reserveTokens",
            "keepRecentTokens"}`` (snake_case keys are accepted too; camelCase
            wins). Missing or null keys take the defaults; token counts that
            are not numbers (strings, booleans) take the defaults; ``enabled``
            counts by truthiness. Any other object is read through the
            attributes ``enabled``, ``reserve_tokens``, ``keep_recent_tokens``.

    Returns:
        A :class:`CompactionSettings`.

    Raises:
        TypeError: ``settings`` is none of the above.
    """
    return _coerce(
        settings,
        CompactionSettings,
        lambda value: CompactionSettings(
            enabled=_flag_field(value, "enabled", "enabled", True),
            reserve_tokens=_number_field(value, "reserveTokens", "reserve_tokens", DEFAULT_RESERVE_TOKENS),
            keep_recent_tokens=_number_field(value, "keepRecentTokens", "keep_recent_tokens", DEFAULT_KEEP_RECENT_TOKENS),
        ),
        {"enabled": "enabled", "reserve_tokens": "reserveTokens", "keep_recent_tokens": "keepRecentTokens"},
        "compaction",
    )


def coerce_branch_summary_settings(settings: Any) -> BranchSummarySettings:
    """Branch-summary settings from None (defaults), a
    :class:`BranchSummarySettings` (as is), or a mapping in pi's shape
    ``{"reserveTokens", "skipPrompt"}`` (snake_case accepted; same rules as
    :func:`coerce_compaction_settings`).

    Raises:
        TypeError: ``settings`` is none of these.
    """
    return _coerce(
        settings,
        BranchSummarySettings,
        lambda value: BranchSummarySettings(
            reserve_tokens=_number_field(value, "reserveTokens", "reserve_tokens", DEFAULT_RESERVE_TOKENS),
            skip_prompt=_flag_field(value, "skipPrompt", "skip_prompt", False),
        ),
        {"reserve_tokens": "reserveTokens", "skip_prompt": "skipPrompt"},
        "branch summary",
    )


@dataclass
class LoadedSettings:
    """The merged settings of one cwd.

    Attributes:
        raw: the merged settings object (all keys, not only ours).
        compaction: the compaction settings.
        branch_summary: the branch-summary settings.
        warnings: one line per settings file that was ignored because it
            could not be read or parsed.
        files: the settings files that were read (existing ones only).
        sources: for each setting a file gave a value to that is used
            (``"compaction.keepRecentTokens"``, ...), the file it came from
            (the project file wins over the global one, as in the merge);
            a setting missing here has its default.
    """

    raw: dict[str, Any]
    compaction: CompactionSettings
    branch_summary: BranchSummarySettings
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    sources: dict[str, Path] = field(default_factory=dict)

    def source_of(self, key: str) -> Path | None:
        """The settings file whose value of ``key`` (e.g.
        ``"compaction.keepRecentTokens"``) is used, or None: the default."""
        return self.sources.get(key)


def deep_merge_settings(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Merge settings objects like pi's ``deepMergeSettings``.

    Each key of ``overrides`` replaces the key in ``base``, except that when
    both values are objects (dicts) they are merged one level deep (override
    keys win). A None value in ``overrides`` is JSON ``null`` and does
    replace (pi only skips ``undefined``, which JSON cannot contain).

    Returns:
        A new dict; the inputs are not modified.
    """
    result = dict(base)
    for key, value in overrides.items():
        current = base.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            result[key] = {**current, **value}
        else:
            result[key] = value
    return result


def read_settings_file(path: Path) -> dict[str, Any]:
    """Read one settings file.

    Returns:
        The settings object; ``{}`` if the file does not exist or is empty.

    Raises:
        SettingsError: the file cannot be read, is not JSON, or its top level
            is not an object. The message names the file (and the line for
            JSON syntax errors).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read settings: {exc.strerror or exc}") from None
    if not data.strip():
        return {}
    try:
        value = jsonio.loads(data)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}" if line else str(path)
        msg = getattr(exc, "msg", None) or str(exc).split("\n")[0]
        raise SettingsError(f"{where}: invalid JSON in settings: {msg}") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path}: settings must be a JSON object")
    return value


def default_agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR`` if set, else ``~/.pi/agent`` (:func:`pi_session.core.paths.agent_dir`)."""
    return paths.agent_dir()


def load_settings(cwd: StrPath, agent_dir: StrPath | None = None) -> LoadedSettings:
    """Load and merge the global and project settings (pi's
    ``SettingsManager.create(cwd, agentDir)``).

    Args:
        cwd: the project directory; ``<cwd>/.pi/settings.json`` is read.
        agent_dir: the agent directory (default :func:`default_agent_dir`);
            ``<agent_dir>/settings.json`` is read.

    Returns:
        A :class:`LoadedSettings`. A broken file is ignored (treated as
        ``{}``, as pi does) and reported in ``warnings``; nothing is raised
        for bad files. **beyond pi**: a ``compaction`` or ``branchSummary``
        value that is not an object, or a field of the wrong type (e.g. a
        string ``reserveTokens``), is reported and replaced by the default
        instead of being used as is.
    """
    agent = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    candidates = [agent / "settings.json", Path(cwd) / ".pi" / "settings.json"]
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    files: list[Path] = []
    sources: dict[str, Path] = {}
    for path in candidates:
        if path.exists():
            files.append(path)
        try:
            values = read_settings_file(path)
        except SettingsError as exc:
            warnings.append(f"{exc}; ignoring this file")
            continue
        merged = deep_merge_settings(merged, values)
        for key, fields in _TYPED_KEYS.items():
            if key not in values:
                continue
            section = values[key]
            if not isinstance(section, dict) or not isinstance(merged.get(key), dict):  # replaces the whole object
                sources = {k: v for k, v in sources.items() if not k.startswith(f"{key}.")}
            if isinstance(section, dict):
                for name in fields:
                    if section.get(name) is not None:
                        sources[f"{key}.{name}"] = path
                    elif name in section:  # null: the default
                        sources.pop(f"{key}.{name}", None)
    for key, fields in _TYPED_KEYS.items():
        section = merged.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            warnings.append(f"settings key {key!r} must be an object; using defaults")
            merged[key] = {}
            sources = {k: v for k, v in sources.items() if not k.startswith(f"{key}.")}
            continue
        for name, kind in fields.items():
            value = section.get(name)
            if value is None:
                continue
            ok = isinstance(value, bool) if kind is bool else (
                isinstance(value, int) and not isinstance(value, bool) and value >= 0
            )
            if not ok:
                expected = "true or false" if kind is bool else "a non-negative integer"
                warnings.append(f"settings {key}.{name} must be {expected} (got {jsonio.js_stringify(value)}); using the default")
                section = {k: v for k, v in section.items() if k != name}
                merged[key] = section
                sources.pop(f"{key}.{name}", None)
    return LoadedSettings(
        raw=merged,
        compaction=CompactionSettings.from_json(merged.get("compaction")),
        branch_summary=BranchSummarySettings.from_json(merged.get("branchSummary")),
        warnings=warnings,
        files=files,
        sources=sources,
    )
