"""The lean half of the usage digest (:mod:`pi_session.usage.digest`):
the ``stat`` walk of a sessions root (:func:`scan`), where the digest
lives, which price data and version it was written by, and the reports
already answered from it (:func:`load_answers`, a small file beside the
digest: ``<...>.answers.json``). Imports only the standard library's
quick-loading modules (``os``, ``stat``, ``time``, ``zlib``, ``json`` with its
C scanner, the C SHA-256), so that a report asked again is printed in about
the time the interpreter takes to start.

Cache files are data only, read by parsers whose memory is bounded by the
file's size (JSON: :func:`read_json` here, ``orjson`` for the digest), and
everything read is checked for the shape its reader uses before it is
used: a cache file crafted by anyone who can write it (the same user) is
ignored, never a crash (``tests/test_usage_cache_fuzz.py``).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = [
    "ANSWERS_KEPT",
    "checked",
    "DIGEST_VERSION",
    "RACY_NS",
    "Scan",
    "current_stamps",
    "digest_slots",
    "digest_path",
    "format_version",
    "listing_digest",
    "load_answers",
    "pack_json",
    "pricing_stamp",
    "read_json",
    "read_checked",
    "read_private",
    "remember_answer",
    "scan",
    "session_files",
    "sha256_hex",
    "stamps_digest",
    "usage_cache_file",
    "write_private",
]

DIGEST_VERSION = "4"
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
    for entry in sys.path:
        origin = os.path.join(entry or ".", "genai_prices", "__init__.py")
        try:
            st = os.stat(origin)
        except (OSError, ValueError):
            continue
        return f"{origin}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    return "none"


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 hex digits, from CPython's built-in
    implementation (``_sha2``, ``_sha256`` before 3.12) when there is one,
    which loads faster than :mod:`hashlib` (OpenSSL)."""
    for name in ("_sha2", "_sha256"):
        try:
            return str(__import__(name).sha256(data).hexdigest())
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256(data).hexdigest()


def usage_cache_file(root: str, suffix: str) -> str:
    """A cache file of the sessions root ``root`` (absolute):
    ``<cache dir>/usage/<sha256 of root, 32 hex>.<suffix>``, beside the
    summary (:func:`pi_session.usage.cache.cache_path`). The cache
    directory is ``$XDG_CACHE_HOME/pi-session`` (an absolute
    ``$XDG_CACHE_HOME`` only), else ``~/.cache/pi-session``, as
    :func:`pi_session.core.paths.cache_dir` says."""
    env = os.environ.get("XDG_CACHE_HOME", "")
    base = env if env and os.path.isabs(env) else os.path.join(os.path.expanduser("~"), ".cache")
    key = sha256_hex(os.fsencode(root))[:32]
    return os.path.join(base, "pi-session", "usage", f"{key}.{suffix}")


def digest_path(root: str) -> str:
    """Where the digest of the sessions root ``root`` (absolute) lives:
    ``<...>.digest.json`` (:func:`usage_cache_file`)."""
    return usage_cache_file(root, "digest.json")


RACY_NS = 3_000_000_000
"""A directory's listing is reused only when its ctime (the last change of
its entries or attributes, which ``touch`` cannot set back) is at least
this long (3 s, in nanoseconds) before the listing was taken: a file
created, removed or renamed later then gives the directory another ctime
and mtime even on a file system with coarse timestamps (git's rule for
"racily clean" entries)."""


class Scan:
    """What :func:`scan` found under a sessions root.

    Attributes:
        listing: ``(path, stat)`` of the regular ``*.jsonl`` files directly
            in the root and in its directories (symlinks followed, as pi
            lists them), in name order, the root's own first.
        names: directory path -> the sorted names listed in it (the
            root: every name; a directory under it: its ``*.jsonl`` names),
            a list.
        settled: directory path -> its ``[mtime_ns, ctime_ns, inode,
            device]`` for the directories whose listing may be reused while
            that stays the same (:data:`RACY_NS`).
        stamps: ``size, mtime_ns, inode`` of every file of ``listing``, in
            order, flattened, with ``-1`` for a listed ``*.jsonl`` name that
            is not a regular file (or went): equal stamps and names mean
            the same files as they were.
    """

    __slots__ = ("listing", "names", "settled", "stamps")

    def __init__(self) -> None:
        self.listing: list[tuple[str, os.stat_result]] = []
        self.names: dict[str, list[str]] = {}
        self.settled: dict[str, list[int]] = {}
        self.stamps: list[int] = []

    def same_files(self, answers: dict[str, Any] | None) -> bool:
        """Whether ``answers`` (:func:`load_answers`) were remembered from
        exactly these files as they are now."""
        return answers is not None and answers["names"] == self.names and answers["stamps"] == self.stamps


