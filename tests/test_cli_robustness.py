"""CLI robustness: the real ``pi-session`` console script on hostile input,
unwritable places, pipes and bad options (one line, no traceback)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from child_signals import sigint_as_a_terminal_sends_it
from pi_session import SessionManager, read_session_file
from pi_session.cli.render import content_text, one_line, sanitize

EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b\x7fend"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x7f")


def assert_clean_error(res, *needles: str, code: int = 1) -> None:
    """One line on stderr naming the problem, no traceback, exit ``code``."""
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _assistant(text: str, ts: int = 2) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "x",
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": ts,
    }


def make_session(directory: Path, cwd: str = "/proj", turns: int = 2, text: str = "hello") -> SessionManager:
    sm = SessionManager.create(cwd, directory)
    for i in range(turns):
        sm.append_message({"role": "user", "content": f"{text} question {i}", "timestamp": 2 * i + 1})
        sm.append_message(_assistant(f"{text} answer {i}", 2 * i + 2))
    return sm


@pytest.fixture
def session(tmp_path) -> Path:
    return make_session(tmp_path / "s").get_session_file()


@pytest.fixture
def evil(tmp_path) -> Path:
    sm = SessionManager.create("/proj", tmp_path / "evil")
    sm.append_message({"role": "user", "content": "ask " + EVIL, "timestamp": 1})
    sm.append_message(_assistant("reply " + EVIL))
    sm.append_session_info("name " + EVIL)
    sm.append_label_change(sm.get_leaf_id(), "label " + EVIL)
    return sm.get_session_file()


# --- 1. export never overwrites the session ---------------------------------


def test_export_refuses_to_overwrite_the_session(cli, session, tmp_path):
    before = session.read_bytes()
    res = cli("export", str(session), "--output", str(session), "--force")
    assert_clean_error(res, "session")
    link = tmp_path / "link.html"
    link.symlink_to(session)
    res = cli("export", str(session), "-o", str(link), "--force")
    assert_clean_error(res, "session")
    other = make_session(tmp_path / "o").get_session_file()
    other_bytes = other.read_bytes()
    res = cli("export", str(session), "-o", str(other), "--force")
    assert_clean_error(res, "session")
    assert session.read_bytes() == before and other.read_bytes() == other_bytes


@pytest.mark.parametrize("name", ["", "  "])
def test_export_to_an_empty_file_name_is_a_clear_error(cli, session, tmp_path, name):
    res = cli("export", str(session), "-f", "md", "-o", name, cwd=str(tmp_path))
    assert_clean_error(res, "--output: the file name is empty")
    assert list(tmp_path.glob("*.md")) == []


@pytest.mark.parametrize("args, code", [(["tree"], 1), (["info", "--json"], 1), (["export", "-f", "md", "-o", "out.md"], 0)])
def test_a_closed_standard_output_is_an_error_for_what_prints(session, tmp_path, args, code):
    """Started with fd 1 closed (`>&-`), a command that prints says so on
    stderr and exits 1 (it exited 0, its output silently lost); a command
    that prints nothing on stdout still runs (export writes its file)."""
    exe = Path(sys.executable).parent / "pi-session"
    argv = [str(exe), args[0], str(session), *args[1:]]
    res = subprocess.run(argv, capture_output=False, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                         preexec_fn=lambda: os.close(1), timeout=120,
                         env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert res.returncode == code, res.stderr
    if code:
        assert res.stderr.strip() == "pi-session: standard output is closed: nothing can be printed"
    else:
        assert (tmp_path / "out.md").read_text().startswith("#")


def test_a_missing_path_is_no_such_file_also_with_a_store(cli, tmp_path):
    """A path that does not exist is "no such session file", also when a
    sessions store is set (it said "no session id starts with '/x'")."""
    store = tmp_path / "store"
    store.mkdir()
    for env in ({}, {"PI_SESSION_STORE": str(store)}):
        res = cli("tree", str(tmp_path / "missing.jsonl"), env=env)
        assert_clean_error(res, f"{tmp_path / 'missing.jsonl'}: no such session file")


def test_export_needs_force_to_overwrite_and_writes_atomically(cli, session, tmp_path):
    out = tmp_path / "out" / "page.md"
    out.parent.mkdir()
    first = cli("export", str(session), "-f", "md", "-o", str(out))
    assert first.returncode == 0, first.stderr
    assert "hello answer 1" in out.read_text()
    out.write_text("precious")
    again = cli("export", str(session), "-f", "md", "-o", str(out))
    assert_clean_error(again, "--force")
    assert out.read_text() == "precious"
    forced = cli("export", str(session), "-f", "md", "-o", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "hello answer 1" in out.read_text()
    assert sorted(p.name for p in out.parent.iterdir()) == ["page.md"]  # no temp file left


def test_export_format_and_leaf_null(cli, session):
    bad = cli("export", str(session), "--format", "pdf")
    assert_clean_error(bad, "pdf", "html", "md")
    empty = cli("export", str(session), "-f", "md", "--leaf", "null", "-o", "-")
    assert empty.returncode == 0, empty.stderr
    assert "question" not in empty.stdout and "null" in empty.stderr


# --- 2. OSError and internal errors: one line --------------------------------


@pytest.fixture
def readonly_dir(tmp_path):
    """A read-only bind mount of a directory holding a session (root only)."""
    src = tmp_path / "rw"
    dst = tmp_path / "ro"
    sm = make_session(src, turns=3)
    dst.mkdir()
    try:
        subprocess.run(["mount", "--bind", str(src), str(dst)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(dst)], check=True, capture_output=True)
        probe = dst / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:
            pytest.skip("the read-only mount is writable (running as a user who bypasses it?)")
        yield dst / sm.get_session_file().name
    finally:
        subprocess.run(["umount", str(dst)], capture_output=True)


@pytest.mark.parametrize(
    "args",
    [
        ("name", "{f}", "new name"),
        ("label", "{f}", "{leaf}", "x"),
        ("clone", "{f}"),
        ("compact", "{f}", "--provider", "extractive", "--keep-recent-tokens", "0"),
        ("navigate", "{f}", "{first}"),
    ],
)
def test_writes_to_a_read_only_filesystem_fail_with_one_line(cli, readonly_dir, args):
    sf = read_session_file(readonly_dir)
    before = readonly_dir.read_bytes()
    values = {"f": str(readonly_dir), "leaf": sf.entries[-1]["id"], "first": sf.entries[1]["id"]}
    res = cli(*(a.format(**values) for a in args))
    assert_clean_error(res, str(readonly_dir.parent), "Read-only file system")
    assert readonly_dir.read_bytes() == before


def test_fork_into_an_unusable_agent_dir_fails_with_one_line(cli, session, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file")
    res = cli("fork", str(session), "--cwd", str(tmp_path), env={"PI_CODING_AGENT_DIR": str(blocker / "agent")})
    assert_clean_error(res, str(blocker))


_PATCHED_MAIN = """
import sys
from pi_session.manager.session_manager import SessionManager
def boom(*a, **k):
    raise {exc}
