"""What a session store can do, declared (:class:`StoreCapability`), never
found out by its class or by a method that answers None.

Every store states its capabilities in
:attr:`pi_session.stores.SessionStore.capabilities`; a caller asks
``store.can(StoreCapability.FILES)`` before using what the capability
names, and a store asked for something it does not declare raises
:class:`pi_session.stores.CapabilityError` (one line naming the store and
the capability).
"""

from __future__ import annotations

import enum

__all__ = ["StoreCapability"]


class StoreCapability(enum.Flag):
    """One thing a store can do beyond the interface every store has
    (create, append, read, list, find, delete, replace lines).

    Members:
        FILES: sessions are pi's session files under a sessions root:
            ``files_root``, ``session_dir(cwd)`` and ``path_of(id)`` give
            paths, sessions are named by their file paths, and a
            ``SessionManager`` given the store works on the files as
            without one. Without it the store is a database: sessions are
            named by ``locator(id)``.
        BLOBS: ``put_blobs``, ``get_blob`` and ``drop_blobs`` keep the
            payloads ``slim`` moves out of sessions inside the store (a
            store of files keeps them as files beside its sessions).
        MARKS: ``session_marks(ids)`` gives a mark of each session's state
            that any write changes (live updates, import state).
        SQL: statements run through ``transaction(write=)`` and write
            hooks (``add_write_hook``) run inside every write's
            transaction (:class:`pi_session.stores.sql.SQLStore`): what the
            search index inside a database needs.
        SEARCH: ``pi_session.search`` can search the store: a cache index
            beside its files (with FILES) or tables in its database (with
            SQL).
    """

    NONE = 0
    FILES = enum.auto()
    BLOBS = enum.auto()
    MARKS = enum.auto()
    SQL = enum.auto()
    SEARCH = enum.auto()

