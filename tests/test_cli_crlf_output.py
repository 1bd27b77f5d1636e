"""Tool output with Windows line ends (CRLF, as tools run on Windows and
Codex sessions imported from there write it): ``pi-session context`` and
the Markdown export end each line there, with no ``\\x0d`` shown at every
line end; other control characters stay escaped on the terminal."""

from __future__ import annotations

from pi_session import SessionManager

OUTPUT = "line one\r\nline two\r\nprogress 10%\rprogress 100%\r\n\x1b[31mred\x1b[0m\r\nlast"


def _session(tmp_path):
    sm = SessionManager.create("/work/p", tmp_path / "sessions")
    sm.append_message({"role": "user", "content": "run it", "timestamp": 1})
    sm.append_message({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "run.cmd"}}],
                       "provider": "openai", "model": "gpt-5", "timestamp": 2})
    sm.append_message({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": OUTPUT}],
                       "isError": False, "timestamp": 3})
    sm.append_message({"role": "bashExecution", "command": "dir", "output": "a.txt\r\nb.txt\r\n", "exitCode": 0, "timestamp": 4})
    return str(sm.get_session_file())


def test_context_ends_lines_at_crlf(cli, tmp_path):
    done = cli("context", _session(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "line one" in lines and "line two" in lines and "last" in lines, done.stdout
    assert "a.txt" in lines and "b.txt" in lines, done.stdout
    assert not any(line.endswith("\\x0d") for line in lines), done.stdout
    assert "progress 10%\\x0dprogress 100%" in lines  # a lone CR would move the cursor: still escaped
    assert "\\x1b[31mred\\x1b[0m" in lines and "\x1b" not in done.stdout  # so is ESC
    assert "\r" not in done.stdout


def test_markdown_export_ends_lines_at_crlf(cli, tmp_path):
    out = tmp_path / "out.md"
    done = cli("export", _session(tmp_path), "--format", "md", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert "line one" in lines and "line two" in lines and "last" in lines and "a.txt" in lines, text
    assert "\\x0d\n" not in text and not text.endswith("\\x0d") and "\r\n" not in text, text
    assert "progress 10%\\x0dprogress 100%" in lines and "\x1b" not in text
