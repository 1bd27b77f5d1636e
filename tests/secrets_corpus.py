"""Planted secrets for the secrets tests and bench/secrets_corpus.py: fake
keys in the formats of many services (none is a real key), look-alikes that
are not secrets, and a session with one text in every field kind."""

from __future__ import annotations

import json
from pathlib import Path

# (kind reported, the text around, the secret). Built from pieces so no
# complete key sits in the source as one literal.
_A = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ7"
SECRETS = [
    ("openai-api-key", "key {}", "sk-proj-" + _A + "x_Yz-0123"),
    ("openai-api-key", "OPENAI {}", "sk-svcacct-" + _A + "Z9y8"),
    ("openai-api-key", "legacy {}", "sk-" + _A + "T3BlbkFJ" + _A[:12]),
    ("anthropic-api-key", "ANTHROPIC_API_KEY={}", "sk-ant-api03-" + _A + _A + "-" + _A[:10] + "AA"),
    ("anthropic-api-key", "admin {}", "sk-ant-admin01-" + _A + _A[:20]),
    ("google-api-key", "maps {}", "AIza" + "SyD" + _A[:32]),
    ("hugging-face-token", "HF_TOKEN={}", "hf_" + _A),
    ("aws-access-key", "AWS_ACCESS_KEY_ID={}", "AKIA" + "Z7QW3RT5YU8IO2PL"),
    ("aws-access-key", "aws {}", "ASIA" + "Q4WE7RT1YU3IO6PA"),
    ("github-token", "token {}", "ghp_" + _A + "90"),
    ("github-token", "oauth {}", "gho_" + _A + "12"),
    ("github-token", "app {}", "ghs_" + _A + "34"),
    ("gitlab-token", "GITLAB={}", "glpat-" + "x9Yz8Wv7Ut6Sr5Qp4On3"),
    ("slack-token", "slack {}", "xoxb-" + "2345678901-3456789012345-" + _A[:24]),
    ("slack-token", "user {}", "xoxp-" + "2345678901-3456789012345-3456789012345-" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("slack-token", "hook {}", "https://hooks.slack.com/services/T0" + "1ABCDEF/B02GHIJKL/" + _A[:24]),
    ("stripe-access-key", "stripe {}", "sk_live_" + _A[:24]),
    ("stripe-access-key", "restricted {}", "rk_live_" + _A[:24]),
    ("json-web-token", "Authorization: Bearer {}",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    ("private-key", "{}", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + _A + "\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "{}", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + _A + "\n-----END OPENSSH PRIVATE KEY-----"),
    ("private-key", "{}", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + _A + "\n-----END EC PRIVATE KEY-----"),
    ("private-key", "{}", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQ" + _A + "\n-----END PRIVATE KEY-----"),
    ("basic-auth-credentials", "curl {}", "https://deploy:Xq7" + "pL9mW2vR4@api.example.com/v1"),
    ("basic-auth-credentials", "DATABASE_URL={}", "postgres://app:Zr8" + "tK3nB6yH1@db.internal:5432/app"),
    ("secret-keyword", "{}", 'password = "Wq' + '9zR4tY7uP2"'),
    ("secret-keyword", "{}", 'api_key: "Kd' + '83hf92nd81Lq"'),
    ("secret-keyword", "{}", 'client_secret = "Mn' + '4bV7cX1zL0kJ"'),
    ("secret-keyword", "{}", 'db_pass = "Tr' + '5eW2qA8sD3fG"'),
    ("base64-high-entropy-string", "value = {}", '"' + "q8Zx3Lm9Pv2Nw7Kr4Tb6Yh1Jd5Fs0GcXuVa" + '"'),
    ("hex-high-entropy-string", "digest {}", '"' + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" + '"'),
    ("sendgrid-api-key", "SENDGRID={}", "SG." + _A[:22] + "." + _A + _A[:9]),
    ("twilio-api-key", "twilio {}", "SK" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("mailchimp-access-key", "mc {}", "0a1b2c3d4e5f60718293a4b5c6d7e8f9" + "-us12"),
    ("npm-tokens", "//registry.npmjs.org/:_authToken={}", "npm_" + _A[:36]),
    ("pypi-token", "PYPI={}", "pypi-AgEIcHlwaS5vcmc" + _A + _A + "Abc"),
    ("discord-bot-token", "discord {}", "MTA" + "xNjY5ODI4MDQ5NjYxMzY0OQ.GxYz12.abcdefghijklmnopqrstuvwxyz0123456789AB"),
    ("telegram-bot-token", "TELEGRAM={}", "110201543" + ":AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"),
    ("azure-storage-account-access-key", "{}", "AccountKey=" + "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ=="),
    ("square-oauth-secret", "sq {}", "sq0csp-" + (_A + _A)[:43]),
    ("artifactory-credentials", "art {}", "AKC" + "p8" + _A[:60]),
    ("ibm-cloud-iam-key", "{}", 'ibm_cloud_iam_api_key = "' + "abcd1234abcd1234abcd1234ABCD1234abcd1234--__" + '"'),
    ("github-fine-grained-token", "use {} for the API", "github_pat_11ABCDEFG0" + _A + "_" + _A[:25]),
    ("google-oauth-client-secret", '{{"client_id":"1.apps","client_secret":"{}"}}', "GOCSPX-" + _A[:28]),
    ("digitalocean-token", "the token is {}", "dop_v1_" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9" * 2),
]
"""45 planted secret formats of 29 kinds (several formats of some), each
one a detector of ours or of detect-secrets is made for."""

MORE_SECRETS = [
    ("groq-api-key", "GROQ_API_KEY={}", "gsk_" + _A + _A[:18]),
    ("datadog-api-key", "DD_API_KEY={}", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("private-key", "{}", '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0B' + _A + '\\n-----END PRIVATE KEY-----\\n"'),
    ("secret-keyword", "{}", "export DB_PASSWORD=Hq7" + "vN2kX9mZ4"),
    ("basic-auth-credentials", "{}", "git clone https://oauth2:glpat-" + "x9Yz8Wv7Ut6Sr5Qp4On3@gitlab.com/a/b.git"),
]
"""Formats no detector is made for (or in a form it does not expect):
measured by ``bench/secrets_bench.py`` (recall), not used by the tests."""

LOOKALIKES = [
    "sk-learn is the usual shortening of scikit-learn",
    "DB_PASSWORD=$DB_PASSWORD API_TOKEN=${TOKEN} OPENAI_API_KEY=sk-... GITHUB_TOKEN=<your-token> SECRET_KEY=changeme",
    "the task-ant-colony-optimisation-notes are in docs/",
    "AIza is how Google API keys start",
    "hf_hub_download(repo_id='gpt2') fetches the weights",
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b in the log",
    "uuid 123e4567-e89b-12d3-a456-426614174000 names the run",
    "password = os.environ['DB_PASSWORD']",
    "api_key = get_key()",
    "https://user@example.com/path has no password",
    "the file ./node_modules/.package-lock.json was read",
    "ghp_ tokens start with a prefix",
    "github_pat_ tokens are fine-grained; GOCSPX- starts a client secret; dop_v1_ a DigitalOcean token",
    "-----BEGIN PUBLIC KEY-----",
    "token: ${GITHUB_TOKEN}",
    "secret = \"${SECRET}\"",
    "AKIAIOSFODNN7EXAMPLE is AWS's documentation example",  # allow-listed in the tests
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the quick brown fox jumps over the lazy dog",
    "export PATH=/usr/local/bin:$PATH",
    "x = 'abcdefghijklmnopqrstuvwxyz'",
    "Bearer <token>",
]
"""Texts that look like secrets but are not (the last one is AWS's own documentation example)."""


def field_records(text: str, n: int = 0) -> list[dict]:
    """A session holding ``text`` once in every field kind (header first);
    ids are ``<kind>-<n>``."""
    ts = "2026-11-30T12:00:00.000Z"
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def msg(eid, parent, message):
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}

    a = {"role": "assistant", "api": "x", "provider": "p", "model": "m", "usage": usage, "stopReason": "toolUse", "timestamp": 2}
    recs = [
        {"type": "session", "version": 3, "id": f"0b5f4e2a-0000-4000-8000-{n:012d}", "timestamp": ts, "cwd": text},
        msg(f"u{n}", None, {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}),
        msg(f"a{n}", f"u{n}", {**a, "content": [{"type": "text", "text": text}]}),
        msg(f"k{n}", f"a{n}", {**a, "content": [{"type": "thinking", "thinking": text, "thinkingSignature": "sig"}]}),
        msg(f"c{n}", f"k{n}", {**a, "content": [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": text}}]}),
        msg(f"r{n}", f"c{n}", {"role": "toolResult", "toolCallId": "t1", "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 3}),
        msg(f"b{n}", f"r{n}", {"role": "bashExecution", "command": "env", "output": text, "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 4}),
        {"type": "compaction", "id": f"p{n}", "parentId": f"b{n}", "timestamp": ts, "summary": text, "firstKeptEntryId": f"r{n}", "tokensBefore": 10},
        {"type": "branch_summary", "id": f"s{n}", "parentId": f"p{n}", "timestamp": ts, "fromId": f"u{n}", "summary": text},
        {"type": "custom", "id": f"d{n}", "parentId": f"s{n}", "timestamp": ts, "customType": "ext", "data": {"note": text}},
        {"type": "custom_message", "id": f"m{n}", "parentId": f"d{n}", "timestamp": ts, "customType": "ext", "content": text, "display": True},
        {"type": "label", "id": f"l{n}", "parentId": f"m{n}", "timestamp": ts, "targetId": f"u{n}", "label": text},
        {"type": "session_info", "id": f"i{n}", "parentId": f"l{n}", "timestamp": ts, "name": text},
    ]
    return recs


FIELD_KIND_COUNT = 13
"""How many field kinds :func:`field_records` plants into (one per record)."""


def write_session(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
