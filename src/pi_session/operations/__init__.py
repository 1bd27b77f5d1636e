"""The workflows of pi-session, once, under every front end: the CLI
(:mod:`pi_session.cli`), the browser (:mod:`pi_session.browse`) and the
OpenAI Agents SDK session (:mod:`pi_session.integrations.openai_agents`).

- **Opening** (:func:`open_for_reading`, :func:`open_for_writing`): one
  policy. A session is read read-only (an old v1/v2 file is migrated in
  memory only) and opened for writing only once there is something to write
  (then a v1/v2 file is migrated on disk, with its backup, and the
  manager's notes say so). An empty file is refused for reading (pi would
  start a new session in it). Failures are an :class:`OperationError` with
  one line naming the session.
- **Compaction** (:func:`plan_compaction`, :func:`compact_session`,
  :func:`commit_compaction`): prepare, summarize, then commit only if the
  leaf is still where the plan was made (see :func:`commit_compaction` for
  the policy when it moved).
- **Navigation** with a branch summary (planned by
  :meth:`pi_session.SessionManager.plan_navigation`;
  :func:`summarize_branch`, :func:`navigate_session`), and what a move
  that changes nothing (:func:`already_there_message`) or a clone that
  brings back redacted text (:func:`clone_warning`) says.
- **Export** (:func:`check_export_target`, :func:`default_export_name`,
  :func:`export_chunks`, :func:`write_export`; :func:`export_secrets` and
  :func:`redacted_manager` for secrets on a page) and **import** (:func:`import_sessions`).
- **Scrubbing secrets** (:func:`scrub_session`, :func:`find_in_session`,
  :func:`all_sessions`): ``pi-session scrub`` and ``secrets``.
- **Keeping sessions lean** (:func:`slim_session`, :func:`restore_session`,
  :func:`prune_session`): ``pi-session slim``, ``restore`` and ``prune``.

Front ends parse arguments, call these, and print. Nothing here prints.

Each name is imported from its module on first use. Modules: :mod:`.errors`, :mod:`.opening`, :mod:`.compacting`,
:mod:`.navigating`, :mod:`.cloning`, :mod:`.exporting`, :mod:`.importing`, :mod:`.scrubbing`,
:mod:`.slimming`, :mod:`.pruning`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compacting import (
        STRATEGIES,
        CompactionDone,
        CompactionPlan,
        MaskDone,
        SummarizerConfig,
        commit_compaction,
        compact_session,
        compaction_settings,
        keep_recent_source,
        mask_session,
        nothing_to_compact,
        plan_compaction,
        summarize_compaction,
    )
    from .cloning import CloneDone, clone_session
    from .errors import LeafMovedError, OperationError, OutputExists, one_line
    from .exporting import EXPORT_MODE, PRIVATE_MODE, check_export_target, default_export_name, export_chunks, export_secrets, redacted_jsonl, redacted_manager, write_export
    from .importing import STORE_SCHEMES, import_sessions, is_store_url
    from .navigating import already_there_message, clone_warning, navigate_session, summarize_branch
    from .opening import open_for_reading, open_for_writing, save, session_notes
    from .scrubbing import all_sessions, find_in_session, scrub_session
    from .slimming import BlobStore, RestoreResult, SlimResult, restore_session, slim_session
    from .pruning import PruneResult, prune_session

# module -> the public names it provides; each is imported on first use
# (PEP 562), so opening a session does not load compaction or export
_EXPORTS: dict[str, tuple[str, ...]] = {
    "errors": ("OperationError", "LeafMovedError", "OutputExists", "one_line"),
    "cloning": ("CloneDone", "clone_session"),
    "opening": ("open_for_reading", "open_for_writing", "session_notes", "save"),
    "compacting": (
        "SummarizerConfig", "compaction_settings", "CompactionPlan", "CompactionDone", "plan_compaction",
        "nothing_to_compact", "keep_recent_source", "summarize_compaction", "commit_compaction", "compact_session",
        "STRATEGIES", "MaskDone", "mask_session",
    ),
    "navigating": ("summarize_branch", "navigate_session", "already_there_message", "clone_warning"),
    "exporting": (
        "check_export_target", "default_export_name", "export_chunks", "export_secrets", "redacted_jsonl",
        "redacted_manager", "reporting", "write_export", "EXPORT_MODE", "PRIVATE_MODE", "PROGRESS_EVERY",
    ),
    "importing": ("STORE_SCHEMES", "is_store_url", "import_sessions"),
    "scrubbing": ("all_sessions", "find_in_session", "scrub_session"),
    "slimming": ("BlobStore", "SlimResult", "RestoreResult", "slim_session", "restore_session"),
    "pruning": ("PruneResult", "prune_session"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [name for names in _EXPORTS.values() for name in names]


def __getattr__(name: str) -> Any:
    """Import a public name (or a submodule) from its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        if name in _EXPORTS:
            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_EXPORTS})
