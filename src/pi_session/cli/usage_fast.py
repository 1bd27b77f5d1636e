"""``pi-session usage daily|weekly|monthly --json`` answered before the
command line's own modules (typer, rich) load, from the sessions root's
digest (:mod:`pi_session.usage.digest`): when it is fresh a report costs
about the interpreter's start-up, a ``stat`` per session file and the sum
of a few thousand rows; when files changed, the digest is brought up to
date first (:func:`pi_session.usage.digest.refresh_digest`: only what
changed is read and summed again); a report already answered from the
same files (the same options, its slots at the same UTC offsets) is
printed as it was (:func:`pi_session.usage.stamps.load_answers`), without
summing, and directories that did not change are not listed again.

:func:`answer` takes only command lines it reads exactly as ``usage``
does, over session files, and only when the digest (brought up to date) holds no
damaged line (those are warned about on the full path). Anything else —
another kind, a table, ``--help``, an option it does not know, a database
store, a missing directory, a bad date or zone — is left
to the full command, so the output,
warnings and errors are always the full command's.
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["answer", "parse", "sessions_root"]

_VALUED = {"--since": "since", "--until": "until", "--timezone": "timezone", "-z": "timezone", "--by": "by", "--last": "last", "--store": "store"}
_KINDS = ("daily", "weekly", "monthly")


def parse(args: "list[str]") -> "dict[str, Any] | None":
    """The options of a command line (without the program name) that is
    ``[--store URL] usage [KIND] [OPTIONS] --json`` with only options this
    module answers (KIND daily, weekly or monthly), as ``{"kind", "since",
    "until", "timezone", "by", "last", "store"}``; None for anything else.
    ``--last`` is an int; ``--store`` falls back to ``PI_SESSION_STORE``."""
    out: dict[str, Any] = {"kind": None, "since": None, "until": None, "timezone": None, "by": None, "last": None, "store": None}
    as_json = False
    i = 0
    seen_command = False
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if not seen_command:
            if arg == "usage":  # not an entry literal: the subcommand
                seen_command = True
            elif name == "--store":
                if not eq:
                    i += 1
                    if i >= len(args):
                        return None
                    value = args[i]
                out["store"] = value
            else:
                return None
        elif arg == "--json":
            as_json = True
        elif name in _VALUED:
            if not eq:
                i += 1
                if i >= len(args):
                    return None
                value = args[i]
            out[_VALUED[name]] = value
        elif arg.startswith("-") or out["kind"] is not None:
            return None
        else:
            out["kind"] = arg
        i += 1
    if not seen_command or not as_json:
        return None
    if any(value == "" for value in out.values()):
        return None  # an empty value: the full command reads it (and says what is wrong)
    out["kind"] = out["kind"] or "daily"
    if out["kind"] not in _KINDS:
        return None
    if out["last"] is not None:
        if not out["last"].isdigit() or int(out["last"]) < 1:
            return None
        out["last"] = int(out["last"])
    if out["store"] is None:
        out["store"] = os.environ.get("PI_SESSION_STORE") or None
    return out


def sessions_root(store: "str | None") -> "str | None":
    """The sessions root of ``--store`` (a directory given as a path), or
    None when it is not one (a URL, a libpq string, missing) or is written
    in a way only :func:`pi_session.core.paths.resolve_path` reads (``~user``,
    a leading ``//``). A plain path is made absolute here without
    importing :mod:`pi_session.core.paths` (``~/`` expanded, ``.``/``..``
    resolved, symlinks kept: what ``resolve_path`` gives it)."""
    if store is None:
        from ..core.paths import sessions_dir

        root = os.path.abspath(sessions_dir())
    elif "://" in store or "=" in store or not store or store.startswith("//") or (store.startswith("~") and store != "~" and not store.startswith("~/")):
        return None
    else:
        root = os.path.abspath(os.path.expanduser(store))
    return root if os.path.isdir(root) else None


def answer(args: "list[str]") -> bool:
    """Print the report of ``args`` (a command line without the program
    name) and return True when it can be answered from the digest (see
    the module docstring); False, having printed nothing, otherwise."""
    options = parse(args)
    if options is None:
        return False
    root = sessions_root(options["store"])
    if root is None:
        return False
    from ..usage.days import offsets_key
    from ..usage.stamps import load_answers, scan

    answers = load_answers(root)
    found = scan(root, answers)
    if not found.same_files(answers):
        answers = None
    key = "\x1f".join([options["kind"], options["since"] or "", options["until"] or "", options["by"] or "", str(options["last"] or "")])
    try:
        text = answers["texts"].get(f"{key}\x1f{offsets_key(answers['slots'], options['timezone'])}") if answers is not None else None
    except ValueError:
        return False  # not a time zone: the full command says so
    if text is None:
        from ..core.gc_pause import gc_paused

        with gc_paused(promote=False):  # tens of thousands of rows decoded and summed, none of them garbage
            text = _summed(root, found, answers, key, options)
        if text is None:
            return False
    from .answers import write_answer

    return write_answer(lambda: sys.stdout.write(text))


def _summed(root: str, found: "Any", answers: "dict[str, Any] | None", key: str, options: "dict[str, Any]") -> "str | None":
    """The text of the report ``options`` from the root's digest (brought up
    to date first when files changed), remembered under ``key`` and the
    offsets of its slots when the digest was made from the files ``found``
    (:func:`pi_session.usage.stamps.scan`; ``answers``: those remembered
    for them, or None); None when the full command must answer (damaged
    lines, a bad option)."""
    from ..usage.days import offsets_key
    from ..usage.digest import fresh_digest, refresh_digest
    from ..usage.stamps import digest_slots, listing_digest, remember_answer

    # files as they were when answers were remembered: the digest's stamps are the ones kept with them
    stamps = (answers["digest"], answers["files"]) if answers is not None else listing_digest(found.listing)
    digest = fresh_digest(root, stamps)
    if digest is None:
        digest = refresh_digest(root, found.listing)
    if digest.problems:
        return None
    from ..core.jsonio import iter_pretty
    from ..usage.report import report_of_groups

    try:
        report = report_of_groups(
            digest.merged, [], options["kind"], timezone=options["timezone"], since=options["since"], until=options["until"],
            by=options["by"], last=options["last"],
        )
    except ValueError:
        return None  # the full command says what is wrong
    text = "".join(iter_pretty(report.to_json(), 1)) + "\n"
    if (digest.stamps, digest.files) == stamps:  # else files changed meanwhile: the next report looks again
        slots = answers["slots"] if answers is not None else digest_slots(digest)
        remember_answer(root, found, digest, answers, slots, f"{key}\x1f{offsets_key(slots, options['timezone'])}", text)
    return text
