"""Checks the three validators share (**beyond pi**).

Owns: reading the list and system prompt out of a payload, and the rules
common to all providers' payloads: the payload list, items being objects,
provider-safe unique call ids, non-blank names and text, text parts, OpenAI
argument JSON text, image data URLs, and lone UTF-16 surrogates in any
string (also inside ``arguments`` JSON text). Each check appends one line
per problem to the caller's ``problems`` list. Used by
:mod:`pi_session.adapters.validate`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.text import find_lone_surrogates
from .canonical import SUPPORTED_IMAGE_TYPES, AdapterResult

_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def payload_list(payload: Any, key: str) -> Any:
    """The list a payload carries: an :class:`AdapterResult`'s ``input`` or
    ``messages``, a dict's ``key``, else the payload itself (unchecked)."""
    if isinstance(payload, AdapterResult):
        return payload.input if key == "input" else payload.messages
    if isinstance(payload, Mapping):
        return payload.get(key)
    return payload


def _is_json_object_text(s: Any) -> bool:
    if not isinstance(s, str):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except ValueError:
        return False


def _unicode_problems(value: Any, path: str, problems: list[str]) -> None:
    """One line per string of ``value`` holding lone UTF-16 surrogates
    (JSON text in tool-call ``arguments`` strings is parsed and checked too:
    a ``\\ud83d`` escape there decodes to one)."""
    grouped: dict[str, list[tuple[int, str]]] = {}
    for where, index, code in find_lone_surrogates(value, path):
        grouped.setdefault(where, []).append((index, code))
    for where, found in grouped.items():
        index, code = found[0]
        problems.append(
            f"{where}: {len(found)} lone UTF-16 surrogate(s) (first {code} at character {index}); "
            "not valid Unicode, the SDKs cannot encode it"
        )
    for where, text in _argument_texts(value, path):
        if "\\u" in text:
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            decoded = find_lone_surrogates(parsed)
            if decoded:
                problems.append(
                    f"{where}: the JSON text decodes to {len(decoded)} lone UTF-16 surrogate(s) "
                    f"(first {decoded[0][2]}); not valid Unicode"
                )


def _argument_texts(value: Any, path: str) -> Iterable[tuple[str, str]]:
    """(path, text) of every string under an ``arguments`` key."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, Mapping):
            for k, item in v.items():
                sub = f"{where}.{k}" if where else str(k)
                if k == "arguments" and isinstance(item, str):
                    yield sub, item
                else:
                    stack.append((sub, item))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(v))


def nonblank(s: Any) -> bool:
    """True for a string with a non-whitespace character."""
    return isinstance(s, str) and bool(s.strip())


def check_data_url(url: Any, where: str, problems: list[str]) -> None:
    """An image URL: a base64 data URL of a supported type, or http(s)."""
    if not isinstance(url, str) or not url:
        problems.append(f"{where}: image url missing")
        return
    if url.startswith("data:"):
        m = re.match(r"^data:([^;,]+);base64,(.+)$", url, re.S)
        if not m:
            problems.append(f"{where}: malformed data URL")
        elif m.group(1) not in SUPPORTED_IMAGE_TYPES:
            problems.append(f"{where}: unsupported image type {m.group(1)}")
    elif not url.startswith(("http://", "https://")):
        problems.append(f"{where}: image url is neither a data URL nor http(s)")


# --------------------------------------------------------------------------
# Checks shared by the three validators. Each appends one line per problem
# to ``problems`` (``where`` names the offending item, e.g. ``input[3]``).
# --------------------------------------------------------------------------


def check_list(items: Any, key: str, allow_empty: bool, problems: list[str]) -> bool:
    """The payload's message/item list: ``{key}: not a list`` (returns False,
    the validator stops there) or, when ``allow_empty`` is False,
    ``{key}: empty``. Returns True when ``items`` is a list."""
    if not isinstance(items, list):
        problems.append(f"{key}: not a list")
        return False
    if not items and not allow_empty:
        problems.append(f"{key}: empty")
    return True


def check_object(item: Any, where: str, problems: list[str]) -> bool:
    """An item of the list must be an object; returns whether it is."""
    if not isinstance(item, Mapping):
        problems.append(f"{where}: not an object")
        return False
    return True


def check_unique_safe_id(cid: Any, where: str, label: str, seen: set[str], problems: list[str]) -> bool:
    """A call id made of ``[A-Za-z0-9_-]``, 1 to 64 characters, not in
    ``seen``. Returns True (and adds it to ``seen``) for a new valid id."""
    if not isinstance(cid, str) or not _SAFE_ID.match(cid) or len(cid) > 64:
        problems.append(f"{where}: {label} must match [A-Za-z0-9_-]{{1,64}}")
        return False
    if cid in seen:
        problems.append(f"{where}: duplicate {label} {cid}")
        return False
    seen.add(cid)
    return True


def check_nonblank(text: Any, where: str, what: str, problems: list[str]) -> bool:
    """``text`` must be a string with a non-whitespace character
    (``{where}: {what}`` otherwise); returns whether it is."""
    if not nonblank(text):
        problems.append(f"{where}: {what}")
        return False
    return True


def check_answer(
    call_id: Any, calls: Iterable[Any], answered: set[Any], problems: list[str], *, unknown: str, second: str
) -> None:
    """A tool result for ``call_id``: it must answer one of ``calls`` (else the
    ``unknown`` line) and only once (else the ``second`` line); a valid answer
    is added to ``answered``."""
    if call_id not in calls:
        problems.append(unknown)
    elif call_id in answered:
        problems.append(second)
    else:
        answered.add(call_id)


def check_text(text: Any, where: str, problems: list[str]) -> None:
    """A text part's ``text`` must be a string."""
    if not isinstance(text, str):
        problems.append(f"{where}: text missing")


def check_arguments_text(arguments: Any, where: str, problems: list[str]) -> None:
    """OpenAI call arguments must be a JSON object encoded as a string."""
    if not _is_json_object_text(arguments):
        problems.append(f"{where}: arguments must be a JSON object encoded as a string")


def payload_system(payload: Any, key: str) -> Any:
    """The system prompt a payload carries: an :class:`AdapterResult`'s
    ``system``, a dict's ``key`` (``instructions`` / ``system``), else None."""
    if isinstance(payload, AdapterResult):
        return payload.system
    return payload.get(key) if isinstance(payload, Mapping) else None


def check_unicode(problems: list[str], *parts: tuple[Any, str]) -> None:
    """Lone UTF-16 surrogates in each ``(value, path)`` whose value is not None."""
    for value, path in parts:
        if value is not None:
            _unicode_problems(value, path, problems)
