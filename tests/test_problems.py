"""problems.grouped_problems: what ``pi-session check`` prints for runs of
alike problems."""

from __future__ import annotations

from pi_session.storage.problems import CheckProblem, grouped_problems


def _crlf(line: int) -> CheckProblem:
    return CheckProblem(line, "crlf", "CRLF line end", True)


def _texts(problems: list[CheckProblem]) -> list[str]:
    return [text for text, _p in grouped_problems(problems, "f.jsonl")]


def test_a_run_is_one_line_and_short_runs_stay_lines() -> None:
    assert _texts([_crlf(n) for n in range(1, 6)]) == ["f.jsonl:1-5: CRLF line end (5 lines)"]
    assert _texts([_crlf(1), _crlf(2)]) == ["f.jsonl:1: CRLF line end", "f.jsonl:2: CRLF line end"]
    assert _texts([_crlf(1), _crlf(2), _crlf(4), _crlf(5), _crlf(6)]) == [
        "f.jsonl:1: CRLF line end", "f.jsonl:2: CRLF line end", "f.jsonl:4-6: CRLF line end (3 lines)"]


def test_other_problems_on_the_same_lines_do_not_cut_a_run() -> None:
    other = [CheckProblem(n, "no-id", "entry has no id", False) for n in (3, 4)]
    problems = sorted([*(_crlf(n) for n in range(1, 8)), *other], key=lambda p: p.line or 0)
    texts = _texts(problems)
    assert texts == ["f.jsonl:1-7: CRLF line end (7 lines)", "f.jsonl:3: entry has no id", "f.jsonl:4: entry has no id"]
    # the run's first problem carries the style (fixable) of the line
    assert [p.fixable for _t, p in grouped_problems(problems, "f.jsonl")] == [True, False, False]


def test_problems_without_a_line_are_kept_first() -> None:
    whole = CheckProblem(None, "leftover-temp", "a temp file", True)
    assert _texts([whole, *(_crlf(n) for n in range(1, 4))]) == ["f.jsonl: a temp file", "f.jsonl:1-3: CRLF line end (3 lines)"]