SessionManager.get_entries = boom
sys.argv = ["pi-session", "info", sys.argv[1]]
from pi_session.cli import main
main()
"""


@pytest.mark.parametrize(
    "exc, code, needle",
    [
        ("RuntimeError('the wheels fell off')", 2, "internal error: RuntimeError: the wheels fell off (set PI_SESSION_DEBUG=1"),
        ("KeyboardInterrupt()", 130, "pi-session: interrupted"),
        ("PermissionError(13, 'Permission denied', '/some/file')", 1, "pi-session: /some/file: Permission denied"),
    ],
)
def test_safety_net(session, exc, code, needle):
    env = {**os.environ, "PI_SESSION_DEBUG": ""}
    res = subprocess.run(
        [sys.executable, "-c", _PATCHED_MAIN.format(exc=exc), str(session)], capture_output=True, text=True, env=env
    )
    assert_clean_error(res, needle, code=code)
    if code == 2:
        debug = subprocess.run(
            [sys.executable, "-c", _PATCHED_MAIN.format(exc=exc), str(session)],
            capture_output=True,
            text=True,
            env={**env, "PI_SESSION_DEBUG": "1"},
        )
        assert debug.returncode != 0 and "Traceback" in debug.stderr


# --- 3. context on huge messages ----------------------------------------------


def test_context_truncates_huge_messages_quickly(cli, tmp_path):
    sm = SessionManager.create("/proj", tmp_path / "big")
    sm.append_message({"role": "user", "content": "start " + "x" * 5_000_000, "timestamp": 1})
    sm.append_message(_assistant("short answer"))
    res = cli("context", str(sm.get_session_file()))
    assert res.returncode == 0, res.stderr
    assert len(res.stdout) < 30_000
    assert "more characters; use --json for everything" in res.stdout
    assert "short answer" in res.stdout


# --- 4. terminal escapes -------------------------------------------------------


def test_sanitize_unit():
    assert sanitize("a\x1b[2Jb\x07c\td\ne") == "a\\x1b[2Jb\\x07c\td\ne"
    assert sanitize("\x7f\x80\x9f\xa0é") == "\\x7f\\x80\\x9f\xa0é"
    assert sanitize("x\ud800y") == "x\\ud800y"
    assert sanitize("\r\x00") == "\\x0d\\x00"
    assert one_line("a\x1bb  c\nd") == "a\\x1bb c d"
    assert content_text([{"type": "text", "text": "\x1b"}]) == "\\x1b"


@pytest.mark.parametrize(
    "args",
    [("tree", "{f}"), ("context", "{f}"), ("info", "{f}"), ("export", "{f}", "--format", "md", "-o", "-"), ("export", "{f}", "-o", "-"), ("ls", "--cwd", "/proj")],
)
def test_no_raw_control_characters_in_human_output(cli, evil, tmp_path, args):
    agent = tmp_path / "agent" / "sessions" / "--proj--"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / evil.name).write_bytes(evil.read_bytes())
    res = cli(*(a.format(f=str(evil)) for a in args))
    assert res.returncode == 0, res.stderr
    for ch in RAW_CONTROLS:
        assert ch not in res.stdout and ch not in res.stderr, (ch, args)
    assert "\\x1b]0;pwned\\x07" in res.stdout.replace("\\[", "[")


def test_label_and_name_confirmations_escape_control_characters(cli, evil):
    entry = json.loads(evil.read_bytes().splitlines()[1])["id"]
    for args in (("label", str(evil), entry, EVIL), ("name", str(evil), EVIL)):
        res = cli(*args)
        assert res.returncode == 0, res.stderr
        for ch in RAW_CONTROLS:
            assert ch not in res.stdout and ch not in res.stderr, (ch, args)
        assert "\\x1b]0;pwned\\x07" in res.stdout.replace("\\[", "[")


def test_json_output_keeps_the_text(cli, evil):
    res = cli("context", str(evil), "--json")
    data = json.loads(res.stdout)
    assert data["messages"][0]["content"] == "ask " + EVIL


# --- 5-7. paths ----------------------------------------------------------------


def test_ls_relative_cwd(cli, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    make_session(tmp_path / "agent" / "sessions" / ("-" + str(proj).replace("/", "-") + "--"), cwd=str(proj), text="relative")
    absolute = json.loads(cli("ls", "--cwd", str(proj), "--json").stdout)
    relative = json.loads(cli("ls", "--cwd", "proj", "--json", cwd=str(tmp_path)).stdout)
    assert len(absolute) == 1 and relative == absolute


def test_piped_output_is_not_cut_or_wrapped(cli, tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    sm = make_session(deep, cwd=str(tmp_path / ("p" * 70)))
    f = sm.get_session_file()
    env = {"COLUMNS": ""}  # a pipe, no COLUMNS: the width must not fall back to 80
    cloned = cli("clone", str(f), env=env)
    assert cloned.returncode == 0, cloned.stderr
    assert len(cloned.stdout.splitlines()) == 1
    new_path = cloned.stdout.split(" to ", 1)[1].strip()
    assert Path(new_path).is_file()
    forked = cli("fork", str(f), "--cwd", str(tmp_path / "elsewhere"), env=env)
    assert len(forked.stdout.splitlines()) == 1 and Path(forked.stdout.split(" to ", 1)[1].strip()).is_file()
    info = cli("info", sm.get_session_id()[:20], env={**env, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    info_direct = cli("info", str(f), env=env)
    assert str(f) in info_direct.stdout and "…" not in info_direct.stdout
    assert info.returncode in (0, 1)
    listed = cli("ls", "--all", env={**env, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert listed.returncode == 0
    for line in listed.stdout.splitlines()[2:]:
        assert "…" not in line


def test_fork_and_clone_store_absolute_parent(cli, session, tmp_path):
    rel = os.path.relpath(session, tmp_path)
    forked = json.loads(cli("fork", rel, "--cwd", "there", "--json", cwd=str(tmp_path)).stdout)
    header = read_session_file(forked["path"]).header
    assert header["parentSession"] == str(session) and header["cwd"] == str(tmp_path / "there")
    cloned = json.loads(cli("clone", rel, "--json", cwd=str(tmp_path)).stdout)
    assert read_session_file(cloned["path"]).header["parentSession"] == str(session)


# --- 8. options and JSON shapes -------------------------------------------------


def test_negative_options_are_refused(cli, session):
    for args in (
        ("tokens", str(session), "--window", "-1"),
        ("compact", str(session), "--keep-recent-tokens", "-1", "--dry-run"),
        ("compact", str(session), "--reserve-tokens", "-5", "--dry-run"),
    ):
        res = cli(*args)
        assert res.returncode != 0 and "Traceback" not in res.stderr, args
        assert args[2] in res.stderr


def test_migrate_and_check_json_use_absolute_paths(cli, session, tmp_path):
    rel = os.path.relpath(session, tmp_path)
    migrated = json.loads(cli("migrate", rel, "--json", cwd=str(tmp_path)).stdout)
    assert set(migrated) == {"path", "fromVersion", "toVersion", "backup", "problems"}
    assert migrated["path"] == str(session) and migrated["toVersion"] == 3 and migrated["backup"] is None
    checked = json.loads(cli("check", rel, "--json", cwd=str(tmp_path)).stdout)
    assert checked["path"] == str(session)


# --- 9. error wording -------------------------------------------------------------


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"\x00" * 4096, "not a pi session: the file holds only NUL bytes"),
        (bytes(range(128, 256)) * 20 + b"\n", "not a pi session: line 1 is not JSON (binary data)"),
        (b"just some text\n", "not a pi session: line 1 is not JSON"),
    ],
)
def test_unreadable_file_wording(cli, tmp_path, content, expected):
    f = tmp_path / "junk.jsonl"
    f.write_bytes(content)
    res = cli("info", str(f))
    assert_clean_error(res, f"{f}:1: {expected}")
    assert res.stderr.strip().endswith(expected)


def test_a_damaged_header_is_named_not_the_first_good_line(cli, tmp_path):
    # a torn header line before good entries: the error named line 2 ("the first
    # record is not a session header"), not the damaged line 1
    f = tmp_path / "torn-header.jsonl"
    f.write_bytes(b'{"type":"session","version":3,"id":"abc\n'
                  b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n')
    res = cli("info", str(f))
    assert_clean_error(res, f"{f}:1: not a pi session: line 1, where the session header belongs, cannot be read: not valid JSON")


# --- 10. compact and navigate messages ------------------------------------------------


def test_compact_warns_when_the_context_grows(cli, tmp_path):
    sm = make_session(tmp_path / "tiny", turns=2, text="hi")
    res = cli("compact", str(sm.get_session_file()), "--provider", "extractive", "--keep-recent-tokens", "0")
    assert res.returncode == 0, res.stderr
    assert "Compacted 3 messages" in res.stdout
    assert "larger than before" in res.stderr


def test_navigate_says_what_was_recorded(cli, session):
    first_answer = read_session_file(session).entries[1]["id"]
    res = cli("navigate", str(session), first_answer)
    assert res.returncode == 0, res.stderr
    new = read_session_file(session).entries[-1]
    assert new["type"] == "branch_summary" and new["summary"] == ""
    assert f"to {first_answer}" in res.stdout
    assert f"empty branch_summary entry {new['id']}" in res.stdout and "out of the context" in res.stdout


# --- 11. version and help ----------------------------------------------------------


def test_version_and_help(cli):
    from pi_session import __version__

    res = cli("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"pi-session {__version__}"
    helped = cli("ls", "--help")
    assert helped.returncode == 0 and "--json" in helped.stdout and "<bool>" not in helped.stdout


def test_negative_token_options_are_refused(cli, tmp_path):
    import shutil
    from pathlib import Path

    demo = tmp_path / "demo.jsonl"
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl", demo)
    before = demo.read_bytes()
    for args in (["tokens", str(demo), "--reserve", "-1"], ["navigate", str(demo), "40890e84", "--window", "-5"]):
        result = cli(*args)
        assert result.returncode != 0 and "Traceback" not in result.stderr
    assert demo.read_bytes() == before


# The console script's code, with a gate on one module's import: when that
# module is about to be imported, the gate creates GATE_READY and sleeps, so
# the test's SIGINT lands inside the import of that module, wherever it is in
# start-up and however loaded the machine is.
GATED_CONSOLE_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    gated, ready = os.environ["GATE_MODULE"], os.environ["GATE_READY"]
    class Gate:
        def find_spec(self, name, path=None, target=None):
            if name == gated:
                sys.meta_path.remove(self)
                open(ready, "w").close()
                time.sleep(600)
            return None
    sys.meta_path.insert(0, Gate())
    from pi_session.cli import main
    sys.argv[0] = "pi-session"
    sys.exit(main())
    """
)

