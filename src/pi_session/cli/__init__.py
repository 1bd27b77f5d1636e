"""The ``pi-session`` command line (SPEC 11)."""

from .app import app, main

__all__ = ["app", "main"]
