"""Where a Claude Code session file's last model response may still be
being written (**beyond pi**): :func:`unfinished_tail`, which the import
leaves out of a file modified just now so that the next import appends the
response whole (see :func:`pi_session.importers.claude_code.convert_file`).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .common import SourceRecord, obj

__all__ = ["unfinished_tail"]


def unfinished_tail(records: Sequence[SourceRecord], *, torn: bool = False) -> int | None:
    """Where a model response that may still be being written starts: the
    index of the first record of the file's last assistant message when
    nothing but that message's records (and notes such as ``progress``)
    follow it and it is not known to be complete; else None.

    Claude Code writes one record per content block as they stream. Older
    versions put the stop reason on the last record only; newer ones put
    the final stop reason on every record, so a stop reason alone does
    not always end a response: it is unfinished when its last record has
    no stop reason, when the stop reason is ``tool_use`` and no
    ``tool_use`` block has been written yet, when an earlier response of
    the file has a record with a stop reason followed by more of its
    records (the file is written the newer way), or when the file ends
    with a torn line (``torn``: the line being written may be its next
    block).
    """
    trusted = not torn and not _stop_reason_on_every_block(records)
    message_id: Any = None
    start: int | None = None
    finished = wants_call = calls = False
    for i in range(len(records) - 1, -1, -1):
        rec = records[i].record
        t = rec.get("type")
        if t == "assistant":
            message = obj(rec.get("message"))
            if start is None:
                reason = message.get("stop_reason")
                finished = reason is not None and trusted
                wants_call = reason == "tool_use"
                message_id = message.get("id")
            elif message.get("id") != message_id or message_id is None:
                break
            content = message.get("content")
            calls = calls or (isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content))
            start = i
        elif t in ("user", "system", "summary", "custom-title"):
            break
    if start is None or (finished and (calls or not wants_call)):
        return None
    return start


def _stop_reason_on_every_block(records: Sequence[SourceRecord]) -> bool:
    """Whether some assistant record with a stop reason is followed by
    another record of the same message (Claude Code's newer way of
    writing a response's records)."""
    stopped: Any = None
    for r in records:
        rec = r.record
        if rec.get("type") != "assistant":
            continue
        message = obj(rec.get("message"))
        mid = message.get("id")
        if mid is not None and mid == stopped:
            return True
        stopped = mid if message.get("stop_reason") is not None else None
    return False
