"""Every Python snippet of README.md and docs/*.md runs as written (issue
27, item 13), in a directory holding the bundled example session as
``session.jsonl`` (and ``examples/demo-session.jsonl``), with pi's agent
directory in that directory. A snippet whose first line is ``# not run:
<reason>`` is skipped with that reason (it needs a model or a server)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE_RE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _snippets() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for n, m in enumerate(FENCE_RE.finditer(text), 1):
            line = text[: m.start()].count("\n") + 1
            out.append((f"{doc.relative_to(ROOT)}:{line}", m.group(1)))
    return out


SNIPPETS = _snippets()


def test_the_docs_have_snippets() -> None:
    assert len(SNIPPETS) >= 10, [name for name, _ in SNIPPETS]


@pytest.mark.parametrize("name,code", SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_snippet_runs_as_written(name: str, code: str, tmp_path: Path) -> None:
    first = code.split("\n", 1)[0]
    if first.startswith("# not run:"):
        pytest.skip(first[2:])
    (tmp_path / "examples").mkdir()
    demo = ROOT / "examples" / "demo-session.jsonl"
    shutil.copy(demo, tmp_path / "examples" / "demo-session.jsonl")
    shutil.copy(demo, tmp_path / "session.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("PI_SESSION_STORE")}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    env["HOME"] = str(tmp_path)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{name}:\n{result.stderr[-3000:]}"
