"""JSON encoding and decoding with JavaScript's rules.

pi writes session files with ``JSON.stringify`` and measures tool-call arguments
by the length of ``JSON.stringify(arguments)`` in UTF-16 code units. This module
reproduces both on top of orjson (fast path) and the standard library (fallback
for inputs orjson refuses but ``JSON.parse`` accepts, such as lone surrogate
escapes or integers wider than 64 bits).
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import orjson

__all__ = [
    "js_stringify_by_rules",
    "loads",
    "dumps",
    "dumps_line",
    "dumps_pretty",
    "dumps_readable",
    "iter_pretty",
    "write_pretty",
    "js_stringify",
    "js_number",
    "js_len",
    "js_key_order",
]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def loads(data: bytes | str) -> Any:
    """Parse one JSON text like ``JSON.parse``.

    Args:
        data: the JSON text (bytes in UTF-8, or str).

    Returns:
        The decoded value (dict, list, str, int, float, bool or None).

    Raises:
        ValueError: when the text is not valid JSON (``orjson.JSONDecodeError``
            and ``json.JSONDecodeError`` are both subclasses of ValueError).
            ``NaN``/``Infinity`` are refused, as ``JSON.parse`` refuses them.

    Nesting: orjson refuses more than 1024 levels, the standard library
    about 1000, while Node's ``JSON.parse`` reads about 100,000 levels.
    Deeper texts are parsed by the standard library's pure-Python scanner in
    a worker thread with a large stack and a raised recursion limit (see
    :func:`_run_deep`), at least :data:`DEEP_MAX_DEPTH` levels; far beyond that a
    ValueError says the text is nested too deeply.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        deep = "depth limit" in str(exc)
    # JSON.parse accepts lone surrogate escapes and big integers; orjson
    # does not. The standard library does both.
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8", errors="surrogateescape")
    if not deep:
        try:
            return json.loads(data, parse_constant=_reject_constant)
        except RecursionError:
            pass
    return _run_deep(_loads_deep, data)


