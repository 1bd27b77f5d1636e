"""The real console script on damaged files: warnings with file and line,
exit 0 when readable, a one-line error and non-zero exit when not, no
traceback, and the file byte-identical afterwards. Also ``check`` and
``export``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import orjson
import pytest

from storage_helpers import assistant, make_session, user

BIN = Path(sys.executable).parent / "pi-session"

# While cli/app.py does not list check_cmds yet, run the same app with it
# registered (still a real process and the real typer app).
_WITH_CHECK = (
    "import sys; from pi_session.cli.app import app; from pi_session.cli import check_cmds; "
    "names = {c.name for c in app.registered_commands}; "
    "check_cmds.register(app) if 'check' not in names else None; sys.argv[0] = 'pi-session'; app()"
)


@lru_cache(maxsize=1)
def _script_has_check() -> bool:
    out = subprocess.run([str(BIN), "--help"], capture_output=True, text=True, timeout=60)
    return " check " in out.stdout and " export " in out.stdout


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [str(BIN), *args]
    if args and args[0] in ("check", "export") and not _script_has_check():
        cmd = [sys.executable, "-c", _WITH_CHECK, *args]
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=full_env)


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, bytes]:
    path = make_session(tmp_path / "sessions", n=6)
    lines = path.read_bytes().split(b"\n")[:-1]
    bad = [lines[0], lines[1], b"\x00\x00\x00not json", lines[2][:40] + lines[3]] + lines[4:]
    data = b"\n".join(bad) + b"\n" + b'{"type":"message","id":"zz'
    path.write_bytes(data)
    return path, data


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.mark.parametrize("command", [["info"], ["tree"], ["context", "--json"], ["info", "--json"]])
def test_readable_damaged_file_warns_and_exits_0(damaged: tuple[Path, bytes], command: list[str]) -> None:
    path, data = damaged
    proc = run(*command, str(path))
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    if "--json" not in command or command[0] != "info":
        assert f"{path}:3:" in proc.stderr and f"{path}:4:" in proc.stderr
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    "content",
    [b'{"type":"message","id":"x"}\n', b"\x00\x00\x00\n\x00", b"garbage\n", b"\xff\xfe\n"],
    ids=["no-header", "nuls", "garbage", "binary"],
)
@pytest.mark.parametrize("command", ["info", "tree", "context", "check"])
def test_unreadable_file_one_line_error(tmp_path: Path, content: bytes, command: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    proc = run(command, str(path))
    assert_no_traceback(proc)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and str(path) in lines[0], proc.stderr
    assert path.read_bytes() == content


def test_missing_and_outside_ids(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent / "sessions" / "--p--")
    for arg in ("../../etc/passwd", "..", "abc/../../x", "zzzz-no-such"):
        proc = run("info", arg, env={"PI_CODING_AGENT_DIR": str(agent)})
        assert_no_traceback(proc)
        assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1


def test_check_reports_lines_and_exit_codes(damaged: tuple[Path, bytes]) -> None:
    path, data = damaged
    proc = run("check", str(path))
    assert_no_traceback(proc)
    assert proc.returncode == 1
    last_line = data.count(b"\n") + 1
    assert f"{path}:3:" in proc.stdout and f"{path}:4:" in proc.stdout and f"{path}:{last_line}:" in proc.stdout
    assert path.read_bytes() == data
    as_json = run("check", str(path), "--json")
    report = orjson.loads(as_json.stdout)
    assert as_json.returncode == 1 and not report["ok"]
    assert {(p["line"], p["kind"]) for p in report["problems"]} >= {(3, "invalid-json"), (4, "glued")}
    repaired = run("check", str(path), "--repair")
    assert_no_traceback(repaired)
    assert "repair.bak" in repaired.stdout
    assert path.with_name(path.name + ".repair.bak").read_bytes() == data
    # the entry after the lost one is an orphan now: reported, not changed, exit 1
    again = run("check", str(path), "--json")
    problems = orjson.loads(again.stdout)["problems"]
    assert [p["kind"] for p in problems] == ["orphan"] and again.returncode == 1
    assert repaired.returncode == 1


def test_check_repair_says_what_it_did_and_when_nothing_is_fixable(tmp_path: Path) -> None:
    """--repair names what it changed ("2 lines removed", not "0 lines
    written clean, 2 removed") and, when repair fixes none of the problems,
    says so instead of ending without a word about the repair."""
    path = make_session(tmp_path / "a", n=4)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join([*lines[:2], b"garbage", *lines[2:], b"more garbage"]) + b"\n")
    proc = run("check", str(path), "--repair")
    assert proc.returncode == 0 and f"repaired {path}: 2 lines removed\n" in proc.stdout, proc.stdout
    dup = make_session(tmp_path / "b", n=3)
    lines = dup.read_bytes().split(b"\n")[:-1]
    dup.write_bytes(b"\n".join([*lines, lines[-1]]) + b"\n")  # the last entry twice: a duplicate id
    before = dup.read_bytes()
    proc = run("check", str(dup), "--repair")
    assert proc.returncode == 1 and dup.read_bytes() == before
    assert proc.stdout.splitlines()[-1] == "nothing to repair: 1 problem that repair does not fix; the file is unchanged", proc.stdout


def test_check_clean_file_exit_0(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    data = path.read_bytes()
    proc = run("check", str(path))
    assert proc.returncode == 0 and "ok" in proc.stdout
    proc = run("check", str(path), "--repair")
    assert proc.returncode == 0 and path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_check_repair_clean_result_exit_0(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    data = path.read_bytes()
    path.write_bytes(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n", 2) + b"\n\n")
    assert run("check", str(path)).returncode == 1
    proc = run("check", str(path), "--repair")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.read_bytes() == data


EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)> ``` </pre>"\'&'


def _evil_session(tmp_path: Path) -> Path:
    from pi_session.manager.session_manager import SessionManager

    m = SessionManager.create("/p", session_dir=tmp_path)
    m.append_message(user(EVIL))
    m.append_message(assistant("````\n" + EVIL + "\n````"))
    m.append_session_info(EVIL)
    m.append_message({"role": "user", "content": [{"type": "image", "mimeType": "text/html", "data": "<b>x</b>"}], "timestamp": 1})
    return m.get_session_file()


def test_export_html_escapes_everything(tmp_path: Path) -> None:
    path = _evil_session(tmp_path)
    out = tmp_path / "out.html"
    proc = run("export", str(path), "--format", "html", "--output", str(out))
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    # the one script is the viewer's own (allowed by its hash in the policy)
    from pi_session.viewer.page import page_assets

    ours = f"<script>{page_assets()[1]}</script>"
    assert page.count(ours) == 1
    page = page.replace(ours, "")
    assert "<script>" not in page and "onerror=alert" not in page.replace("onerror=alert(2)&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "data:text/html" not in page
    assert page.count("<script") == 0
    assert "Content-Security-Policy" in page


def test_export_without_output_writes_pis_file_name_and_prints_its_path(cli, tmp_path: Path) -> None:
    """Issue 27 item 2: no HTML on the terminal; pi's /export name
    (pi-session-<session file name>.html) in the current directory, its path
    printed; standard output only with -o -; mode 0644 (less the umask)
    unless --private; a JSONL copy of the session stays 0600."""
    path = make_session(tmp_path / "sessions", n=4)
    work = tmp_path / "work"
    work.mkdir()
    old_umask = os.umask(0o022)
    try:
        proc = cli("export", str(path), cwd=str(work))
        md = cli("export", str(path), "--format", "md", "--private", cwd=str(work))
        jsonl = cli("export", str(path), "--format", "jsonl", cwd=str(work))
        again = cli("export", str(path), cwd=str(work))
        piped = cli("export", str(path), "-o", "-", cwd=str(work))
    finally:
        os.umask(old_umask)
    page = work / f"pi-session-{path.stem}.html"
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and "<html" not in proc.stderr
    assert re.fullmatch(rf"exported \d+ entries to {re.escape(str(page))}", proc.stderr.strip())
    assert "Content-Security-Policy" in page.read_text()
    assert os.stat(page).st_mode & 0o777 == 0o644
    assert md.returncode == 0 and os.stat(work / f"pi-session-{path.stem}.md").st_mode & 0o777 == 0o600
    assert jsonl.returncode == 0 and (work / f"pi-session-{path.stem}.jsonl").read_bytes() == path.read_bytes()
    assert os.stat(work / f"pi-session-{path.stem}.jsonl").st_mode & 0o777 == 0o600
    assert again.returncode == 1 and again.stderr.strip().endswith("already exists (use --force to overwrite it)")
    assert piped.returncode == 0 and piped.stdout.startswith("<!DOCTYPE html>") and piped.stderr == ""
    assert sorted(p.name for p in work.iterdir()) == sorted(f"pi-session-{path.stem}{ext}" for ext in (".html", ".md", ".jsonl"))


def _rendered(md: str):
    """``md`` as a Markdown viewer with raw HTML on sees it (markdown-it-py,
    CommonMark with tables): (tokens, HTML)."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    parser.validateLink = lambda url: True  # type: ignore[method-assign]
    tokens = parser.parse(md)
    flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
    return flat, parser.render(md)


def test_export_markdown_stays_inert_with_hostile_text(tmp_path: Path) -> None:
    path = _evil_session(tmp_path)
    proc = run("export", str(path), "--format", "md", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    tokens, html = _rendered(proc.stdout)
    assert not [t for t in tokens if t.type in ("html_block", "html_inline", "image")]
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html  # shown as text
    headings = [line for line in proc.stdout.splitlines() if line.startswith("#")]
    assert [h.split(" ", 1)[0] for h in headings] == ["#"] + ["##"] * (len(headings) - 1)  # nothing ran into a heading
    from viewer_pages import hostile_session

    from pi_session.viewer.markup import safe_href

    hostile = run("export", str(hostile_session(tmp_path / "h.jsonl")), "--format", "md", "-o", "-")
    assert hostile.returncode == 0, hostile.stderr
    tokens, html = _rendered(hostile.stdout)
    assert not [t for t in tokens if t.type in ("html_block", "html_inline", "image")]
    assert all(safe_href(str(t.attrGet("href"))) for t in tokens if t.type == "link_open")
    assert "<script" not in html and "<svg" not in html and "<iframe" not in html and 'href="javascript' not in html
    assert sum(line.startswith("## ") for line in hostile.stdout.splitlines()) == 8  # every shown entry on the path kept its own heading


def test_export_markdown_renders_as_the_conversation(tmp_path: Path) -> None:
    """Issue 27 item 9: no text fence around every message (assistant
    Markdown never rendered), no escaped headings (## user \\[task\\])."""
    from viewer_pages import TABLE_ANSWER, showcase_session

    path = showcase_session(tmp_path / "s.jsonl")
    proc = run("export", str(path), "--format", "md", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Model: anthropic/claude-sonnet-4-5",
        "## User",
        "## Assistant",
        "## Tool result: read src/billing.py",
        "## Assistant (label: rounding fix)",
        "## Branch summary",
        "## User",
        "## Assistant",
        "## Tool result: edit src/billing.py",
        "## Compaction",
        "## User",
        "## Context edit",
        "## Assistant",
        "## Usage: cache_warm anthropic/claude-sonnet-4-5, 901 tokens",
    ]
    assert TABLE_ANSWER in md  # assistant Markdown as it is
    assert "\nInvoice totals are off by a cent. Find out why and fix it.\n" in md
    assert "#### Goal" in md and "#### Tried" in md  # summary headings below the entry's
    assert "**→ read** `src/billing.py`" in md
    assert "```diff\n@@ -1 +1 @@\n-round(x * RATE, 2)\n+x * RATE\n```" in md
    assert "*edited by context edit ce1 (shown as the model sees it)*\n\n[key removed]" in md and "sk-SECRET" not in md
    tokens, html = _rendered(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert [t.info for t in fences] == ["text", "python", "diff", "text"]  # tool output, code, the edit's diff
    assert "<table>" in html and "<strong>each step rounds</strong>" in html and "<h4>Done</h4>" in html
    assert '<a href="https://docs.python.org/3/library/decimal.html">' in html
    assert not [t for t in tokens if t.type in ("html_block", "html_inline", "image")]


def test_export_leaf_and_unknown_leaf(tmp_path: Path) -> None:
    path = make_session(tmp_path, n=4)
    first = orjson.loads(path.read_bytes().split(b"\n")[1])["id"]
    proc = run("export", str(path), "--format", "md", "--leaf", first, "-o", "-")
    assert proc.returncode == 0 and "question 0" in proc.stdout and "answer 1" not in proc.stdout
    bad = run("export", str(path), "--leaf", "nope")
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


def test_check_shows_a_run_of_alike_problems_as_one_line(tmp_path: Path) -> None:
    """A file saved with CRLF line ends: one problem per line in --json, one
    line for the run in the text (two alike lines stay two lines)."""
    path = make_session(tmp_path / "sessions", n=6)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"".join(line + b"\r\n" for line in lines))
    proc = run("check", str(path))
    assert_no_traceback(proc)
    assert proc.returncode == 1
    out = proc.stdout.splitlines()
    assert out[0] == f"{path}:1-{len(lines)}: CRLF line end; repair writes a plain newline ({len(lines)} lines)"
    assert not any(line.startswith(f"{path}:2:") for line in out)
    data = orjson.loads(run("check", str(path), "--json").stdout)
    assert [p["line"] for p in data["problems"]] == list(range(1, len(lines) + 1))
    two = b"".join(line + (b"\r\n" if i in (2, 3) else b"\n") for i, line in enumerate(lines))
    path.write_bytes(two)
    out = run("check", str(path)).stdout.splitlines()
    assert out[:2] == [f"{path}:3: CRLF line end; repair writes a plain newline", f"{path}:4: CRLF line end; repair writes a plain newline"]


def test_other_commands_warn_of_a_run_of_damaged_lines_once(tmp_path: Path) -> None:
    """tree, info and context print a run of alike damaged lines as check
    does: one warning."""
    path = make_session(tmp_path / "sessions", n=6)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join([*lines[:2], *[b"garbage"] * 50, *lines[2:]]) + b"\n")
    for command in ("tree", "info", "context"):
        proc = run(command, str(path))
        assert_no_traceback(proc)
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1 and f"{path}:3-52: not valid JSON" in warnings[0] and "(50 lines)" in warnings[0], proc.stderr


@pytest.mark.parametrize("command", [["context"], ["export", "-o", "-"], ["tokens"]])
def test_an_empty_leaf_is_a_one_line_error(tmp_path: Path, command: list[str]) -> None:
    path = make_session(tmp_path / "sessions", n=4)
    proc = run(command[0], str(path), *command[1:], "--leaf", "")
    assert_no_traceback(proc)
    assert proc.returncode == 1 and "--leaf: give an entry id, or 'null' for none" in proc.stderr, proc.stderr


def test_a_renamed_session_file_is_found_by_its_header_id(tmp_path: Path) -> None:
    """``ls`` lists a file not named ``<time>_<id>.jsonl`` by its header's
    id; a command given that id (or a prefix) finds it too."""
    agent = tmp_path / "agent"
    path = make_session(agent / "sessions" / "--proj--", n=4)
    session_id = orjson.loads(path.read_bytes().split(b"\n", 1)[0])["id"]
    renamed = path.with_name("my copy.jsonl")
    path.rename(renamed)
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    listed = orjson.loads(run("ls", "--all", "--json", env=env).stdout)
    assert [s["id"] for s in listed] == [session_id]
    proc = run("info", session_id[:8], "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["path"] == str(renamed)
    proc = run("info", "zzzz", env=env)
    assert proc.returncode == 1 and "no session id starts with it" in proc.stderr
