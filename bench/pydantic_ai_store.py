"""Benchmark ``PiConversationStore`` (Pydantic AI conversations as pi
sessions) on files, SQLite and PostgreSQL beside Pydantic AI's own
``InMemoryConversationStore``, on conversations of 10, 1,000 and 10,000
messages.

Measured (medians over ``--reps``, in this process; the conversation is
first stored whole, untimed, then saved to twice untimed):

- ``save one turn``: a conversation loaded by the store, one run's two
  messages added, ``store.save(conversation)`` (the usual load, run, save
  flow: the save itself), and of it the time spent in the store's own
  ``read_record`` and ``write_record`` (the rest is Pydantic AI's
  ``ConversationStore.save``, which checks every message it is given);
- ``save one turn, fresh store``: the same save by a store object that has
  read nothing of the conversation yet (another worker, say);
- ``load``: ``store.load(id)`` by a fresh store object (every message
  read and validated).

The check the table ends with: the store's own work in a save of one turn
onto 10,000 messages takes at most 3× that onto 10, on every pi-session
store (``--check`` exits 1 otherwise); the ratios of whole saves are shown
beside it.

The OpenAI Agents SDK's ``SQLiteSession`` (a file database) is measured
beside them as another agent framework's durable history: a turn is its
``add_items`` of two items (all of it the store's own work), a load its
``get_items`` by a fresh session object.

PostgreSQL: ``PI_SESSION_TEST_POSTGRES``, else a private throw-away
cluster (``tests/postgres_cluster.py``); a new database, dropped at the
end.

Usage::

    python bench/pydantic_ai_store.py                    # writes bench/results/pydantic-ai.md and .json
    python bench/pydantic_ai_store.py --sizes 10 100 --reps 3 --out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (ROOT / "src", ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pydantic_ai.conversation import Conversation  # noqa: E402
from pydantic_ai.conversation_store import ConversationStore, InMemoryConversationStore  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

from pi_session.integrations.pydantic_ai import PiConversationStore  # noqa: E402

KINDS = ("memory", "agents-sqlite", "file", "sqlite", "postgresql")
LABELS = {"memory": "in memory (Pydantic AI)", "agents-sqlite": "Agents SDK SQLiteSession", "file": "files", "sqlite": "SQLite",
          "postgresql": "PostgreSQL"}
LIMIT = 3.0


def messages(count: int, start: int = 0) -> list[ModelMessage]:
    """``count`` messages of runs like a chat's: a prompt, a tool call, its
    result, an answer (about 300 bytes of text each)."""
    out: list[ModelMessage] = []
    n = start
    while len(out) < count:
        kind = n % 4
        text = f"message {n}: " + "lorem ipsum dolor sit amet " * 10
        if kind == 0:
            out.append(ModelRequest(parts=[UserPromptPart(text)], instructions="Answer briefly."))
        elif kind == 1:
            out.append(ModelResponse(parts=[TextPart(text), ToolCallPart("lookup", {"q": text[:40]}, tool_call_id=f"c{n}")],
                                     usage=RequestUsage(input_tokens=100, output_tokens=20), model_name="m"))
        elif kind == 2:
            out.append(ModelRequest(parts=[ToolReturnPart("lookup", text, tool_call_id=f"c{n - 1}")], instructions="Answer briefly."))
        else:
            out.append(ModelResponse(parts=[TextPart(text)], usage=RequestUsage(input_tokens=120, output_tokens=30), model_name="m"))
        n += 1
    return out


def timed(make: Callable[[], Awaitable[Any]]) -> float:
    """Milliseconds one awaited call takes."""
    loop = asyncio.get_event_loop()
    t = time.perf_counter()
    loop.run_until_complete(make())
    return (time.perf_counter() - t) * 1000


def instrument(store: ConversationStore) -> list[float]:
    """Time the store's own primitives (``read_record``, ``write_record``)
    while a save runs: ``[seconds]``, added to on every call."""
    spent = [0.0]
    for name in ("read_record", "write_record"):
        real = getattr(store, name)

        async def timed_call(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return await _real(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t

        setattr(store, name, timed_call)
    return spent


def measure(kind: str, url: str | None, sizes: list[int], reps: int) -> dict[int, dict[str, float]]:
    """The medians of one store kind at every size. The sizes take turns
    round by round, so what else the machine does meanwhile (other
    processes' disk writes, which a file's fdatasync waits for) falls on
    every size alike."""
    loop = asyncio.get_event_loop()
    memory = InMemoryConversationStore() if kind == "memory" else None

    def new_store() -> ConversationStore:
        return memory if memory is not None else PiConversationStore(url, cwd="/work/bench")

    stores: dict[int, ConversationStore] = {}
    spent: dict[int, list[float]] = {}
    samples: dict[int, dict[str, list[float]]] = {size: {"save": [], "save_own": [], "save_fresh": [], "load": []} for size in sizes}
    for size in sizes:
        stores[size] = new_store()
        spent[size] = instrument(stores[size])
        loop.run_until_complete(stores[size].save(Conversation(conversation_id=f"bench-{size}", messages=messages(size))))
    for rep in range(-2, reps):  # two untimed rounds first (a database settles after the bulk load)
        for size in sizes:
            cid, store = f"bench-{size}", stores[size]
            conversation = loop.run_until_complete(store.load(cid))
            assert conversation is not None
            conversation.messages.extend(messages(2, start=size + 4 * (rep + 2)))
            spent[size][0] = 0.0
            save = timed(lambda: store.save(conversation))
            primitives = spent[size][0] * 1000
            conversation = loop.run_until_complete(new_store().load(cid))
            assert conversation is not None
            conversation.messages.extend(messages(2, start=size + 4 * (rep + 2) + 2))
            other = new_store()
            save_fresh = timed(lambda: other.save(conversation))
            reader = new_store()
            load = timed(lambda: reader.load(cid))
            if rep >= 0:
                for what, value in (("save", save), ("save_own", primitives), ("save_fresh", save_fresh), ("load", load)):
                    samples[size][what].append(value)
    return {size: {what: statistics.median(values) for what, values in taken.items()} for size, taken in samples.items()}


def measure_agents_sqlite(path: str, sizes: list[int], reps: int) -> dict[int, dict[str, float]]:
    """The same medians for the Agents SDK's ``SQLiteSession`` in the file
    ``path``: saves are ``add_items`` of a turn's two items (``save_own``
    is the same time: the session does nothing else), loads
    ``get_items`` by a fresh session object."""
    from agents import SQLiteSession

    loop = asyncio.get_event_loop()

    def items(count: int, start: int = 0) -> list[Any]:
        return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {start + i}: " + "words " * 20}
                for i in range(count)]

    sessions = {size: SQLiteSession(f"bench-{size}", path) for size in sizes}
    for size in sizes:
        loop.run_until_complete(sessions[size].add_items(items(size)))
    samples: dict[int, dict[str, list[float]]] = {size: {"save": [], "save_fresh": [], "load": []} for size in sizes}
    for rep in range(-2, reps):
        for size in sizes:
            session = sessions[size]
            save = timed(lambda: session.add_items(items(2, start=size + 4 * (rep + 2))))
            other = SQLiteSession(f"bench-{size}", path)
            save_fresh = timed(lambda: other.add_items(items(2, start=size + 4 * (rep + 2) + 2)))
            other.close()
            reader = SQLiteSession(f"bench-{size}", path)
            load = timed(lambda: reader.get_items())
            reader.close()
            if rep >= 0:
                for what, value in (("save", save), ("save_fresh", save_fresh), ("load", load)):
                    samples[size][what].append(value)
    for session in sessions.values():
        session.close()
    medians = {size: {what: statistics.median(values) for what, values in taken.items()} for size, taken in samples.items()}
    for taken in medians.values():
        taken["save_own"] = taken["save"]
    return medians


def fmt(ms: float) -> str:
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def table(results: dict[str, dict[int, dict[str, float]]], sizes: list[int], note: str) -> tuple[str, bool]:
    kinds = [k for k in KINDS if k in results]
    rows = ["| operation (ms, median) | messages | " + " | ".join(LABELS[k] for k in kinds) + " |", "|---|---|" + "---|" * len(kinds)]
    for what, label in (
        ("save", "save one turn"),
        ("save_own", "&nbsp;&nbsp;of which the store's reads and writes"),
        ("save_fresh", "save one turn, fresh store"),
        ("load", "load, fresh store"),
    ):
        for size in sizes:
            rows.append(f"| {label} | {size:,} | " + " | ".join(fmt(results[k][size][what]) for k in kinds) + " |")
    small, large = min(sizes), max(sizes)
    ok = True
    lines = []
    for what, label in (("save_own", "the store's reads and writes in a save"), ("save", "a whole save"), ("save_fresh", "a whole save by a fresh store")):
        ratios = []
        for k in kinds:
            ratio = results[k][large][what] / results[k][small][what]
            ratios.append(f"{LABELS[k]} {ratio:.2f}×")
            if what == "save_own" and k not in ("memory", "agents-sqlite"):
                ok = ok and ratio <= LIMIT
        lines.append(f"- {label}: " + ", ".join(ratios))
    verdict = "yes" if ok else "no"
    text = "\n".join(rows) + "\n\n" + note + "\n\n" + (
        f"One turn saved onto {large:,} messages, over onto {small:,}:\n" + "\n".join(lines) + "\n\n"
        f"The store's own work within {LIMIT:g}× on every pi-session store: {verdict}. "
        "A whole save also holds Pydantic AI's own `ConversationStore.save`, which checks every message of the "
        "conversation it is given (the in-memory column: that alone) and the thread hand-offs.\n"
    )
    return text, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 10000], help="conversation sizes in messages")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per measurement (median)")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "pydantic-ai.md")
    ap.add_argument("--json", type=Path, default=None, help="raw results (default: beside --out, .json)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a save onto the largest size takes over 3× one onto the smallest")
    args = ap.parse_args()
    asyncio.set_event_loop(asyncio.new_event_loop())
    results: dict[str, dict[int, dict[str, float]]] = {}
    postgres = server = None
    with tempfile.TemporaryDirectory(prefix="pi-session-bench-pydantic-ai-") as tmp:
        urls = {"memory": None, "agents-sqlite": str(Path(tmp) / "agents.db"), "file": str(Path(tmp) / "sessions"),
                "sqlite": f"sqlite:///{tmp}/chats.db"}
        if "postgresql" in args.kinds:
            import postgres_cluster  # type: ignore[import-not-found]

            server = postgres_cluster.start()
            postgres = server.create_database()
            urls["postgresql"] = postgres
        try:
            for kind in args.kinds:
                url = urls[kind]
                if kind == "agents-sqlite":
                    assert url is not None
                    results[kind] = measure_agents_sqlite(url, sorted(args.sizes), args.reps)
                else:
                    results[kind] = measure(kind, url, sorted(args.sizes), args.reps)
                print(kind, json.dumps(results[kind]), flush=True)
        finally:
            if server is not None:
                if postgres is not None:
                    server.drop_database(postgres)
                server.stop()
    note = (
        f"Python {platform.python_version()}, {platform.machine()}; {args.reps} repetitions each; every store at its durable "
        "default (files: fdatasync per save; SQLite: WAL, synchronous=FULL; PostgreSQL: fsync). A turn is two messages."
    )
    text, ok = table(results, sorted(args.sizes), note)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    (args.json or args.out.with_suffix(".json")).write_text(json.dumps({k: {str(s): v for s, v in r.items()} for k, r in results.items()}, indent=1) + "\n")
    print(text)
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
