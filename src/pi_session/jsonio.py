"""JSON encoding and decoding with JavaScript's rules.

pi writes session files with ``JSON.stringify`` and measures tool-call arguments
by the length of ``JSON.stringify(arguments)`` in UTF-16 code units. This module
reproduces both on top of orjson (fast path) and the standard library (fallback
for inputs orjson refuses but ``JSON.parse`` accepts, such as lone surrogate
escapes or integers wider than 64 bits).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

__all__ = [
    "loads",
    "dumps",
    "dumps_line",
    "dumps_pretty",
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
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        # JSON.parse accepts lone surrogate escapes and big integers; orjson
        # does not. The standard library does both.
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data).decode("utf-8", errors="surrogateescape")
        value = json.loads(data)
        return value


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


def _needs_js_encoder(value: Any) -> bool:
    """True when orjson would write ``value`` differently from JSON.stringify:
    it holds a float (``1.0`` vs ``1``, exponent formats) or an object with
    array-index keys (JavaScript puts them first)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return True
        if isinstance(v, dict):
            for k in v:
                if k[:1].isdigit() and _is_array_index(k):
                    return True
            stack.extend(v.values())
        elif isinstance(v, list):
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
    if _needs_js_encoder(value):
        return _stdlib_js(value, None)
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return _stdlib_js(value, None)


_ARRAY_INDEX = re.compile(r"^(?:0|[1-9][0-9]{0,9})$")


def _is_array_index(key: Any) -> bool:
    return isinstance(key, str) and bool(_ARRAY_INDEX.match(key)) and int(key) < 4294967295


def js_key_order(value: Any) -> Any:
    """``value`` with object keys in the order a JavaScript object holds them:
    array-index keys (``"0"``, ``"12"``) first in ascending numeric order, then
    the other keys in insertion order. Returns ``value`` itself (no copy)
    where nothing needs reordering."""
    if isinstance(value, dict):
        items = [(k, js_key_order(v)) for k, v in value.items()]
        changed = any(v is not value[k] for k, v in items)
        if any(_is_array_index(k) for k, _ in items):
            index = sorted(((k, v) for k, v in items if _is_array_index(k)), key=lambda kv: int(kv[0]))
            items = index + [(k, v) for k, v in items if not _is_array_index(k)]
            changed = True
        return dict(items) if changed else value
    if isinstance(value, list):
        items = [js_key_order(v) for v in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


def _stdlib_js(value: Any, indent: int | None) -> str:
    separators = (",", ":") if indent is None else (",", ": ")
    value = js_key_order(value)
    # The pure-Python iterencode lets us format floats the JavaScript way.
    chunks = json.encoder._make_iterencode(  # type: ignore[attr-defined]
        {},
        _reject,
        json.encoder.py_encode_basestring,  # type: ignore[attr-defined]
        indent if indent is None else " " * indent,
        js_number,
        separators[1],
        separators[0],
        False,
        False,
        True,
    )(value, 0)
    return "".join(chunks)


def _reject(value: Any) -> Any:
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(value: Any) -> str:
    """Serialize one record as pi writes it (``JSON.stringify`` without
    indentation). Alias of :func:`js_stringify`."""
    return js_stringify(value)


def dumps_line(value: Any) -> bytes:
    """Serialize one record as a complete JSONL line (UTF-8, ending in ``\\n``).

    Returns:
        The line as bytes.
    """
    if not _needs_js_encoder(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
        except (TypeError, orjson.JSONEncodeError):
            pass
    return (_stdlib_js(value, None) + "\n").encode("utf-8", errors="surrogatepass")


def dumps_pretty(value: Any) -> str:
    """Serialize like ``JSON.stringify(value, null, 1)`` (the oracle's output
    format): one-space indentation, ``": "`` after keys."""
    return _stdlib_js(value, 1)


def js_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``.length``):
    characters outside the Basic Multilingual Plane count 2."""
    n = len(text)
    if text.isascii():
        return n
    return n + len(_ASTRAL.findall(text))
