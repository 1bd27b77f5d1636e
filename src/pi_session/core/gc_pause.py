"""Pausing Python's cyclic garbage collector around bulk allocations.

Reading a 100 MB session allocates about a million dicts and lists, none of
which can be garbage. With the collector running, each young-generation
collection walks every new container again, and the older generations walk
the whole growing heap: loading takes several times longer than the parsing
itself. :func:`gc_paused` switches the collector off for such a block and
afterwards moves what survived straight to the oldest generation (with
``gc.freeze()`` + ``gc.unfreeze()``, which relinks lists in O(1)), so the
next young collections do not walk it either. Nothing is frozen for good and
nothing escapes collection: the objects are simply treated as old.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused(*, promote: bool = True) -> Iterator[None]:
    """Disable the cyclic GC inside the block (re-enabled after it if it was
    enabled before).

    Args:
        promote: on exit, move every tracked object to the oldest generation
            (skipped when the program froze objects itself with
            ``gc.freeze()``, whose choice we must not undo).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if promote and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
