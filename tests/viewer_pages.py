"""Sessions and a browser for the HTML viewer tests.

- ``showcase_session(path)``: a small hand-written session with what the
  viewer shows (Markdown table and code, thinking, tool calls and results,
  an image, a branch with a summary, a label, a compaction, a context edit,
  usage); the README screenshot is made from it.
- ``long_session(path, n)``: a chain of ``n`` alternating user and
  assistant messages (no branch).
- ``hostile_session(path)``: every string a place for an attack (``<script>``,
  ``javascript:`` links, ``onerror=`` attributes, control characters, a
  fake ``</template>``, CSS breaking out of ``<style>``).
- ``export_page(session, out, leaf=None)``: the page, through the CLI.
- ``launch_browser(playwright)``: Debian's Chromium (``/usr/bin/chromium``,
  installed by ``.ci/run``), never a downloaded one.

``python tests/viewer_pages.py OUT.png`` writes the README screenshot
(docs/images/viewer.png) from the showcase session.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pi_session.cli.app import app
from sessiongen import write_session

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
def _png(width: int, height: int) -> str:
    """A small gradient PNG (base64), made with zlib."""
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\0" + bytes(v for x in range(width) for v in (40 + x * 200 // width, 90 + y * 120 // height, 200)) for y in range(height))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode("ascii")


PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def launch_browser(playwright: Any) -> Any:
    """Chromium from the distribution, headless, without network services."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)


def export_page(session: Path, out: Path, leaf: str | None = None) -> Path:
    """Export ``session`` as HTML to ``out`` through the CLI (in process);
    raises AssertionError with the CLI's output when it fails."""
    args = ["export", str(session), "--format", "html", "-o", str(out), "--force"]
    if leaf is not None:
        args += ["--leaf", leaf]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _usage(inp: int, out: int, cost: float) -> dict[str, Any]:
    return {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": inp + out,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


class _Builder:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.t = 0

    def add(self, etype: str, eid: str, **fields: Any) -> str:
        self.t += 7
        ts = f"2026-11-30T10:{self.t // 60:02d}:{self.t % 60:02d}.000Z"
        self.entries.append({"type": etype, "id": eid, "parentId": self.leaf, "timestamp": ts, **fields})
        self.leaf = eid
        return eid

    def msg(self, eid: str, message: dict[str, Any]) -> str:
        message.setdefault("timestamp", 1_796_000_000_000 + self.t * 1000)
        return self.add("message", eid, message=message)


TABLE_ANSWER = """The totals drift because **each step rounds** its own subtotal.

| step | before | after |
|------|-------:|------:|
| billing | 10.005 | 10.01 |
| tax | 0.8004 | 0.80 |

Fix: keep full precision and round *once*:

```python
from decimal import Decimal, ROUND_HALF_UP

def total(items):
    raw = sum(i.price * i.qty for i in items)
    return raw.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
```

See [the decimal docs](https://docs.python.org/3/library/decimal.html)."""


def showcase_session(path: Path) -> Path:
    """Write the showcase session to ``path`` (see the module doc)."""
    b = _Builder()
    asst = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    b.add("model_change", "m0", provider="anthropic", modelId="claude-sonnet-4-5")
    b.msg("u1", {"role": "user", "content": "Invoice totals are off by a cent. Find out why and fix it."})
    b.msg("a1", {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Rounding, probably. Read the billing code first.\n" * 8},
        {"type": "text", "text": "Let me read `src/billing.py`."},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/billing.py"}},
    ], **asst, "usage": _usage(2400, 120, 0.0091), "stopReason": "toolUse"})
    source = "\n".join(f"def step_{i}(x):\n    return round(x * RATE_{i}, 2)" for i in range(30))
    b.msg("r1", {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": source}], "isError": False})
    b.msg("a2", {"role": "assistant", "content": [{"type": "text", "text": TABLE_ANSWER}], **asst, "usage": _usage(5100, 410, 0.0215), "stopReason": "stop"})
    fork = b.leaf
    b.msg("u2", {"role": "user", "content": "Try banker's rounding instead."})
    b.msg("a3", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "pytest -q tests/test_billing.py"}},
    ], **asst, "usage": _usage(5600, 60, 0.0172), "stopReason": "toolUse"})
    b.msg("r2", {"role": "toolResult", "toolCallId": "c2", "toolName": "bash", "content": [{"type": "text", "text": "F.F\n2 failed, 1 passed"}], "isError": True})
    b.leaf = fork
    b.add("branch_summary", "bs1", fromId=fork, summary="## Tried\nBanker's rounding: **2 tests failed**; the tax rule wants half-up.")
    b.add("label", "l1", targetId="a2", label="rounding fix")
    b.msg("u3", {"role": "user", "content": [{"type": "text", "text": "Apply the half-up fix. Here is the failing invoice:"},
                                             {"type": "image", "mimeType": "image/png", "data": _png(160, 48)}]})
    b.msg("a4", {"role": "assistant", "content": [
        {"type": "text", "text": "Applying the fix."},
        {"type": "toolCall", "id": "c3", "name": "edit", "arguments": {"path": "src/billing.py", "oldText": "round(x * RATE, 2)", "newText": "x * RATE"}},
    ], **asst, "usage": _usage(6100, 90, 0.0201), "stopReason": "toolUse"})
    b.msg("r3", {"role": "toolResult", "toolCallId": "c3", "toolName": "edit", "content": [{"type": "text", "text": "Successfully replaced text in src/billing.py."}], "isError": False})
    b.add("compaction", "cp1", summary="## Goal\nFix cent rounding.\n\n## Done\n- billing rounds once", firstKeptEntryId="u3", tokensBefore=48211)
    b.msg("u4", {"role": "user", "content": "My API key is sk-SECRET-123, use it for the deploy."})
    b.add("context_edit", "ce1", targetId="u4", replacement={"content": "[key removed]"})
    b.msg("a5", {"role": "assistant", "content": [{"type": "text", "text": "Done: - [x] billing - [x] tax\n\n1. tests pass\n2. deployed"}], **asst,
                 "usage": _usage(3000, 50, 0.0099), "stopReason": "stop"})
    b.add("usage", "g1", kind="cache_warm", provider="anthropic", model="claude-sonnet-4-5", usage=_usage(900, 1, 0.0003))
    b.add("session_info", "n1", name="Cent rounding fix")
    header = {"type": "session", "version": 3, "id": "0196a000-0000-7000-8000-00000000c0de", "timestamp": "2026-11-30T10:00:00.000Z",
              "cwd": "/home/dev/projects/inventory"}
    return write_session(path, header, b.entries)


