"""The lean half of the usage digest (:mod:`pi_session.usage.digest`):
the ``stat`` stamps of a sessions root's files (:func:`current_stamps`),
where the digest lives, which price data and version it was written by,
and the reports already answered from it (:func:`remembered_answers`, a
small JSON file beside the digest: ``<...>.answers.json``). Imports only
``os``, ``stat``, ``hashlib`` and ``json``, so that a report asked again
is printed in about the time the interpreter takes to start.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = [
    "ANSWERS_KEPT",
    "DIGEST_VERSION",
    "current_stamps",
    "digest_path",
    "format_version",
    "pricing_stamp",
    "read_private",
    "remember_answer",
    "remembered_answers",
    "session_files",
    "stamps_digest",
    "write_private",
]

DIGEST_VERSION = "2"
"""The digest's format (with pi-session's version: a digest written by
another version is stale)."""


def format_version() -> str:
    """The digest's format and pi-session's version: a digest or answer
    written by another version is stale."""
    from .. import __version__

    return f"{DIGEST_VERSION}/{__version__}"



def pricing_stamp() -> str:
    """Which price data estimates come from, without importing it: the
    path, size, mtime and inode of the first ``genai_prices/__init__.py``
    on ``sys.path`` (an upgrade replaces it), or ``none``."""
    import sys

    for entry in sys.path:
        origin = os.path.join(entry or ".", "genai_prices", "__init__.py")
        try:
            st = os.stat(origin)
        except (OSError, ValueError):
            continue
        return f"{origin}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    return "none"


def digest_path(root: str) -> str:
    """Where the digest of the sessions root ``root`` (absolute) lives:
    ``<cache dir>/usage/<sha256 of root, 32 hex>.digest.msgpack``, beside
    the summary (:func:`pi_session.usage.cache.cache_path`). The cache
    directory is ``$XDG_CACHE_HOME/pi-session`` (an absolute
    ``$XDG_CACHE_HOME`` only), else ``~/.cache/pi-session``, as
    :func:`pi_session.core.paths.cache_dir` says."""
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


def read_private(path: str) -> bytes | None:
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


ANSWERS_KEPT = 32
"""How many answered reports a root keeps."""


def _answers_path(root: str) -> str:
    return digest_path(root).replace(".digest.msgpack", ".answers.json")


def remembered_answers(root: str, stamps: tuple[bytes, int]) -> dict[str, Any] | None:
    """The reports answered for ``root`` (absolute) from a digest of the
    files as they are now (``stamps``: :func:`current_stamps`) by this
    version of pi-session with the same price data, or None: ``{"version",
    "pricing", "root", "stamps"`` (hex), ``"files"`` (as the digest's they
    were made from), ``"slots"`` (the digest's distinct 15-minute slots,
    whose local days key a report:
    :func:`pi_session.usage.days.days_fingerprint`), ``"texts"`` (key ->
    the report's text, the most recent :data:`ANSWERS_KEPT`)``}``."""
    data = read_private(_answers_path(root))
    if data is None:
        return None
    try:
        answers = json.loads(data)
        mine = (answers["version"], answers["pricing"], answers["root"], answers["stamps"], answers["files"])
        if not isinstance(answers["slots"], list) or not isinstance(answers["texts"], dict):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    if mine != (format_version(), pricing_stamp(), root, stamps[0].hex(), stamps[1]):
        return None
    return dict(answers)


def remember_answer(root: str, digest: Any, answers: dict[str, Any] | None, key: str, text: str) -> None:
    """Keep ``text``, the report ``key`` answered from ``digest`` (a
    :class:`pi_session.usage.digest.Digest`), among ``answers``
    (:func:`remembered_answers`; None: the first for this digest). Written
    as the digest is (a new 0600 file renamed over the old; failing
    quietly)."""
    if answers is None or answers["stamps"] != digest.stamps.hex():
        answers = {
            "version": digest.version, "pricing": digest.pricing, "root": digest.root, "stamps": digest.stamps.hex(),
            "files": digest.files, "slots": digest_slots(digest), "texts": {},
        }
    texts = answers["texts"]
    texts.pop(key, None)
    texts[key] = text
    while len(texts) > ANSWERS_KEPT:
        del texts[next(iter(texts))]
    write_private(_answers_path(root), json.dumps(answers, separators=(",", ":")).encode())


def digest_slots(digest: Any) -> list[int]:
    """The distinct 15-minute slots of a digest's rows, in order."""
    return sorted({m[0] for m in digest.merged})


def write_private(path: str, data: bytes) -> None:
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