DEEP_MAX_DEPTH = 200_000
"""Deepest nesting (levels of arrays/objects) :func:`loads` and the
encoders handle; Node's ``JSON.parse`` stops at about 100,000 (it depends
on its stack size)."""
_DEEP_RECURSION_LIMIT = 4 * DEEP_MAX_DEPTH + 10_000
_DEEP_STACK_BYTES = 256 * 1024 * 1024
_deep_lock = threading.Lock()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads_deep(text: str) -> Any:
    """Parse with the pure-Python scanner: its recursion is Python calls
    only (no C stack per level), bounded by the recursion limit."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except RecursionError:
        raise ValueError(f"JSON nested more than {DEEP_MAX_DEPTH} levels deep") from None


def _run_deep(fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn(*args)`` in a worker thread with a 256 MiB stack and the
    recursion limit raised to :data:`_DEEP_RECURSION_LIMIT`, and return its
    result (or raise its exception). Both process-wide settings are restored
    before returning; calls are serialized by a lock so that two deep calls
    never restore each other's settings."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    with _deep_lock:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            try:
                threading.stack_size(_DEEP_STACK_BYTES)
            except (ValueError, RuntimeError):  # platform refuses: use the default stack
                pass
            sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION_LIMIT))
            worker = threading.Thread(target=target, name="pi-session-deep-json", daemon=True)
            try:
                worker.start()
            finally:
                threading.stack_size(old_stack)
            worker.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def js_number(value: float) -> str:
    """Format a float the way JavaScript's ``Number.prototype.toString`` does.

    ``1.0`` becomes ``"1"``, ``1e-7`` becomes ``"1e-7"``, ``1e20`` becomes
    ``"100000000000000000000"``; NaN and infinities become ``"null"`` as in
    ``JSON.stringify``.
    """
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    if "e" in text:
        mantissa, exp_text = text.split("e")
        exponent = int(exp_text)
    else:
        mantissa, exponent = text, 0
    if "." in mantissa:
        int_part, frac_part = mantissa.split(".")
    else:
        int_part, frac_part = mantissa, ""
    if frac_part == "0":
        frac_part = ""
    digits = (int_part + frac_part).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    leading_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    n = len(int_part) - leading_zeros + exponent
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp_str = ("+" if e >= 0 else "-") + str(abs(e))
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + exp_str
    return sign + out


_SAFE_INT = 2**53


def js_int(value: int) -> str:
    """An integer as ``JSON.stringify`` writes the number ``JSON.parse`` made
    of it: exact within ±2**53, beyond that rounded to the nearest double
    (``9007199254740993`` → ``9007199254740992``, ``10**21`` → ``1e+21``)."""
    if -_SAFE_INT <= value <= _SAFE_INT:
        return int.__repr__(value)
    try:
        return js_number(float(value))
    except OverflowError:  # beyond the largest double: JavaScript's Infinity
        return "null"


# in orjson's compact output, every number token follows "[", ":" or ","
# and is followed by ",", "]" or "}", and every key follows "{" or ",":
# one scan finds every float token and every array-index key (group 1,
# group 2), the other every integer of 16 digits or more (and, now and
# then, text inside a string that looks like one: a false alarm only
# sends the value the slow way)
_JS_SUSPECTS = re.compile(rb'[\[:,{](?:(-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+))(?=[,\]}])|"(0|[1-9][0-9]{0,9})":)')
_LONG_INT_TOKEN = re.compile(rb"[\[:,]-?[0-9]{16,}(?=[,\]}])")


def _orjson_as_js(value: Any, *, exact_ints: bool, option: int = 0) -> bytes | None:
    """``orjson.dumps(value, option=option)`` when that is exactly what
    :func:`js_stringify` (``exact_ints``: :func:`dumps_line`) writes, else
    None (the caller takes the slow way).

    A scan of orjson's text instead of a walk of ``value`` (a walk in
    Python cost more than encoding a record): the text is taken when it
    holds no array-index key, no integer beyond 15 digits (unless
    ``exact_ints``) and every float in it is already written as
    :func:`js_number` writes it (``0.25``, ``1e-7``; not ``1.0``, ``-0.0``
    or ``1e16``). When the scan finds something (a bare scalar, or text in a
    string that only looks like a number), :func:`_needs_js_encoder` walks
    the value to decide."""
    try:
        out = orjson.dumps(value, option=option)
    except (TypeError, orjson.JSONEncodeError):
        return None
    if len(out) > _WALK_FIRST_BYTES:  # mostly long strings: fewer values to walk than bytes to scan
        return out if _walk_is_js(value, exact_ints) else None
    return out if _scan_is_js(out, exact_ints) or not _needs_js_encoder(value, exact_ints) else None


_WALK_FIRST_BYTES = 2048
"""Above this many bytes of orjson's text, :func:`_orjson_as_js` walks the
value instead of scanning the text (the same answer; the scan runs at
about 10 MB/s, the walk costs a few hundred nanoseconds per value and a
few microseconds per float)."""


def _walk_is_js(value: Any, exact_ints: bool) -> bool:
    """Whether orjson's text of ``value`` certainly is what the JavaScript
    rules write, found by a walk of the value: every float is written by
    orjson as :func:`js_number` writes it, no integer is beyond ±2**53
    (unless ``exact_ints``), no object has an array-index key. A container
    met twice is walked once."""
    stack = [value]
    seen: set[int] = set()
    dumps = orjson.dumps
    while stack:
        v = stack.pop()
        cls = v.__class__
        if cls is str:
            continue
        if isinstance(v, float):
            try:
                if dumps(v).decode("ascii") != js_number(v):
                    return False
            except (TypeError, orjson.JSONEncodeError):
                return False
        elif cls is int:
            if not exact_ints and not -_SAFE_INT <= v <= _SAFE_INT:
                return False
        elif isinstance(v, dict):
            if id(v) in seen:
                continue
            seen.add(id(v))
            for k in v:
                if k[:1].isdigit() and _is_array_index(k):
                    return False
            stack.extend(v.values())
        elif isinstance(v, list):
            if id(v) in seen:
                continue
            seen.add(id(v))
            stack.extend(v)
        elif isinstance(v, int) and not exact_ints and not isinstance(v, bool) and not -_SAFE_INT <= v <= _SAFE_INT:
            return False
    return True


def _scan_is_js(out: bytes, exact_ints: bool) -> bool:
    """Whether orjson's text ``out`` of an object or array certainly is
    what the JavaScript rules write (see :func:`_orjson_as_js`)."""
    if out[:1] not in (b"{", b"[") or (not exact_ints and _LONG_INT_TOKEN.search(out)):
        return False
    for token, key in _JS_SUSPECTS.findall(out):
        if key:
            return False
        text = token.decode("ascii")
        if js_number(float(text)) != text:
            return False
    return True


def _needs_js_encoder(value: Any, exact_ints: bool = False) -> bool:
    """True when orjson would write ``value`` differently from JSON.stringify:
    it holds a float (``1.0`` vs ``1``, exponent formats), an integer beyond
    ±2**53 (JavaScript rounds it; unless ``exact_ints``) or an object with
    array-index keys (JavaScript puts them first). A container met twice
    (shared, or a cycle, which the encoders then refuse) is walked once."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return True
        if not exact_ints and v.__class__ is int and not -_SAFE_INT <= v <= _SAFE_INT:
            return True
        if isinstance(v, dict):
            if id(v) in seen:
                continue
            seen.add(id(v))
            for k in v:
                if k[:1].isdigit() and _is_array_index(k):
                    return True
            stack.extend(v.values())
        elif isinstance(v, list):
            if id(v) in seen:
                continue
            seen.add(id(v))
            stack.extend(v)
    return False