def long_session(path: Path, n: int) -> Path:
    """Write a chain of ``n`` messages, user and assistant in turn, to ``path``."""
    b = _Builder()
    for k in range(n):
        if k % 2 == 0:
            b.msg(f"u{k}", {"role": "user", "content": f"question {k}"})
        else:
            b.msg(f"a{k}", {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}], "provider": "p", "model": "m",
                            "usage": _usage(10, 1, 0.0), "stopReason": "stop"})
    header = {"type": "session", "version": 3, "id": "0196a000-0000-7000-8000-0000000010ng", "timestamp": "2026-11-30T10:00:00.000Z", "cwd": "/w"}
    return write_session(path, header, b.entries)


EVIL = [
    "<script>window.__pwned=1;alert('s')</script>",
    "<img src=x onerror=\"window.__pwned=2;alert('i')\">",
    "[click](javascript:window.__pwned=3) <javascript:alert(4)> [d](data:text/html,<script>alert(5)</script>) [v](vbscript:x)",
    "</template><script>alert(6)</script><template>",
    "</style><script>alert(7)</script>",
    "\x1b[31mred\x1b[0m \x00nul \u202eevil\u202c \x07bell",
    "<svg onload=alert(8)><iframe src=javascript:alert(9)>",
    "```\"><script>alert(10)</script>\n<b onmouseover=alert(11)>x</b>\n```",
]


def hostile_session(path: Path) -> Path:
    """Write a session whose every string is hostile (see the module doc)."""
    evil = "\n\n".join(EVIL)
    b = _Builder()
    b.msg("u1", {"role": "user", "content": evil})
    b.msg("a1", {"role": "assistant", "content": [
        {"type": "thinking", "thinking": evil},
        {"type": "text", "text": evil},
        {"type": "toolCall", "id": "c<1>", "name": "<script>alert(12)</script>", "arguments": {"<b>": evil, "path": evil}},
    ], "provider": "<i>p</i>", "model": "<script>alert(13)</script>", "stopReason": "error", "errorMessage": evil})
    b.msg("r1", {"role": "toolResult", "toolCallId": "c<1>", "toolName": evil, "content": [
        {"type": "text", "text": evil},
        {"type": "image", "mimeType": "text/html", "data": "<script>alert(14)</script>"},
        {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"},
        {"type": "image", "mimeType": "image/png\" onerror=\"alert(15)", "data": PNG_1PX},
    ], "isError": True})
    fork = b.leaf
    b.msg("u2", {"role": "user", "content": [{"type": "text", "text": evil}]})
    b.leaf = fork
    b.add("branch_summary", '"><script>alert(16)</script>', fromId=evil, summary=evil)
    b.add("label", "l1", targetId="u1", label=evil)
    b.add("compaction", "cp1", summary=evil, firstKeptEntryId="u1", tokensBefore=evil)
    b.add("custom_message", "cm1", customType=evil, content=evil, display=True)
    b.msg("x1", {"role": "bashExecution", "command": evil, "output": evil, "exitCode": evil, "timestamp": 1})
    b.add("model_change", "m1", provider=evil, modelId=evil)
    b.add("session_info", "n1", name=evil)
    header = {"type": "session", "version": 3, "id": "0196a000-0000-7000-8000-0000000e0e0e", "timestamp": "2026-11-30T10:00:00.000Z", "cwd": evil}
    return write_session(path, header, b.entries)


def write_readme_screenshot(out: Path, work: Path, browser: Any = None) -> Path:
    """Render the showcase session and screenshot it at 1280x1100 (light,
    the page as it opens) into ``out``, with ``browser`` (default: a new
    one)."""
    page_file = export_page(showcase_session(work / "showcase.jsonl"), work / "showcase.html")
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            own = launch_browser(p)
            try:
                return write_readme_screenshot(out, work, own)
            finally:
                own.close()
    page = browser.new_page(viewport={"width": 1280, "height": 1100}, color_scheme="light")
    page.goto(page_file.as_uri())
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out))
    page.close()
    return out


if __name__ == "__main__":  # pragma: no cover
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(write_readme_screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/viewer.png"), Path(tmp)))
    os._exit(0)
