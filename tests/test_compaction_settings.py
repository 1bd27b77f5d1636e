"""Settings loading and merging (pi's SettingsManager semantics)."""

from __future__ import annotations

import json

from pi_session.session.settings import (
    BranchSummarySettings,
    CompactionSettings,
    deep_merge_settings,
    load_settings,
)


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def test_defaults(tmp_path):
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction == CompactionSettings(True, 16384, 20000)
    assert s.branch_summary == BranchSummarySettings(16384, False)
    assert s.warnings == [] and s.files == []
    assert s.compaction.to_json() == {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}


def test_project_overrides_global_key_by_key(tmp_path):
    write(tmp_path / "agent" / "settings.json", {"compaction": {"enabled": False, "reserveTokens": 1000}, "theme": "dark"})
    write(tmp_path / "cwd" / ".pi" / "settings.json", {"compaction": {"reserveTokens": 2000}, "branchSummary": {"reserveTokens": 5}})
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction == CompactionSettings(False, 2000, 20000)
    assert s.branch_summary.reserve_tokens == 5
    assert s.raw["theme"] == "dark"
    assert len(s.files) == 2


def test_deep_merge_is_one_level():
    base = {"a": {"x": {"deep": 1}, "y": 1}, "b": [1], "c": 1}
    over = {"a": {"x": {"other": 2}}, "b": [2], "c": {"now": "object"}}
    assert deep_merge_settings(base, over) == {"a": {"x": {"other": 2}, "y": 1}, "b": [2], "c": {"now": "object"}}
    assert base == {"a": {"x": {"deep": 1}, "y": 1}, "b": [1], "c": 1}


def test_malformed_file_is_ignored_with_warning(tmp_path):
    write(tmp_path / "agent" / "settings.json", {"compaction": {"keepRecentTokens": 7}})
    bad = tmp_path / "cwd" / ".pi" / "settings.json"
    write(bad, '{"compaction": {"keepRecentTokens": 9},\n oops}')
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction.keep_recent_tokens == 7
    assert len(s.warnings) == 1 and str(bad) in s.warnings[0] and ":2" in s.warnings[0]


def test_wrong_types_fall_back_to_defaults(tmp_path):
    write(tmp_path / "agent" / "settings.json", {"compaction": {"reserveTokens": "lots", "enabled": 1}, "branchSummary": 3})
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction == CompactionSettings()
    assert len(s.warnings) == 3


def test_non_object_top_level_and_empty(tmp_path):
    write(tmp_path / "agent" / "settings.json", "[1, 2]")
    write(tmp_path / "cwd" / ".pi" / "settings.json", "  \n")
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction == CompactionSettings()
    assert len(s.warnings) == 1 and "object" in s.warnings[0]


def test_env_agent_dir(tmp_path, monkeypatch):
    write(tmp_path / "env-agent" / "settings.json", {"compaction": {"keepRecentTokens": 11}})
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "env-agent"))
    assert load_settings(tmp_path / "cwd").compaction.keep_recent_tokens == 11


def test_each_setting_names_the_file_it_came_from(tmp_path):
    """``LoadedSettings.source_of`` (``compact`` names
    where its kept-recent budget comes from): the project file wins key by
    key, a wrong-typed or null value is the default, and a section that is
    not an object drops the sources of the other file's section."""
    agent = tmp_path / "agent" / "settings.json"
    project = tmp_path / "cwd" / ".pi" / "settings.json"
    write(agent, {"compaction": {"keepRecentTokens": 100, "reserveTokens": 200, "enabled": True}})
    write(project, {"compaction": {"reserveTokens": 300, "enabled": None}, "branchSummary": {"reserveTokens": "x"}})
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.source_of("compaction.keepRecentTokens") == agent
    assert s.source_of("compaction.reserveTokens") == project
    assert s.source_of("compaction.enabled") is None
    assert s.source_of("branchSummary.reserveTokens") is None  # not a number: the default, with a warning
    assert s.branch_summary.reserve_tokens == 16384 and s.warnings
    write(project, {"compaction": 5})
    s = load_settings(tmp_path / "cwd", tmp_path / "agent")
    assert s.compaction == CompactionSettings() and s.source_of("compaction.keepRecentTokens") is None
    assert load_settings(tmp_path / "other", tmp_path / "none").sources == {}
