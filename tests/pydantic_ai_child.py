"""A writer process for the Pydantic AI store's concurrency tests.

    python pydantic_ai_child.py save URL CONVERSATION TEXT
        load the conversation (or start it when absent), add a run saying
        TEXT, print ``ready``, wait for ``go`` on stdin, save; print
        ``saved`` or ``conflict``.
    python pydantic_ai_child.py stall URL CONVERSATION TEXT
        load it, add a run saying TEXT and save, but stop inside the write
        (files: after the first line of the append, half of the second
        written; databases: inside the transaction, every row inserted,
        not committed), print ``stalled`` and wait to be killed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydantic_ai.conversation import Conversation  # noqa: E402
from pydantic_ai.conversation_store import ConversationConflict  # noqa: E402

from pi_session.integrations.pydantic_ai import PiConversationStore  # noqa: E402
from pydantic_ai_helpers import turn  # noqa: E402


def stall_inside_writes(store: PiConversationStore) -> None:
    """Make the store's next write stop part way (see the module docstring)."""
    add_hook = getattr(store.store, "add_write_hook", None)
    if add_hook is not None:

        def hook(_executor: object, event: object) -> None:
            if getattr(event, "kind", None) == "append":
                print("stalled", flush=True)
                time.sleep(3600)

        add_hook(hook)
        return
    import pi_session.storage.append as append

    real = append.write_all
    written = []

    def write_all(fd: int, data: bytes) -> None:
        written.append(data)
        if len(written) == 2:
            real(fd, data[: len(data) // 2])
            print("stalled", flush=True)
            time.sleep(3600)
        real(fd, data)

    append.write_all = write_all  # type: ignore[assignment]


async def main(mode: str, url: str, conversation_id: str, text: str) -> None:
    store = PiConversationStore(url, cwd="/work/proj")
    conversation = await store.load(conversation_id) or Conversation(conversation_id=conversation_id)
    conversation.messages.extend(turn(text, 1000, tool=True))
    if mode == "stall":
        stall_inside_writes(store)
        await store.save(conversation)
        print("not stalled", flush=True)
        return
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    try:
        await store.save(conversation)
    except ConversationConflict:
        print("conflict", flush=True)
        return
    print("saved", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
