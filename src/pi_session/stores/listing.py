"""Session listings and discovery (pi 1.6's ``SessionManager.list`` /
``listAll``; header discovery for ``findById`` and
``continueRecent``).

As pi 1.6: a directory's files are read in descending file-name order and
the result is sorted stably by ``modified``, newest first (ties: newest
name first); ``listAll`` reads files newest mtime first and follows
symlinked project directories; ``on_progress(loaded, total, partial)`` is
called after each file, with ``partial`` on the first, every 10th (100th
for ``listAll``) and the last call. pi reads up to 10 files at once; we read
them one after the other (the index below makes most reads unnecessary).

**beyond pi**: listing keeps an index per session directory, a file in
pi-session's cache directory (:func:`index_path`:
``$XDG_CACHE_HOME/pi-session/listing/<hash of the directory>.v1.json``
(the format version in the name), mode 0600, JSON; never inside pi's
sessions directories, so listing writes nothing there), holding each session
file's info together with the file's size, mtime (ns) and inode when it was
read. A listing stats every ``*.jsonl`` file and re-reads only those whose
size, mtime or inode differ from the index (or that are new), so the index is
never stale; files that are gone are dropped from it. The index is written
atomically (temp file + rename) only when something changed; a missing,
unreadable or corrupt index is ignored and rebuilt; a directory we cannot
write to is listed without one. The index is a cache as
:mod:`pi_session.storage.cache` rules them: never read through a symbolic link,
from a FIFO or from another user's file, and not used at all in a cache
directory another user could change (one warning; every file is read).

**beyond pi**: only regular files are read (:func:`open_regular`): a FIFO,
a device or a symlink to one named ``*.jsonl`` is passed over, so a listing
never blocks on a FIFO nor reads ``/dev/zero`` for ever.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ..core import jsonio
from ..core.gc_pause import gc_paused
from ..storage.cache import read_cache_file, usable_cache_dir, versioned_name, write_cache_file
from ..storage import NOT_JSON, line_record
from ..core.timestamps import iso_to_ms
from ..core.paths import cache_dir, open_regular, paths_equal, resolve_path
from ..entries.records import StrPath, is_session_header
from ..session.info import InfoState, info_dict

__all__ = [
    "INDEX_NAME",
    "index_path",
    "ProgressCallback",
    "build_session_info",
    "list_session_dir",
    "list_sessions_dirs",
    "open_regular",  # pi_session.core.paths.open_regular, named here for the stores
    "paths_equal",  # pi_session.core.paths.paths_equal, named here for the stores
    "read_session_header",
    "resolve_path",  # pi_session.core.paths.resolve_path, named here for the stores
    "session_cwd_matches",
]

ProgressCallback = Callable[[int, int, "list[dict[str, Any]] | None"], Any]
"""``on_progress(loaded, total, partial)``: called once per file read;
``partial`` is a newest-first copy of the sessions loaded so far, or None
on the calls where pi publishes none."""

_HEADER_SCAN_BYTES = 1 << 20
"""How far header discovery reads into a file (pi 1.6: 1 MiB)."""
_DIR_PUBLISH_INTERVAL = 10
_ALL_PUBLISH_INTERVAL = 100

INDEX_NAME = ".pi-session-index"
"""File name of the per-directory listing index of pi-session before 0.x:
it lived in the session directory; it is no longer read nor written (see
:func:`index_path`)."""
_INDEX_VERSION = 1
_INDEX_LIMIT = 1 << 30
"""The largest listing index read (bytes); a larger one is rebuilt."""


def index_path(directory: StrPath) -> Path:
    """Where the listing index of a session directory lives:
    ``<cache dir>/listing/<sha256 of the directory's real path, 32 hex>.v<format version>.json``
    (:func:`pi_session.core.paths.cache_dir`): one index per directory, however
    it is reached (a symlinked agent or project directory included); the
    version in the name lets two installed versions keep their own
    (:func:`pi_session.storage.cache.versioned_name`). Pure apart from reading the
    environment, the process cwd and symlinks."""
    import hashlib  # here: only listings need it

    key = os.fsencode(os.path.realpath(directory))
    return cache_dir() / "listing" / versioned_name(hashlib.sha256(key).hexdigest()[:32], _INDEX_VERSION, ".json")


def session_cwd_matches(header_cwd: Any, resolved_cwd: str) -> bool:
    """pi's ``sessionCwdMatches``: a non-empty string cwd that resolves
    (:func:`pi_session.core.paths.resolve_path`) to ``resolved_cwd``. A header
    cwd pi cannot resolve (``file://host/x``) matches nothing; pi 1.6's
    listing throws on it instead (beyond pi: one bad file must not hide the
    others)."""
    if not isinstance(header_cwd, str) or header_cwd == "":
        return False
    try:
        return resolve_path(header_cwd) == resolved_cwd
    except ValueError:
        return False


def _file_lines(f: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """``(line number, line without its newline)`` of an open file."""
    for line_no, raw in enumerate(f, 1):
        yield line_no, raw[:-1] if raw.endswith(b"\n") else raw


def read_session_header(path: StrPath) -> dict[str, Any] | None:
    """The session header of a file, for discovery (pi 1.6's
    ``readSessionHeader``): the first line that parses as JSON, scanning at
    most 1 MiB; blank and unparseable lines are skipped.

    Returns:
        The header, or None when the first parsed record is not a session
        header with a string ``id``, when there is none within 1 MiB, or
        when the file cannot be read or is not a regular file
        (:func:`open_regular`).
    """
    try:
        f = open_regular(path)
        if f is None:
            return None
        with f:
            data = f.read(_HEADER_SCAN_BYTES + 1)
    except OSError:
        return None
    truncated = len(data) > _HEADER_SCAN_BYTES
    lines = data[:_HEADER_SCAN_BYTES].split(b"\n")
    if truncated:
        lines.pop()  # an incomplete line at the scan limit
    for raw in lines:
        if not raw.strip(b" \t\r\n\x0b\x0c"):
            continue
        try:
            record = jsonio.loads(raw)
        except ValueError:
            continue
        return record if is_session_header(record) else None
    return None


def build_session_info(path: StrPath) -> dict[str, Any] | None:
    """Summary of one session file for listings, with the keys pi's
    ``SessionInfo`` has: ``path, id, cwd, name?, parentSessionPath?, created,
    modified`` (ISO strings), ``messageCount, firstMessage, allMessagesText``.

    ``modified`` is the newest user/assistant message time (message
    ``timestamp`` in ms, else the entry's ISO timestamp), else the header
    time, else the file's mtime. Records are read as they are (no
    migration); damaged lines are skipped.

    Malformed records never make it raise: a header whose ``id`` is not a
    string makes the file "not a session" (our reader refuses it too);
    a ``cwd`` or ``parentSession`` that is not a string is left out (cwd
    ``""``); a ``created`` time that cannot be read is None; message and
    entry timestamps that are not valid times are ignored; content that is
    neither a string nor a list of blocks, and text blocks whose ``text``
    is not a string, give no text. (pi's own listing would throw on some of
    these; one bad file must not hide the others.) The rules per record
    are :class:`pi_session.session.info.InfoState`'s, which the database
    stores apply on each append.

    Returns:
        The info dict, or None for a file that is not a session (empty, no
        header first), cannot be read or is not a regular file
        (:func:`open_regular`: a FIFO or a device is never read).
    """
    p = Path(path)
    header: dict[str, Any] | None = None
    state = InfoState()
    texts: list[str] = []
    f = open_regular(p)
    if f is None:
        return None
    try:
        with f:
            for line_no, raw in _file_lines(f):
                record = line_record(raw, line_no)
                if record is NOT_JSON:
                    continue
                if header is None:
                    if not is_session_header(record):
                        return None
                    header = record
                    continue
                text = state.add(record)
                if text:
                    texts.append(text)
            st = os.fstat(f.fileno())
    except OSError:
        return None
    if header is None:
        return None
    info = info_dict(str(p), header, state, st.st_mtime_ns // 1_000_000, " ".join(texts))
    return info


def _modified_ms(info: dict[str, Any]) -> int:
    return iso_to_ms(info["modified"]) or 0


def _sorted(infos: Iterable[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Newest ``modified`` first; a stable sort, so ties keep the order the
    files were read in (pi sorts the same way)."""
    out = [i for i in infos if i is not None]
    out.sort(key=_modified_ms, reverse=True)  # reverse=True keeps ties in order
    return out


def _load_index(path: Path) -> dict[str, list[Any]]:
    """The index's ``{file name: [size, mtime_ns, ino, info | None]}``, or
    ``{}`` when it is missing, unreadable, not a regular file of the
    user's (:func:`pi_session.storage.cache.read_cache_file`: a symbolic link or a
    FIFO is never opened) or not in the expected shape."""
    raw = read_cache_file(path, _INDEX_LIMIT)
    if raw is None:
        return {}
    try:
        data = jsonio.loads(raw)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    good: dict[str, list[Any]] = {}
    for name, item in files.items():
        if (
            isinstance(item, list)
            and len(item) == 4
            and all(type(x) is int for x in item[:3])
            and (item[3] is None or isinstance(item[3], dict))
        ):
            good[name] = item
    return good


def _save_index(path: Path, files: dict[str, list[Any]]) -> None:
    """Write the index atomically; silently gives up when the directory is
    not writable (the listing itself does not need the index)."""
    with contextlib.suppress(OSError, TypeError, ValueError):
        index = {"version": _INDEX_VERSION, "files": files}
        try:
            # a private cache of strings and ints: JavaScript's number forms
            # (jsonio) do not matter, and orjson writes 50 MB of message
            # text in a tenth of the time
            data = orjson.dumps(index, option=orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            # a first message holding a lone surrogate must not keep the
            # whole directory's index from being written
            data = jsonio.dumps_line(index)
        # 0600 in a 0700 directory (they hold message text); no fsync: the
        # index is a cache, rebuilt from the sessions if lost
        write_cache_file(path, data)


class _DirIndex:
    """One session directory's listing index while a listing runs: infos
    come from the index when a file's size, mtime and inode are unchanged,
    else the file is read (and the index updated); :meth:`save` writes the
    index back when anything changed. Without a usable cache directory
    (``cached`` False) every file is read and nothing is written."""

    def __init__(self, directory: Path, cached: bool = True) -> None:
        self.directory = directory
        self._dir = os.fspath(directory)  # joined with names as strings: no Path per file
        self.path = index_path(directory)
        self.cached = cached
        self.old = _load_index(self.path) if cached else {}
        self.new: dict[str, list[Any]] = {}
        self.changed = False

    def info(self, name: str, st: os.stat_result | None) -> dict[str, Any] | None:
        """The info of file ``name`` (stat taken before reading: a later
        change gives a new key), or None when it is not a session or cannot
        be read."""
        path = os.path.join(self._dir, name)
        if st is None:
            self.changed = True
            return None
        if not stat.S_ISREG(st.st_mode):
            return None  # a FIFO, a device: never read, not indexed
        key = [st.st_size, st.st_mtime_ns, st.st_ino]
        item = self.old.get(name)
        if item is not None and item[:3] == key:
            info = item[3]
            self.new[name] = item
        else:
            self.changed = True
            try:
                info = build_session_info(path)
            except Exception:  # noqa: BLE001 - one bad file must not break the listing
                return None  # skipped, and not indexed: read again next time
            if info is not None:
                info = dict(info)
                del info["path"]
            self.new[name] = [*key, info]
        return {"path": path, **info} if info is not None else None

    def save(self) -> None:
        if not self.cached:
            return
        if self.changed or len(self.new) != len(self.old) or (self.new and not self.old):
            _save_index(self.path, self.new)


def _cache_usable() -> bool:
    """Whether the listing indexes' directory may be used
    (:func:`pi_session.storage.cache.usable_cache_dir`: created when missing; one
    :class:`~pi_session.storage.cache.CacheWarning` when another user could change
    it, and the listing reads every file)."""
    return usable_cache_dir(cache_dir() / "listing", "listing without it (every session file is read)")


def _stat(path: StrPath) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def jsonl_names(directory: StrPath) -> list[str] | None:
    """The names ending in ``.jsonl`` in ``directory``, in directory order
    (what every session-directory scan starts from), or None when the
    directory cannot be read. Nothing is opened or stat'ed."""
    try:
        with os.scandir(directory) as it:
            return [e.name for e in it if e.name.endswith(".jsonl")]
    except OSError:
        return None


def _load_infos(
    items: list[tuple[_DirIndex, str, os.stat_result | None]],
    keep: Callable[[dict[str, Any]], bool] | None,
    on_progress: ProgressCallback | None,
    publish_every: int,
) -> list[dict[str, Any]]:
    """Infos of ``items`` in their order (through their directory indexes),
    reporting progress after each the way pi does: ``partial`` on the first,
    every ``publish_every``-th and the last call."""
    total = len(items)
    infos: list[dict[str, Any]] = []
    with gc_paused(promote=False):
        for loaded, (index, name, st) in enumerate(items, 1):
            info = index.info(name, st)
            if info is not None and (keep is None or keep(info)):
                infos.append(info)
            if on_progress is not None:
                publish = loaded == 1 or loaded % publish_every == 0 or loaded == total
                on_progress(loaded, total, _sorted(infos) if publish else None)
    return infos


def list_session_dir(
    directory: StrPath,
    *,
    cwd: str | None = None,
    on_progress: ProgressCallback | None = None,
) -> list[dict[str, Any]]:
    """Infos of the ``*.jsonl`` sessions of one directory, newest first
    (pi 1.6's ``SessionManager.list`` / ``listAll(dir)``).

    Files are read in descending file-name order and the result is sorted
    stably by ``modified`` (newest first), so ties are ordered by file
    name, newest name first. Uses and refreshes the directory's index (see
    the module docstring): only new or changed files are read.

    Args:
        directory: the session directory.
        cwd: when given (a resolved path), keep only sessions whose header
            cwd resolves to it (see :func:`session_cwd_matches`).
        on_progress: ``on_progress(loaded, total, partial)`` after each
            file; ``partial`` (the matching sessions loaded so far, newest
            first) on the first, every 10th and the last call, else None.
    """
    d = Path(directory)
    names = jsonl_names(d) if d.is_dir() else None
    if names is None:
        return []
    names.sort(reverse=True)
    index = _DirIndex(d, _cache_usable())
    keep = (lambda info: session_cwd_matches(info.get("cwd"), cwd)) if cwd is not None else None
    base = os.fspath(d)
    items = [(index, name, _stat(os.path.join(base, name))) for name in names]
    infos = _load_infos(items, keep, on_progress, _DIR_PUBLISH_INTERVAL)
    index.save()
    return _sorted(infos)


def list_sessions_dirs(
    sessions_root: StrPath,
    *,
    on_progress: ProgressCallback | None = None,
) -> list[dict[str, Any]]:
    """Infos of every session in every directory under ``sessions_root``
    (symlinked directories followed), newest first (pi's
    ``SessionManager.listAll``).

    Files are read newest mtime first (ties: newest file name first), and
    the result is sorted stably by ``modified``. ``on_progress`` as
    :func:`list_session_dir`, with ``partial`` on the first, every 100th
    and the last call."""
    root = Path(sessions_root)
    try:
        subs = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        subs = []
    items: list[tuple[_DirIndex, str, os.stat_result | None]] = []
    indexes: list[_DirIndex] = []
    cached = _cache_usable() if subs else False
    for sub in subs:
        if not sub.is_dir():  # follows symlinks
            continue
        names = jsonl_names(sub)
        if names is None:
            continue
        index = _DirIndex(sub, cached)
        indexes.append(index)
        base = os.fspath(sub)
        items.extend((index, name, _stat(os.path.join(base, name))) for name in names)
    # newest mtime first, then newest name; unreadable stats last
    items.sort(key=lambda it: it[1], reverse=True)
    items.sort(key=lambda it: it[2].st_mtime_ns if it[2] is not None else float("-inf"), reverse=True)
    infos = _load_infos(items, None, on_progress, _ALL_PUBLISH_INTERVAL)
    for index in indexes:
        index.save()
    return _sorted(infos)


def looks_like_session_file(path: StrPath) -> bool:
    """Whether ``path`` is, or may be, a pi session file: a ``.jsonl`` name,
    or a first line holding a session header (BOM and leading whitespace
    skipped; only the first 4,096 bytes are read). Never raises. Used to
    refuse writing an export over a session."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        return True
    try:
        fh = open_regular(p)
        if fh is None:
            return False
        with fh:
            head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{") and b'"type":"session"' in head.split(b"\n", 1)[0].replace(b" ", b"")