# Lists, in import order, the modules that main() imports for a command.
MODULES_MAIN_IMPORTS = textwrap.dedent(
    """
    import json, sys
    from pi_session.cli import main
    before = set(sys.modules)
    try:
        main()
    except SystemExit:
        pass
    print(json.dumps([name for name in sys.modules if name not in before]))
    """
)


def test_ctrl_c_while_the_cli_is_still_loading_prints_no_traceback(session, tmp_path):
    """SIGINT inside the import of modules that the entry point loads, early
    (the first module), in the middle (typer, rich) and late (the command's
    own modules): the process ends with one line and status 130, never a
    KeyboardInterrupt traceback. Each signal is sent once the gate says the
    import has started, never after a guessed delay."""
    import signal

    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    listed = subprocess.run(
        [sys.executable, "-c", MODULES_MAIN_IMPORTS, "tree", str(session)],
        capture_output=True, text=True, env=env, check=True,
    )
    loaded = json.loads(listed.stdout.strip().splitlines()[-1])
    ours = [name for name in loaded if name.startswith("pi_session.")]
    assert len(ours) >= 3 and "typer" in loaded and "rich" in loaded, loaded
    gates = [ours[0], "typer", "rich", ours[len(ours) // 2], ours[-1]]
    for gate in gates:
        ready = tmp_path / f"ready-{gate}"
        proc = subprocess.Popen(
            [sys.executable, "-c", GATED_CONSOLE_SCRIPT, "tree", str(session)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**env, "GATE_MODULE": gate, "GATE_READY": str(ready)},
            preexec_fn=sigint_as_a_terminal_sends_it,
        )
        try:
            deadline = time.monotonic() + 300  # a safety net, not a timing: the gate holds the import
            while not ready.exists():
                assert proc.poll() is None, (gate, proc.communicate())
                assert time.monotonic() < deadline, f"the import of {gate} never started"
                time.sleep(0.01)
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, (gate, err.decode()[-800:])
        assert err == b"pi-session: interrupted\n", (gate, err.decode()[-800:])


def test_ctrl_c_wrapped_by_class_creation_during_start_up_is_still_an_interrupt(tmp_path):
    """A Ctrl-C that lands inside class creation reaches the entry point as
    ``RuntimeError: Error calling __set_name__`` caused by KeyboardInterrupt
    (seen on CI when the signal hit ``platform.uname_result``). The entry
    point follows the cause chain: one line, status 130, no traceback."""
    script = textwrap.dedent(
        """
        import sys
        class WrappedInterrupt:
            def find_spec(self, name, path=None, target=None):
                if name == "pi_session.cli.app":
                    try:
                        raise KeyboardInterrupt
                    except KeyboardInterrupt as exc:
                        raise RuntimeError("Error calling __set_name__ on 'cached_property'") from exc
                return None
        sys.meta_path.insert(0, WrappedInterrupt())
        from pi_session.cli import main
        main()
        """
    )
    result = subprocess.run([sys.executable, "-c", script, "tree", "x.jsonl"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    assert result.stderr == "pi-session: interrupted\n"


def test_interrupted_by_follows_causes_but_not_other_errors():
    from pi_session.cli.interrupts import interrupted_by

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as exc:
        wrapped = exc
    assert interrupted_by(wrapped)
    assert interrupted_by(KeyboardInterrupt())
    assert not interrupted_by(RuntimeError("plain"))
