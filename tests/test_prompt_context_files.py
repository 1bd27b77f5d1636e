"""Project context files (AGENTS.md / CLAUDE.md) against pi's goldens, plus
unit and property tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.prompt import CONTEXT_FILE_NAMES, load_project_context_files
from test_prompt_trees import CONTEXT_SCENARIOS, GOLDENS, ORACLE, build_context_tree, normalise

GOLDEN = json.loads((GOLDENS / "context_files.json").read_text())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ctx") / "root"
    root.mkdir()
    build_context_tree(root)
    return root


@pytest.mark.parametrize("name", sorted(CONTEXT_SCENARIOS))
def test_context_files_match_pi(tree: Path, name: str) -> None:
    cwd, agent = CONTEXT_SCENARIOS[name]
    ours = load_project_context_files(str(tree / cwd), str(tree / agent))
    assert normalise(ours, tree) == GOLDEN[name]


def test_unreadable_candidate_warns_and_falls_back(tree: Path) -> None:
    diags: list = []
    files = load_project_context_files(tree / "proj" / "a" / "b", tree / "missing", diagnostics=diags)
    assert [Path(f["path"]).name for f in files] == ["AGENTS.md", "CLAUDE.md", "CLAUDE.md"]
    assert diags == [
        {"type": "warning", "message": diags[0]["message"], "path": str(tree / "proj" / "a" / "b" / "AGENTS.md")}
    ]
    assert "directory" in diags[0]["message"].lower()


def test_broken_symlink_is_silently_absent(tree: Path) -> None:
    diags: list = []
    files = load_project_context_files(tree / "proj" / "a" / "b" / "c", tree / "missing", diagnostics=diags)
    assert files[-1]["path"].endswith("c/CLAUDE.MD")
    assert all(not d["path"].endswith("c/AGENTS.md") for d in diags)


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
@pytest.mark.skipif(shutil.which("node") is None or not ORACLE.exists(), reason="node or pi-oracle missing")
def test_live_oracle_context_files(tree: Path) -> None:
    for cwd, agent in CONTEXT_SCENARIOS.values():
        out = subprocess.run(
            [str(ORACLE), "context-files", "--cwd", str(tree / cwd), "--agent-dir", str(tree / agent)],
            capture_output=True, text=True, check=True,
        ).stdout
        assert load_project_context_files(str(tree / cwd), str(tree / agent)) == json.loads(out)
        assert os.path.isdir(tree / cwd)
