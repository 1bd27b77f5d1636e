"""The command line with wide text and short ids: ``ls`` measures terminal
cells (Korean and Chinese titles never wrap a row, in a real terminal
through tmux), every id ``ls`` shows opens (header ids of files named
otherwise, unique prefixes on narrow terminals), entry ids take unique
prefixes, ``-h`` is ``--help``, a label's newline stays on its row, an
empty project points at ``--all``, and a Windows ``--cwd`` is absolute."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from pi_session import SessionManager
from pi_session.core.jsonio import dumps_line
from pi_session.core.paths import encode_cwd
from pi_session.render.terminal import fit_cells, fit_cells_end, one_line, session_list_lines, unique_prefixes
from test_cli_ls_widths import needs_tmux, screen_in_tmux

EXE = Path(sys.executable).parent / "pi-session"
PROJECT = "/work/wide-project"
KOREAN = "파서가 여러 줄 문자열 리터럴 다음에 줄 번호를 잘못 계산하는 문제를 고쳐 주세요 그리고 테스트도 추가해 주세요"
CHINESE = "请修复解析器在多行字符串字面量之后行号计算错误的问题，并为嵌套代码块添加回归测试，谢谢你的帮助"


def no_traceback(result):
    assert "Traceback" not in result.stdout + result.stderr


def sessions_dir(tmp_path: Path, cwd: str = PROJECT) -> Path:
    directory = tmp_path / "agent" / "sessions" / encode_cwd(cwd)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def make(tmp_path: Path, text: str, cwd: str = PROJECT, *, name: str | None = None) -> SessionManager:
    manager = SessionManager.create(cwd, sessions_dir(tmp_path, cwd))
    manager.append_message({"role": "user", "content": text, "timestamp": 1_700_000_000_000})
    if name is not None:
        manager.append_session_info(name)
    manager.save()
    return manager


def write_session(path: Path, session_id: str, entry_ids: list[str], cwd: str = PROJECT) -> None:
    """A session file holding user messages with the given entry ids."""
    lines = [dumps_line({"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd})]
    parent = None
    for i, eid in enumerate(entry_ids):
        lines.append(dumps_line({"type": "message", "id": eid, "parentId": parent, "timestamp": f"2025-01-01T00:00:0{i}.000Z",
                                 "message": {"role": "user", "content": f"message {i}", "timestamp": 1_735_689_600_000 + i}}))
        parent = eid
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))


# --- 1: terminal cells ---------------------------------------------------


def test_cuts_measure_terminal_cells():
    assert cell_len(one_line(KOREAN, 20)) <= 20 and one_line(KOREAN, 20).endswith("…")
    assert cell_len(fit_cells(CHINESE, 15)) <= 15  # a wide character never straddles the edge
    assert fit_cells("short", 10) == "short" and fit_cells("abcdefghijk", 5) == "abcd…"
    assert fit_cells_end("/home/项目/한국어", 8) == "…/한국어"  # a path keeps its end
    assert cell_len(fit_cells_end("/home/项目/한국어", 7)) <= 7


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_ls_table_lines_fit_their_width_in_cells(width):
    infos = [
        {"id": f"01a23c45-c71f-7387-b6e3-4261bd0ad37{i}", "modified": "2025-12-09T00:53:29.825Z", "messageCount": 12,
         "cwd": f"/home/someone/项目/{'한국어' * (i + 1)}", "firstMessage": text, "name": None}
        for i, text in enumerate((KOREAN, CHINESE, "ascii " * 30))
    ]
    for all_projects in (False, True):
        lines = session_list_lines(infos, width, all_projects=all_projects, now_ms=1_765_000_000_000)
        assert len(lines) == 4
        assert all(cell_len(line.plain) <= width for line in lines), [(cell_len(line.plain), line.plain) for line in lines]


@needs_tmux
@pytest.mark.parametrize("width", [80, 100])
def test_ls_with_korean_and_chinese_titles_never_wraps_in_a_real_terminal(tmp_path, width):
    made = [make(tmp_path, KOREAN), make(tmp_path, CHINESE), make(tmp_path, "plain ascii title " * 8, name="이름이 있는 세션 " * 6)]
    env = f"env -u COLUMNS PI_CODING_AGENT_DIR={shlex.quote(str(tmp_path / 'agent'))} {shlex.quote(str(EXE))}"
    direct, every = screen_in_tmux(tmp_path, width, [f"{env} ls --cwd {PROJECT}", f"{env} ls --all"])
    for lines in (direct, every):
        assert len(lines) == 1 + len(made), "\n".join(lines)  # one row per session: nothing wrapped
        assert all(cell_len(line) <= width for line in lines), "\n".join(lines)
    assert any("파서가" in line for line in direct) and any("请修复解析器" in line for line in direct)


# --- 8: ids on narrow terminals, hints, Windows cwds -----------------------


def test_unique_prefixes_are_at_least_eight_characters_like_git():
    ids = ["0195aa01-1111", "0195aa01-2222", "7f000000-aaaa", "abc"]
    short = unique_prefixes(ids[:3], among=ids)
    assert short["0195aa01-1111"] == "0195aa01-1" and short["0195aa01-2222"] == "0195aa01-2"
    assert short["7f000000-aaaa"] == "7f000000"
    assert unique_prefixes(["7f000000-aaaa"], among=["7f000000-aaab"])["7f000000-aaaa"] == "7f000000-aaaa"
    assert unique_prefixes(["user"], among=["user_1"])["user"] == "user"  # the start of another id: whole


def test_ls_at_80_columns_shows_unique_id_prefixes_that_open(cli, tmp_path):
    made = [make(tmp_path, f"fix the parser, case {i}") for i in range(3)]
    other = make(tmp_path, "another project", cwd="/work/other")
    narrow = cli("ls", "--cwd", PROJECT, env={"COLUMNS": "80"})
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    assert len(lines) == 4 and all(len(line) <= 80 for line in lines)
    for manager in made:
        sid = manager.get_session_id()
        assert sid not in narrow.stdout  # not 36 columns of id
        shown = [word for line in lines for word in line.split() if sid.startswith(word) and len(word) >= 8]
        assert len(shown) == 1
        opened = cli("info", shown[0], "--json")
        assert opened.returncode == 0, opened.stderr
        assert json.loads(opened.stdout)["id"] == sid
    assert other.get_session_id() not in narrow.stdout
    wide = cli("ls", "--cwd", PROJECT, env={"COLUMNS": "200"})
    assert all(m.get_session_id() in wide.stdout for m in made)  # room: whole ids
    as_json = cli("ls", "--cwd", PROJECT, "--json", env={"COLUMNS": "80"})
    assert {m.get_session_id() for m in made} == {info["id"] for info in json.loads(as_json.stdout)}


def test_ls_in_an_empty_project_points_at_all(cli, tmp_path):
    make(tmp_path, "elsewhere", cwd="/work/other")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("ls", cwd=str(empty))
    assert result.returncode == 0 and "No sessions in" in result.stdout
    assert "ls --all" in result.stdout
    everywhere = cli("ls", "--all", cwd=str(empty))
    assert "elsewhere" in everywhere.stdout and "--all" not in everywhere.stdout


@pytest.mark.parametrize("given", ["C:\\Users\\dev\\app", "C:/Users/dev/app", "C:\\Users\\dev\\app\\"])
def test_ls_cwd_takes_a_windows_path_as_absolute(cli, tmp_path, given):
    windows = "C:\\Users\\dev\\app"
    directory = tmp_path / "agent" / "sessions" / encode_cwd(windows)  # --C--Users-dev-app--, as pi on Windows names it
    assert directory.name == "--C--Users-dev-app--"
    write_session(directory / "2025-01-01T00-00-00-000Z_win-session.jsonl", "win-session", ["aa000001"], cwd=windows)
    work = tmp_path / "work"
    work.mkdir()
    result = cli("ls", "--cwd", given, "--json", cwd=str(work))
    assert result.returncode == 0, result.stderr
    assert [info["id"] for info in json.loads(result.stdout)] == ["win-session"]
    shown = cli("ls", "--cwd", given, cwd=str(work))
    assert "win-session" in shown.stdout and str(work) not in shown.stdout


# --- 4: every id ls shows opens -------------------------------------------


def test_a_file_named_after_another_id_opens_by_its_header_id(cli, tmp_path):
    directory = sessions_dir(tmp_path)
    path = directory / "2025-01-01T00-00-00-000Z_other-name.jsonl"
    write_session(path, "header-id-1234", ["aa000001", "aa000002"])
    listed = cli("ls", "--cwd", PROJECT, "--json")
    assert [info["id"] for info in json.loads(listed.stdout)] == ["header-id-1234"]
    for argument in ("header-id-1234", "header-id", "other-name"):  # the header id, a prefix, the file name's id
        opened = cli("info", argument, "--json")
        assert opened.returncode == 0, (argument, opened.stderr)
        assert json.loads(opened.stdout)["path"] == str(path)


def test_two_files_with_one_header_id_list_the_candidates(cli, tmp_path):
    directory = sessions_dir(tmp_path)
    first = directory / "2025-01-01T00-00-00-000Z_same-id.jsonl"
    second = directory / "2025-01-02T00-00-00-000Z_copied.jsonl"
    write_session(first, "same-id", ["aa000001"])
    write_session(second, "same-id", ["bb000001"])
    for argument in ("same-id", "same"):
        result = cli("info", argument)
        assert result.returncode != 0 and result.stdout == ""
        assert "ambiguous" in result.stderr and str(first) in result.stderr and str(second) in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        no_traceback(result)


# --- 8: entry id prefixes, -h, labels ---------------------------------------


def test_label_and_context_leaf_take_a_unique_entry_id_prefix(cli, tmp_path):
    path = tmp_path / "s.jsonl"
    write_session(path, "prefix-session", ["abc12345", "abc67890", "def00001"])
    labelled = cli("label", str(path), "abc6", "checkpoint", "--json")
    assert labelled.returncode == 0, labelled.stderr
    assert json.loads(labelled.stdout)["targetId"] == "abc67890"
    context = cli("context", str(path), "--leaf", "abc1", "--json")
    assert context.returncode == 0, context.stderr
    assert json.loads(context.stdout)["leafId"] == "abc12345"
    for command in (["label", str(path), "abc", "x"], ["context", str(path), "--leaf", "abc"]):
        ambiguous = cli(*command)
        assert ambiguous.returncode != 0
        assert "ambiguous" in ambiguous.stderr and "abc12345" in ambiguous.stderr and "abc67890" in ambiguous.stderr
        no_traceback(ambiguous)
    unknown = cli("label", str(path), "zzz", "x")
    assert unknown.returncode != 0 and "no entry with id zzz" in unknown.stderr
    assert path.read_text().count('"type":"label"') == 1  # only the one label was written


def test_dash_h_is_help_everywhere(cli):
    for argv in (["-h"], ["info", "-h"], ["tree", "-h"], ["export", "-h"], ["search", "-h"]):
        result = cli(*argv)
        assert result.returncode == 0, (argv, result.stderr)
        assert "Usage:" in result.stdout and "--help" in result.stdout, argv


def test_tree_keeps_a_label_with_a_newline_on_its_row(cli, tmp_path):
    path = tmp_path / "s.jsonl"
    write_session(path, "label-session", ["aa000001", "aa000002"])
    labelled = cli("label", str(path), "aa000001", "first line\nsecond line\x1b[31m")
    assert labelled.returncode == 0, labelled.stderr
    tree = cli("tree", str(path))
    assert tree.returncode == 0, tree.stderr
    rows = tree.stdout.splitlines()
    row = next(line for line in rows if "aa000001" in line)
    assert "[first line second line\\x1b[31m]" in row
    assert not any(line.startswith("second line") for line in rows)
    info = cli("info", str(path))
    assert "aa000001=first line second line" in info.stdout
    assert "\x1b" not in tree.stdout + info.stdout


def test_ls_resolution_reads_only_what_it_needs(cli, tmp_path):
    """A FIFO named like a session never blocks resolving an id."""
    directory = sessions_dir(tmp_path)
    write_session(directory / "2025-01-01T00-00-00-000Z_real-one.jsonl", "real-one", ["aa000001"])
    os.mkfifo(directory / "2025-01-02T00-00-00-000Z_a-fifo.jsonl")
    opened = cli("info", "real", "--json")
    assert opened.returncode == 0, opened.stderr


def test_clone_leaf_and_prune_keep_branches_take_a_unique_entry_id_prefix(cli, tmp_path):
    path = tmp_path / "s.jsonl"
    write_session(path, "prefix-clone", ["abc12345", "abc67890", "def00001"])
    cloned = cli("clone", str(path), "--leaf", "abc1", "--json")
    assert cloned.returncode == 0, cloned.stderr
    assert json.loads(cloned.stdout)["entries"] == 1
    ambiguous = cli("clone", str(path), "--leaf", "abc")
    assert ambiguous.returncode != 0 and "ambiguous" in ambiguous.stderr
    no_traceback(ambiguous)
    pruned = cli("prune", str(path), "--keep-branches", "abc6", "--dry-run", "--json")
    assert pruned.returncode == 0, pruned.stderr
    unknown = cli("prune", str(path), "--keep-branches", "zzz", "--dry-run")
    assert unknown.returncode != 0 and "--keep-branches zzz: no such entry" in unknown.stderr
    no_traceback(unknown)
