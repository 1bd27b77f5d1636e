"""Session files on disk (SPEC 1-3): tolerant reading, appends, atomic rewrites.

Reading never gives up on a damaged file: every line that cannot be used is
reported with its line number and reason and left in the file. Only a file
whose first record is not a session header is refused
(:class:`SessionFileError`), where pi would truncate it.

Writing is append-only: each entry is one ``write`` of its complete line to a
file opened for appending, under an exclusive ``fcntl`` lock. Rewrites
(migration, repair) go through :func:`atomic_rewrite`: a temp file in the same
directory, fsync, a backup hard link of the original, rename, fsync of the
directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import orjson

from . import jsonio

__all__ = [
    "Durability",
    "LineProblem",
    "ParsedLine",
    "SessionFileError",
    "SessionFile",
    "parse_line",
    "parse_session_entries",
    "read_session_file",
    "iter_lines",
    "append_lines",
    "create_file",
    "atomic_rewrite",
    "backup_path",
    "FILE_MODE",
    "DIR_MODE",
    "ensure_dir",
]

FILE_MODE = 0o600
"""Permissions of session files we create."""
DIR_MODE = 0o700
"""Permissions of session directories we create."""

_BOM = b"\xef\xbb\xbf"
_GLUED = re.compile(rb'\{"type":"')
# JavaScript's String.prototype.trim() whitespace that can appear in ASCII/UTF-8 lines
_JS_WS = b" \t\r\n\x0b\x0c"


class Durability(str, Enum):
    """How hard an append works to reach the disk.

    ``entry``: fsync after every appended entry (default; costs one fsync,
    typically 0.1-10 ms depending on the disk, per entry). ``batch``: no fsync
    per entry; :meth:`pi_session.SessionManager.flush` fsyncs (a crash may lose
    the entries since the last flush, never corrupt earlier ones). ``none``:
    never fsync (pi's behaviour: the OS decides).
    """

    ENTRY = "entry"
    BATCH = "batch"
    NONE = "none"


class SessionFileError(Exception):
    """A session file that cannot be used: missing header, unreadable, not a
    regular file. ``str(error)`` is one line naming the file (and line)."""

    def __init__(self, path: str | os.PathLike[str] | None, message: str, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = self.path or "<session>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class LineProblem:
    """A line we could not use as it is.

    Attributes:
        line: 1-based line number in the file.
        kind: ``blank``, ``invalid-json``, ``not-object``, ``no-type``,
            ``no-id``, ``extra-header``, ``nul-bytes``, ``invalid-utf8``,
            ``glued``, ``bom``, ``torn-tail``, ``duplicate-id``, ``cycle``.
        message: what is wrong, one line.
        recovered: True when a record was still read from the line (with the
            damage removed); False when the line is skipped.
    """

    line: int
    kind: str
    message: str
    recovered: bool = False

    def format(self, path: str | os.PathLike[str] | None) -> str:
        """``<path>:<line>: <message>``."""
        return f"{path or '<session>'}:{self.line}: {self.message}"


@dataclass
class ParsedLine:
    """The outcome of :func:`parse_line` for one line."""

    record: Any = None
    ok: bool = False
    problem: LineProblem | None = None
    fragment: bytes | None = None  # unusable bytes of a recovered line


def _js_trim_empty(raw: bytes) -> bool:
    return not raw.strip(_JS_WS)


def parse_line(raw: bytes, line_no: int) -> ParsedLine:
    """Parse one JSONL line (without its ``\\n``) the way ``JSON.parse`` would,
    recovering what can be recovered.

    Recovery: a leading UTF-8 BOM is dropped (line 1); runs of NUL bytes
    around a record are dropped; invalid UTF-8 is replaced by U+FFFD (as
    Node's UTF-8 decoding does); a truncated record with a complete record
    glued after it yields the complete one.

    Returns:
        A :class:`ParsedLine`; ``ok`` is False for blank and unusable lines.
    """
    if line_no == 1 and raw.startswith(_BOM):
        raw = raw[3:]
    if _js_trim_empty(raw):
        return ParsedLine(problem=LineProblem(line_no, "blank", "blank line skipped"))
    try:
        return ParsedLine(record=orjson.loads(raw), ok=True)
    except orjson.JSONDecodeError as exc:
        first_error = str(exc)
    # --- slow path: damaged or unusual line
    if b"\x00" in raw:
        stripped = raw.strip(b"\x00")
        if _js_trim_empty(stripped.replace(b"\x00", b"")):
            return ParsedLine(problem=LineProblem(line_no, "nul-bytes", f"{len(raw)} NUL bytes (line skipped)"))
        inner = parse_line(stripped, line_no)
        if inner.ok:
            return ParsedLine(
                record=inner.record,
                ok=True,
                problem=LineProblem(line_no, "nul-bytes", "NUL bytes around a record removed", recovered=True),
            )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        try:
            record = jsonio.loads(text)
            return ParsedLine(
                record=record,
                ok=True,
                problem=LineProblem(line_no, "invalid-utf8", "invalid UTF-8 replaced by U+FFFD", recovered=True),
            )
        except ValueError:
            pass
    else:
        try:
            return ParsedLine(record=jsonio.loads(text), ok=True)
        except ValueError:
            pass
    # a torn record with a whole record glued after it
    for match in reversed(list(_GLUED.finditer(raw))):
        if match.start() == 0:
            break
        try:
            record = orjson.loads(raw[match.start() :])
        except orjson.JSONDecodeError:
            continue
        return ParsedLine(
            record=record,
            ok=True,
            problem=LineProblem(
                line_no,
                "glued",
                f"truncated record ({match.start()} bytes) before a complete record; the complete one was read",
                recovered=True,
            ),
            fragment=raw[: match.start()],
        )
    return ParsedLine(problem=LineProblem(line_no, "invalid-json", f"not valid JSON ({first_error})"))


def parse_session_entries(content: str | bytes) -> list[Any]:
    """Every JSON value of a JSONL text, malformed and blank lines skipped (pi's
    ``parseSessionEntries``).

    Args:
        content: the file's text (str) or bytes.

    Returns:
        The parsed values in line order (header included).
    """
    data = content.encode("utf-8", errors="surrogatepass") if isinstance(content, str) else content
    records = []
    for i, raw in enumerate(data.strip().split(b"\n"), start=1):
        parsed = parse_line(raw, i)
        if parsed.ok:
            records.append(parsed.record)
    return records


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes, bool]]:
    """Stream a file's lines without holding the whole file: yields
    ``(line_no, raw_without_newline, had_newline)``."""
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, start=1):
            if raw.endswith(b"\n"):
                yield line_no, raw[:-1], True
            else:
                yield line_no, raw, False


@dataclass
class SessionFile:
    """A session file as read: the records, the valid entries and what was
    wrong with the rest.

    Attributes:
        path: the file (None for text parsed in memory).
        header: the session header, or None for an empty file.
        records: every parsed JSON object in line order (header included);
            :func:`pi_session.migrate.migrate_session_entries` works on these.
        record_lines: the line number of each record.
        fragments: line number → unusable bytes of lines a record was
            recovered from (kept on rewrite).
        entries: the usable entries (objects with a ``type`` and a string
            ``id``), header excluded, in file order.
        problems: :class:`LineProblem` list, by line.
        line_count: number of lines.
        ends_with_newline: False when the last line is torn (no ``\\n``).
        size: bytes; mtime_ns: modification time when read.
        migrated_from: the version the records were migrated from, if any.
    """

    path: Path | None
    header: dict[str, Any] | None
    records: list[dict[str, Any]] = field(default_factory=list)
    record_lines: list[int] = field(default_factory=list)
    fragments: dict[int, bytes] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)
    line_count: int = 0
    ends_with_newline: bool = True
    size: int = 0
    mtime_ns: int = 0
    migrated_from: int | None = None

    @property
    def version(self) -> int:
        """The header's ``version`` (1 when absent)."""
        if self.header is None:
            return 0
        v = self.header.get("version")
        return v if isinstance(v, int) and not isinstance(v, bool) else 1

    def warnings(self) -> list[str]:
        """Every problem as ``<path>:<line>: <message>``."""
        return [p.format(self.path) for p in self.problems]


def _collect_entries(sf: SessionFile) -> None:
    """Fill ``sf.entries`` from ``sf.records`` (after migration) and report
    records that cannot be entries."""
    sf.entries = []
    for record, line_no in zip(sf.records, sf.record_lines):
        rtype = record.get("type")
        if rtype == "session":
            if record is not sf.header:
                sf.problems.append(LineProblem(line_no, "extra-header", "a second session header (ignored)"))
            continue
        if not isinstance(rtype, str):
            sf.problems.append(LineProblem(line_no, "no-type", "record has no \"type\" (skipped)"))
            continue
        if not isinstance(record.get("id"), str):
            sf.problems.append(LineProblem(line_no, "no-id", f"{rtype} entry has no id (skipped)"))
            continue
        sf.entries.append(record)


def read_session_file(path: str | os.PathLike[str], *, migrate: bool = True) -> SessionFile:
    """Read and validate a session file; never modifies it.

    Args:
        path: the ``.jsonl`` file.
        migrate: migrate v1/v2 records to v3 in memory (see
            :mod:`pi_session.migrate`); the caller decides whether to rewrite.

    Returns:
        A :class:`SessionFile`. An empty file (no bytes, or only whitespace)
        gives ``header=None``.

    Raises:
        SessionFileError: the file cannot be read (missing, a directory, no
            permission) or its first record is not a session header with a
            string id.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SessionFileError(p, "no such session file") from None
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    if not _is_regular(st.st_mode):
        raise SessionFileError(p, "not a regular file")
    sf = SessionFile(path=p, header=None, size=st.st_size, mtime_ns=st.st_mtime_ns)
    try:
        for line_no, raw, had_newline in iter_lines(p):
            sf.line_count = line_no
            if not had_newline:
                sf.ends_with_newline = raw == b""
                if raw and parse_line(raw, line_no).ok:
                    sf.problems.append(
                        LineProblem(line_no, "no-newline", "last line has no newline (a newline is added before the next append)", recovered=True)
                    )
            parsed = parse_line(raw, line_no)
            if parsed.problem is not None:
                if not had_newline and not parsed.ok and parsed.problem.kind != "blank":
                    sf.problems.append(
                        LineProblem(line_no, "torn-tail", f"last line is cut short ({len(raw)} bytes, no newline): {parsed.problem.message}")
                    )
                else:
                    sf.problems.append(parsed.problem)
            if not parsed.ok:
                continue
            record = parsed.record
            if not isinstance(record, dict):
                sf.problems.append(LineProblem(line_no, "not-object", f"JSON {type(record).__name__} instead of an object (skipped)"))
                continue
            if parsed.fragment is not None:
                sf.fragments[line_no] = parsed.fragment
            if sf.header is None and not sf.records:
                if record.get("type") != "session" or not isinstance(record.get("id"), str):
                    raise SessionFileError(
                        p, "not a pi session: the first record is not a session header", line=line_no
                    )
                sf.header = record
            sf.records.append(record)
            sf.record_lines.append(line_no)
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    if sf.header is None:
        unusable = [pr for pr in sf.problems if pr.kind != "blank"]
        if unusable:
            first = unusable[0]
            raise SessionFileError(p, f"not a pi session: no session header ({first.message})", line=first.line)
        return sf
    if migrate:
        from .migrate import migrate_session_entries

        version = sf.version
        if migrate_session_entries(sf.records):
            sf.migrated_from = version
    _collect_entries(sf)
    sf.problems.sort(key=lambda pr: pr.line)
    return sf


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


# --------------------------------------------------------------------------
# writing


def ensure_dir(directory: str | os.PathLike[str]) -> None:
    """Create ``directory`` (and parents) with mode 0700 where missing."""
    os.makedirs(directory, mode=DIR_MODE, exist_ok=True)


def _fsync_dir(directory: str | os.PathLike[str]) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _locked_append_fd(path: Path) -> Iterator[int]:
    """An fd open for appending to ``path``, exclusively locked, and still the
    file at ``path`` (a concurrent atomic rewrite replaces the inode: reopen)."""
    for _ in range(50):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd
                return
        finally:
            os.close(fd)  # closing releases the lock
    raise SessionFileError(path, "the file keeps being replaced while we try to append")


def _repair_torn_tail(fd: int, path: Path) -> str | None:
    """If the file does not end in ``\\n``, make the next append start on a new
    line. A last line that is a complete JSON record just gets its newline; a
    fragment is copied to a side file ``<name>.torn-<offset>`` and cut off.

    Returns:
        A one-line description of what was done, or None.
    """
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    # find the start of the last line
    start = size
    chunk = 65536
    while start > 0:
        read_from = max(0, start - chunk)
        block = os.pread(fd, start - read_from, read_from)
        nl = block.rfind(b"\n")
        if nl >= 0:
            start = read_from + nl + 1
            break
        start = read_from
    tail = os.pread(fd, size - start, start)
    try:
        orjson.loads(tail)
        complete = True
    except orjson.JSONDecodeError:
        complete = False
    if complete:
        os.write(fd, b"\n")
        return f"{path}: the last line had no newline; added one"
    side = path.with_name(f"{path.name}.torn-{start}")
    sfd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        os.write(sfd, tail)
        os.fsync(sfd)
    finally:
        os.close(sfd)
    os.ftruncate(fd, start)
    os.fsync(fd)
    return f"{path}: a torn last line ({len(tail)} bytes) was moved to {side.name}"


def append_lines(
    path: str | os.PathLike[str],
    lines: Sequence[bytes],
    durability: Durability = Durability.ENTRY,
) -> list[str]:
    """Append complete lines to a session file, each with one ``write``.

    Takes an exclusive lock on the file for the duration, so that two
    processes appending to one session never interleave bytes. A torn last
    line left by a crash is repaired first (see :func:`_repair_torn_tail`).

    Args:
        path: the session file (created with mode 0600 if missing).
        lines: complete lines, each ending in ``\\n``.
        durability: whether to fsync after the write.

    Returns:
        Notes about repairs done before appending (usually empty).

    Raises:
        OSError: on write failure (the entry may then be missing, never half
            written by us unless the disk is full).
    """
    p = Path(path)
    notes: list[str] = []
    with _locked_append_fd(p) as fd:
        note = _repair_torn_tail(fd, p)
        if note:
            notes.append(note)
        for line in lines:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        if durability is Durability.ENTRY:
            os.fsync(fd)
    return notes


def create_file(path: str | os.PathLike[str], lines: Iterable[bytes], durability: Durability = Durability.ENTRY) -> None:
    """Write a new session file atomically (temp file + rename): it appears
    whole or not at all. Refuses to replace an existing file.

    Raises:
        FileExistsError: ``path`` exists.
    """
    p = Path(path)
    if p.exists():
        raise FileExistsError(errno.EEXIST, "session file exists", str(p))
    ensure_dir(p.parent)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb", closefd=True) as f:
            for line in lines:
                f.write(line)
            f.flush()
            if durability is not Durability.NONE:
                os.fsync(f.fileno())
        os.link(tmp, p)  # fails if p appeared meanwhile: never clobber
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    if durability is not Durability.NONE:
        _fsync_dir(p.parent)


def backup_path(path: str | os.PathLike[str], tag: str) -> Path:
    """A free name ``<file>.<tag>.bak`` (or ``.<tag>.<n>.bak``) next to ``path``."""
    p = Path(path)
    candidate = p.with_name(f"{p.name}.{tag}.bak")
    n = 1
    while candidate.exists():
        candidate = p.with_name(f"{p.name}.{tag}.{n}.bak")
        n += 1
    return candidate


def atomic_rewrite(
    path: str | os.PathLike[str],
    lines: Iterable[bytes],
    *,
    backup_tag: str | None,
    expect_size: int | None = None,
    expect_mtime_ns: int | None = None,
) -> Path | None:
    """Replace a file's content atomically, keeping the original as a backup.

    Steps: write ``lines`` to a temp file in the same directory and fsync it;
    under the append lock, check the file did not change since it was read
    (``expect_size``/``expect_mtime_ns``), hard-link the original to the
    backup name, rename the temp file over the original, fsync the
    directory. Killed at any point, ``path`` holds either the old or the new
    content, whole.

    Args:
        path: the file to replace.
        lines: the new content, line by line (each ending in ``\\n``).
        backup_tag: tag of the backup name (e.g. ``"v1"``, ``"repair"``);
            None for no backup.
        expect_size, expect_mtime_ns: refuse if the file changed since read.

    Returns:
        The backup path, or None.

    Raises:
        SessionFileError: the file changed since it was read.
        OSError: on I/O failure (the original is then untouched).
    """
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    backup: Path | None = None
    try:
        with os.fdopen(fd, "wb", closefd=True) as f:
            for line in lines:
                f.write(line)
            f.flush()
            os.fsync(f.fileno())
        with _locked_append_fd(p) as lock_fd:
            st = os.fstat(lock_fd)
            if (expect_size is not None and st.st_size != expect_size) or (
                expect_mtime_ns is not None and st.st_mtime_ns != expect_mtime_ns
            ):
                raise SessionFileError(p, "the file changed while it was being rewritten; nothing was changed")
            with contextlib.suppress(OSError):
                os.chmod(tmp, st.st_mode & 0o777)
            if backup_tag is not None:
                backup = backup_path(p, backup_tag)
                os.link(p, backup)
            os.replace(tmp, p)
        _fsync_dir(p.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return backup


def rewrite_records(sf: SessionFile, *, backup_tag: str) -> Path | None:
    """Rewrite ``sf.path`` with its (migrated) records serialized again, every
    other line kept byte for byte (unparseable lines, blank lines, the
    fragments of recovered lines on a line of their own).

    Returns:
        The backup path.
    """
    assert sf.path is not None
    by_line = dict(zip(sf.record_lines, sf.records))

    def lines() -> Iterator[bytes]:
        for line_no, raw, _had_newline in iter_lines(sf.path):  # type: ignore[arg-type]
            record = by_line.get(line_no)
            if record is None:
                yield raw + b"\n"
                continue
            fragment = sf.fragments.get(line_no)
            if fragment:
                yield fragment + b"\n"
            yield jsonio.dumps_line(record)

    return atomic_rewrite(
        sf.path, lines(), backup_tag=backup_tag, expect_size=sf.size, expect_mtime_ns=sf.mtime_ns
    )
