"""What a store's search index does (:class:`SearchIndex`), whatever the
store: :func:`index_for` gives one, chosen by the capabilities the store
declares (:class:`pi_session.stores.StoreCapability`). Two kinds:
:class:`FileSearchIndex`, the cache-file index of a store of session files
(FILES), and :class:`~.store_index.SQLSearchIndex`, the tables inside a
database store (SQL). The stores import nothing of search."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Protocol, TypeVar, cast

from ..stores.base import CapabilityError, SessionStore
from ..stores.capabilities import StoreCapability
from ..stores.sql import SQLStore
from .files import FileIndex, IndexStats
from .fts import Candidate
from .query import Query
from .store_index import SQLSearchIndex

__all__ = ["SearchIndex", "FileSearchIndex", "index_for"]

T = TypeVar("T")


class SearchIndex(Protocol):
    """A store's full-text index.

    Attributes:
        warnings: one-line messages (a damaged index that was rebuilt).
        rebuilt: a damaged index was started again: it must be updated
            before it is queried (even when the caller asked for no update).
    """

    @property
    def warnings(self) -> list[str]: ...

    @property
    def rebuilt(self) -> bool: ...

    def update(self, on_progress: Callable[[int, int], Any] | None = None) -> IndexStats | None:
        """Bring the index up to date with the store (files: what changed
        since the last update, ``on_progress(done, total)`` after each file;
        databases: sessions written without the index's write hook).

        Returns:
            :class:`~.files.IndexStats` (files), or None.
        """
        ...

    def candidates(
        self, query: Query, *, include_edited: bool = False, thinking: bool = False, project: str | None = None,
        limit: int | None = None,
    ) -> Generator[Candidate, None, None]:
        """The documents matching ``query``, best first, with their texts
        (``body``; ``thinking`` when asked) and ``location`` (the session
        file, or the store's locator); ``project``: only the sessions of
        this resolved cwd; ``limit``: a hint, the caller stops reading.
        The iterator is a generator (closed by the caller)."""
        ...

    def guarded(self, work: Callable[[], T]) -> T:
        """Run ``work`` (which uses the index); when the index turns out
        damaged, rebuild it once and run ``work`` again."""
        ...

    def forget(self, session_id: str) -> bool:
        """Drop every document of a session, leaving no token of it
        (files: indexed again by the next update; databases: at once from
        its stored lines). True when the index held it."""
        ...

    def reindex(self, session_id: str) -> bool:
        """Forget a session and index its current lines at once. True when
        it exists."""
        ...

    def close(self) -> None:
        """Release the index's connections."""
        ...


class FileSearchIndex:
    """The :class:`SearchIndex` of a store of session files: the cache
    index of its root (:class:`~.files.FileIndex`).

    Args:
        store: a store declaring :attr:`~pi_session.stores.StoreCapability.FILES`.

    Raises:
        CapabilityError: the store does not declare FILES.
    """

    def __init__(self, store: SessionStore) -> None:
        store.require(StoreCapability.FILES, "be searched through a cache index of its files")
        self.store = store
        self.index = FileIndex(store.files_root)

    @property
    def warnings(self) -> list[str]:
        return self.index.warnings

    @property
    def rebuilt(self) -> bool:
        return self.index.rebuilt

    def update(self, on_progress: Callable[[int, int], Any] | None = None) -> IndexStats | None:
        return self.index.update(on_progress)

    def candidates(
        self, query: Query, *, include_edited: bool = False, thinking: bool = False, project: str | None = None,
        limit: int | None = None,
    ) -> Generator[Candidate, None, None]:
        scope = None
        if project is not None:
            # a store of files keeps a project's files in a directory of its own
            scope = self.index.sids_under(self.store.session_dir(project))
        found = self.index.candidates(query, p="", include_edited=include_edited, thinking=thinking, sids=scope, limit=limit)
        for c in self.index.with_texts(found, thinking=thinking):
            c.location = c.location or c.sid
            yield c

    def guarded(self, work: Callable[[], T]) -> T:
        result: T = self.index.guarded(work)
        return result

    def forget(self, session_id: str) -> bool:
        return bool(self.index.forget(session_id))

    def reindex(self, session_id: str) -> bool:
        found = self.forget(session_id)
        self.index.update()
        return found

    def close(self) -> None:
        self.index.close()


def index_for(store: SessionStore) -> SearchIndex:
    """The full-text search index of ``store`` (the caller closes it), by
    what the store declares: SEARCH with FILES, the cache index of its
    sessions root; SEARCH with SQL, the tables inside its database, kept
    up to date in each write's transaction.

    Raises:
        CapabilityError: the store does not declare SEARCH (nor FILES or
            SQL with it).
    """
    store.require(StoreCapability.SEARCH, "be searched")
    if store.can(StoreCapability.FILES):
        return FileSearchIndex(store)
    if store.can(StoreCapability.SQL):
        return SQLSearchIndex(cast(SQLStore, store))
    raise CapabilityError(store.url, StoreCapability.FILES | StoreCapability.SQL, "be searched (SEARCH needs FILES or SQL)")
