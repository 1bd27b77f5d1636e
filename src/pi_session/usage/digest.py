"""The digest of a sessions root (**beyond pi**): what a day, week or month
report needs, kept in one small file per root,
``<cache dir>/usage/<sha256 of the root, 32 hex>.digest.msgpack`` (mode
0600, written atomically beside the summary of :mod:`pi_session.usage.cache`).

It holds the counted message groups of every session merged per 15-minute
slot, agent, project, model and cost source
(:func:`pi_session.usage.report.merged_groups`: a few thousand rows for
thousands of sessions), the damaged lines, and one SHA-256 of the
``(path, size, mtime, inode)`` of every session file it was made from. A
report first walks the root (a ``stat`` per file, nothing opened) and, when
every file is as the digest recorded, sums the digest's rows; otherwise the
summary is brought up to date (:class:`pi_session.usage.cache.UsageCache`,
only appended bytes read) and the digest written again. It is also stale
when pi-session or the price data (the ``genai-prices`` package) changed.

Reports answered from a digest are remembered beside it
(``<...>.answers.msgpack``, :class:`Answers`) while it stays fresh.

This module imports nothing heavy (``os``, ``hashlib``, ``msgspec``): a
warm report answers in about the time the interpreter takes to start.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from typing import Any

import msgspec

__all__ = [
    "DIGEST_VERSION",
    "Answers",
    "Digest",
    "current_stamps",
    "digest_path",
    "fresh_digest",
    "pricing_stamp",
    "remember_answer",
    "remembered_answers",
    "session_files",
    "stamps_digest",
    "write_digest",
]

DIGEST_VERSION = "1"
"""The digest's format (with pi-session's version: a digest written by
another version is stale)."""


class Digest(msgspec.Struct, array_like=True):
    """The digest of one sessions root: ``version`` (:data:`DIGEST_VERSION`
    and pi-session's version), ``pricing`` (:func:`pricing_stamp`),
    ``root`` (absolute), ``stamps`` (:func:`stamps_digest` of the files it
    was made from), ``files`` (how many), ``merged``
    (:func:`pi_session.usage.report.merged_groups`) and ``problems``
    (``FILE:LINE: message`` of damaged lines)."""

    version: str
    pricing: str
    root: str
    stamps: bytes
    files: int
    merged: list[list[Any]]
    problems: list[str]


def _version() -> str:
    from .. import __version__

    return f"{DIGEST_VERSION}/{__version__}"


def pricing_stamp() -> str:
    """Which price data estimates come from, without importing it: the
    path, size, mtime and inode of the ``genai_prices`` package's
    ``__init__.py`` (an upgrade replaces it), or ``none``."""
    from importlib.machinery import PathFinder

    try:
        spec = PathFinder.find_spec("genai_prices")
        origin = spec.origin if spec is not None else None
        if not origin:
            return "none"
        st = os.stat(origin)
    except (OSError, ImportError, ValueError):
        return "none"
    return f"{origin}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def digest_path(root: str) -> str:
    """Where the digest of the sessions root ``root`` (absolute) lives:
    ``<cache dir>/usage/<sha256 of root, 32 hex>.digest.msgpack``, beside
    the summary (:func:`pi_session.usage.cache.cache_path`). The cache
    directory is ``$XDG_CACHE_HOME/pi-session`` (an absolute
    ``$XDG_CACHE_HOME`` only), else ``~/.cache/pi-session``, as
    :func:`pi_session.paths.cache_dir` says."""
    env = os.environ.get("XDG_CACHE_HOME", "")
    base = env if env and os.path.isabs(env) else os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    return os.path.join(base, "pi-session", "usage", f"{key}.digest.msgpack")


def session_files(root: str) -> Iterator[tuple[str, os.stat_result]]:
    """``(path, stat)`` of the regular ``*.jsonl`` files directly in
    ``root`` and in its directories (symlinks followed, as pi lists them),
    in name order."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return
    subdirs = []
    prefix = root if root.endswith("/") else f"{root}/"
    for name in names:
        path = prefix + name
        try:
            st = os.stat(path)
        except OSError:
            continue
        if name.endswith(".jsonl"):
            if stat.S_ISREG(st.st_mode):
                yield path, st
        elif stat.S_ISDIR(st.st_mode):
            subdirs.append(path)
    for d in subdirs:
        try:
            names = sorted(name for name in os.listdir(d) if name.endswith(".jsonl"))
        except OSError:
            continue
        for name in names:
            path = f"{d}/{name}"
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield path, st


def stamps_digest(stamps: Iterator[tuple[str, int, int, int]]) -> tuple[bytes, int]:
    """The SHA-256 of ``(path, size, mtime_ns, inode)`` stamps in order,
    and how many there were."""
    parts = [f"{path}\0{size}\0{mtime}\0{ino}\n" for path, size, mtime, ino in stamps]
    return hashlib.sha256(os.fsencode("".join(parts))).digest(), len(parts)


def _read_private(path: str) -> bytes | None:
    """The bytes of a cache file: not through a symlink, only a regular file
    owned by this user; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def current_stamps(root: str) -> tuple[bytes, int]:
    """:func:`stamps_digest` of the session files under ``root`` as they
    are now (a ``stat`` each)."""
    return stamps_digest((path, st.st_size, st.st_mtime_ns, st.st_ino) for path, st in session_files(root))


def fresh_digest(root: str, stamps: tuple[bytes, int] | None = None) -> Digest | None:
    """The digest of the sessions root ``root`` (absolute) when every
    session file under it is as the digest recorded (a ``stat`` each,
    nothing opened; ``stamps``: :func:`current_stamps` when already taken)
    and it was written by this version of pi-session with the same price
    data; None otherwise (no digest, damaged, stale)."""
    data = _read_private(digest_path(root))
    if data is None:
        return None
    try:
        digest = msgspec.msgpack.decode(data, type=Digest)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if digest.version != _version() or digest.root != root or digest.pricing != pricing_stamp():
        return None
    now, count = stamps if stamps is not None else current_stamps(root)
    if count != digest.files or now != digest.stamps:
        return None
    return digest


class Answers(msgspec.Struct, array_like=True):
    """Reports already answered from a digest, as printed: ``version``,
    ``pricing``, ``root``, ``stamps`` and ``files`` as the digest's they
    were made from, ``slots`` (the digest's distinct 15-minute slots, whose
    local days key a report: :func:`pi_session.usage.days.days_fingerprint`)
    and ``texts`` (key -> the report's text; the most recent
    :data:`ANSWERS_KEPT`)."""

    version: str
    pricing: str
    root: str
    stamps: bytes
    files: int
    slots: list[int]
    texts: dict[str, str]


ANSWERS_KEPT = 32
"""How many answered reports a root keeps."""


def _answers_path(root: str) -> str:
    return digest_path(root).replace(".digest.msgpack", ".answers.msgpack")


def remembered_answers(root: str, stamps: tuple[bytes, int]) -> Answers | None:
    """The reports answered for ``root`` (absolute) from a digest of the
    files as they are now (``stamps``: :func:`current_stamps`) by this
    version of pi-session with the same price data, or None."""
    data = _read_private(_answers_path(root))
    if data is None:
        return None
    try:
        answers = msgspec.msgpack.decode(data, type=Answers)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if (answers.version, answers.pricing, answers.root, answers.stamps, answers.files) != (_version(), pricing_stamp(), root, *stamps):
        return None
    return answers


def remember_answer(root: str, digest: Digest, answers: Answers | None, key: str, text: str) -> None:
    """Keep ``text``, the report ``key`` answered from ``digest``, among
    ``answers`` (None: the first for this digest). Written as the digest is
    (a new 0600 file renamed over the old; failing quietly)."""
    if answers is None or answers.stamps != digest.stamps:
        slots = sorted({m[0] for m in digest.merged})
        answers = Answers(digest.version, digest.pricing, digest.root, digest.stamps, digest.files, slots, {})
    answers.texts.pop(key, None)
    answers.texts[key] = text
    while len(answers.texts) > ANSWERS_KEPT:
        del answers.texts[next(iter(answers.texts))]
    _write_private(_answers_path(root), msgspec.msgpack.encode(answers))


def write_digest(root: str, stamps: list[tuple[str, int, int, int]], merged: list[list[Any]], problems: list[str]) -> None:
    """Write the digest of ``root`` (absolute): ``stamps`` the ``(path,
    size, mtime_ns, inode)`` of every session file as read, in
    :func:`session_files` order; ``merged`` and ``problems`` what was read
    from them. A new 0600 file (never through a symlink) renamed over the
    old one. Fails quietly: a digest that cannot be written only makes the
    next report slower."""
    digest_bytes, count = stamps_digest(iter(stamps))
    _write_private(digest_path(root), msgspec.msgpack.encode(Digest(_version(), pricing_stamp(), root, digest_bytes, count, merged, problems)))


def _write_private(path: str, data: bytes) -> None:
    """Write a cache file: a new 0600 file (never through a symlink)
    renamed over it, in a directory the summary created; failing quietly."""
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        if not os.path.isdir(os.path.dirname(path)):
            return  # the summary beside it creates the directory (mode 0700)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
