"""Write examples/demo-session.jsonl with pi-session's own SessionManager.

    python examples/make_demo.py

A small but realistic coding session: a user asks for a bug fix; the
assistant reads files, edits them and runs the tests over several turns; one
attempt is abandoned (a branch), a label marks a checkpoint, and the session
is named. Long enough (about 30,000 tokens) for a compaction to be worth it.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

from pi_session import SessionManager

HERE = Path(__file__).resolve().parent
OUT = HERE / "demo-session.jsonl"
CWD = "/home/dev/projects/inventory"

USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def python_file(name: str, n: int, rng: random.Random) -> str:
    lines = [f'"""{name}: part of the inventory service."""', "", "from decimal import Decimal", ""]
    for i in range(n):
        lines += [
            f"def {name}_step_{i}(items, rate=Decimal('0.{rng.randint(10, 99)}')):",
            f"    \"\"\"Apply step {i} of the {name} pipeline to every item.\"\"\"",
            "    total = Decimal(0)",
            "    for item in items:",
            f"        total += item.price * item.quantity * rate  # step {i}",
            "    return total.quantize(Decimal('0.01'))",
            "",
        ]
    return "\n".join(lines)


class Clock:
    def __init__(self) -> None:
        self.ms = 1_764_400_000_000

    def __call__(self) -> int:
        self.ms += 7_000
        return self.ms


def assistant(sm: SessionManager, clock: Clock, text: str, calls: list[tuple[str, str, dict]], tokens: list[int]) -> None:
    content: list[dict] = []
    if text:
        content.append({"type": "text", "text": text})
    for call_id, name, args in calls:
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    tokens[0] += 900 + sum(len(str(a)) for _, _, a in calls) // 4 + len(text) // 4
    usage = dict(USAGE, input=tokens[0] - 200, output=200, totalTokens=tokens[0])
    sm.append_message({
        "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
        "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "toolUse" if calls else "stop",
        "timestamp": clock(),
    })


def tool_result(sm: SessionManager, clock: Clock, call_id: str, name: str, text: str, tokens: list[int], error: bool = False) -> None:
    tokens[0] += len(text) // 4
    sm.append_message({"role": "toolResult", "toolCallId": call_id, "toolName": name,
                       "content": [{"type": "text", "text": text}], "isError": error, "timestamp": clock()})


def at_message_times(lines: list[bytes]) -> list[bytes]:
    """``lines`` with each entry stamped at its session's clock rather than
    when this script ran: a message entry at its message's time, any other
    entry at the latest message time before it, the header 7 seconds before
    the first message (pi stamps both with the wall clock as it writes)."""
    from datetime import datetime, timezone

    from pi_session.core import jsonio

    def iso(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    records = [json.loads(line) for line in lines]
    times = [r["message"]["timestamp"] for r in records if r.get("type") == "message"]
    now = times[0] - 7_000
    for record in records:
        if record.get("type") == "message":
            now = record["message"]["timestamp"]
        record["timestamp"] = iso(now)
    return [jsonio.dumps_line(r) for r in records]


def main(out: Path = OUT) -> Path:
    rng = random.Random(7)
    clock = Clock()
    tokens = [2000]
    with tempfile.TemporaryDirectory() as tmp:
        sm = SessionManager.create(CWD, tmp)
        sm.append_model_change("anthropic", "claude-sonnet-4-5")
        sm.append_thinking_level_change("medium")
        first = sm.append_message({"role": "user", "timestamp": clock(), "content":
            "The invoice totals in src/billing.py are off by a cent for some orders. Find out why and fix it, with a test."})
        files = ["billing", "pricing", "tax", "discounts", "shipping", "reports"]
        n = 0
        for turn, name in enumerate(files):
            if turn:
                sm.append_message({"role": "user", "timestamp": clock(), "content":
                    f"Good. Now check src/{name}.py for the same rounding problem and fix it there too."})
            n += 1
            assistant(sm, clock, f"Let me read src/{name}.py and its tests.",
                      [(f"call_{n}a", "read", {"path": f"src/{name}.py"}), (f"call_{n}b", "read", {"path": f"tests/test_{name}.py"})], tokens)
            tool_result(sm, clock, f"call_{n}a", "read", python_file(name, 14, rng), tokens)
            tool_result(sm, clock, f"call_{n}b", "read", python_file(f"test_{name}", 6, rng), tokens)
            assistant(sm, clock, f"Each step in {name} quantizes its own subtotal, so rounding errors add up. "
                      "I'll keep full precision and round once at the end.",
                      [(f"call_{n}c", "edit", {"path": f"src/{name}.py", "oldText": "return total.quantize(Decimal('0.01'))", "newText": "return total"})], tokens)
            tool_result(sm, clock, f"call_{n}c", "edit", f"Successfully replaced text in src/{name}.py.", tokens)
            assistant(sm, clock, "Running the tests.", [(f"call_{n}d", "bash", {"command": f"pytest tests/test_{name}.py -q"})], tokens)
            failed = turn == 2
            output = "\n".join(f"tests/test_{name}.py::test_step_{i} PASSED" for i in range(12))
            if failed:
                output += f"\nFAILED tests/test_{name}.py::test_rounding - AssertionError: Decimal('10.005') != Decimal('10.01')"
            tool_result(sm, clock, f"call_{n}d", "bash", output, tokens, error=failed)
            if failed:
                checkpoint = sm.get_leaf_id()
                assistant(sm, clock, "The tax rule wants half-up rounding. Trying ROUND_HALF_EVEN first.",
                          [(f"call_{n}e", "edit", {"path": "src/tax.py", "oldText": "quantize(", "newText": "quantize(ROUND_HALF_EVEN, "})], tokens)
                tool_result(sm, clock, f"call_{n}e", "edit", "Successfully replaced text in src/tax.py.", tokens)
                # abandon that attempt: go back and take the other road
                sm.branch(checkpoint)
                sm.append_label_change(checkpoint, "tax rounding decision")
                assistant(sm, clock, "Tax must round half-up (ROUND_HALF_UP), per the accounting rules in docs/tax.md.",
                          [(f"call_{n}f", "edit", {"path": "src/tax.py", "oldText": "return total", "newText": "return total.quantize(Decimal('0.01'), ROUND_HALF_UP)"})], tokens)
                tool_result(sm, clock, f"call_{n}f", "edit", "Successfully replaced text in src/tax.py.", tokens)
            assistant(sm, clock, f"src/{name}.py now rounds once, at the end; its tests pass.", [], tokens)
        sm.append_message({"role": "bashExecution", "command": "git diff --stat", "output":
            "\n".join(f" src/{f}.py | {rng.randint(3, 30)} +++---" for f in files), "exitCode": 0,
            "cancelled": False, "truncated": False, "timestamp": clock()})
        sm.append_message({"role": "user", "timestamp": clock(), "content": "Write a short summary of the change for the changelog."})
        assistant(sm, clock, "Rounding now happens once per invoice instead of once per pipeline step "
                  "(billing, pricing, discounts, shipping, reports); tax rounds half-up as the accounting rules require.", [], tokens)
        sm.append_label_change(first, "task")
        sm.append_session_info("Fix cent rounding in invoices")
        data = b"".join(at_message_times(sm.get_session_file().read_bytes().splitlines(keepends=True)))
    out.write_bytes(data)
    return out


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
