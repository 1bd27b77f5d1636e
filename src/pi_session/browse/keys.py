"""The order in which the browser's screens list their keys (the footer
and the ``?`` panel): the screen's own keys first, then those the
browser's other parts declare (the entry list, the app), then Textual's
generic ones (a table's cursor keys, the command palette, focus keys)."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen


def _rank(namespace: Any, binding: Any, screen: Any) -> int:
    """0: a key the screen's class declares; 1: one another class of the
    browser declares; 2: any other (Textual's own classes declare it)."""
    declared = any(
        binding in klass.__dict__.get("BINDINGS", ())
        for klass in type(namespace).__mro__
        if klass.__module__.startswith("pi_session.")
    )
    if not declared:
        return 2
    return 0 if namespace is screen else 1


class OwnKeysFirst(Screen[None]):
    """A screen whose :attr:`active_bindings` (what Textual's footer and
    key panel list, in order) start with its own keys, then the keys the
    browser's other parts declare, then Textual's generic ones; within
    each, Textual's order."""

    @property
    def active_bindings(self) -> dict[str, Any]:
        bindings = super().active_bindings
        ordered = sorted(bindings.items(), key=lambda item: _rank(item[1][0], item[1][1], self))  # stable; (node, binding, ...)
        return dict(ordered)
