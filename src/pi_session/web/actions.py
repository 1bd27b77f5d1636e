"""The web app's actions (``POST /api/v1/sessions/{id}/<action>``), each
through :mod:`pi_session.operations` with the CLI's rules: validated
before the session is opened for writing, the leaf the page showed checked
(``expectLeaf``: 409 when another writer moved it), summaries by the
server's summarizer, and every write an append but scrub's rewrite
mode (edit mode appends context edits).

Actions and their JSON bodies:

- ``label``: ``{"entryId", "label"}`` (empty or null label: cleared);
- ``name``: ``{"name"}``;
- ``navigate``: ``{"entryId", "summarize": bool, "expectLeaf"?}``;
- ``compact``: ``{"expectLeaf"?, "keepRecentTokens"?}``;

Summaries are written by the server's summarizer (``serve --provider``;
default: the offline extractive one).
- ``scrub``: ``{"mode"?}``: ``"edit"`` (default): context edits hide the
  secrets of the model context from the model (a bash execution holding
  one is left out whole); 409 naming the entries when some stay (a
  summary or a system prompt); ``"rewrite"``: the secrets replaced by
  ``[REDACTED:<kind>]`` in the session, a session file's old content kept
  as ``<file>.secrets.bak`` (mode 0600; a database session: no backup).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..operations import LeafMovedError, OperationError, open_for_writing
from ..stores.capabilities import StoreCapability
from .data import ApiError, StoreAccess
from .masking import masking_for

__all__ = ["ACTIONS", "export", "run"]

ACTIONS = ("label", "name", "navigate", "compact", "scrub")
"""The action names (the last part of their URL)."""

_MAX_TEXT = 10_000


def _text(body: dict[str, Any], key: str, *, required: bool = True, allow_empty: bool = False) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{key}: expected a string")
    if len(value) > _MAX_TEXT:
        raise ApiError(400, f"{key}: longer than {_MAX_TEXT:,} characters")
    if "\x00" in value:
        raise ApiError(400, f"{key}: holds a NUL character")
    if not allow_empty and not value.strip():
        raise ApiError(400, f"{key}: empty")
    return value


def _check_leaf(manager: Any, body: dict[str, Any]) -> None:
    expected = body.get("expectLeaf")
    if expected is not None and expected != manager.get_leaf_id():
        raise ApiError(409, f"{manager.get_session_id()}: the leaf moved (now {manager.get_leaf_id()}, the page showed {expected}): reload and try again")


def _do(name: str, access: StoreAccess, sid_text: str, body: dict[str, Any], summarizer_config: Any) -> dict[str, Any]:
    def _summarizer() -> Any:
        from ..operations import SummarizerConfig

        summarizer, _note = (summarizer_config or SummarizerConfig(provider="extractive")).make()
        return summarizer

    sid = access.resolve(sid_text)
    store = access.store
    probe = access.open(sid)
    if name == "label":  # not an entry literal: the action
        entry_id = _text(body, "entryId") or ""
        label = _text(body, "label", required=False, allow_empty=True)
        if probe.get_entry(entry_id) is None:
            raise ApiError(404, f"{sid}: no entry {str(entry_id)[:80]!r}")
        with access.lock:
            writer = open_for_writing(sid, store=store)
            new_id = writer.append_label_change(entry_id, label) if label else writer.append_label_change(entry_id)
            writer.save()
        return {"id": new_id, "targetId": entry_id, "label": label or None}
    if name == "name":
        text = _text(body, "name")
        assert text is not None
        with access.lock:
            writer = open_for_writing(sid, store=store)
            new_id = writer.append_session_info(text.strip())
            writer.save()
        return {"id": new_id, "name": text.strip()}
    if name == "navigate":
        from ..operations import navigate_session, summarize_branch

        entry_id = _text(body, "entryId") or ""
        if probe.get_entry(entry_id) is None:
            raise ApiError(404, f"{sid}: no entry {entry_id[:80]!r}")
        _check_leaf(probe, body)
        plan = probe.plan_navigation(entry_id)
        summary = None
        if body.get("summarize") is True:
            from ..operations import compaction_settings

            settings, _warnings = compaction_settings(probe.get_cwd())
            summary = asyncio.run(summarize_branch(plan, _summarizer(), reserve_tokens=settings.reserve_tokens))
        with access.lock:  # the summary is written without it: other requests go on meanwhile
            writer = open_for_writing(sid, store=store)
            result = navigate_session(writer, plan, summary)
            writer.save()
        return {
            "targetId": entry_id,
            "leafId": writer.get_leaf_id(),
            "summaryEntryId": getattr(result, "summary_entry_id", None),
            "summarized": summary is not None,
        }
    if name == "compact":
        from ..operations import compact_session, compaction_settings

        _check_leaf(probe, body)
        keep = body.get("keepRecentTokens")
        if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 0):
            raise ApiError(400, "keepRecentTokens: expected a whole number of tokens")
        settings, _warnings = compaction_settings(probe.get_cwd(), keep_recent_tokens=keep)
        async def locked(func: Any) -> Any:  # planning and writing under the store's lock, summarizing without it
            with access.lock:
                return func()

        done = asyncio.run(
            compact_session(probe, _summarizer(), settings=settings, open_writer=lambda: open_for_writing(sid, store=store), run_blocking=locked)
        )
        if done is None:
            raise ApiError(409, f"{sid}: nothing to compact")
        return {"compacted": True, "leafId": access.open(sid).get_leaf_id()}
    if name == "scrub":
        from ..operations import scrub_session

        mode = body.get("mode", "edit")
        if mode not in ("edit", "rewrite"):
            raise ApiError(400, "mode: expected edit or rewrite")
        files = store.can(StoreCapability.FILES)
        location = store.locator(sid) if files else sid
        with access.lock:  # a session file's rewrite keeps the old content as <file>.secrets.bak (mode 0600)
            scrubbed = scrub_session(location, mode=mode, store=store, backup=mode == "rewrite" and files)
        if mode == "rewrite":
            return {"mode": mode, "secrets": len(scrubbed.hits), "changedLines": scrubbed.changed_lines, "backupKept": scrubbed.backup is not None}
        if scrubbed.not_hidden:
            from ..core.text import plural

            left = ", ".join(dict.fromkeys(f"{h.entry_id or '-'} ({h.field_kind})" for h in scrubbed.not_hidden))
            raise ApiError(
                409,
                f"{sid}: {plural(len(scrubbed.not_hidden), 'secret')} left in the model context: a context edit cannot hide "
                f"them without dropping the whole entry: {left}; "
                f"{plural(len(scrubbed.hits), 'other secret')} hidden by {plural(len(scrubbed.edits), 'context edit')}; "
                "'Remove secrets from the session' (rewrite mode) removes them all",
            )
        return {
            "mode": mode, "secrets": len(scrubbed.hits), "edits": [list(e) for e in scrubbed.edits],
            "omitted": list(scrubbed.omitted), "notHidden": 0,
        }
    raise ApiError(404, f"no action {name!r}")


async def run(name: str, access: StoreAccess, sid_text: str, body: dict[str, Any], *, summarizer: Any = None) -> dict[str, Any]:
    """Run action ``name`` on a session (in a worker thread).

    Args:
        summarizer: the :class:`pi_session.operations.SummarizerConfig` of
            compactions and branch summaries (default: the offline
            extractive summarizer).

    Returns:
        What was written, as JSON.

    Raises:
        ApiError: 400 a bad body, 404 no such session or entry, 409 the
            leaf moved or nothing to do, 422 the session cannot be
            written, 503 the store failed.
    """

    def work() -> dict[str, Any]:
        try:
            return _do(name, access, sid_text, body, summarizer)
        except LeafMovedError as exc:
            raise ApiError(409, str(exc)) from None
        except OperationError as exc:
            raise ApiError(422, str(exc)) from None
        except Exception as exc:  # a summarizer's failure (SummarizerError, a cancelled compaction): one line
            from ..llm import SummarizerError

            if isinstance(exc, SummarizerError):
                raise ApiError(502, f"{sid_text}: the summarizer failed: {exc}") from None
            raise
        except OSError as exc:
            raise ApiError(503, f"{sid_text}: {exc.strerror or exc}") from None

    return await run_in_threadpool(work)


def export(access: StoreAccess, sid_text: str, fmt: str, *, redact: bool = True) -> tuple[bytes, str, str]:
    """A session's export (``format``: ``html``: the viewer page; ``md``;
    ``jsonl``: the session's lines as stored), as ``(bytes, media type,
    file name)``; with ``redact`` every secret the scanner finds is
    replaced by ``[REDACTED:<kind>]`` (:mod:`pi_session.web.masking`, as
    ``export --redact``).

    Raises:
        ApiError: 400 an unknown format, and as :meth:`StoreAccess.open`."""
    from ..operations import export_chunks

    if fmt not in ("html", "md", "jsonl"):
        raise ApiError(400, f"format {fmt[:20]!r}: expected html, md or jsonl")
    sid = access.resolve(sid_text)
    if fmt == "jsonl":
        with access.lock:
            data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in access.store.read_lines(sid))
        return masking_for(redact).jsonl(data, session=sid), "application/x-ndjson", f"{sid}.jsonl"
    manager = access.open(sid, redact=redact)
    chunks, _count = export_chunks(manager, fmt)
    media = "text/html; charset=utf-8" if fmt == "html" else "text/markdown; charset=utf-8"
    return b"".join(chunks), media, f"{sid}.{fmt}"
