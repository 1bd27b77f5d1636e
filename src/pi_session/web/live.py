"""The live events' feed: one poller of the store for every open stream,
and the caps on open streams.

Every live stream (``GET /api/v1/sessions/{id}/events``) subscribes to
the :class:`LiveFeed` for its session. One task looks at the store every
``poll`` seconds while any stream is open, asking for the marks of every
watched session in one call (``store.session_marks``), and wakes the
streams of each session whose mark changed; a stream then reads what was
appended (the view of the session is kept per mark, so the streams of one
session share its read). The number of streams and sessions changes the
size of that one call, not the number of looks at the store.

At most ``per_client`` streams are open per client address (429 beyond)
and ``total`` in all (503 beyond), each refusal a one-line JSON error; a
stream's slot is freed when it ends (the client went away, or the server
stops).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from .data import ApiError, StoreAccess

__all__ = ["MAX_STREAMS", "MAX_STREAMS_PER_CLIENT", "LiveFeed", "Subscription"]

MAX_STREAMS_PER_CLIENT = 4
"""Default cap of open live streams per client address: a browser keeps
at most six connections to a server over HTTP/1.1, so four streams (four
session pages) leave it two for the pages and the API."""

MAX_STREAMS = 32
"""Default cap of open live streams in all."""


@dataclass(eq=False)
class Subscription:
    """One stream's watch of a session.

    Attributes:
        session_id: the session watched (full id).
        changed: set when the session's mark changed (or the feed closed).
        closed: the server is stopping: the stream ends.
    """

    session_id: str
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False


class LiveFeed:
    """The shared poller and the stream caps (see the module docstring).

    Args:
        access: the store.
        poll: seconds between two looks at the store.
        per_client: open streams allowed per client address.
        total: open streams allowed in all.
        stopping: returns True once the server shuts down (every stream
            is then woken and ends).
    """

    def __init__(self, access: StoreAccess, *, poll: float, per_client: int = MAX_STREAMS_PER_CLIENT, total: int = MAX_STREAMS,
                 stopping: Callable[[], bool] = lambda: False) -> None:
        self.access = access
        self.poll = poll
        self.per_client = per_client
        self.total = total
        self.stopping = stopping
        self._open: Counter[str] = Counter()
        self._subs: dict[str, set[Subscription]] = {}
        self._marks: dict[str, tuple[int, ...] | None] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def open_streams(self) -> int:
        """Streams open now."""
        return sum(self._open.values())

    def admit(self, client: str) -> Callable[[], None]:
        """Take a stream slot for ``client`` (an address); returns the
        function that frees it (call it once, when the stream ends).

        Raises:
            ApiError: 429 the client has :attr:`per_client` streams open;
                503 the server has :attr:`total`."""
        if self._open[client] >= self.per_client:
            raise ApiError(429, f"too many live streams from {client} ({self.per_client} open); close a session page and reload")
        if self.open_streams >= self.total:
            raise ApiError(503, f"too many live streams on this server ({self.total} open); try again later")
        self._open[client] += 1
        freed = False

        def release() -> None:
            nonlocal freed
            if not freed:
                freed = True
                self._open[client] -= 1
                if self._open[client] <= 0:
                    del self._open[client]

        return release

    def subscribe(self, session_id: str, mark: tuple[int, ...] | None) -> Subscription:
        """Watch ``session_id``, whose state the stream has read at
        ``mark``: woken when the store's mark differs (at once when the
        feed already saw another one)."""
        sub = Subscription(session_id)
        subs = self._subs.setdefault(session_id, set())
        if not subs:
            self._marks[session_id] = mark
        elif self._marks.get(session_id) != mark:
            sub.changed.set()
        subs.add(sub)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="pi-session-live-feed")
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop watching (the poller stops with the last stream)."""
        subs = self._subs.get(sub.session_id)
        if subs is None:
            return
        subs.discard(sub)
        if not subs:
            del self._subs[sub.session_id]
            self._marks.pop(sub.session_id, None)

    async def _run(self) -> None:
        while self._subs:
            await asyncio.sleep(self.poll)
            if self.stopping():
                for subs in self._subs.values():
                    for sub in subs:
                        sub.closed = True
                        sub.changed.set()
                return
            watched = list(self._subs)
            if not watched:
                return
            try:
                marks: dict[str, Any] = await run_in_threadpool(self.access.marks, watched)
            except ApiError:
                continue  # the store failed this time; the next tick looks again
            for sid in watched:
                now = marks.get(sid)
                if now is None or sid not in self._subs or now == self._marks.get(sid):
                    continue
                self._marks[sid] = now
                for sub in self._subs[sid]:
                    sub.changed.set()
