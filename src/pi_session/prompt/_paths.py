"""Path helpers shared by the context-file and skill loaders (pi 1.6's
``resolvePath`` and ``canonicalizePath`` in ``utils/paths.js``), and the
text clean-up both loaders apply to what they read."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit
from ..records import StrPath

__all__ = ["resolve_path", "canonical_path", "normalize_text", "strip_bom"]


def _expand(path: str) -> str:
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), path[2:])
    if path.startswith("file://"):
        parts = urlsplit(path)
        if parts.netloc in ("", "localhost"):
            return unquote(parts.path)
    return path


def resolve_path(
    path: StrPath, base: StrPath | None = None, *, trim: bool = False
) -> str:
    """An absolute, normalised path as pi 1.6 resolves user-given paths:
    optionally trimmed; ``~`` and ``~/...`` expanded to the home directory
    (``~user`` is not: it stays a relative name); a ``file://`` URL turned
    into its path; a relative path resolved against ``base`` (itself resolved
    the same way; default: the process's cwd). Symlinks are not followed.
    Pure apart from reading the home directory and cwd."""
    text = os.fspath(path)
    if trim:
        text = text.strip()
    text = _expand(text)
    if os.path.isabs(text):
        return os.path.normpath(text)
    root = resolve_path(base) if base is not None else os.getcwd()
    return os.path.normpath(os.path.join(root, text))


def canonical_path(path: str) -> str:
    """``path`` with symlinks resolved when it exists, else ``path`` as is
    (pi's ``canonicalizePath``, which falls back to the raw path)."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return path


def strip_bom(text: str) -> str:
    """``text`` without a leading U+FEFF (a UTF-8 byte-order mark once decoded)."""
    return text[1:] if text.startswith("\ufeff") else text


def normalize_text(text: str) -> str:
    """File text as an editor's plain file would read: no leading byte-order
    mark, ``\\r\\n`` and lone ``\\r`` turned into ``\\n``."""
    return strip_bom(text).replace("\r\n", "\n").replace("\r", "\n")
