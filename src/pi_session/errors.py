"""The root of every error pi-session raises, and the whole tree in one place.

Each error of the library derives from :class:`PiSessionError`, so a front
end catches one class and shows ``str(error)``: one line naming the
session, file or line. Errors that are also a builtin kind keep that kind
as a second base (``SessionExistsError`` is a ``FileExistsError``,
``QueryError`` a ``ValueError``, ``AppendError`` an ``OSError``), so code
that catches the builtin keeps working. Each class has one name: a package
that re-exports a class does so under that name.

The tree (indented under its base; the module that defines it, the builtin
kinds it also is; when it is raised)::

    PiSessionError (pi_session.errors) - the root; also ``pi_session.PiSessionError``
        SessionFileError (pi_session.storage.model) - a session file cannot be used: no header, unreadable, not a regular file
            ConcurrentAppendError (pi_session.storage.append) - strict mode: another writer appended since this process read the file
                LeafMovedError (pi_session.storage.append) - an entry planned at one leaf would land on another branch; nothing written
                    FirstKeptOffPathError (pi_session.manager.stale_leaf) - a compaction's first kept entry is off the path it would join
            SessionGoneError (pi_session.storage.append) - the session read was deleted or replaced before an append
        AppendError (pi_session.storage.append; OSError) - an append failed part way; the file still ends on a line boundary
        UnsafePathError (pi_session.storage.guarded; OSError) - something at a path is not what pi-session may use there
        StoreError (pi_session.stores.base) - a store cannot be opened or cannot do what was asked
            CapabilityError (pi_session.stores.base; NotImplementedError) - a store asked for a capability it does not declare
            SessionChangedError (pi_session.stores.base) - a write made only on a session as last read found it changed; nothing done
            SessionExistsError (pi_session.stores.base; FileExistsError) - create() for a session id the store holds already
            SessionNotFoundError (pi_session.stores.base; LookupError) - no session with that id (or id prefix)
                AmbiguousSessionError (pi_session.stores.base) - an id prefix matches several sessions
                    AmbiguousSessionFileError (pi_session.manager.locating) - an id prefix matches several session files
            UnnamableSessionError (pi_session.stores.file) - a session that cannot be given a file name
        EntryNotFoundError (pi_session.compaction.navigation; KeyError) - a move to an entry the session does not hold
        SummarizerError (pi_session.compaction.summarizer) - a model call for a summary failed (key, model, size, server, timeout)
        CompactionCancelled (pi_session.compaction.summary) - a before-compact hook cancelled the compaction; nothing written
        OperationError (pi_session.operations.errors) - a workflow (compact, navigate, export, import, browse action) failed
            OutputExists (pi_session.operations.errors) - an export's output file exists and overwrite was not asked
        QueryError (pi_session.search.query; ValueError) - a search query cannot be parsed
        IndexDamaged (pi_session.search.damage) - the search index is not usable; search catches it and rebuilds the index
        WorkersUnavailable (pi_session.search.shards; OSError) - no indexing worker could start; search writes the shards itself
        SettingsError (pi_session.session.settings; ValueError) - a settings file cannot be read or parsed
        AllowListError (pi_session.secrets.allowlist; ValueError) - a secrets allow-list file or a re: line in it is bad
        FrontmatterError (pi_session.prompt.frontmatter; ValueError) - a skill's or prompt's frontmatter is not valid YAML
        RecordError (pi_session.importers.common) - an import source record the conversion could not use
        InvalidItemError (pi_session.integrations.openai_agents.convert; ValueError, TypeError) - an Agents SDK item that cannot be stored
        ConversationDataError (pi_session.integrations.pydantic_ai.layout) - a conversation's session holds a damaged message or record
            MissingEntryError (pi_session.integrations.pydantic_ai.layout; LookupError) - an entry a conversation names is not stored
        UnstorableValueError (pi_session.integrations.pydantic_ai.convert; ValueError) - a Pydantic AI value JSON cannot hold; nothing written
        CliError (pi_session.cli.common) - a command fails with one line and exit status 1
        ApiError (pi_session.web.data) - the web API refuses a request (carries the HTTP status)
        UnixSocketError (pi_session.web.unix_socket; ValueError) - serve cannot make its Unix socket safely at the path asked

Warnings (issued with :func:`warnings.warn`, never raised; not errors)::

    OwnershipWarning (pi_session.storage.atomic; UserWarning) - a rewritten file could not keep its owner or group
    CacheWarning (pi_session.storage.cache; UserWarning) - a cache directory another user could change is not used

``tests/test_errors.py`` checks this tree against every module of the
package.
"""

from __future__ import annotations

__all__ = ["PiSessionError"]


class PiSessionError(Exception):
    """Bad input or state found by pi-session; ``str(error)`` is one line
    for the user. Catch this to handle every error the library raises on
    purpose (an unexpected bug raises something else)."""
