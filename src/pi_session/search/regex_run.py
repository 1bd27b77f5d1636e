"""One search's ``re:`` matching (:class:`RegexRun`), bounded whatever the
pattern: the patterns are compiled and matched in a worker process
(:mod:`pi_session.search.regex_worker`) that may grow by
:data:`WORKER_MEMORY` bytes and is stopped when it overruns the time
budget (:data:`pi_session.search.query.REGEX_SECONDS`). A pattern that
takes too much memory, too much time or crashes the matcher ends in one
:class:`~pi_session.search.query.QueryError` naming its filter; the
process that searches never runs the pattern itself, so it is never the
one that runs out of memory, and a server keeps answering meanwhile."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any, NoReturn

from .query import REGEX_SECONDS, Query, QueryError

__all__ = ["RegexRun", "SPANS_KEPT", "WORKER_MEMORY", "worker_command"]

WORKER_MEMORY = 256 << 20
"""How many bytes of address space the worker may take beyond what it
holds when it starts (the patterns, their compiled form, the texts of a
batch and the matcher's backtracking)."""

_GRACE = 1.0
"""Seconds the worker is waited for beyond the budget (its own timeouts
answer first; past this it is stopped)."""

_START_SECONDS = 30.0
"""How long the worker may take to start (not part of the budget)."""

SPANS_KEPT = 10_000
"""How many matches of each pattern :meth:`RegexRun.spans` gives at most
(a snippet marks those within a few hundred characters of the first)."""

_BATCH_CHARS = 1 << 20
"""The most characters :meth:`RegexRun.filter` sends in one request (a
longer text goes alone)."""

_BOOTSTRAP = (
    "import sys; f = sys.argv[1]; sys.path[:0] = sys.argv[4:]; sys.argv = [f, *sys.argv[2:4]]; "
    "import runpy; runpy.run_path(f, run_name='__main__')"
)


def worker_command(memory: int = WORKER_MEMORY, cpu_seconds: int = 10) -> list[str]:
    """The command line of a worker: ``sys.executable -I -c <bootstrap>
    <regex_worker.py> MEMORY CPU <path>...``. Isolated mode: neither the
    current directory nor ``$PYTHONPATH`` nor the user's site directory is
    on its ``sys.path`` and no ``PYTHON*`` variable is read; the bootstrap
    puts back this process's absolute ``sys.path`` entries (where
    ``regex`` was found) and runs the worker's file as a script, without
    importing the package."""
    here = Path(__file__).resolve().with_name("regex_worker.py")
    paths = [p for p in sys.path if p and os.path.isabs(p)]
    return [sys.executable, "-I", "-c", _BOOTSTRAP, str(here), str(memory), str(cpu_seconds), *paths]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a worker (its input closed, then killed) and reap it."""
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


class _Stopped(Exception):
    """The worker ended, or did not answer in time."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class RegexRun:
    """One search's ``re:`` matching, within :data:`REGEX_SECONDS` in all
    (see the module docstring). Creating it starts the worker and compiles
    the query's patterns (when it has any; within the same number of
    seconds, apart); the budget of matching starts with the first text.
    Close it (or use it as a context manager) to end the worker; a run
    that is dropped ends it too.

    Args:
        query: the parsed query.
        seconds: the budget (default :data:`REGEX_SECONDS`).
        memory: the worker's memory bound in bytes (default
            :data:`WORKER_MEMORY`).

    Raises (here and from its methods):
        QueryError: a pattern does not compile (the column of the error),
            is nested too deeply, needs more than ``memory`` bytes, runs
            out of the budget, or the worker stopped or cannot start; the
            message names the ``re:`` filter's column.
    """

    def __init__(self, query: Query, seconds: float | None = None, *, memory: int = WORKER_MEMORY) -> None:
        self.query = query
        self.seconds = REGEX_SECONDS if seconds is None else seconds
        self.memory = memory
        self.deadline: float | None = None
        self.texts = 0  # texts matched so far
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        if query.regexes:
            self._start()
            self._compile()

    # --- the worker ---------------------------------------------------

    def _start(self) -> None:
        cpu = int(2 * self.seconds + 2 * _GRACE) + 1
        try:
            proc = subprocess.Popen(
                worker_command(self.memory, cpu), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
            )
        except OSError as exc:
            raise self._error(0, f"re: cannot start the matching process: {exc.strerror or exc}") from None
        self._proc = proc
        self._finalizer = weakref.finalize(self, _stop, proc)
        try:
            self._read(time.monotonic() + _START_SECONDS)
        except _Stopped as exc:
            self.close()
            raise self._error(0, f"re: the matching process did not start ({exc.why})") from None

    def close(self) -> None:
        """End the worker (nothing when there is none)."""
        if self._proc is not None:
            self._finalizer()
            self._proc = None

    def __enter__(self) -> RegexRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read(self, until: float) -> dict[str, Any]:
        """The worker's next answer, waited for until the monotonic time
        ``until``; raises :class:`_Stopped`."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0:
                raise _Stopped("no answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Stopped(self._how_it_ended())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line.decode("utf-8", "surrogatepass"))
        except ValueError:
            raise _Stopped("an unreadable answer") from None
        if not isinstance(answer, dict):
            raise _Stopped("an unreadable answer")
        return answer

    def _how_it_ended(self) -> str:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(5)
        except subprocess.TimeoutExpired:
            return "it closed its output"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return "it ran out of CPU time" if name == "SIGXCPU" else f"it was ended by {name}"
        return f"it exited with status {code}"

    def _ask(self, request: dict[str, Any], i: int, until: float) -> dict[str, Any]:
        """Send ``request``, return the answer; a stopped or late worker is
        a QueryError (naming the ``i``-th filter), and ends the run."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise self._error(i, "re: the matching process was closed")
        try:
            line = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
            proc.stdin.write(line + b"\n")
            proc.stdin.flush()
            return self._read(until)
        except _Stopped as exc:
            late = exc.why == "no answer in time"
            self.close()
            if late:
                self._timed_out(i)
            raise self._error(i, f"re: the matching process stopped ({exc.why}); simplify the pattern") from None
        except OSError:
            why = self._how_it_ended() if self._proc is not None else "closed"
            self.close()
            raise self._error(i, f"re: the matching process stopped ({why}); simplify the pattern") from None

    # --- errors -------------------------------------------------------

    def _column(self, i: int) -> int:
        columns = self.query.regex_columns
        return columns[i] if i < len(columns) else 0

    def _error(self, i: int, why: str) -> QueryError:
        return QueryError(self.query.text, self._column(i), why)

    def _timed_out(self, i: int) -> NoReturn:
        took = f"re: matching took more than {self.seconds:g} s"
        if self.texts > 1000:  # a plain pattern, tried on too many entries
            why = f"{took} over {self.texts:,} entries; add a word, so that only the entries holding it are matched"
        else:
            why = f"{took}; simplify the pattern (nested repeats backtrack)"
        self.close()
        raise self._error(i, why)

    def _failed(self, answer: dict[str, Any], *, compiling: bool = False) -> NoReturn:
        """Raise the QueryError of an answer that is not ``ok``."""
        mb = f"{self.memory / (1 << 20):,.0f} MB"
        if "memory" in answer:
            i = int(answer["memory"])
            self.close()
            if compiling:
                raise self._error(i, f"re: the pattern needs more than {mb} to compile (large repeat counts: use + or * instead)")
            raise self._error(i, f"re: matching needed more than {mb} of memory; simplify the pattern")
        if "deep" in answer:
            self.close()
            raise self._error(int(answer["deep"]), "re: the pattern is nested too deeply or too large")
        if "error" in answer:
            i = int(answer["error"])
            self.close()
            raise QueryError(self.query.text, self._column(i) + int(answer.get("pos") or 0), f"re: {answer.get('message')}")
        if "timeout" in answer:
            self.texts += int(answer.get("done") or 0)
            self._timed_out(int(answer["timeout"]))
        self.close()
        raise self._error(0, "re: the matching process gave an unreadable answer")

    # --- the requests -------------------------------------------------

    def _compile(self) -> None:
        started = time.monotonic()
        answer = self._ask({"compile": self.query.regexes, "left": self.seconds}, 0, started + self.seconds + _GRACE)
        if answer.get("ok") is not True:
            self._failed(answer, compiling=True)

    def _left(self) -> float:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.seconds
        return self.deadline - time.monotonic()

    def filter(self, texts: list[str]) -> list[bool]:
        """Whether every ``re:`` pattern matches each of ``texts`` (all True
        for a query without ``re:``)."""
        if not self.query.regexes:
            return [True] * len(texts)
        out: list[bool] = []
        start = 0
        while start < len(texts):
            end, size = start, 0
            while end < len(texts) and (end == start or size + len(texts[end]) <= _BATCH_CHARS):
                size += len(texts[end])
                end += 1
            out += self._filter(texts[start:end])
            start = end
        return out

    def _filter(self, texts: list[str]) -> list[bool]:
        left = self._left()
        if left <= 0:
            self._timed_out(0)
        answer = self._ask({"filter": texts, "left": left}, 0, time.monotonic() + left + _GRACE)
        decided = answer.get("ok")
        if not isinstance(decided, list) or len(decided) != len(texts):
            self._failed(answer)
        self.texts += len(texts)
        return [bool(d) for d in decided]

    def matches(self, text: str) -> bool:
        """Whether every ``re:`` pattern matches ``text``."""
        return self.filter([text])[0]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The non-empty matches of every ``re:`` pattern in ``text`` (the
        first :data:`SPANS_KEPT` of each): ``(start, end)`` character
        offsets (none for a query without ``re:``)."""
        if not self.query.regexes:
            return []
        left = self._left()
        if left <= 0:
            self._timed_out(0)
        answer = self._ask({"spans": text, "left": left, "most": SPANS_KEPT}, 0, time.monotonic() + left + _GRACE)
        found = answer.get("ok")
        if not isinstance(found, list):
            self._failed(answer)
        return [(int(s), int(e)) for s, e in found]