def js_stringify(value: Any) -> str:
    """Serialize like ``JSON.stringify(value)``: compact, non-ASCII unescaped,
    integral floats written as integers, JavaScript number formatting.

    Args:
        value: a JSON-compatible value.

    Returns:
        The JSON text (str).
    """
    out = _orjson_as_js(value, exact_ints=False)
    return out.decode("utf-8") if out is not None else _stdlib_js(value, None)


_ARRAY_INDEX = re.compile(r"^(?:0|[1-9][0-9]{0,9})$")


def _is_array_index(key: Any) -> bool:
    return isinstance(key, str) and bool(_ARRAY_INDEX.match(key)) and int(key) < 4294967295


def js_key_order(value: Any) -> Any:
    """``value`` with object keys in the order a JavaScript object holds them:
    array-index keys (``"0"``, ``"12"``) first in ascending numeric order, then
    the other keys in insertion order. Returns ``value`` itself (no copy)
    where nothing needs reordering. Iterative (an explicit stack), so any
    nesting depth works.

    Raises:
        ValueError: ``value`` contains itself (a cycle).
    """
    if not isinstance(value, (dict, list)):
        return value

    active: set[int] = set()  # containers being walked: meeting one again is a cycle

    def start(v: Any, key: Any) -> list[Any] | None:
        # frame: [original, children iterator, rebuilt children, is_dict, key in parent]
        if not isinstance(v, (dict, list)):
            return None
        if id(v) in active:
            raise ValueError("Circular reference detected")
        active.add(id(v))
        if isinstance(v, dict):
            return [v, iter(v.items()), [], True, key]
        return [v, iter(v), [], False, key]

    def finish(frame: list[Any]) -> Any:
        orig, _, items, is_dict, _ = frame
        if not is_dict:
            return items if any(a is not b for a, b in zip(items, orig)) else orig
        changed = any(v is not orig[k] for k, v in items)
        if any(_is_array_index(k) for k, _ in items):
            index = sorted(((k, v) for k, v in items if _is_array_index(k)), key=lambda kv: int(kv[0]))
            items = index + [(k, v) for k, v in items if not _is_array_index(k)]
            changed = True
        return dict(items) if changed else orig

    stack: list[list[Any]] = [start(value, None)]  # type: ignore[list-item]
    while True:
        frame = stack[-1]
        try:
            item = next(frame[1])
        except StopIteration:
            stack.pop()
            active.discard(id(frame[0]))
            done = finish(frame)
            if not stack:
                return done
            parent = stack[-1]
            parent[2].append((frame[4], done) if parent[3] else done)
            continue
        key, child = item if frame[3] else (None, item)
        sub = start(child, key)
        if sub is not None:
            stack.append(sub)
        else:
            frame[2].append((key, child) if frame[3] else child)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_lone_surrogates(text: str) -> str:
    """Write lone surrogates as ``\\udXXX`` escapes, as the well-formed
    ``JSON.stringify`` does (a surrogate pair becomes its character), so the
    output always encodes to valid UTF-8."""
    if not _SURROGATE.search(text):
        return text
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")  # join pairs
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def js_stringify_by_rules(value: Any, *, exact_ints: bool = False) -> str:
    """:func:`js_stringify` (``exact_ints``: the text of :func:`dumps_line`,
    without its newline) always through the JavaScript-rules encoder,
    never taking orjson's text: the reference the fast way must equal
    (slower; tests compare the two).

    Raises:
        TypeError: a value JSON cannot hold.
        ValueError: a cycle.
    """
    return _stdlib_js(value, None, exact_ints=exact_ints)


