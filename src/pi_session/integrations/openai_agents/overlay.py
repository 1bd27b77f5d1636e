"""Overlays: what a pi message or block cannot hold of the item it came
from (**beyond pi**; used by :mod:`.convert`).

An overlay ``{"set": {key: value}, "omit": [key], "sub": {key: overlay |
{"items": [overlay | None]}}}`` turns the item rendered from the pi form
back into the item that was added. It holds only what differs, member by
member, so a field the pi form lacks (an item id, ``status``, ``logprobs``
of an output text) is stored without storing the text again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONTENT_KEYS = ("content", "output", "arguments", "summary")
"""Overlay keys not applied to a message whose content a context edit replaced."""


def make_overlay(item: Mapping[str, Any], rebuilt: Mapping[str, Any]) -> dict[str, Any] | None:
    """What turns ``rebuilt`` back into ``item``: ``{"set": {key: value},
    "omit": [key], "sub": {key: overlay | {"items": [overlay | None]}}}``
    (each part only when non-empty). Objects, and lists of objects of the
    same length, are compared member by member, so one differing field
    (e.g. ``logprobs`` of an output text) does not store the whole text again."""
    sets: dict[str, Any] = {}
    sub: dict[str, Any] = {}
    for key, value in item.items():
        if key not in rebuilt:
            sets[key] = value
            continue
        other = rebuilt[key]
        if other == value:
            continue
        if isinstance(value, Mapping) and isinstance(other, Mapping):
            sub[key] = make_overlay(value, other) or {}
        elif (
            isinstance(value, list)
            and isinstance(other, list)
            and len(value) == len(other)
            and all(isinstance(a, Mapping) and isinstance(b, Mapping) for a, b in zip(value, other))
        ):
            sub[key] = {"items": [make_overlay(a, b) for a, b in zip(value, other)]}
        else:
            sets[key] = value
    omit = [k for k in rebuilt if k not in item]
    out: dict[str, Any] = {}
    if sets:
        out["set"] = sets
    if omit:
        out["omit"] = omit
    if sub:
        out["sub"] = sub
    return out or None


def apply_overlay(rebuilt: dict[str, Any], overlay: Any, *, edited: bool = False) -> dict[str, Any]:
    """Apply an :func:`make_overlay` to ``rebuilt`` (in place; returned). With
    ``edited`` (a context edit replaced the content), the content keys
    (:data:`CONTENT_KEYS`) keep the edited value."""
    if not isinstance(overlay, Mapping):
        return rebuilt
    sets = overlay.get("set")
    if isinstance(sets, Mapping):
        for k, v in sets.items():
            if not (edited and k in CONTENT_KEYS):
                rebuilt[k] = v
    omit = overlay.get("omit")
    if isinstance(omit, list):
        for k in omit:
            if isinstance(k, str) and not (edited and k in CONTENT_KEYS):
                rebuilt.pop(k, None)
    sub = overlay.get("sub")
    if isinstance(sub, Mapping):
        for k, inner in sub.items():
            if edited and k in CONTENT_KEYS:
                continue
            value = rebuilt.get(k)
            if isinstance(value, dict):
                apply_overlay(value, inner)
            elif isinstance(value, list) and isinstance(inner, Mapping) and isinstance(inner.get("items"), list):
                for element, element_overlay in zip(value, inner["items"]):
                    if isinstance(element, dict):
                        apply_overlay(element, element_overlay)
    return rebuilt
