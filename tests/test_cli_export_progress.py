"""``pi-session export``: a progress bar on stderr for the secret scan and
the writing when stderr is a terminal (rich's forced terminal:
``FORCE_COLOR``), nothing but the last line when piped; the same export
either way. And the library's ``on_progress`` of the scans."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_session import SessionManager
from pi_session.operations import export_secrets, redacted_jsonl, redacted_manager

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl"
EXE = Path(sys.executable).parent / "pi-session"


def export(tmp_path: Path, *args: str, terminal: bool) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "COLUMNS")}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    if terminal:
        env.update(FORCE_COLOR="1", TERM="xterm-256color", COLUMNS="100")
    return subprocess.run([str(EXE), "export", *args], stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=tmp_path, timeout=120)


@pytest.mark.parametrize(
    ("fmt", "extra", "shown"),
    [("md", (), "scanning for secrets"), ("html", ("--redact",), "redacting secrets"), ("jsonl", (), "scanning for secrets")],
)
def test_export_shows_progress_on_a_terminal_only(tmp_path, fmt, extra, shown):
    session = tmp_path / "s.jsonl"
    shutil.copy(DEMO, session)
    outputs = {}
    for terminal in (False, True):
        out = tmp_path / f"out-{terminal}.{fmt}"
        result = export(tmp_path, str(session), "-f", fmt, *extra, "-o", str(out), terminal=terminal)
        assert result.returncode == 0, result.stderr
        err = result.stderr.decode()
        if terminal:
            assert shown in err
            assert ("writing out-True" in err) == (fmt != "jsonl")  # the jsonl copy is written at once
        else:
            assert err.count("\n") == 1 and err.startswith("exported ") and shown not in err
        outputs[terminal] = out.read_bytes()
    assert outputs[True] == outputs[False]


def test_export_to_standard_output_keeps_stdout_clean_with_a_bar_on_stderr(tmp_path):
    session = tmp_path / "s.jsonl"
    shutil.copy(DEMO, session)
    piped = export(tmp_path, str(session), "-f", "md", "-o", "-", terminal=False)
    shown = export(tmp_path, str(session), "-f", "md", "-o", "-", terminal=True)
    assert piped.returncode == shown.returncode == 0
    assert piped.stdout == shown.stdout and b"\x1b" not in shown.stdout
    assert piped.stderr == b"" and "scanning for secrets" in shown.stderr.decode()


def test_export_help_names_the_cost_of_the_scan_and_allow_secrets(tmp_path):
    env = {**os.environ, "COLUMNS": "200", "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    out = " ".join(subprocess.run([str(EXE), "export", "--help"], capture_output=True, text=True, env=env, timeout=60).stdout.split())
    assert "per MB of session" in out and "--allow-secrets, which skips it" in out and "progress bar" in out
    assert "skips the secret scan" in out


def test_the_scans_report_progress_to_the_end():
    manager = SessionManager.open(str(DEMO))
    total = len(manager.get_entries()) + 1  # with the header
    for scan in (
        lambda report: export_secrets(manager, "html", on_progress=report),
        lambda report: redacted_manager(manager, on_progress=report),
    ):
        calls: list[tuple[int, int]] = []
        scan(lambda done, of: calls.append((done, of)))
        assert calls[0] == (0, total) and calls[-1] == (total, total)
        assert [d for d, _t in calls] == sorted(d for d, _t in calls)
    data = DEMO.read_bytes()
    calls = []
    redacted_jsonl(data, on_progress=lambda done, of: calls.append((done, of)))
    assert calls[0] == (0, len(data)) and calls[-1] == (len(data), len(data))
