"""What the secret scanner finds and what it leaves alone: every planted
format of ``tests/secrets_corpus.py`` in every field kind, found exactly
(the span is the secret, never a separator, quote or the rest of a
command); no look-alike flagged (ids, hashes, image data, placeholders);
on the real Claude Code, Codex and pi transcripts of ../shared/fixtures,
read raw and imported by the console script, the one hit is the Context7
key pasted in a Claude Code Bash result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SHARED
from secrets_corpus import FIELD_KIND_COUNT, LOOKALIKES, SECRETS, field_records
from pi_session.secrets import Scanner, find_secrets, redact_text

FIXTURES = SHARED / "fixtures"
CONTEXT7_SESSION = "d45db2bf-d60b-4801-a95b-f5f61f4bda64"


@pytest.mark.parametrize("kind,context,secret", SECRETS, ids=[f"{n}-{k}" for n, (k, _c, _s) in enumerate(SECRETS)])
def test_every_format_is_found_exactly_in_every_field_kind(kind, context, secret):
    records = field_records(context.format(secret), 7)
    hits = find_secrets(records)
    assert len({h.field_kind for h in hits}) == FIELD_KIND_COUNT
    assert [(h.kind, h.value) for h in hits] == [(kind, secret)] * FIELD_KIND_COUNT


@pytest.mark.parametrize("text", LOOKALIKES)
def test_a_lookalike_is_no_secret_in_any_field_kind(text):
    assert find_secrets(field_records(text, 3)) == []


@pytest.mark.parametrize(
    "text,redacted",
    [
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUt" + "nFEMI/K7MDENG/bPxRfiCYzz1234QWE; aws s3 ls",
         "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]; aws s3 ls"),
        ("npx -y @upstash/context7-mcp --api-key YOUR_API_KEYctx7sk-" + "ef513293-858b-4d67-a8ca-fa6c4d0e7460 - ✓ Connected",
         "npx -y @upstash/context7-mcp --api-key YOUR_API_KEY[REDACTED:context7-api-key] - ✓ Connected"),
        ('curl -H "Authorization: Bearer Yh5tR8wq' + '2Lm9Kx3Z" -d \'{"password":"Zr8tK3nB' + '6yH1Qw5E"}\' && echo done',
         'curl -H "Authorization: Bearer [REDACTED:bearer-token]" -d \'{"password":"[REDACTED:secret-keyword]"}\' && echo done'),
        ("DB=postgres://app:Zr8" + "tK3nB6yH1@db:5432/app psql", "DB=postgres://app:[REDACTED:basic-auth-credentials]@db:5432/app psql"),
        ("TOKEN=ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ790|gh auth login", "TOKEN=[REDACTED:github-token]|gh auth login"),
    ],
)
def test_redaction_covers_exactly_the_secret(text, redacted):
    with Scanner() as scanner:
        assert redact_text(text, scanner.scan(text)) == redacted


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"needs {path} (the ../shared checkout beside this repository)")


def test_the_real_transcripts_hold_only_the_context7_key():
    _need(FIXTURES / "other-agents")
    files = sorted((FIXTURES / "other-agents").rglob("*.jsonl")) + sorted((FIXTURES / "pi").glob("*.jsonl"))
    assert len(files) >= 12
    hits = [h for path in files for h in find_secrets(path)]
    assert hits and {h.kind for h in hits} == {"context7-api-key"}
    assert {Path(h.session).stem for h in hits} == {CONTEXT7_SESSION}
    assert {h.value[:7] for h in hits} == {"ctx7sk-"} and all(len(h.value) == 43 for h in hits)


def test_imported_real_sessions_hold_only_the_context7_key(cli, tmp_path):
    _need(FIXTURES / "other-agents")
    for fmt, source in (("claude-code", "claude-code/projects"), ("codex", "codex/sessions")):
        proc = cli("import", "--from", fmt, str(FIXTURES / "other-agents" / source), "--json")
        assert proc.returncode == 0, proc.stderr[-2000:]
    found = cli("secrets", "--all", "--json")
    assert found.returncode == 1, found.stderr
    hits = json.loads(found.stdout)
    assert {h["kind"] for h in hits} == {"context7-api-key"}
    assert {h["fieldKind"] for h in hits} == {"tool result"}
    assert "ctx7sk-ef51" not in found.stdout + found.stderr


def test_detect_secrets_inline_pragma_marks_a_line():
    text = "a ghp_" + "Lm3Vn7Bx2Kc9Wd4Rt6Yh1Jp5Fs0GaUeQz8Xy12  # pragma: allowlist secret\nb ghp_" + "Lm3Vn7Bx2Kc9Wd4Rt6Yh1Jp5Fs0GaUeQz8Xy12"
    with Scanner() as scanner:
        [span] = scanner.scan(text)
    assert text[: span.start].endswith("\nb ")
