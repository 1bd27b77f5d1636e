"""Small things the command line says: a damaged line's place as a column
of that line (not the JSON decoder's "line 1"), and a command's --help in
plain text when it is not written to a terminal, as the root help is."""

from __future__ import annotations

import re

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/a"}\n'


def test_a_damaged_line_is_named_by_its_column(cli, tmp_path):
    path = tmp_path / "dmg.jsonl"
    path.write_bytes(HEADER + b'{"type": "message", nope}\n')
    checked = cli("check", str(path))
    said = [line for line in checked.stdout.splitlines() + checked.stderr.splitlines() if "dmg.jsonl:2:" in line]
    assert said and all("not valid JSON (unexpected character, expected a string key at column 21)" in line for line in said), said
    info = cli("info", str(path))
    assert info.returncode == 0, info.stderr
    assert f"{path}:2: not valid JSON (unexpected character, expected a string key at column 21)" in info.stderr
    assert "line 1" not in checked.stdout + checked.stderr + info.stderr


def test_a_command_help_is_plain_when_piped(cli):
    for command in ("ls", "info", "usage"):
        shown = cli(command, "--help")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"Usage: pi-session {command} [OPTIONS]"), shown.stdout
        assert not re.search("[╭╮╰╯│─]", shown.stdout), shown.stdout  # no rich boxes
        assert "\nOptions:\n" in shown.stdout and "--help" in shown.stdout
