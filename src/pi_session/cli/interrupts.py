"""Recognising a Ctrl-C, however it reaches the entry point.

Imported before anything else of the command line, so it imports nothing.
"""

# no `from __future__ import annotations`: that imports the __future__ module,
# which start-up has not loaded, and a Ctrl-C landing in that import would
# show a traceback through this file before main() runs (the annotations
# here are valid at run time)


def interrupted_by(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C or was raised because of one.

    A KeyboardInterrupt that lands inside class creation or an import hook
    reaches us wrapped (e.g. ``RuntimeError: Error calling __set_name__``),
    so the cause and context chain is searched (at most 20 links)."""
    seen = 0
    link: BaseException | None = exc
    while link is not None and seen < 20:
        if isinstance(link, KeyboardInterrupt):
            return True
        link = link.__cause__ or link.__context__
        seen += 1
    return False