def _stdlib_js(value: Any, indent: int | None, exact_ints: bool = False) -> str:
    """JSON.stringify-compatible text through the standard library's
    pure-Python encoder; values nested deeper than the recursion limit
    allows go to :func:`_encode_iterative` (same output, no recursion).
    ``exact_ints`` writes every digit of integers beyond ±2**53 (file
    writes: nothing read is lost) instead of JavaScript's rounding."""
    try:
        text = _stdlib_js_recursive(value, indent, exact_ints)
    except RecursionError:
        text = _encode_iterative(value, indent, exact_ints)
    return _escape_lone_surrogates(text)


def _stdlib_js_recursive(value: Any, indent: int | None, exact_ints: bool = False) -> str:
    separators = (",", ":") if indent is None else (",", ": ")
    value = js_key_order(value)
    # The pure-Python iterencode lets us format floats the JavaScript way.
    chunks = json.encoder._make_iterencode(  # type: ignore[attr-defined]
        {},
        _reject,
        json.encoder.py_encode_basestring,
        indent if indent is None else " " * indent,
        js_number,
        separators[1],
        separators[0],
        False,
        False,
        True,
        _intstr=int.__repr__ if exact_ints else js_int,
    )(value, 0)
    return "".join(chunks)


def _encode_iterative(value: Any, indent: int | None, exact_ints: bool = False) -> str:
    """The text :func:`_stdlib_js_recursive` writes, with an explicit stack
    instead of recursion, so any nesting depth works (JSON.stringify itself
    handles as deep as ``JSON.parse`` reads). Same key order (array-index
    keys first), number formatting, string escaping, indentation and errors
    (TypeError for values JSON cannot hold, ValueError for cycles)."""
    return "".join(_iter_encode(value, indent, exact_ints))


def _iter_encode(value: Any, indent: int | None, exact_ints: bool = False) -> Iterator[str]:
    """:func:`_encode_iterative`'s text in chunks. Every string of the
    value (key or value) lies whole inside one chunk, so lone surrogates can
    be escaped chunk by chunk. Lone surrogates are *not* escaped here."""
    encode_str = json.encoder.py_encode_basestring
    int_text = int.__repr__ if exact_ints else js_int
    pad = None if indent is None else " " * indent
    key_sep = ":" if indent is None else ": "
    active: set[int] = set()
    # frames: [iterator, is_dict, level, first, id, closing bracket]
    stack: list[list[Any]] = []

    def scalar_text(v: Any) -> str | None:
        """``null``/``true``/``false``/a number's text; None for anything else."""
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, int):
            return int_text(v)
        if isinstance(v, float):
            return js_number(v)
        return None

    def key_text(key: Any) -> str:
        if isinstance(key, str):
            return key
        text = scalar_text(key)
        if text is None:
            raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
        return text

    def begin(v: Any, level: int) -> str:
        """The text that starts ``v`` (all of it for a scalar or an empty
        container); a non-empty container gets a frame on the stack."""
        if isinstance(v, str):
            return encode_str(v)
        text = scalar_text(v)
        if text is not None:
            return text
        if isinstance(v, (list, tuple, dict)):
            if not v:
                return "{}" if isinstance(v, dict) else "[]"
            if id(v) in active:
                raise ValueError("Circular reference detected")
            active.add(id(v))
            if isinstance(v, dict):
                keys = list(v)
                index = sorted((k for k in keys if _is_array_index(k)), key=int)
                if index:
                    taken = set(index)
                    keys = index + [k for k in keys if k not in taken]
                stack.append([((k, v[k]) for k in keys), True, level + 1, True, id(v), "}"])
                return "{"
            stack.append([iter(v), False, level + 1, True, id(v), "]"])
            return "["
        return _reject(v)

    yield begin(value, 0)
    while stack:
        frame = stack[-1]
        try:
            item = next(frame[0])
        except StopIteration:
            stack.pop()
            active.discard(frame[4])
            yield frame[5] if pad is None else "\n" + pad * (frame[2] - 1) + frame[5]
            continue
        if frame[3]:
            frame[3] = False
            lead = ""
        else:
            lead = ","
        if pad is not None:
            lead += "\n" + pad * frame[2]
        if frame[1]:
            key, item = item
            lead += encode_str(key_text(key)) + key_sep
        yield lead + begin(item, frame[2])


