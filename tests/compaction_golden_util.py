"""Shared helpers for the compaction conformance tests: read the committed
sessions and goldens, and compute OUR answer for an oracle command."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_session.core import jsonio
from pi_session.compaction import (
    collect_entries_for_branch_summary,
    find_cut_point,
    prepare_branch_entries,
    prepare_compaction,
    serialize_conversation,
)
from pi_session.session.context import build_session_context, build_session_projection, convert_to_llm
from pi_session.session.settings import CompactionSettings
from pi_session.session.tokens import (
    estimate_context_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    should_compact,
)
from pi_session.session.tree import SessionTree

GOLDENS = Path(__file__).resolve().parent / "goldens" / "compaction"
SESSIONS = GOLDENS / "sessions"
from shared_paths import ORACLE, oracle_missing  # noqa: E402


def oracle_available() -> bool:
    return oracle_missing() is None


def load_session(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [x for x in path.read_bytes().splitlines() if x.strip()]
    return jsonio.loads(lines[0]), [jsonio.loads(x) for x in lines[1:]]


def golden_files() -> list[Path]:
    return sorted(GOLDENS.glob("*.golden.json.gz"))


def load_golden(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rb") as fh:
        return json.loads(fh.read().decode("utf-8"))


def iter_cases() -> Iterator[tuple[str, str, dict[str, Any], Any]]:
    for g in golden_files():
        data = load_golden(g)
        for case in data["cases"]:
            yield data["session"], case["cmd"], case["opts"], case["out"]


def _leaf(entries: list[dict[str, Any]], opts: dict[str, Any]) -> str | None:
    leaf = opts.get("leaf")
    if leaf is not None:
        return leaf
    return entries[-1]["id"] if entries else None


def ours(cmd: str, opts: dict[str, Any], entries: list[dict[str, Any]]) -> Any:
    """Our implementation's answer, in the oracle's output shape."""
    tree = SessionTree(entries)
    leaf = _leaf(entries, opts)
    if cmd == "tokens":
        per = [{"id": e["id"], "tokens": estimate_tokens(e["message"])} for e in entries if e.get("type") == "message"]
        projection = build_session_projection(entries, leaf)
        est = estimate_context_tokens(projection["messages"])
        projected = estimate_projected_context_tokens(projection, tree.branch(leaf) if leaf is not None else [])
        settings = CompactionSettings(reserve_tokens=int(opts.get("reserve", 16384)))
        window = int(opts.get("window", 200000))
        return {
            "perEntry": per,
            "context": est,
            "shouldCompact": should_compact(est["tokens"], window, settings),
            "projected": projected,
            "projectedShouldCompact": should_compact(projected["tokens"], window, settings),
        }
    if cmd == "cut":
        path = tree.branch(leaf)
        start = int(opts.get("start", 0))
        end = int(opts.get("end", len(path)))
        r = find_cut_point(path, start, end, int(opts.get("keep", 20000)))
        kept = path[r.first_kept_entry_index] if r.first_kept_entry_index < len(path) else None
        return {**r.to_json(), "firstKeptEntryId": kept["id"] if kept else None, "pathIds": [e["id"] for e in path]}
    if cmd == "prepare":
        settings = CompactionSettings(
            reserve_tokens=int(opts.get("reserve", 16384)), keep_recent_tokens=int(opts.get("keep", 20000))
        )
        prep = prepare_compaction(tree.branch(leaf), settings)
        return prep.to_json() if prep else None
    if cmd == "serialize":
        return serialize_conversation(convert_to_llm(build_session_context(entries, leaf)["messages"]))
    if cmd == "convert":
        return convert_to_llm(build_session_context(entries, leaf)["messages"])
    if cmd == "branch-summary-prep":
        col = collect_entries_for_branch_summary(tree, opts.get("from") or leaf, opts["to"])
        prep = prepare_branch_entries(col.entries, int(opts.get("budget", 0)))
        out = prep.to_json()
        return {
            "commonAncestorId": col.common_ancestor_id,
            "entryIds": [e["id"] for e in col.entries],
            "messages": out["messages"],
            "totalTokens": out["totalTokens"],
            "fileOps": out["fileOps"],
            "fileLists": out["fileLists"],
        }
    raise ValueError(cmd)


def as_oracle_json(value: Any) -> Any:
    """Round-trip through JavaScript JSON rules (as the oracle prints): floats
    like 1.0 become 1, lone surrogates become U+FFFD on output."""
    text = jsonio.dumps_pretty(value)
    if _has_surrogate(text):
        text = js_output_text(text)
    return json.loads(text)


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def js_output_text(text: str) -> str:
    """What ``process.stdout.write(text)`` puts on a pipe: lone surrogates
    become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
