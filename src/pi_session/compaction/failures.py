"""Failures in a history's tool output (**beyond pi**): which line of
output states an error, what a command targets, which commands only look
things up, when a later reply reports it passing, and the
:class:`ErrorFact` a failure becomes. The rules of
:mod:`pi_session.compaction.facts` (module docs, *unresolved errors*) use
them; the extractive summarizer and the compaction probes quote them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .keywords import RUNTIME_NOTE_PATTERN, clip, collapse, normalize
from ..entries.questions import ASSISTANT

__all__ = [
    "LOOKUP_TOOLS",
    "ErrorFact",
    "command_key",
    "error_line",
    "is_aborted_output",
    "is_lookup_command",
    "is_noise_line",
    "command_subjects",
    "reports_passing",
]


_FAILED_LINE_RE = re.compile(r"^\s*FAILED\b")
_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):")
_ERROR_STATEMENT_RE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception)|(?i:error|fatal))\s*:"
    r"|^\s*(?:ERROR|FATAL)\b|^\s*npm ERR!"
    r"|^\S+:\d+(?::\d+)?:\s*(?:fatal )?error\b",
)
_ERROR_WORD_RE = re.compile(r"\b(?:\w*Error|\w*Exception|error|failed|failure|fatal)\b", re.I)
LOOKUP_TOOLS = frozenset({"read", "ls", "grep", "find", "glob", "search"})
_LOOKUP_COMMANDS = frozenset(
    {"grep", "rg", "ag", "ack", "find", "fd", "ls", "cat", "head", "tail", "wc", "which", "type", "file", "stat",
     "tree", "less", "more", "diff", "cmp", "test", "["}
)
_ABORTED_RE = re.compile(r"^\s*(?:command|operation|request)?\s*(?:was\s+)?(?:aborted|cancell?ed|interrupted)\b", re.I)
_NOISE_RE = re.compile(r"^\s*(?:" + RUNTIME_NOTE_PATTERN + r"|(?:npm )?(?:WARN|warn(?:ing)?)\b.*|>\s.*)\s*$")
_EXIT_CODE_RE = re.compile(r"^\s*(?:Command )?exited with (?:exit )?code (\d+)\s*$|^\s*Exit code: (\d+)\s*$", re.I)
_FAILURE_PHRASE_RE = re.compile(
    r"No such file or directory|not found|Permission denied|cannot |can't |could not |couldn't |unable to "
    r"|refused|denied|invalid|not allowed|missing|does not exist|is not|unknown (?:option|command)",
    re.I,
)


def is_noise_line(line: str) -> bool:
    """True for a line a tool prints around its real output that states
    nothing about success or failure: a debugger attaching, a runtime
    warning, npm's ``> script`` echo."""
    return bool(_NOISE_RE.match(line))


