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
    ("basic-auth-credentials", "curl https://deploy:{}@api.example.com/v1", "Xq7" + "pL9mW2vR4"),
    ("basic-auth-credentials", "DATABASE_URL=postgres://app:{}@db.internal:5432/app", "Zr8" + "tK3nB6yH1"),
    ("secret-keyword", 'password = "{}"', "Wq" + "9zR4tY7uP2"),
    ("secret-keyword", 'api_key: "{}"', "Kd" + "83hf92nd81Lq"),
    ("secret-keyword", 'client_secret = "{}"', "Mn" + "4bV7cX1zL0kJ"),
    ("secret-keyword", 'db_pass = "{}"', "Tr" + "5eW2qA8sD3fG"),
    ("sendgrid-api-key", "SENDGRID={}", "SG." + _A[:22] + "." + _A + _A[:9]),
    ("twilio-api-key", "twilio {}", "SK" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("mailchimp-access-key", "mc {}", "0a1b2c3d4e5f60718293a4b5c6d7e8f9" + "-us12"),
    ("npm-tokens", "//registry.npmjs.org/:_authToken={}", "npm_" + _A + "Q1"),
    ("pypi-token", "PYPI={}", "pypi-AgEIcHlwaS5vcmc" + _A + _A + "Abc"),
    ("discord-bot-token", "discord {}", "MTA" + "xNjY5ODI4MDQ5NjYxMzY0OQ.GxYz12.abcdefghijklmnopqrstuvwxyz0123456789AB"),
    ("telegram-bot-token", "TELEGRAM={}", "110201543" + ":AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"),
    ("azure-storage-account-access-key", "DefaultEndpointsProtocol=https;AccountKey={};EndpointSuffix=x", "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ=="),
    ("square-oauth-secret", "sq {}", "sq0csp-" + (_A + _A)[:43]),
    ("artifactory-credentials", "art {}", "AKC" + "p8" + _A + _A),
    ("secret-keyword", 'ibm_cloud_iam_api_key = "{}"', "abcd1234abcd1234abcd1234ABCD1234abcd1234--__"),
    ("github-fine-grained-token", "use {} for the API", "github_pat_11ABCDEFG0" + _A + "_" + _A[:25]),
    ("google-oauth-client-secret", '{{"client_id":"1.apps","client_secret":"{}"}}', "GOCSPX-" + _A[:28]),
    ("digitalocean-token", "the token is {}", "dop_v1_" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9" * 2),
    # the forms people paste: command lines and headers
    ("secret-keyword", "npx -y @upstash/context7-mcp --api-key {} --port 3000", "Kd83hf92" + "nd81Lq7Zp"),
    ("secret-keyword", "deploy --token={} && echo ok", "Tq72mB9x" + "Lw4Rz81K"),
    ("secret-keyword", "curl -H \"x-api-key: {}\" https://api.example.com", "Pz93kL2m" + "Qw8Rt61V"),
    ("bearer-token", "curl -H 'Authorization: Bearer {}' https://api.example.com", "Yh5tR8wq" + "2Lm9Kx3Z"),
    ("bearer-token", "Authorization: token {}", "Nc4vB7xz" + "9Qp2Lm6W"),
    # assignments: shell, .env, JSON, YAML, TOML, code
    ("aws-secret-access-key", "export AWS_SECRET_ACCESS_KEY={}; aws s3 ls", "wJalrXUt" + "nFEMI/K7MDENG/bPxRfiCYzz1234QWE"),
    ("secret-keyword", "STRIPE_WEBHOOK_SECRET={}\nDEBUG=1", "Hq7vN2kX" + "9mZ4Rw8T"),
    ("secret-keyword", '{{"service": "db", "password": "{}"}}', "Zr8tK3nB" + "6yH1Qw5E"),
    ("secret-keyword", "database:\n  host: db\n  password: {}\n", "Vm3xC8zQ" + "1pL7Wk4N"),
    ("secret-keyword", '[auth]\napi_key = "{}"\n', "Gt6yU1iO" + "9pA3sD5F"),
    ("secret-keyword", "client = Client(api_key=\"{}\", timeout=3)", "Jk2lZ8xC" + "4vB7nM1Q"),
    ("secret-keyword", "const apiKey = '{}';", "Wd5fG9hJ" + "2kL6zX3C"),
    ("basic-auth-credentials", "git remote add origin https://alice:{}@git.example.com/r.git", "Rf4tG7hY" + "2uJ9kL"),
    # more providers
    ("github-token", "GITHUB_TOKEN={}", "ghp_" + _A[::-1] + "77"),
    ("context7-api-key", "--api-key YOUR_API_KEY{} - Connected", "ctx7sk-" + "ef513293-858b-4d67-a8ca-fa6c4d0e7460"),
    ("databricks-token", "DATABRICKS_HOST=x {}", "dapi" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("shopify-token", "shopify {}", "shpat_" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("openrouter-api-key", "router {}", "sk-or-v1-" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9" * 2),
    ("groq-api-key", "GROQ {}", "gsk_" + _A + _A[:18]),
    ("google-oauth-client-secret", 'yaml: client_secret: {}', "GOCSPX-" + _A[5:33]),
    ("digitalocean-token", "Use this DigitalOcean key {} in prose", "dop_v1_" + "f9e8d7c6b5a4" * 5 + "0a1b"),
    # pasted inside other text
    ("secret-keyword", "DD_API_KEY={}", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("private-key", '"private_key": "{}"', "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0B" + _A + "\\n-----END PRIVATE KEY-----"),
    ("secret-keyword", "export DB_PASSWORD={}", "Hq7" + "vN2kX9mZ4"),
    ("gitlab-token", "git clone https://oauth2:{}@gitlab.com/a/b.git", "glpat-" + "x9Yz8Wv7Ut6Sr5Qp4On3"),
]
"""Planted secret formats, each one a detector is made for: the prefixed
formats of the major providers and the forms people paste (options,
headers, assignments in shell, ``.env``, JSON, YAML, TOML and code, URLs
with passwords)."""

LOOKALIKES = [
    "sk-learn is the usual shortening of scikit-learn",
    # ids and hashes
    '{"agentId": "a04dca96edd22ac8c", "status": "completed"} resume with agent a04dca96edd22ac8c',
    "tool call toolu_01A2b3C4d5E6f7G8h9J0kLmN and call_Xy7Zq2Lm9Pv4Nw8Kr3Tb6Yh1 and fc_68a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5",
    "run 0197f3a2-6b1c-7d4e-8f90-1a2b3c4d5e6f and 123e4567-e89b-12d3-a456-426614174000",
    'digest "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" of the file',
    '"integrity": "sha512-3bMSbOUQjgmjv5FK6wqnjfQ1nAqf8UlgCAWXRo6tIGQ7jE7F5s8vZZjK1AhKu4dkq7oH2ag==", "resolved": "x"',
    "pip install --require-hashes foo==1.0 --hash=sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    "git checkout 3f2a9c1e7b4d8a6f0e5c2b9d1a7f3e8c4b6d2a9f && git log -1 e3b0c442",
    "![img](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    '"signature": "EqQBCkYIBRgCKkBx3rL9mZ2vN8kQ7tY4pW1sJ6hF0dG5cA", "thinking": "plan"',
    # placeholders
    "npx -y @upstash/context7-mcp --api-key YOUR_API_KEY",
    '"MY_API_KEY": "value", "secret_name": "my-secret", "password": "changeme"',
    "curl -H 'Authorization: Bearer <token>' -H \"x-api-key: ${API_KEY}\" https://api.example.com",
    "export OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx; export TOKEN=$GITHUB_TOKEN",
    'api_key = "your-api-key-here"\npassword: "********"\ntoken: <YOUR_TOKEN>',
    "postgres://user:password@localhost:5432/db and https://user:${PASS}@host/x",
    "PASSWORD_FILE=/run/secrets/db_password TOKEN_URL=https://auth.example.com/token",
    '{"max_tokens": 4096, "input_tokens": 1234, "tokenizer": "cl100k_base", "token_type": "bearer"}',
    "token = response.json()['access_token'] and password = getpass.getpass()",
    "the password is stored in the keychain; pass --token-file ~/.config/token to the CLI",
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


BASH_KEYS = [SECRETS[0][2], SECRETS[3][2]]
"""The keys :func:`bash_env_session` puts in bash outputs."""


def bash_env_session(path: Path, *, summary_key: str | None = None, session_id: str = "0b5f4e2a-0000-4000-8000-0000000000b5") -> Path:
    """What pi writes when the user runs ``!cat .env`` (a ``bashExecution``
    message ``bash1`` in the context, holding ``BASH_KEYS[0]``) and ``!!cat
    .env.local`` (``bash2``, ``excludeFromContext``: in pi's context, not
    sent to the model; ``BASH_KEYS[1]``), then asks about it; with
    ``summary_key``, a compaction ``cmp1`` before them whose summary quotes
    that key."""
    ts = "2026-11-30T12:00:00.000Z"
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def msg(eid: str, parent: str | None, message: dict) -> dict:
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}

    def bash(command: str, output: str, **more: object) -> dict:
        return {"role": "bashExecution", "command": command, "output": output, "exitCode": 0, "cancelled": False,
                "truncated": False, "timestamp": 2, **more}

    records: list[dict] = [{"type": "session", "version": 3, "id": session_id, "timestamp": ts, "cwd": "/proj"}]
    parent = None
    if summary_key is not None:
        records.append(msg("u0", None, {"role": "user", "content": "set up the project", "timestamp": 1}))
        records.append({"type": "compaction", "id": "cmp1", "parentId": "u0", "timestamp": ts,
                        "summary": f"## Goal\nUse the key {summary_key} for the deploy.", "firstKeptEntryId": "cmp1", "tokensBefore": 10})
        parent = "cmp1"
    records += [
        msg("bash1", parent, bash("cat .env", f"OPENAI_API_KEY={BASH_KEYS[0]}\nDEBUG=1\n")),
        msg("bash2", "bash1", bash("cat .env.local", f"ANTHROPIC_API_KEY={BASH_KEYS[1]}\n", excludeFromContext=True)),
        msg("ask1", "bash2", {"role": "user", "content": "is the key in .env set?", "timestamp": 3}),
        msg("ans1", "ask1", {"role": "assistant", "content": [{"type": "text", "text": "Yes, OPENAI_API_KEY is set."}], "api": "x",
                             "provider": "p", "model": "m", "usage": usage, "stopReason": "stop", "timestamp": 4}),
    ]
    return write_session(path, records)
