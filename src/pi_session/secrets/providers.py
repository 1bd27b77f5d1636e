"""detect-secrets plugins of ours for the model providers' API key formats
(OpenAI, Anthropic, Google, Hugging Face). detect-secrets loads this file
as a custom plugin module (``{"name": ..., "path": "file://<this file>"}``
in its settings, see :mod:`pi_session.secrets.scanner`); each class is a
:class:`detect_secrets.plugins.base.RegexBasedDetector`, whose whole match
is the secret (the patterns have no capturing groups).

Formats (as the providers issue them, 2024-2026):

- OpenAI: ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…`` (then 20+ of
  ``[A-Za-z0-9_-]``) and the legacy ``sk-`` + 32+ letters and digits;
  never ``sk-ant-`` (Anthropic's).
- Anthropic: ``sk-ant-`` (``api03-``, ``admin01-``, ``oat01-``, …) + 32+ of
  ``[A-Za-z0-9_-]``.
- Google (Gemini, Maps, Firebase): ``AIza`` + exactly 35 of ``[0-9A-Za-z_-]``.
- Hugging Face: ``hf_`` + 30+ letters and digits (user access tokens).

And three services detect-secrets 1.5 has no plugin for (or one that
misses this format):

- GitHub fine-grained personal access tokens: ``github_pat_`` + 20+
  letters and digits + ``_`` + 20+ letters and digits (GitHub issues 22
  and 59; detect-secrets knows only ``ghp_``/``gho_``/… tokens);
- Google OAuth client secrets: ``GOCSPX-`` + 28 of ``[A-Za-z0-9_-]``;
- DigitalOcean tokens: ``dop_v1_``, ``doo_v1_``, ``dor_v1_`` + 64 hex digits.

And one for ``.env`` lines (:class:`EnvSecretAssignmentDetector`).
"""

from __future__ import annotations

import re

from detect_secrets.plugins.base import RegexBasedDetector

_END = r"(?![A-Za-z0-9_-])"
_START = r"(?<![A-Za-z0-9_-])"


class OpenAIKeyDetector(RegexBasedDetector):
    """OpenAI API keys: project, service-account, admin and legacy user keys."""

    secret_type = "OpenAI API Key"
    denylist = [
        re.compile(_START + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}" + _END),
        re.compile(_START + r"sk-(?!ant-)[A-Za-z0-9]{32,}" + _END),
    ]


class AnthropicKeyDetector(RegexBasedDetector):
    """Anthropic API, admin and OAuth keys (``sk-ant-…``)."""

    secret_type = "Anthropic API Key"
    denylist = [re.compile(_START + r"sk-ant-[A-Za-z0-9_-]{32,}" + _END)]


class GoogleAPIKeyDetector(RegexBasedDetector):
    """Google API keys (``AIza`` + 35 characters)."""

    secret_type = "Google API Key"
    denylist = [re.compile(_START + r"AIza[0-9A-Za-z_-]{35}" + _END)]


class HuggingFaceTokenDetector(RegexBasedDetector):
    """Hugging Face user access tokens (``hf_…``)."""

    secret_type = "Hugging Face Token"
    denylist = [re.compile(_START + r"hf_[A-Za-z0-9]{30,}" + _END)]


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """GitHub fine-grained personal access tokens (``github_pat_…``)."""

    secret_type = "GitHub Fine-grained Token"
    denylist = [re.compile(_START + r"github_pat_[A-Za-z0-9]{20,}_[A-Za-z0-9]{20,}" + _END)]


class GoogleOAuthClientSecretDetector(RegexBasedDetector):
    """Google OAuth client secrets (``GOCSPX-`` + 28 characters)."""

    secret_type = "Google OAuth Client Secret"
    denylist = [re.compile(_START + r"GOCSPX-[A-Za-z0-9_-]{28}" + _END)]


class DigitalOceanTokenDetector(RegexBasedDetector):
    """DigitalOcean personal access, OAuth and refresh tokens."""

    secret_type = "DigitalOcean Token"
    denylist = [re.compile(_START + r"do[opr]_v1_[a-f0-9]{64}" + _END)]


class EnvSecretAssignmentDetector(RegexBasedDetector):
    """A value assigned to an environment variable named as a secret, as
    ``.env`` files and ``env`` print them, unquoted
    (``DB_PASSWORD=…``, ``export GITHUB_TOKEN=…``): an upper-case name
    holding PASSWORD, PASSWD, SECRET, TOKEN, API_KEY, APIKEY, ACCESS_KEY,
    PRIVATE_KEY or CREDENTIAL, then ``=`` and 8+ characters without blanks,
    quotes or ``$``, holding a digit and no ``...`` (placeholders such as
    ``sk-ant-...`` or ``your-key-here`` are not secrets; detect-secrets' keyword plugin wants quotes outside
    config files, and its config-file patterns flag code such as
    ``apiKey = await getKey()``)."""

    secret_type = "Secret Environment Variable"
    denylist = [
        re.compile(
            r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)"
            r"[A-Z0-9_]*=(?![^\s]*(?:\.\.\.|…))(?=[^\s]*[0-9])([^\s'\"`$<>(){}\[\]]{8,})"
        )
    ]


PROVIDER_PLUGINS = (
    "OpenAIKeyDetector", "AnthropicKeyDetector", "GoogleAPIKeyDetector", "HuggingFaceTokenDetector",
    "GitHubFineGrainedTokenDetector", "GoogleOAuthClientSecretDetector", "DigitalOceanTokenDetector",
    "EnvSecretAssignmentDetector",
)
"""The class names of this module's plugins (as detect-secrets settings name them)."""
