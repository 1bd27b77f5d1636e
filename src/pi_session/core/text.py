"""Text that can be sent: lone UTF-16 surrogates (beyond pi).

A JavaScript string is a sequence of UTF-16 code units, and pi writes
whatever a tool returned. A tool that cut an emoji in half leaves a *lone
surrogate* (a high surrogate U+D800-U+DBFF without a low one after it, or a
low surrogate U+DC00-U+DFFF without a high one before it), which the session
file keeps as a JSON escape such as ``\\ud83d``. Python reads it as a str
holding that code point, and such a str cannot be encoded as UTF-8: the
official SDKs raise ``UnicodeEncodeError`` before sending a request that
holds one.

Policy (JavaScript's ``String.prototype.toWellFormed``): in text that is
*sent* to a provider, every lone surrogate becomes U+FFFD (the replacement
character); a high surrogate directly followed by a low one is joined into
the character they encode. Session files are never changed by this: the
replacement happens on the copy that goes into a request.

These are pure functions; inputs are never mutated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "wrap_text",
    "plural",
    "strip_ansi",
    "field_text",
    "JS_WHITESPACE",
    "REPLACEMENT",
    "clip_line",
    "find_lone_surrogates",
    "is_well_formed",
    "js_trim",
    "lone_surrogates",
    "show_controls",
    "well_formed",
    "well_formed_deep",
]

JS_WHITESPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""The characters JavaScript's ``String.prototype.trim`` removes (its
WhiteSpace and LineTerminator sets). Python's ``str.strip()`` differs: it
also removes U+001C-U+001F and U+0085 and keeps U+FEFF, so pi's trimming
uses this table."""


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it: :data:`JS_WHITESPACE` removed
    from both ends, nothing else. pi 1.6 trims session names with it
    (``getSessionName``, ``appendSessionInfo``, the session listing) and the
    paths of ``resolvePath(path, base, {trim: true})``: a session name
    ``"\\x1cname"`` stays ``"\\x1cname"``."""
    return text.strip(JS_WHITESPACE)


REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes in sent text (U+FFFD REPLACEMENT CHARACTER)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def is_well_formed(text: str) -> bool:
    """True when ``text`` holds no surrogate code point at all, so it encodes
    as UTF-8 (a str holding a surrogate *pair* as two code points is not well
    formed either: it cannot be encoded as it is, :func:`well_formed` joins
    the pair)."""
    return text.isascii() or _SURROGATE.search(text) is None


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD and every
    surrogate pair (two code points) joined into its character, so the result
    always encodes as UTF-8. Returns ``text`` itself when there is nothing to
    change (the common case costs one regex scan).

    Args:
        text: any str.

    Returns:
        The well-formed str (same length in UTF-16 code units, except that a
        joined pair counts as one Python character).
    """
    if is_well_formed(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def lone_surrogates(text: str) -> list[tuple[int, str]]:
    """The lone surrogates of ``text``: ``[(index, code point as "U+D83D")]``
    with ``index`` a Python character index (a surrogate pair held as two
    code points is not lone)."""
    if is_well_formed(text):
        return []
    return [(m.start(), f"U+{ord(m.group()):04X}") for m in _LONE.finditer(text)]


def well_formed_deep(value: Any) -> Any:
    """A JSON value with :func:`well_formed` applied to every string in it,
    object keys included. Returns ``value`` itself (no copy) when nothing
    changes; containers that change are copied, never mutated. Iterative, so
    any nesting depth works. Tuples are treated as lists."""
    if isinstance(value, str):
        return well_formed(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    if not _has_any_surrogate(value):
        return value
    return _rebuild(value)


def _has_any_surrogate(value: Any) -> bool:
    """Any string (or key) holding a surrogate code point, paired or not."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not is_well_formed(v):
                return True
        elif isinstance(v, dict):
            for k, item in v.items():
                if isinstance(k, str) and not is_well_formed(k):
                    return True
                stack.append(item)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


def _rebuild(value: Any) -> Any:
    """Copy of ``value`` with every str made well formed; post-order and
    iterative (an explicit stack instead of recursion)."""
    # frames: [container, items iterator, built items, is_dict]
    root: list[Any] = [None]

    def start(v: Any) -> list[Any] | None:
        if isinstance(v, dict):
            return [v, iter(v.items()), [], True]
        if isinstance(v, (list, tuple)):
            return [v, iter(v), [], False]
        return None

    stack: list[list[Any]] = [start(value)]  # type: ignore[list-item]
    while stack:
        frame = stack[-1]
        try:
            item = next(frame[1])
        except StopIteration:
            stack.pop()
            built = dict(frame[2]) if frame[3] else list(frame[2])
            if stack:
                parent = stack[-1]
                if parent[3]:
                    parent[2][-1] = (parent[2][-1][0], built)
                else:
                    parent[2][-1] = built
            else:
                root[0] = built
            continue
        if frame[3]:
            key, child = item
            key = well_formed(key) if isinstance(key, str) else key
        else:
            child = item
        sub = start(child)
        if sub is None:
            leaf = well_formed(child) if isinstance(child, str) else child
            frame[2].append((key, leaf) if frame[3] else leaf)
        else:
            frame[2].append((key, None) if frame[3] else None)
            stack.append(sub)
    return root[0]


def find_lone_surrogates(value: Any, path: str = "", *, limit: int | None = None) -> list[tuple[str, int, str]]:
    """Where a JSON value holds lone surrogates.

    Args:
        value: a JSON value (dict, list, str, ...).
        path: the name of ``value`` in the paths returned (``"message"``).
        limit: stop after this many findings (None: all).

    Returns:
        ``[(path, index, "U+D83D")]`` in document order (an object's keys
        before its values), ``path`` written
        like ``message.content[0].text`` (an object key holding one is
        reported as ``<path>{key}``), ``index`` the character index in that
        string. Iterative: any nesting depth works.
    """
    found: list[tuple[str, int, str]] = []
    if not _has_any_surrogate(value):  # the common case: no paths built
        return found
    for where, text in _strings(value, path):
        for index, code in lone_surrogates(text):
            found.append((where, index, code))
            if limit is not None and len(found) >= limit:
                return found
    return found


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, str) for every string of a JSON value, keys included, in
    document order."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            yield where, v
        elif isinstance(v, dict):
            items = list(v.items())
            for k, item in reversed(items):
                key_text = well_formed(k) if isinstance(k, str) else str(k)
                stack.append((f"{where}.{key_text}" if where else key_text, item))
            for k, _ in items:
                if isinstance(k, str) and not is_well_formed(k):
                    yield f"{where}{{key}}", k
        elif isinstance(v, (list, tuple)):
            for i in range(len(v) - 1, -1, -1):
                stack.append((f"{where}[{i}]", v[i]))


_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show_controls(text: str) -> str:
    """``text`` with every control character except newline and tab (C0,
    DEL, C1 ``0x80-0x9f``), every bidirectional mark, override or isolate
    (U+061C, U+200E/F, U+2028/9, U+202A-202E, U+2066-2069: they make text
    read in another order than it is) and every lone surrogate replaced by a
    visible escape (``\\x1b``, ``\\u202e``, ``\\ud800``). What the terminal
    output and the HTML viewer show of session text; at most 6 times as
    long."""
    if text.isascii() and text.isprintable():  # the common case, without the regex (no ASCII printable is escaped)
        return text
    return _INVISIBLE.sub(_visible_escape, text)


def clip_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs, newlines included, become one
    space) and at most ``limit`` characters, ending in ``...`` when cut."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    if limit <= 3:
        return text[: max(limit, 0)]
    return text[: limit - 3].rstrip() + "..."


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 entry"``, ``"2 entries"``: the count (with thousands separators)
    and the word in the right number (``many`` defaults to ``word + "s"``)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
"""Terminal escape sequences: CSI (colours, cursor moves: ``ESC [ ... m``),
OSC (titles, links: ``ESC ] ... BEL``) and the two-byte ones."""


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (colours and cursor moves
    a tool wrote into its output): what a search indexes, so that a word
    written in colour (``ESC[31mred``) is the word ``red``. A lone ESC that
    starts no sequence is kept.

    Returns:
        The text (the same object when it holds no ESC).
    """
    return _ANSI.sub("", text) if "\x1b" in text else text


def field_text(value: Any) -> str:
    """A record's text field (a summary, a block's text, a command) as the
    exports and views show it: a string as it is, a missing one (None) as
    ``""``, and anything else a damaged record holds there (a number, an
    object, an array) as ``JSON.stringify`` writes it (``{"o":1}``;
    :func:`pi_session.core.jsonio.js_stringify`), never Python's repr
    (``{'o': 1}``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    from .jsonio import js_stringify  # the one JSON encoder (JSON.stringify's text)

    return js_stringify(value)


_BREAK_AFTER = frozenset("/\\-_.,:;=+|")


def _word_pieces(word: str) -> list[str]:
    """``word`` cut after each ``/``, ``-``, ``_``, ``.`` (and the like):
    the places a path, a model name or an identifier reads on best when it
    cannot stay whole on a line."""
    pieces, start = [], 0
    for i, ch in enumerate(word):
        if ch in _BREAK_AFTER:
            pieces.append(word[start : i + 1])
            start = i + 1
    if start < len(word):
        pieces.append(word[start:])
    return pieces


def wrap_text(
    text: str, width: int | None, measure: Callable[[str], int] = len, crop: Callable[[str, int], str] | None = None
) -> list[str]:
    """``text`` as lines of at most ``width`` columns as ``measure`` counts
    them (default: characters; :func:`pi_session.render.terminal.wrap_cells`
    counts terminal cells), ``crop(text, width)`` giving the longest start
    of a text that fits (default: slicing): broken at spaces; a word
    wider than a line is broken after a ``/``, ``-``, ``_`` or ``.`` (a
    path, a model name), and only where it has none, between characters
    (never inside a wide character). Runs of spaces at a break are dropped;
    newlines in ``text`` end lines. ``width`` None or under 1: one line per
    line of ``text``. Pure.

    Returns:
        at least one line (``[""]`` for an empty ``text``)."""
    if width is None or width < 1:
        return text.split("\n")
    out: list[str] = []
    for paragraph in text.split("\n"):
        if measure(paragraph) <= width:
            out.append(paragraph)
            continue
        line = ""
        for word in paragraph.split():
            joined = f"{line} {word}" if line else word
            if measure(joined) <= width:
                line = joined
                continue
            if measure(word) <= width:
                out.append(line)
                line = word
                continue
            for n, piece in enumerate(_word_pieces(word)):  # a word no line holds: its pieces fill lines
                joined = (f"{line} {piece}" if line else piece) if n == 0 else line + piece
                if measure(joined) <= width:
                    line = joined
                    continue
                if line:
                    out.append(line)
                while measure(piece) > width:
                    head = (crop(piece, width) if crop is not None else piece[:width]) or piece[0]
                    out.append(head)
                    piece = piece[len(head):]
                line = piece
        out.append(line)
    return out
