"""PiConversationStore behaves as Pydantic AI's own InMemoryConversationStore:
a stateful property test drives both through the same random operations
(saves of new runs, saves of rewritten histories, branches back and forth,
forks, deletes, updates, listings by scope and limit, saves of stale
copies) on every store kind and compares every observable result, errors
included."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from hypothesis import HealthCheck, settings, strategies as st  # noqa: E402
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test  # noqa: E402
from pydantic_ai.conversation import Conversation  # noqa: E402
from pydantic_ai.conversation_store import InMemoryConversationStore  # noqa: E402
from pydantic_ai.messages import ToolCallPart  # noqa: E402
from pydantic_ai.tools import DeferredToolRequests  # noqa: E402

from pi_session.integrations.pydantic_ai import PiConversationStore  # noqa: E402
from pi_session.stores import open_store  # noqa: E402
from pydantic_ai_helpers import Runner, copies, outcome, record_view, retry_turn, run_usage, turn  # noqa: E402

IDS = ["chat-a", "user@example.com/b"]
FORKS = ["fork-1", "fork-2"]
SCOPES = [None, "alice", "bob"]
WORDS = st.sampled_from(["hello", "weather", "sum", "ünïcode ✓", "x" * 40, ""])


def machine_for(url: str) -> type[RuleBasedStateMachine]:
    class Differential(RuleBasedStateMachine):
        """Each rule runs on both stores; ``self.conv[store][id]`` is the
        conversation each store last handed back, ``self.stale`` older copies."""

        def __init__(self) -> None:
            super().__init__()
            backing = open_store(url)
            for session_id in backing.find("", limit=10**9):
                backing.delete(session_id)
            self.stores: dict[str, Any] = {"memory": InMemoryConversationStore(), "pi": PiConversationStore(backing, cwd="/work/proj")}
            self.runners = {name: Runner() for name in self.stores}
            self.conv: dict[str, dict[str, Conversation]] = {name: {} for name in self.stores}
            self.stale: dict[str, list[Conversation]] = {name: [] for name in self.stores}
            self.n = 0

        def teardown(self) -> None:
            for runner in self.runners.values():
                runner.close()
            self.stores["pi"].close()

        # ------------------------------------------------------------------
        def both(self, op: Any) -> Any:
            """Run ``op(name, store)`` (a coroutine factory) on both stores and
            check they agree on success or the error's class."""
            results = {name: outcome(self.runners[name], lambda: op(name, store)) for name, store in self.stores.items()}
            (kind_m, value_m), (kind_p, value_p) = results["memory"], results["pi"]
            assert kind_m == kind_p, results
            if kind_m == "error":
                assert value_m == value_p, results
            return results

        def tick(self) -> int:
            self.n += 10
            return self.n

        def loaded(self, name: str, cid: str) -> Conversation | None:
            return self.conv[name].get(cid)

        def keep(self, name: str, cid: str, conversation: Conversation | None) -> None:
            old = self.conv[name].get(cid)
            if old is not None:
                self.stale[name].append(copies(old))
            if conversation is None:
                self.conv[name].pop(cid, None)
            else:
                self.conv[name][cid] = conversation

        def reload(self, cid: str, scope: str | None = None) -> None:
            for name, store in self.stores.items():
                self.keep(name, cid, self.runners[name].run(lambda: store.load(cid, scope=scope)))

        # ------------------------------------------------------------------
        @initialize(tool=st.booleans())
        def start(self, tool: bool) -> None:
            self.save_new_conversation("chat-a", None, "hello", tool)
            self.save_new_run("chat-a", "again", not tool, False, False)

        @rule(cid=st.sampled_from(IDS), scope=st.sampled_from(SCOPES), text=WORDS, tool=st.booleans())
        def save_new_conversation(self, cid: str, scope: str | None, text: str, tool: bool) -> None:
            """A conversation not loaded from the store (a conflict when it exists)."""
            n = self.tick()
            messages = turn(text, n, tool=tool, system="You help." if n % 20 == 0 else None)
            usage = run_usage(n % 5)

            async def op(name: str, store: Any) -> Any:
                conversation = Conversation(messages=copies(messages), conversation_id=cid, usage=copies(usage))
                entries = await store.save(conversation, scope=scope)
                self.keep(name, cid, conversation)
                return len(entries)

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS + FORKS[:1]), text=WORDS, tool=st.booleans(), deferred=st.booleans(), retry=st.booleans())
        def save_new_run(self, cid: str, text: str, tool: bool, deferred: bool, retry: bool) -> None:
            """A run continuing the loaded conversation (appends only)."""
            n = self.tick()
            messages = retry_turn(n) if retry else turn(text, n, tool=tool, instructions=None if n % 30 == 0 else "Answer briefly.")
            requests = DeferredToolRequests(approvals=[ToolCallPart("pay", {"amount": n}, tool_call_id=f"pay-{n}")], metadata={f"pay-{n}": {"why": text}}) if deferred else None

            async def op(name: str, store: Any) -> Any:
                conversation = self.loaded(name, cid)
                if conversation is None:
                    return None
                conversation.messages.extend(copies(messages))
                conversation.usage = conversation.usage + run_usage(1)
                conversation.deferred_tool_requests = copies(requests)
                entries = await store.save(conversation)
                return len(entries)

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS), keep=st.integers(0, 12), text=WORDS, serialized=st.booleans())
        def save_rewritten_history(self, cid: str, keep: int, text: str, serialized: bool) -> None:
            """A history cut and continued differently (compaction, an edit):
            saved as a branch off the last shared message."""
            n = self.tick()
            messages = turn(text, n)

            async def op(name: str, store: Any) -> Any:
                conversation = self.loaded(name, cid)
                if conversation is None:
                    return None
                kept = copies(conversation.messages[: min(keep, len(conversation.messages))])
                rewritten = Conversation(
                    messages=kept + copies(messages),
                    conversation_id=cid,
                    usage=copies(conversation.usage),
                    revision=conversation.revision,
                    new_message_index=None if serialized else len(kept),
                )
                entries = await store.save(rewritten)
                self.keep(name, cid, rewritten)
                return len(entries)

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS), at=st.integers(0, 14))
        def branch_at(self, cid: str, at: int) -> None:
            async def op(name: str, store: Any) -> Any:
                conversation = self.loaded(name, cid)
                revision = conversation.revision if conversation is not None else None
                branched = await store.branch(cid, at=at, expected_revision=revision)
                self.keep(name, cid, branched)
                return branched.messages

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS), which=st.integers(0, 5))
        def branch_back(self, cid: str, which: int) -> None:
            """Back to a branch the conversation left (its tip, by position)."""

            async def op(name: str, store: Any) -> Any:
                record = await store.read_record(cid)
                if record is None or not record.branches:
                    return None
                conversation = self.loaded(name, cid)
                revision = conversation.revision if conversation is not None else None
                tip = record.branches[which % len(record.branches)]
                branched = await store.branch(cid, from_entry=tip, expected_revision=revision)
                self.keep(name, cid, branched)
                return branched.messages

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS), new=st.sampled_from(IDS + FORKS), at=st.none() | st.integers(0, 10), scope=st.sampled_from(SCOPES))
        def fork(self, cid: str, new: str, at: int | None, scope: str | None) -> None:
            async def op(name: str, store: Any) -> Any:
                forked = await store.fork(cid, at=at, new_conversation_id=new, scope=scope)
                self.keep(name, new, forked)
                return forked.messages, forked.usage, forked.deferred_tool_requests

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS + FORKS), scope=st.sampled_from(SCOPES))
        def delete(self, cid: str, scope: str | None) -> None:
            async def op(name: str, store: Any) -> Any:
                await store.delete(cid, scope=scope)
                return await store.load(cid) is None

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS + FORKS), scope=st.sampled_from(SCOPES))
        def load(self, cid: str, scope: str | None) -> None:
            self.reload(cid, scope)

        @rule(cid=st.sampled_from(IDS + FORKS[:1]), limit=st.integers(0, 5))
        def load_window(self, cid: str, limit: int) -> None:
            async def op(name: str, store: Any) -> Any:
                conversation = await store.load(cid, limit=limit)
                return None if conversation is None else (conversation.messages, conversation.usage)

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @precondition(lambda self: any(self.stale.values()))
        @rule(which=st.integers(0, 1000), text=WORDS)
        def save_stale_copy(self, which: int, text: str) -> None:
            """An older copy saved again: a conflict on both, or the same success."""
            n = self.tick()
            messages = turn(text, n)
            if len(self.stale["memory"]) != len(self.stale["pi"]):
                return

            async def op(name: str, store: Any) -> Any:
                old = copies(self.stale[name][which % len(self.stale[name])])
                old.messages.extend(copies(messages))
                return len(await store.save(old))

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(cid=st.sampled_from(IDS), title=st.none() | st.sampled_from(["Weather", "Sums"]), expect=st.booleans(), metadata=st.none() | st.just({"model": "m", "n": [1, 2]}))
        def update(self, cid: str, title: str | None, expect: bool, metadata: dict[str, Any] | None) -> None:
            async def op(name: str, store: Any) -> Any:
                kwargs: dict[str, Any] = {"title": title, "metadata": copies(metadata)}
                if expect:
                    kwargs["expected_title"] = None
                return record_view(await store.update(cid, **kwargs))

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @rule(scope=st.sampled_from(SCOPES), limit=st.none() | st.integers(0, 4))
        def list_conversations(self, scope: str | None, limit: int | None) -> None:
            async def op(name: str, store: Any) -> Any:
                return [record_view(r) for r in await store.list_conversations(scope=scope, limit=limit)]

            results = self.both(op)
            assert results["memory"] == results["pi"]

        @invariant()
        def same_conversations(self) -> None:
            """Every conversation loads the same from both stores (messages,
            usage, deferred requests; the record's observable fields)."""
            if not hasattr(self, "stores"):
                return
            for cid in IDS + FORKS:
                seen = {}
                for name, store in self.stores.items():
                    runner = self.runners[name]
                    conversation = runner.run(lambda: store.load(cid))
                    record = runner.run(lambda: store.read_record(cid))
                    seen[name] = (
                        None if conversation is None else (conversation.messages, conversation.usage, conversation.deferred_tool_requests),
                        None if record is None else record_view(record),
                    )
                assert seen["memory"] == seen["pi"], cid

    return Differential


@pytest.mark.parametrize("kind", ["file", "sqlite", "postgres"])
def test_pi_conversation_store_behaves_as_the_in_memory_store(kind: str, tmp_path, request) -> None:
    url = {"file": str(tmp_path / "sessions"), "sqlite": f"sqlite:///{tmp_path}/s.db"}.get(kind) or request.getfixturevalue("postgres_url")
    machine = machine_for(url)
    run_state_machine_as_test(
        machine,
        settings=settings(max_examples=30 if kind == "file" else 15, stateful_step_count=30, deadline=None, suppress_health_check=list(HealthCheck)),
    )
