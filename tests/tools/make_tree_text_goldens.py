"""Regenerate the goldens of ``pi-session tree`` (text mode).

    PYTHONPATH=src python tests/tools/make_tree_text_goldens.py

Writes tests/goldens/tree_text/: the input sessions (``gen-*.jsonl`` from
tests/sessiongen.py with branches, labels and pi 1.6 entries, and
``hostile.jsonl``: control characters, bidi marks, tabs and newlines in
labels and ids, wide and zero-width characters, several roots) and for
each ``<name>.<mode>.txt``, the bytes ``pi-session tree`` writes in each of
:data:`MODES` (piped at several widths, and on a forced terminal with
colour). The goldens were first made with the renderer that printed one
rich ``Text`` per row (before the streaming renderer); the test
(tests/test_cli_tree_text.py) holds every later renderer to them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "tests" / "goldens" / "tree_text"

from sessiongen import generate_session, write_session  # noqa: E402

MODES: dict[str, dict[str, str]] = {
    "piped": {},
    "piped-60": {"COLUMNS": "60"},
    "color-60": {"COLUMNS": "60", "FORCE_COLOR": "1", "TERM": "xterm-256color"},
    "color-140": {"COLUMNS": "140", "FORCE_COLOR": "1", "TERM": "xterm-256color"},
    "nocolor-term-90": {"COLUMNS": "90", "FORCE_COLOR": "1", "NO_COLOR": "1", "TERM": "xterm-256color"},
}
"""Output mode name -> environment (over a clean one) for ``pi-session tree``."""

GEN_SEEDS = (3, 11)


def mode_env(mode: str) -> dict[str, str]:
    """The environment ``pi-session tree`` runs in for ``mode``: no terminal
    variables but the mode's own."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TERM", "COLORTERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    env.update(MODES[mode])
    return env


def tree_output(exe: str | Path, session: Path, mode: str, cwd: Path) -> bytes:
    """What ``pi-session tree SESSION --all-entries`` writes to stdout in
    ``mode`` (stdin and stderr not terminals either): every entry's row, as
    the goldens were made (the default view leaves custom entries out)."""
    env = {**mode_env(mode), "PI_CODING_AGENT_DIR": str(cwd / "agent")}
    result = subprocess.run([str(exe), "tree", str(session), "--all-entries"], stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=cwd, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"pi-session tree {session} ({mode}) failed: {result.stderr.decode()}")
    return result.stdout


def hostile_entries() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A session whose text tries everything a terminal cares about."""
    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0077", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    entries: list[dict[str, Any]] = []
    n = 0

    def add(parent: str | None, eid: str | None = None, **fields: Any) -> str:
        nonlocal n
        n += 1
        eid = eid or f"{n:08x}"
        entries.append({"id": eid, "parentId": parent, "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z", **fields})
        return eid

    def msg(parent: str | None, role: str, content: Any, eid: str | None = None, **extra: Any) -> str:
        return add(parent, eid, type="message", message={"role": role, "content": content, "timestamp": 1767225600000 + n, **extra})

    a = msg(None, "user", "hello \x1b]0;pwned\x07 \x1b[2J\x1b[31mred\x1b[0m \u202eevil\u202c done")
    b = msg(a, "assistant", [{"type": "text", "text": "tabs\tand\nnewlines\r\nand 日本語テキスト 🎉 👩\u200d💻 e\u0301 zero\u200bwidth soft\xadhyphen"},
                             {"type": "toolCall", "id": "c1", "name": "bash\x1b[1m\tx", "arguments": {}}], stopReason="toolUse")
    c = msg(b, "toolResult", [{"type": "text", "text": "ok " * 80}], toolCallId="c1", toolName="bash\nname", isError=True)
    d = msg(c, "user", "wide " + "全角文字" * 40)
    e = msg(d, "assistant", [{"type": "text", "text": "x" * 300}], stopReason="aborted")
    # a branch at d: two more children, one of them with a weird id
    f = msg(d, "user", "second attempt \u2066isolate\u2069 \x7f\x85 \ud800 lone", eid="ab\tcd\nef")
    g = msg(f, "user", "third", eid="id with spaces " + "z" * 70)
    h = msg(d, "bashExecution", None, command="ls\t-la \x1b[K", output="", exitCode=0)
    add(h, type="custom_message", customType="ext\x1bx", content=[{"type": "text", "text": "custom\ntext"}], display=True)
    add(e, type="label", targetId=a, label="two\nlines")
    add(e, type="label", targetId=b, label="tab\there \x1b[5mblink")
    add(e, type="label", targetId="ab\tcd\nef", label="ラベル" * 10)
    add(e, type="label", targetId=c, label="L" * 150)
    add(e, type="label", targetId=g, label="\u202eright-to-left")
    add(e, type="session_info", name="name\nwith newline \x1b[31m")
    add(e, type="model_change", provider="prov\x1b", modelId="model\t1")
    add(e, type="thinking_level_change", thinkingLevel="high\r")
    add(e, type="compaction", summary="sum\x1b[0mmary " * 20, firstKeptEntryId=d, tokensBefore=12345)
    add(g, type="branch_summary", fromId=d, summary="branch\nsummary 🎉")
    add(e, type="custom", customType="c\x00t", data={})
    add(e, type="message", message="not an object")
    add(e, type="weird\x1b[1mtype")
    # a second root (an orphan: its parent is missing) with a child
    o = msg("missing-parent", "user", "orphan \x1b[31m")
    msg(o, "assistant", [{"type": "text", "text": "orphan's child"}], stopReason="stop")
    last = msg(e, "user", "the leaf 🚀")
    # the leaf is the last entry: move it back onto the main line
    entries.append(entries.pop(next(i for i, x in enumerate(entries) if x["id"] == last)))
    return header, entries


def sessions(out: Path) -> list[Path]:
    """Write the input sessions into ``out``; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in GEN_SEEDS:
        header, entries = generate_session(seed, turns=30, pi16=True)
        paths.append(write_session(out / f"gen-{seed}.jsonl", header, entries))
    header, entries = hostile_entries()
    paths.append(write_session(out / "hostile.jsonl", header, entries))
    return paths


def main() -> None:
    import tempfile

    exe = Path(sys.executable).parent / "pi-session"
    for old in OUT.glob("*"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        for path in sessions(OUT):
            for mode in MODES:
                (OUT / f"{path.stem}.{mode}.txt").write_bytes(tree_output(exe, path, mode, Path(tmp)))
    print(f"wrote {len(list(OUT.glob('*')))} files to {OUT}")


if __name__ == "__main__":
    main()
