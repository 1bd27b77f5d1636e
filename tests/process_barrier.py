"""Releasing several real processes at once without sleeps: each child
prints ``ready`` and waits for a ``go`` line on its stdin (a pipe is the
barrier). Used by the tests of concurrent creates, imports and pops."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


def release_together(procs: Sequence[subprocess.Popen]) -> None:
    """Wait until every process said ``ready``, then tell all of them
    ``go`` (text or binary pipes). A process that died first fails the
    test with its stderr."""
    for p in procs:
        assert p.stdout is not None
        line = p.stdout.readline()
        if isinstance(line, bytes):
            line = line.decode()
        if line.strip() != "ready":
            err = p.stderr.read()[-3000:] if p.stderr is not None and p.poll() is not None else ""
            raise AssertionError(f"a child did not get ready: {line!r} {err!r}")
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n" if p.text_mode else b"go\n")  # type: ignore[arg-type]
        p.stdin.flush()
