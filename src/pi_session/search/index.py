"""What a store's search index does (:class:`SearchIndex`), whatever the
store: :meth:`pi_session.stores.SessionStore.search_index` gives one. Two
kinds: :class:`FileSearchIndex`, the cache-file index of a store of session
files (:mod:`.files`), and :class:`~.store_index.SQLSearchIndex`, the
tables inside a database store (:mod:`.store_index`). Importing this module
registers both with the stores (:func:`pi_session.stores.base.register_search_index`),
which import nothing of search."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Protocol, TypeVar

from ..stores.base import SessionStore, register_search_index
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
        store: the store (its :attr:`~pi_session.stores.SessionStore.files_root`
            is set).
    """

    def __init__(self, store: SessionStore) -> None:
        root = store.files_root
        if root is None:
            raise ValueError(f"{store.url}: not a store of session files")
        self.store = store
        self.index = FileIndex(root)

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
            directory = self.store.session_dir(project)
            scope = self.index.sids_under(directory) if directory is not None else []
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


def _files(store: SessionStore) -> SearchIndex | None:
    return FileSearchIndex(store) if store.files_root is not None else None


def _database(store: SessionStore) -> SearchIndex | None:
    return SQLSearchIndex(store) if isinstance(store, SQLStore) else None


def index_for(store: SessionStore) -> SearchIndex:
    """:meth:`~pi_session.stores.SessionStore.search_index` of ``store``
    (this module's indexes registered first)."""
    return store.search_index()


register_search_index(_database)
register_search_index(_files)
