"""Project context files (AGENTS.override.md / AGENTS.md / CLAUDE.md) against
pi 1.6's goldens, plus unit and property tests.

One deliberate difference from pi: line ends. pi keeps ``\r`` in a context
file's content; pi-session reads a CRLF file like the plain one (``\n``), so
the goldens' contents are compared with their line ends normalised."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.prompt import CONTEXT_FILE_NAMES, load_project_context_files
from shared_paths import needs_oracle
from test_prompt_trees import CONTEXT_SCENARIOS, GOLDENS, ORACLE, build_context_tree, normalise, scenario_path

GOLDEN = json.loads((GOLDENS / "context_files.json").read_text())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ctx") / "root"
    root.mkdir()
    build_context_tree(root)
    return root


def plain(files: list[dict]) -> list[dict]:
    """pi's result with line ends as pi-session reads them."""
    return [dict(f, content=f["content"].replace("\r\n", "\n").replace("\r", "\n")) for f in files]


def load_scenario(root: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> list:
    cwd, agent = CONTEXT_SCENARIOS[name]
    monkeypatch.chdir(root)  # "@relative" scenarios
    monkeypatch.setenv("HOME", str(root / "home"))  # "~" scenarios
    return load_project_context_files(scenario_path(root, cwd), scenario_path(root, agent))


@pytest.mark.parametrize("name", sorted(CONTEXT_SCENARIOS))
def test_context_files_match_pi(tree: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = load_scenario(tree, name, monkeypatch)
    assert normalise(ours, tree) == plain(GOLDEN[name])


def test_goldens_cover_the_1_6_rules() -> None:
    paths = lambda name: [f["path"].removeprefix("<ROOT>/") for f in GOLDEN[name]]  # noqa: E731
    assert paths("override") == ["agent-ovr/AGENTS.override.md", "ovr/AGENTS.override.md", "ovr/sub/AGENTS.md",
                                 "ovr/sub/deeper/AGENTS.override.md"]
    assert paths("special-files") == ["special/CLAUDE.md", "special/x/AGENTS.md"]
    assert paths("worktree-nested") == ["repo/wt/feat/AGENTS.md"]  # the main repo's AGENTS.md is shadowed
    assert paths("worktree-no-file") == ["repo/AGENTS.md", ]
    assert paths("worktree-other-name") == ["repo/AGENTS.md", "repo/wt/claude/CLAUDE.md"]
    assert paths("worktree-sibling") == ["sib-wt/AGENTS.md"]
    assert paths("worktree-bare") == ["bare/AGENTS.md", "bare/main/AGENTS.md"]
    bom = GOLDEN["bom-crlf"][0]["content"]
    assert not bom.startswith("\ufeff") and "\r\n" in bom  # pi strips the BOM and keeps CR
    assert GOLDEN["tilde"][0]["path"] == "<ROOT>/home/AGENTS.md"


def test_bom_and_crlf_read_like_the_plain_file(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "AGENTS.md").write_bytes(b"line one\nline two\n\nend\n")
    (tmp_path / "win").mkdir()
    (tmp_path / "win" / "AGENTS.md").write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n\r\nend\r\n")
    a = load_project_context_files(tmp_path / "plain", tmp_path / "none")
    b = load_project_context_files(tmp_path / "win", tmp_path / "none")
    assert [f["content"] for f in a] == [f["content"] for f in b] == ["line one\nline two\n\nend\n"]


def test_directory_candidate_is_skipped_silently(tree: Path) -> None:
    diags: list = []
    files = load_project_context_files(tree / "proj" / "a" / "b", tree / "missing", diagnostics=diags)
    assert [Path(f["path"]).name for f in files] == ["AGENTS.md", "CLAUDE.md", "CLAUDE.md"]
    assert diags == []


def test_unreadable_candidate_warns_and_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    (tmp_path / "AGENTS.md").write_text("secret")
    (tmp_path / "CLAUDE.md").write_text("fallback")
    denied = str(tmp_path / "AGENTS.md")

    real_open = builtins.open

    def fake_open(path, *args, **kwargs):  # root reads any file, so the OS denies by hand
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_open(path, *args, **kwargs)

    diags: list = []
    with monkeypatch.context() as patched:
        patched.setattr(builtins, "open", fake_open)
        files = load_project_context_files(tmp_path, tmp_path / "none", diagnostics=diags)
    assert files[-1] == {"path": str(tmp_path / "CLAUDE.md"), "content": "fallback"}
    assert [(d["type"], d["path"]) for d in diags] == [("warning", denied)]
    assert "Permission denied" in diags[0]["message"]


def test_broken_symlink_is_silently_absent(tree: Path) -> None:
    diags: list = []
    files = load_project_context_files(tree / "proj" / "a" / "b" / "c", tree / "missing", diagnostics=diags)
    assert files[-1]["path"].endswith("c/CLAUDE.MD")
    assert diags == []


def test_diagnostics_are_optional(tree: Path) -> None:
    # No diagnostics list given: still no exception.
    assert load_project_context_files(tree / "proj" / "a" / "b", tree / "missing")


def test_agent_dir_default_comes_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "CLAUDE.md").write_text("from env")
    (tmp_path / "w").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    files = load_project_context_files(tmp_path / "w")
    assert files[0] == {"path": str(agent / "CLAUDE.md"), "content": "from env"}
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/agent")
    assert load_project_context_files(tmp_path / "w")[0]["path"] == str(agent / "CLAUDE.md")


def test_trailing_slash_and_dotdot_in_cwd(tree: Path) -> None:
    a = load_project_context_files(str(tree / "proj" / "a") + "/", tree / "missing")
    b = load_project_context_files(str(tree / "proj" / "a" / "b") + "/..", tree / "missing")
    assert a == b == load_project_context_files(tree / "proj" / "a", tree / "missing")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([None, *CONTEXT_FILE_NAMES]), min_size=1, max_size=5))
def test_one_file_per_level_outermost_first(levels: list[str | None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "t"
        expected = []
        for i, name in enumerate(levels):
            d = d / f"l{i}"
            d.mkdir(parents=True)
            if name is not None:
                (d / name).write_text(f"level {i}")
                expected.append(str(d / name))
        files = load_project_context_files(d, Path(tmp) / "no-agent")
        ours = [f["path"] for f in files if f["path"].startswith(tmp)]
        assert ours == expected
        assert [f["content"] for f in files if f["path"].startswith(tmp)] == [
            Path(p).read_text() for p in expected
        ]


@pytest.mark.oracle
@needs_oracle
def test_live_oracle_context_files(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [["context-files", "--cwd", str(tree / c), "--agent-dir", str(tree / a)]
             for c, a in CONTEXT_SCENARIOS.values() if c[0] not in "~@" and a[0] not in "~@"]
    (tree.parent / "calls.json").write_text(json.dumps(calls))
    env = dict(os.environ, PI_ORACLE_PI="1.6.0")
    out = json.loads(subprocess.run([str(ORACLE), "batch", str(tree.parent / "calls.json")], capture_output=True,
                                    text=True, check=True, env=env).stdout)
    for call, item in zip(calls, out):
        assert load_project_context_files(call[2], call[4]) == plain(item["json"]), call
