"""The vocabulary of the storage layer: file and directory modes,
:class:`Durability`, :class:`SessionFileError`, :class:`LineProblem` and
:class:`ParsedLine`. Every other module of :mod:`pi_session.storage` builds
on these; this one imports none of them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from ..errors import PiSessionError
from .problems import Problem
from ..entries.records import StrPath

FILE_MODE = 0o600
"""Permissions of session files we create."""
DIR_MODE = 0o700
"""Permissions of session directories we create."""


class Durability(str, Enum):
    """How hard an append works to reach the disk.

    ``entry`` (default): ``fdatasync`` after every append call (``fsync``
    where there is no ``fdatasync``), so an entry whose append returned
    survives a power loss. ``batch``: no sync per entry;
    :meth:`pi_session.SessionManager.flush` fsyncs (a power loss may lose the
    entries since the last flush, never corrupt earlier ones; a process
    crash loses nothing, the data is in the page cache). ``none``: never
    sync (pi's behaviour: the OS decides).

    Measured cost (ext4 on a virtual disk, one
    ``SessionManager.append_message`` on a 100 MB session; see
    ``bench/results/lazy-open.md``): ``entry`` 0.7-1.2 ms, ``none`` 0.55-0.65 ms
    (open, lock, tail check, one write); pi 1.6's append (no sync) 1.0-1.3 ms.
    A sync costs far more when the disk is busy or the file has other
    unwritten data, on laptop disks typically 0.1-2 ms, on network
    filesystems more.
    """

    ENTRY = "entry"
    BATCH = "batch"
    NONE = "none"


class SessionFileError(PiSessionError):
    """A session file that cannot be used: missing header, unreadable, not a
    regular file. ``str(error)`` is one line naming the file (and line)."""

    def __init__(self, path: StrPath | None, message: str, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = self.path or "<session>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class LineProblem(Problem):
    """A line we could not use as it is (a :class:`pi_session.storage.problems.Problem`).

    Attributes:
        line: 1-based line number in the file (0: not known, e.g. a tree
            problem of entries not read from a file).
        kind: a :data:`pi_session.storage.problems.ProblemKind`: ``blank``,
            ``invalid-json``, ``not-object``, ``no-type``, ``no-id``,
            ``extra-header``, ``nul-bytes``, ``invalid-utf8``, ``glued``,
            ``bom``, ``crlf``, ``torn-tail``, ``no-newline``,
            ``split-record`` (see :func:`rejoin_split`).
        message: what is wrong, one line.
        recovered: True when a record was still read from the line (with the
            damage removed); False when the line is skipped.
        end_line: the last line of a record split over several lines
            (``split-record``, lines ``line`` to ``end_line``); None otherwise.

    JSON (:meth:`~pi_session.storage.problems.Problem.to_json`): ``{"line", "kind",
    "message", "recovered"}``.
    """

    line: int
    recovered: bool = False
    end_line: int | None = None

    JSON_FIELDS: ClassVar[tuple[tuple[str, str], ...]] = (("recovered", "recovered"),)


@dataclass
class ParsedLine:
    """The outcome of :func:`parse_line` for one line."""

    record: Any = None
    ok: bool = False
    problem: LineProblem | None = None
    fragment: bytes | None = None  # unusable bytes of a recovered line
    clean: bytes | None = None  # the recovered record's bytes as they should be
