"""Path helpers shared by the context-file and skill loaders (pi 1.6's
``canonicalizePath`` in ``utils/paths.js``; its ``resolvePath`` is
:func:`pi_session.core.paths.resolve_path`, named here for the loaders), and the
text clean-up both loaders apply to what they read."""

from __future__ import annotations

import os

from ..core.paths import resolve_path

__all__ = ["resolve_path", "canonical_path", "normalize_text", "strip_bom"]


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