def is_aborted_output(text: str) -> bool:
    """True when a tool's output says the command was aborted (cancelled,
    interrupted): its first or its last non-empty line."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and bool(_ABORTED_RE.match(lines[0]) or _ABORTED_RE.match(lines[-1]))


def _traceback_exception_line(lines: list[str]) -> str:
    start = None
    for n, line in enumerate(lines):
        if _TRACEBACK_RE.match(line):
            start = n
    if start is None:
        return ""
    for line in lines[start + 1 :]:
        if line.strip() and not line[:1].isspace():
            return line.strip()
    return ""


def error_line(text: str, *, strict: bool = False) -> str:
    """The line of tool output that carries the error, or ``""``.

    In order: the first line starting with ``FAILED``; the exception line of
    the last Python traceback; the first line stating an error
    (``SomeError: ...``, ``Error: ...``, ``error: ...``, ``npm ERR!``,
    ``file:line: error ...``). Unless ``strict``: then the first line that
    mentions an error, then the last line with a failure phrase ("No such
    file or directory", "Permission denied", "cannot" ...), then the last
    line of output before the exit status, then the exit status. Lines that
    state nothing (a debugger attaching, runtime warnings,
    :func:`is_noise_line`) are never the error line. ``strict`` (for output
    of a command that did not report failure) gives ``""`` when no line
    clearly states an error."""
    lines = [line for line in text.splitlines() if not is_noise_line(line)]
    for line in lines:
        if _FAILED_LINE_RE.match(line):
            return line.strip()
    found = _traceback_exception_line(lines)
    if found:
        return found
    for line in lines:
        if _ERROR_STATEMENT_RE.match(line):
            return line.strip()
    if strict:
        return ""
    for line in lines:
        if _ERROR_WORD_RE.search(line):
            return line.strip()
    for line in reversed(lines):
        if _FAILURE_PHRASE_RE.search(line) and not _EXIT_CODE_RE.match(line):
            return line.strip()
    output = [line.strip() for line in lines if line.strip() and not _EXIT_CODE_RE.match(line)]
    if output:
        return output[-1]
    return next((line.strip() for line in lines if line.strip()), "")


def _strip_command(command: str) -> str:
    """What a command runs: the last command of a ``&&`` / ``;`` chain
    (``cd``, ``export`` and ``source`` steps skipped), without what follows
    a pipe and without redirections."""
    cmd = collapse(command)
    parts = re.split(r"\s*(?:&&|;)\s*", cmd)
    parts = [p for p in parts if p and not re.match(r"^(?:cd|pushd|export|source|\.)\s", p)]
    cmd = parts[-1] if parts else cmd
    cmd = cmd.split(" | ", 1)[0].split("|", 1)[0] if "|" in cmd else cmd
    cmd = re.sub(r"\s*\d?>&?\d?\s*\S*$", "", cmd) if re.search(r"\d?>", cmd) else cmd
    cmd = re.sub(r"\s+\d>&\d", "", cmd)
    return cmd.strip()


def command_key(command: str) -> tuple[str, ...]:
    """The target of a command: the first three non-option words of
    :func:`_strip_command` (``npm run check``, ``pytest tests/x.py``)."""
    words = [w for w in _strip_command(command).split() if not w.startswith("-")]
    return tuple(words[:3])


def is_lookup_command(command: str) -> bool:
    """True for a command that only looks things up (``grep``, ``cat``,
    ``ls``, ``find``, ``head``, ``sed -n``, ``git status/log/diff`` ...), judged
    by what :func:`_strip_command` leaves."""
    words = _strip_command(command).split()
    if not words:
        return False
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "sed" and "-n" in words:
        return True
    if prog == "git" and len(words) > 1 and words[1] in ("status", "log", "diff", "show", "grep", "ls-files"):
        return True
    return prog in _LOOKUP_COMMANDS


_PASS_CLAIM_RE = re.compile(r"\b(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?|fixed|works)\b")
_NOT_A_CLAIM_RE = re.compile(
    r"\b(?:fail\w*|error\w*|not|no|never|still|broken|should|will|would|could|might|may|if|until|unless"
    r"|expect\w*|hopefully|whether|let us)\b"
)
_TEST_RUNNERS = frozenset(
    {"pytest", "py.test", "jest", "vitest", "mocha", "tox", "nox", "unittest", "phpunit", "rspec", "ctest"}
)
_TEST_WORDS = frozenset({"test", "tests", "testing", "suite", "specs", "spec"})


def _path_names(word: str) -> set[str]:
    """A path-like word's base name, the name without its extension, and
    that without a ``test_`` prefix or ``_test`` / ``.test`` / ``.spec``
    suffix (``tests/test_tax.py`` -> test_tax.py, test_tax, tax)."""
    base = word.rstrip("/").rsplit("/", 1)[-1].lower()
    stem = base.split(".", 1)[0] if not base.startswith(".") else base
    names = {base, stem}
    for prefix in ("test_", "test-"):
        if stem.startswith(prefix):
            names.add(stem[len(prefix):])
    for suffix in ("_test", "-test", "_spec", ".test", ".spec"):
        if stem.endswith(suffix):
            names.add(stem[: -len(suffix)])
    return {n for n in names if len(n) >= 2}


def command_subjects(key: tuple[str, ...]) -> set[str]:
    """What a failed command is about, as words a later reply would name:
    the names of the paths it was given (:func:`_path_names`), else "test"
    and "tests" for a test run (``pytest``, ``npm test``, ``cargo test``,
    ``make test`` ...), else its words after the program (``npm run check``
    -> run, check; a lone program: its name)."""
    words = [w.lower() for w in key]
    paths = [w for w in words[1:] if "/" in w or "." in w.strip(".")]
    if paths:
        return set().union(*(_path_names(w) for w in paths))
    prog = words[0].rsplit("/", 1)[-1] if words else ""
    if prog in _TEST_RUNNERS or any(w in ("test", "tests") for w in words[1:]):
        return {"test", "tests"} | _TEST_WORDS
    rest = {w for w in words[1:] if w not in ("run", "exec")}
    return rest or ({prog} if prog else set())


def reports_passing(sentence: str, subjects: set[str]) -> bool:
    """True when an assistant sentence states that something named by
    ``subjects`` now passes ("src/tax.py now rounds once; its tests pass",
    "npm run check is green"): a word of success (pass, green, succeeded,
    fixed, works), none of failure, negation or expectation ("still fails",
    "not passing", "should pass once ..."), and a word or path naming one
    of ``subjects``."""
    text = normalize(sentence)
    if not _PASS_CLAIM_RE.search(text) or _NOT_A_CLAIM_RE.search(text):
        return False
    for raw in text.split():
        word = raw.strip(".,;:!?'\"()[]")
        if not word:
            continue
        names = _path_names(word) if ("/" in word or "." in word.strip(".")) else {word}
        if names & subjects:
            return True
    return False


@dataclass
class ErrorFact:
    """A failure found in the history.

    Attributes:
        index: index of the failing message in the history.
        tool: tool name, ``"user shell"`` for a command the user ran, or
            ``"assistant"`` for a failed assistant turn.
        target: the path or command (``""`` for an assistant turn).
        line: the line stating the error (at most 200 characters).
        resolved: a later success on the same target was found.
    """

    index: int
    tool: str
    target: str
    line: str
    key: tuple[str, ...] = ()
    resolved: bool = False

    def describe(self) -> str:
        """One line: ``tool `target`: error line``."""
        if self.tool == ASSISTANT:
            return f"assistant turn failed: {self.line}"
        where = f" `{clip(self.target, 100)}`" if self.target else ""
        return f"{self.tool}{where} failed: {self.line}"