def _reject(value: Any) -> Any:
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(value: Any) -> str:
    """Serialize one record as pi writes it (``JSON.stringify`` without
    indentation). Alias of :func:`js_stringify`."""
    return js_stringify(value)


def dumps_line(value: Any) -> bytes:
    """Serialize one record as a complete JSONL line (UTF-8, ending in ``\\n``),
    as ``JSON.stringify`` would, except that integers beyond ±2**53 keep
    every digit (pi would round them: a rewrite must not change data).

    Returns:
        The line as bytes.
    """
    out = _orjson_as_js(value, exact_ints=True, option=orjson.OPT_APPEND_NEWLINE)
    return out if out is not None else (_stdlib_js(value, None, exact_ints=True) + "\n").encode("utf-8")


def dumps_pretty(value: Any) -> str:
    """Serialize like ``JSON.stringify(value, null, 1)`` (the oracle's output
    format): one-space indentation, ``": "`` after keys. Same rules as
    :func:`js_stringify`: JavaScript number formatting (integers beyond
    ±2**53 rounded as ``JSON.parse`` rounds them), array-index keys first,
    lone surrogates written as ``\\udXXX`` escapes (the text always encodes
    as UTF-8), any nesting depth. ``"".join(iter_pretty(value))``.

    Raises:
        TypeError: a value JSON cannot hold; ValueError: a cycle.
    """
    return "".join(iter_pretty(value))


def dumps_readable(value: Any, *, slack: int = 4096) -> str:
    """:func:`dumps_pretty` for people to read (the HTML viewer, the
    browser's detail pane), unless its indentation would make the text more
    than 4 times the compact ``JSON.stringify`` text plus ``slack``
    characters: then the compact text. Indentation grows with the square of
    the nesting depth, so a 60 KB record nested 30,000 levels deep would
    otherwise become about 900 MB of text.

    Raises:
        TypeError / ValueError: as :func:`dumps_pretty`.
    """
    compact = "".join(iter_pretty(value, None))
    limit = 4 * len(compact) + slack
    parts: list[str] = []
    size = 0
    for chunk in iter_pretty(value):
        size += len(chunk)
        if size > limit:
            return compact
        parts.append(chunk)
    return "".join(parts)


def iter_pretty(value: Any, indent: int | None = 1) -> Iterator[str]:
    """The text of :func:`dumps_pretty` in chunks, produced iteratively
    (no recursion, memory for one chunk at a time besides the value), for
    output too large to hold twice. Every ``--json`` output of the CLI goes
    through this encoder (:func:`write_pretty`).

    Args:
        value: a JSON-compatible value.
        indent: spaces per level (``JSON.stringify(v, null, indent)``), or
            None for the compact ``JSON.stringify(v)`` layout.

    Raises:
        TypeError / ValueError: as :func:`dumps_pretty`, possibly after some
            chunks were produced.
    """
    for chunk in _iter_encode(value, indent):
        yield _escape_lone_surrogates(chunk)


def write_pretty(value: Any, stream: Any, *, indent: int | None = 1, chunk_chars: int = 1 << 20) -> None:
    """Write :func:`iter_pretty` ``(value, indent)`` (by default the text of
    :func:`dumps_pretty`) and a newline to the text ``stream``, about
    ``chunk_chars`` characters per ``write``, then flush. Never holds the
    whole text (a dry run of a large session lists most of its messages)."""
    buf: list[str] = []
    size = 0
    for chunk in iter_pretty(value, indent):
        buf.append(chunk)
        size += len(chunk)
        if size >= chunk_chars:
            stream.write("".join(buf))
            buf.clear()
            size = 0
    buf.append("\n")
    stream.write("".join(buf))
    stream.flush()


def js_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``.length``):
    characters outside the Basic Multilingual Plane count 2."""
    n = len(text)
    if text.isascii():
        return n
    return n + len(_ASTRAL.findall(text))
