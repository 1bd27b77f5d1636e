"""Chat with a small OpenAI Agents SDK agent whose history is a pi session.

    pip install 'pi-session[agents]'
    python examples/agent_chat.py --base-url http://127.0.0.1:8080/v1 "Hello" "What is 17 + 25?"
    python examples/agent_chat.py --base-url http://127.0.0.1:8080/v1      # one message per line on stdin

Works with any OpenAI-compatible Chat Completions server (llama.cpp's
``llama-server`` or ``python -m llama_cpp.server``, Ollama, vLLM, OpenAI
itself): the agent uses ``OpenAIChatCompletionsModel``. The conversation is
stored as a pi session (``--session`` names it; run again with the same name
to continue), compacted with pi's rules when it nears ``--context-window``;
each compaction is printed with the context size before and after, the
numbers ``pi-session tokens SESSION_FILE`` shows. Open the file with
``pi-session tree`` or in pi itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from pi_session.integrations.openai_agents import CompactionEvent, PiSession
from pi_session.llm import ExtractiveSummarizer, OpenAISummarizer, Summarizer


@function_tool
def add(a: float, b: float) -> float:
    """Add two numbers and return the sum."""
    return a + b


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("messages", nargs="*", help="messages to send, in order (default: read lines from stdin)")
    p.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"), help="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--model", help="model id (default: the server's first listed model)")
    p.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY") or "sk-local", help="API key (local servers ignore it)")
    p.add_argument("--session", default="agent-chat", help="session id: the same id continues the same pi session")
    p.add_argument("--session-dir", help="directory of session files (default: pi's, for the current directory)")
    p.add_argument("--context-window", type=int, default=None, help="the model's context window in tokens (enables automatic compaction)")
    p.add_argument("--reserve-tokens", type=int, default=None, help="tokens kept free below the window (default: pi settings, 16384)")
    p.add_argument("--keep-recent-tokens", type=int, default=None, help="recent tokens kept verbatim (default: pi settings, 20000)")
    p.add_argument("--max-tokens", type=int, default=None, help="cap on each reply's tokens")
    p.add_argument(
        "--summarizer",
        choices=("extractive", "server"),
        default="extractive",
        help="who writes compaction summaries: the offline extractive summarizer (default) or the chat model itself",
    )
    p.add_argument("--no-tools", action="store_true", help="do not offer the add tool (for servers without tool support)")
    return p.parse_args(argv)


async def first_model(client: AsyncOpenAI) -> str:
    """The first model the server lists."""
    async for model in client.models.list():
        return model.id
    raise SystemExit("the server lists no models; pass --model")


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    set_tracing_disabled(True)  # no trace uploads: everything stays on the given server
    client = AsyncOpenAI(base_url=args.base_url, api_key=args.api_key)
    model_name = args.model or await first_model(client)
    agent = Agent(
        name="assistant",
        instructions="You are a helpful assistant. Answer briefly.",
        model=OpenAIChatCompletionsModel(model=model_name, openai_client=client),
        tools=[] if args.no_tools else [add],
        model_settings=ModelSettings(max_tokens=args.max_tokens),
    )
    compaction: dict[str, Any] = {}
    if args.reserve_tokens is not None:
        compaction["reserveTokens"] = args.reserve_tokens
    if args.keep_recent_tokens is not None:
        compaction["keepRecentTokens"] = args.keep_recent_tokens

    def on_compaction(event: CompactionEvent) -> None:
        print(f"[compacted: {event.tokens_before} -> {event.tokens_after} tokens, entry {event.entry_id}]", flush=True)

    summarizer: Summarizer = (
        OpenAISummarizer(model_name, base_url=args.base_url, api_key=args.api_key)
        if args.summarizer == "server"
        else ExtractiveSummarizer()
    )
    session = PiSession(
        args.session,
        summarizer=summarizer,
        session_dir=args.session_dir,
        context_window=args.context_window,
        settings={"compaction": compaction} if compaction else None,
        model=model_name,
        provider="openai-compatible",
        on_compaction=on_compaction,
    )
    messages = args.messages or (line.strip() for line in sys.stdin)
    for message in messages:
        if not message:
            continue
        print(f"you: {message}", flush=True)
        result = await session.run(agent, message)  # Runner.run, compacting and retrying once on overflow
        print(f"assistant: {result.final_output}", flush=True)
    print(f"session: {session.session_file}", flush=True)
    print(f"context tokens: {await session.context_tokens()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
