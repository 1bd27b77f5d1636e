"""The process that compiles and runs a search's ``re:`` patterns
(:class:`pi_session.search.regex_run.RegexRun` starts it, as
:func:`pi_session.search.regex_run.worker_command` says). A pattern runs
here, never in the process that asked: whatever it costs, only this
process pays, within the limits it sets itself before reading anything:

- memory: its address space may grow by ``MEMORY`` bytes (the first
  argument) beyond what it holds at start (``RLIMIT_AS``); past that the
  compiler or the matcher gets a MemoryError, answered as ``memory``;
- CPU time: ``CPU`` seconds in all (the second argument, ``RLIMIT_CPU``: a
  backstop; the asking process stops waiting sooner, at its deadline);
- no core file, and a lower priority (``nice`` 10) than the process that
  asked, so that a server keeps answering while a pattern runs.

It speaks on its standard input and output, one JSON document a line
(UTF-8, lone surrogates passed through), one answer per request:

- ``{"compile": [PATTERN, ...], "left": SECONDS}``: compile the patterns;
  ``{"ok": true}``, or ``{"error": I, "message": ..., "pos": OFFSET}`` (the
  ``I``-th pattern's syntax), ``{"deep": I}`` (nested too deeply),
  ``{"memory": I}``;
- ``{"filter": [TEXT, ...], "left": SECONDS}``: whether every pattern
  matches each text: ``{"ok": [0 or 1, ...]}``, or ``{"timeout": I,
  "done": N}`` (the ``I``-th pattern ran out of the time left; ``N`` texts
  were decided), ``{"memory": I}``;
- ``{"spans": TEXT, "left": SECONDS, "most": N}``: the first ``N``
  non-empty matches of every pattern in the text: ``{"ok": [[START, END],
  ...]}`` (character offsets), or ``timeout`` / ``memory`` as above.

It first prints ``{"ready": true}`` when its limits are set. Imports only
the standard library and ``regex``, and is run as a file, not through the
package, so that it is ready in about the time the interpreter takes to
start.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

__all__ = ["main", "serve"]


def _address_space() -> int | None:
    """This process's address space in bytes (Linux ``/proc``), or None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _set_limits(memory: int, cpu: int) -> None:
    """Limit this process (see the module docstring); a limit the system
    does not offer is left out."""
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        used = int(time.process_time()) + 1
        want = used + cpu
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (want, want if hard == resource.RLIM_INFINITY else hard))
    except (ValueError, OSError):
        pass
    size = _address_space()
    if size is not None:
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            want = size + memory
            if hard != resource.RLIM_INFINITY:
                want = min(want, hard)
            resource.setrlimit(resource.RLIMIT_AS, (want, want))
        except (ValueError, OSError):
            pass
    try:
        os.nice(10)
    except OSError:
        pass


def _answer(out: Any, value: dict[str, Any]) -> None:
    out.write(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
    out.flush()


def _compile(patterns: list[str]) -> tuple[list[Any], dict[str, Any]]:
    import regex

    compiled = []
    for i, pattern in enumerate(patterns):
        try:
            compiled.append(regex.compile(pattern))
        except regex.error as exc:
            return [], {"error": i, "message": str(exc.msg), "pos": int(exc.pos or 0)}
        except (RecursionError, OverflowError):
            return [], {"deep": i}
        except MemoryError:
            return [], {"memory": i}
        except ValueError as exc:  # e.g. two version flags at once
            return [], {"error": i, "message": str(exc), "pos": 0}
    return compiled, {"ok": True}


def _filter(patterns: list[Any], texts: list[str], end: float) -> dict[str, Any]:
    decided: list[int] = []
    for text in texts:
        for i, pattern in enumerate(patterns):
            left = end - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                if pattern.search(text, timeout=left) is None:
                    decided.append(0)
                    break
            except TimeoutError:
                return {"timeout": i, "done": len(decided)}
            except MemoryError:
                return {"memory": i}
        else:
            decided.append(1)
    return {"ok": decided}


def _spans(patterns: list[Any], text: str, end: float, most: int) -> dict[str, Any]:
    spans: list[list[int]] = []
    for i, pattern in enumerate(patterns):
        left = end - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            found = 0
            for m in pattern.finditer(text, timeout=left):
                if m.end() > m.start():
                    spans.append([m.start(), m.end()])
                    found += 1
                    if found >= most:
                        break
        except TimeoutError:
            return {"timeout": i, "done": 0}
        except MemoryError:
            return {"memory": i}
    return {"ok": spans}


def serve(inp: Any, out: Any) -> None:
    """Answer requests from the binary stream ``inp`` on ``out`` until
    ``inp`` ends (see the module docstring)."""
    patterns: list[Any] = []
    _answer(out, {"ready": True})
    for line in inp:
        try:
            request = json.loads(line.decode("utf-8", "surrogatepass"))
            end = time.monotonic() + float(request.get("left", 0))
            if "compile" in request:
                patterns, answer = _compile(request["compile"])
            elif "filter" in request:
                answer = _filter(patterns, request["filter"], end)
            else:
                answer = _spans(patterns, request["spans"], end, int(request.get("most", 1 << 62)))
        except MemoryError:
            answer = {"memory": 0}
        _answer(out, answer)


def main(argv: list[str]) -> int:
    """``regex_worker.py MEMORY CPU``: set the limits, then :func:`serve`
    standard input on standard output. Returns the exit status."""
    _set_limits(int(argv[0]), int(argv[1]))
    import regex  # noqa: F401  (loaded before the first request, within the limits)

    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