def scan(root: str, known: dict[str, Any] | None = None) -> Scan:
    """Walk the sessions root ``root`` (absolute): a ``stat`` per file and
    directory, nothing opened. A directory whose ``(mtime_ns, ctime_ns,
    inode, device)`` is one ``known["settled"]`` holds (:func:`load_answers`) is
    not listed again: its names are ``known["names"]``'s. A root that is
    not a readable directory gives an empty :class:`Scan`."""
    found = Scan()
    listed_at = time.time_ns()
    names = known["names"] if known is not None else {}
    settled = known["settled"] if known is not None else {}
    try:
        root_st = os.stat(root)
        root_names = _names_of(found, root, root_st, names, settled, listed_at, False)
    except OSError:
        return found
    listing, stamps, append = found.listing, found.stamps, found.stamps.append
    is_reg, is_dir, stat_of = stat.S_ISREG, stat.S_ISDIR, os.stat
    subdirs = []
    prefix = root if root.endswith("/") else f"{root}/"
    for name in root_names:
        path = prefix + name
        try:
            st = stat_of(path)
        except OSError:
            if name.endswith(".jsonl"):
                append(-1)
            continue
        if name.endswith(".jsonl"):
            if is_reg(st.st_mode):
                listing.append((path, st))
                stamps += (st.st_size, st.st_mtime_ns, st.st_ino)
            else:
                append(-1)
        elif is_dir(st.st_mode):
            subdirs.append((path, st))
    for d, dir_st in subdirs:
        try:
            files = _names_of(found, d, dir_st, names, settled, listed_at, True)
        except OSError:
            continue
        prefix = f"{d}/"
        for name in files:
            path = prefix + name
            try:
                st = stat_of(path)
            except OSError:
                append(-1)
                continue
            if is_reg(st.st_mode):
                listing.append((path, st))
                stamps += (st.st_size, st.st_mtime_ns, st.st_ino)
            else:
                append(-1)
    return found


