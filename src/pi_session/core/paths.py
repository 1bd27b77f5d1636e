"""Paths as pi reads and keeps them: pi 1.6's ``resolvePath`` and
``pathsEqual`` (``utils/paths.js``), the agent dir and session directories.
Pure apart from reading the home directory, the process cwd and
``$PI_CODING_AGENT_DIR``."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import IO, TypeAlias

from .text import js_trim

StrPath: TypeAlias = "str | os.PathLike[str]"
"""A file-system path argument: a string or any path-like object."""

__all__ = [
    "agent_dir",
    "cache_dir",
    "default_session_dir",
    "encode_cwd",
    "open_regular",
    "paths_equal",
    "resolve_path",
    "session_file_name",
    "sessions_dir",
]

_SEPARATORS = re.compile(r"[/\\:]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_URL_TRAILING = "".join(map(chr, range(0x21)))  # C0 controls and space


def _file_url_path(url: str) -> str:
    """node's ``fileURLToPath`` on POSIX, for a string starting ``file://``.

    Raises:
        ValueError: a host other than ``localhost`` (node:
            ``ERR_INVALID_FILE_URL_HOST``), an encoded ``/`` in the path
            (``ERR_INVALID_FILE_URL_PATH``), or a percent escape that does
            not decode to UTF-8 (``URIError``).
    """
    # the WHATWG URL parser drops tabs and newlines and trailing controls,
    # and reads a backslash as a slash in file URLs
    from urllib.parse import unquote, urlsplit  # here: only file URLs need it

    text = url.replace("\t", "").replace("\n", "").replace("\r", "").rstrip(_URL_TRAILING).replace("\\", "/")
    parts = urlsplit(text)
    if parts.netloc.lower() not in ("", "localhost"):
        raise ValueError(f"{url!r}: a file URL's host must be \"localhost\" or empty (pi 1.6 refuses it)")
    path = parts.path or "/"
    if "%2f" in path.lower():
        raise ValueError(f"{url!r}: a file URL's path must not hold an encoded '/' (pi 1.6 refuses it)")
    if _BAD_PERCENT.search(path):
        raise ValueError(f"{url!r}: malformed percent escape (pi 1.6 refuses it)")
    try:
        return unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise ValueError(f"{url!r}: a percent escape is not UTF-8 (pi 1.6 refuses it)") from None


def _normalize(text: str) -> str:
    """pi 1.6's ``normalizePath`` (without its options): ``~`` and ``~/...``
    expanded to the home directory (``~user`` is not), a ``file://`` URL
    turned into its path."""
    if text == "~":
        return os.path.expanduser("~")
    if text.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), text[2:])
    if text.startswith("file://"):
        return _file_url_path(text)
    return text


def _node_resolve(text: str) -> str:
    """node's ``path.resolve`` of an absolute path: normalized, one leading
    slash (POSIX ``normpath`` keeps two), no trailing slash."""
    resolved = os.path.normpath(text)
    if resolved.startswith("//"):
        resolved = "/" + resolved.lstrip("/")
    return resolved


def resolve_path(path: StrPath, base: StrPath | None = None, *, trim: bool = False) -> str:
    """An absolute, normalized path as pi 1.6 resolves cwds, session files
    and user-given paths (``resolvePath(input, baseDir, {trim})``).

    ``~`` and ``~/...`` expand to the home directory (``~user`` stays a
    relative name); a ``file://`` URL becomes its path (``localhost`` or no
    host; percent escapes decoded); a relative path is taken from ``base``
    (itself expanded, default: the process cwd). The result has exactly one
    leading slash (``//srv/x`` is ``/srv/x``, as node's ``path.resolve``
    gives), no ``.``/``..`` parts and no trailing slash. Symlinks are not
    followed.

    Args:
        path: the path (str or path-like).
        base: the directory a relative ``path`` is taken from.
        trim: first remove JavaScript whitespace from both ends
            (:func:`pi_session.core.text.js_trim`; pi trims skill paths).

    Returns:
        The absolute path.

    Raises:
        ValueError: a ``file://`` URL pi refuses too (node's
            ``fileURLToPath`` throws): another host (``file://host/x``), an
            encoded ``/``, a bad percent escape.
    """
    text = os.fspath(path)
    if trim:
        text = js_trim(text)
    text = _normalize(text)
    if not os.path.isabs(text):
        root = _normalize(os.fspath(base)) if base is not None else os.getcwd()
        text = os.path.join(os.getcwd(), root, text)
    return _node_resolve(text)


def paths_equal(a: StrPath, b: StrPath) -> bool:
    """pi 1.6's ``pathsEqual`` on POSIX: the same :func:`resolve_path` (no
    symlink resolution).

    Raises:
        ValueError: see :func:`resolve_path`.
    """
    return resolve_path(a) == resolve_path(b)


def agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR`` (``~`` expanded), else ``~/.pi/agent``."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return Path(os.path.expanduser(env))
    return Path.home() / ".pi" / "agent"


def cache_dir() -> Path:
    """pi-session's cache directory (not created here):
    ``$XDG_CACHE_HOME/pi-session`` (an absolute ``$XDG_CACHE_HOME`` only, as
    the XDG base directory spec says), else ``~/.cache/pi-session``. It
    holds the listing and search indexes: caches, rebuilt when missing,
    never inside pi's own directories (**beyond pi**)."""
    env = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(env) if env and os.path.isabs(env) else Path.home() / ".cache"
    return base / "pi-session"


def sessions_dir(agent: StrPath | None = None) -> Path:
    """``<agent dir>/sessions``."""
    return Path(agent if agent is not None else agent_dir()) / "sessions"


_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]|\\\\")


def is_windows_absolute(path: str) -> bool:
    """True for a Windows absolute path (``C:\\x``, ``C:/x``, ``\\\\server\\share``):
    the cwd of a session made on Windows (pi there, or an imported Claude Code /
    Codex session). Such a cwd names its directory as pi on Windows names it,
    never resolved against this process's cwd as a relative POSIX path."""
    return _WINDOWS_ABSOLUTE.match(path) is not None


def encode_cwd(cwd: str) -> str:
    """The directory name pi uses for a cwd: ``--`` + cwd without its leading
    ``/`` or ``\\``, with every ``/``, ``\\`` and ``:`` replaced by ``-``, + ``--``.
    The result never contains a path separator."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return f"--{_SEPARATORS.sub('-', trimmed)}--"


def default_session_dir(cwd: str, agent: StrPath | None = None) -> Path:
    """``<agent dir>/sessions/<encoded cwd>`` (not created here)."""
    return sessions_dir(agent) / encode_cwd(cwd)


def session_file_name(file_timestamp: str, session_id: str) -> str:
    """``<timestamp>_<session id>.jsonl``."""
    return f"{file_timestamp}_{session_id}.jsonl"


def open_regular(path: str | os.PathLike[str]) -> IO[bytes] | None:
    """Open ``path`` for reading if it is a regular file (a symlink is
    followed), else None (missing, unreadable, a FIFO, a device, a
    directory). It is ``stat``-ed first (nothing else is opened: opening a
    device may do something), then opened with ``O_NONBLOCK`` (a FIFO put
    there meanwhile does not block the open) and ``fstat``-ed again (what
    was opened is what is read)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