def _names_of(
    found: Scan, d: str, st: os.stat_result, names: dict[str, Any], settled: dict[str, Any], listed_at: int, only_jsonl: bool,
) -> list[str]:
    """The sorted names in the directory ``d`` (stat ``st``), from
    ``names`` when ``settled`` says it did not change, else listed; noted
    in ``found``. Raises OSError when it cannot be listed."""
    mark = [st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    got = names.get(d) if settled.get(d) == mark else None
    if got is None:
        entries = os.listdir(d)
        got = sorted([n for n in entries if n.endswith(".jsonl")] if only_jsonl else entries)
    found.names[d] = got
    if max(st.st_mtime_ns, st.st_ctime_ns) < listed_at - RACY_NS:
        found.settled[d] = mark
    return got


def session_files(root: str) -> list[tuple[str, os.stat_result]]:
    """``(path, stat)`` of the regular ``*.jsonl`` files directly in
    ``root`` and in its directories (symlinks followed, as pi lists them),
    in name order: :func:`scan`'s ``listing``."""
    return scan(root).listing


def stamps_digest(stamps: Iterable[tuple[str, int, int, int]]) -> tuple[bytes, int]:
    """The SHA-256 of ``(path, size, mtime_ns, inode)`` stamps in order,
    and how many there were."""
    parts = [f"{path}\0{size}\0{mtime}\0{ino}\n" for path, size, mtime, ino in stamps]
    return bytes.fromhex(sha256_hex(os.fsencode("".join(parts)))), len(parts)


def listing_digest(listing: Iterable[tuple[str, os.stat_result]]) -> tuple[bytes, int]:
    """:func:`stamps_digest` of a :func:`scan`'s ``listing``."""
    return stamps_digest((path, st.st_size, st.st_mtime_ns, st.st_ino) for path, st in listing)


def current_stamps(root: str) -> tuple[bytes, int]:
    """:func:`stamps_digest` of the session files under ``root`` as they
    are now (a ``stat`` each)."""
    return listing_digest(session_files(root))


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


def checked(data: bytes) -> bytes:
    """``data`` as a cache file keeps it: its CRC-32 (4 bytes, big-endian),
    then the data (:func:`read_checked`)."""
    return zlib.crc32(data).to_bytes(4, "big") + data


def read_checked(path: str) -> memoryview | None:
    """The data of the cache file ``path`` written as :func:`checked` packs
    it (read with :func:`read_private`), or None when there is none or its
    CRC-32 differs (a flipped bit is not read as another number)."""
    data = read_private(path)
    if data is None or len(data) < 4:
        return None
    view = memoryview(data)[4:]
    return view if zlib.crc32(view) == int.from_bytes(data[:4], "big") else None


def pack_json(value: Any) -> bytes:
    """``value`` (JSON-compatible: text that is not Unicode, such as a path
    of undecodable bytes, is kept as ``\\u`` escapes) as a cache file keeps
    it: :func:`checked` JSON (:func:`read_json`)."""
    return checked(json.dumps(value, separators=(",", ":")).encode())


def read_json(path: str) -> Any:
    """The value kept in the cache file ``path`` (:func:`pack_json`, read
    with :func:`read_checked`), or None when there is none, it is damaged
    or it is not JSON (nested too deeply, a number of more digits than
    Python reads, invalid UTF-8…). Such files are read only when they are
    regular files owned by this user (mode 0600 when written, never through
    a symlink); the JSON parser's memory is bounded by the file's size.
    The caller checks the shape of what it gets."""
    data = read_checked(path)
    if data is None:
        return None
    try:
        return json.loads(bytes(data))
    except (ValueError, RecursionError):
        return None


ANSWERS_KEPT = 32
"""How many answered reports a root keeps."""


def _answers_path(root: str) -> str:
    return usage_cache_file(root, "answers.json")


def _all(kind: type, values: Any) -> bool:
    """Whether every one of ``values`` is exactly of type ``kind``."""
    return set(map(type, values)) <= {kind}


def _answers_usable(answers: dict[str, Any]) -> bool:
    """Whether loaded answers hold what :func:`scan`, :meth:`Scan.same_files`
    and the fast path use, of the types they use (a crafted file holds
    anything)."""
    names, settled, texts, digest = answers.get("names"), answers.get("settled"), answers.get("texts"), answers.get("digest")
    if not (type(names) is dict and type(settled) is dict and type(texts) is dict and type(answers.get("files")) is int):
        return False
    stamps, slots = answers.get("stamps"), answers.get("slots")
    if not (type(stamps) is list and _all(int, stamps) and type(slots) is list and _all(int, slots)):
        return False
    if not (_all(str, texts) and _all(str, texts.values()) and _all(str, names) and _all(str, settled)):
        return False
    if not all(type(v) is list and _all(str, v) for v in names.values()):
        return False
    if not all(type(v) is list and len(v) == 4 and _all(int, v) for v in settled.values()):
        return False
    return type(digest) is str and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


def load_answers(root: str) -> dict[str, Any] | None:
    """The reports answered for ``root`` (absolute) by this version of
    pi-session with the same price data, or None (none, damaged, stale):
    ``{"version", "pricing", "root", "names", "settled", "stamps"}`` (the
    :class:`Scan` of the files they were answered from: answers are valid
    while :meth:`Scan.same_files`), ``"digest"`` and ``"files"`` (the
    stamps and file count of the digest of those files), ``"slots"`` (the digest's distinct
    15-minute slots, whose local days key a report:
    :func:`pi_session.usage.days.offsets_key`) and ``"texts"`` (key -> the
    report's text, the most recent :data:`ANSWERS_KEPT`), read with
    :func:`read_json`, every part checked for its type (``"digest"`` is
    given as bytes)."""
    answers = read_json(_answers_path(root))
    if type(answers) is not dict:
        return None
    mine = (answers.get("version"), answers.get("pricing"), answers.get("root"))
    if mine != (format_version(), pricing_stamp(), root) or not _answers_usable(answers):
        return None
    answers["digest"] = bytes.fromhex(answers["digest"])
    return answers


def remember_answer(root: str, found: Scan, digest: Any, answers: dict[str, Any] | None, slots: list[int], key: str, text: str) -> None:
    """Keep ``text``, the report ``key`` answered from ``digest``
    (:class:`pi_session.usage.digest.Digest`) of the files ``found``
    (:func:`scan`), whose distinct slots are ``slots``,
    among ``answers`` (:func:`load_answers`: kept when they were answered
    from the same files). Written as the digest is (a new 0600 file
    renamed over the old; failing quietly)."""
    if answers is None or not found.same_files(answers) or answers["digest"] != digest.stamps:
        answers = {"version": format_version(), "pricing": pricing_stamp(), "root": root, "slots": slots, "texts": {}}
    answers.update(digest=digest.stamps, files=digest.files)
    answers.update(names=found.names, settled=found.settled, stamps=found.stamps)
    texts = answers["texts"]
    texts.pop(key, None)
    texts[key] = text
    while len(texts) > ANSWERS_KEPT:
        del texts[next(iter(texts))]
    write_private(_answers_path(root), pack_json({**answers, "digest": answers["digest"].hex()}))


def digest_slots(digest: Any) -> list[int]:
    """The distinct 15-minute slots of a digest's rows
    (:class:`pi_session.usage.digest.Digest`), in order."""
    return sorted({m[0] for m in digest.merged})
