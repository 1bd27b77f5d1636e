"""The secret formats :class:`~pi_session.secrets.scanner.Scanner` finds
(:data:`DETECTORS`), each a :class:`Detector`: a regular expression for the
secret and the cheap *anchors* (lower-case literals) that every text
holding such a secret contains. The scanner looks for all anchors at once
(one Aho-Corasick automaton) and runs a detector only on the part of the
line around one of its anchors.

Prefixed formats (the provider issues keys with a fixed prefix; the whole
match is the secret):

- OpenAI ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``, legacy ``sk-`` (32+
  letters and digits, or with ``T3BlbkFJ`` inside); OpenRouter ``sk-or-v1-``;
  Anthropic ``sk-ant-``; Groq ``gsk_``; xAI ``xai-``;
- Google API keys ``AIza`` + 35, OAuth client secrets ``GOCSPX-`` + 28;
- AWS access key ids (``AKIA``, ``ASIA``, ``ABIA``, ``ACCA``, ``A3T…`` + 16);
- GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` and fine-grained
  ``github_pat_``; GitLab ``glpat-``, ``gldt-``, ``glrt-``, ``glptt-``,
  ``glsoat-``, ``glcbt-``;
- Slack ``xox?-`` tokens and ``hooks.slack.com`` webhook URLs; Stripe
  ``sk_live_``/``rk_live_``/``sk_test_``/``rk_test_``; SendGrid ``SG.…``;
  Mailchimp ``…-usN``; Square ``sq0csp-``/``sq0atp-``;
  Shopify ``shpat_``/``shpss_``/``shpca_``/``shppa_``; Databricks ``dapi``;
  DigitalOcean ``dop_v1_``/``doo_v1_``/``dor_v1_``; Context7 ``ctx7sk-``;
  npm ``npm_``; PyPI ``pypi-AgE…``; Hugging Face ``hf_``; Artifactory ``AKCp``; Telegram bot tokens; Azure storage ``AccountKey=``; Twilio
  ``SK…`` keys and Discord bot tokens within 256 characters after the
  word ``twilio`` or ``discord`` (these formats have no fixed part to look
  for);
- JSON Web Tokens (``eyJ….eyJ….…``, signed);
- private key blocks (``-----BEGIN … PRIVATE KEY-----`` with a body, to the
  ``-----END …-----`` line), also with ``\\n`` escapes as in JSON text.

Formats found by their context (the secret is the value only, never the
name, the quotes, a separator or the rest of a command):

- an assignment to a name ending in a secret word (``password``,
  ``passwd``, ``pwd``, ``pass``, ``secret``, ``token``, ``api_key``/
  ``apiKey``/``api-key``, ``access_key``, ``secret_key``, ``private_key``,
  ``auth_key``, ``credential(s)``, ``client_secret``): shell and ``.env``
  (``export GITHUB_TOKEN=…``), JSON (``"api_key": "…"``), YAML
  (``token: …``), TOML and code (``api_key = "…"``, ``apiKey: '…'``),
  query strings (``?access_token=…``), HTTP headers (``x-api-key: …``);
- a command-line option (``--api-key X``, ``--token=X``);
- an ``Authorization:`` header or a ``Bearer`` credential;
- the password of a URL (``scheme://user:PASSWORD@host``).

A context value counts only when it looks like a secret
(:func:`plausible_value`): 8+ characters holding letters and digits (or 20+
characters of high entropy), and not a placeholder (``YOUR_API_KEY``,
``<token>``, ``${VAR}``, ``$VAR``, ``value``, ``changeme``, ``xxx…``,
``…``, ``my-secret``, anything with ``example``), a path, a URL or a code
expression. A prefixed format holding ``EXAMPLE`` (AWS's documentation
keys) is not reported either.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DETECTORS", "Detector", "plausible_value"]


@dataclass(frozen=True)
class Detector:
    """One secret format.

    Attributes:
        secret_type: what hits of it are called (``"GitHub Token"``; their
            kind is its lower-case dashed form, ``github-token``).
        anchors: lower-case literals of which every secret of this format
            (or, for Twilio and Discord keys, whose formats have no fixed
            part, the text just before it) holds one, found in the
            lower-cased text.
        pattern: the secret: its group ``secret``, else the whole match.
        check: a further test of the secret's text, or None.
        priority: where two detectors report overlapping text, the lower
            wins (0: prefixed formats; 1: URL passwords and headers;
            2: assignments and options).
        multiline: the secret may span lines (private key blocks): the
            pattern runs from the anchor over the rest of the text.
        reach: how far (characters) before an anchor a match may start and
            after it may end: the pattern runs over that window of the
            anchor's line only.
        type_of: the type of one match when it depends on the match.
        at_anchor: every match starts where one of the anchors starts:
            the pattern is tried there only (else over the window).
        accept: a further test of the whole match, or None.
    """

    secret_type: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    priority: int = 0
    multiline: bool = False
    type_of: Callable[[re.Match[str]], str] | None = None
    reach: tuple[int, int] = (80, 1024)
    at_anchor: bool = False
    accept: Callable[[re.Match[str]], bool] | None = None

    def type_for(self, hit: re.Match[str]) -> str:
        """The type of one match: :attr:`secret_type`, or what
        :attr:`type_of` says of the match (an assignment to
        ``AWS_SECRET_ACCESS_KEY`` is an AWS secret access key)."""
        return self.type_of(hit) if self.type_of is not None else self.secret_type


_B = r"(?<![A-Za-z0-9])"  # nothing alphanumeric just before
_E = r"(?![A-Za-z0-9])"  # nothing alphanumeric just after
_BD = r"(?<![A-Za-z0-9_-])"
_ED = r"(?![A-Za-z0-9_-])"

_PLACEHOLDER = re.compile(
    r"your|example|placeholder|change_?-?me|redacted|dummy|sample|replace|insert|_here|-here|xxxx|\*\*\*|\.\.\.|…|<|>|\$\{|\{\{|%s|\$\(",
    re.IGNORECASE,
)


def _entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _not_example(value: str) -> bool:
    return "example" not in value.lower()


def plausible_value(value: str) -> bool:
    """Whether ``value`` (what a secret-named assignment, option or header
    holds) looks like a secret: 8+ characters; letters and digits (or 20+
    characters of entropy 4+ bits a character); not a placeholder
    (:data:`_PLACEHOLDER`), a variable (``$X``, ``%X%``), a path (``/``,
    ``./``, ``~/``, a backslash), a URL, or a dotted name
    (``os.environ.KEY``)."""
    if len(value) < 8 or len(value) > 512:
        return False
    if value[0] in "$%@#/.~&*!-" or "\\" in value or "://" in value or _PLACEHOLDER.search(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if not has_alpha:
        return False
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value) and sum(c.isdigit() for c in value) < 3:
        return False  # a dotted name: config.api_key, process.env.TOKEN
    if re.fullmatch(r"\d+(?:\.\d+)+[A-Za-z0-9.-]*", value):
        return False  # a version number
    if not has_digit:
        return len(value) >= 20 and _entropy(value) >= 4.0 and not re.fullmatch(r"[a-z_]+|[A-Z_]+", value)
    return _entropy(value) >= 2.5


def _d(secret_type: str, anchors: tuple[str, ...], pattern: str, *, flags: int = 0, check: Callable[[str], bool] | None = _not_example,
       priority: int = 0, multiline: bool = False, type_of: Callable[[re.Match[str]], str] | None = None,
       reach: tuple[int, int] = (80, 1024), at_anchor: bool = True, accept: Callable[[re.Match[str]], bool] | None = None) -> Detector:
    return Detector(secret_type, anchors, re.compile(pattern, flags), check, priority, multiline, type_of, reach, at_anchor, accept)


_NAME_TAIL = re.compile(r"[A-Za-z0-9_.-]{0,40}\Z")
_OPTION_TAIL = re.compile(r"(?<![A-Za-z0-9-])--?[A-Za-z0-9-]{0,40}\Z")


def _is_option(hit: re.Match[str]) -> bool:
    """Whether the secret word of ``hit`` ends a command-line option's
    name (``--api-key``, ``--client-secret``)."""
    return _OPTION_TAIL.search(hit.string, max(0, hit.start() - 44), hit.start()) is not None


def _assignment_type(hit: re.Match[str]) -> str:
    before = _NAME_TAIL.search(hit.string, max(0, hit.start() - 40), hit.start())
    name = ((before.group() if before else "") + hit.group("name")).lower()
    return "AWS Secret Access Key" if "aws" in name and "secret" in name else "Secret Keyword"


_DEFAULT_PASSWORDS = frozenset(("password", "pass", "passwd", "secret", "admin", "root", "postgres", "mysql", "guest", "test", "user", "changeme", "pwd"))
"""URL passwords that are a default or a placeholder, not a secret."""

_SECRET_WORDS = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key"
    r"|auth[_-]?key|credentials?|master[_-]?key|signing[_-]?key|encryption[_-]?key)"
)
_VALUE = r"[^\s\"'`\\;,&|<>(){}\[\]]"

DETECTORS: tuple[Detector, ...] = (
    # model providers
    _d("OpenAI API Key", ("sk-",), r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}" + _ED),
    _d("OpenAI API Key", ("sk-",), _BD + r"sk-(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|(?!ant-)[A-Za-z0-9]{32,})" + _ED),
    _d("OpenRouter API Key", ("sk-or-",), r"sk-or-v1-[a-f0-9]{64}" + _ED),
    _d("Anthropic API Key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_-]{32,}" + _ED),
    _d("Groq API Key", ("gsk_",), _BD + r"gsk_[A-Za-z0-9]{40,}" + _ED),
    _d("xAI API Key", ("xai-",), _BD + r"xai-[A-Za-z0-9]{60,}" + _ED),
    _d("Google API Key", ("aiza",), r"AIza[0-9A-Za-z_-]{35}" + _ED),
    _d("Google OAuth Client Secret", ("gocspx-",), r"GOCSPX-[A-Za-z0-9_-]{28}" + _ED),
    _d("Hugging Face Token", ("hf_",), _BD + r"hf_[A-Za-z0-9]{30,}" + _ED),
    _d("Context7 API Key", ("ctx7sk",), r"ctx7sk[-_][A-Za-z0-9-]{20,}" + _ED),
    # clouds
    _d("AWS Access Key", ("akia", "asia", "abia", "acca", "a3t"), _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E),
    _d("DigitalOcean Token", ("dop_v1_", "doo_v1_", "dor_v1_"), _BD + r"do[opr]_v1_[a-f0-9]{64}" + _ED),
    _d("Databricks Token", ("dapi",), _B + r"dapi[a-f0-9]{32}(?:-\d+)?" + _E),
    _d("Azure Storage Account access key", ("accountkey=",), r"(?<=AccountKey=)[A-Za-z0-9+/]{86}==", flags=re.IGNORECASE, at_anchor=False),
    # code hosts, chat, payments, registries
    _d("GitHub Token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _BD + r"gh[pousr]_[A-Za-z0-9]{36,}" + _ED),
    _d("GitHub Fine-grained Token", ("github_pat_",), r"github_pat_[A-Za-z0-9]{20,}_[A-Za-z0-9]{20,}" + _ED),
    _d("GitLab Token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-"), r"gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_-]{20,}" + _ED),
    _d("Slack Token", ("xox",), r"xox[abposre]-(?:[0-9]+-)+[A-Za-z0-9]+" + _ED),
    _d("Slack Token", ("hooks.slack.com/",), r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+", at_anchor=False),
    _d("Stripe Access Key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_"), _BD + r"[rs]k_(?:live|test)_[0-9A-Za-z]{24,}" + _ED),
    _d("Twilio API Key", ("twilio",), _B + r"SK[0-9a-fA-F]{32}" + _E, reach=(0, 256), at_anchor=False),
    _d("SendGrid API Key", ("sg.",), _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _ED),
    _d("Mailchimp Access Key", ("-us",), _B + r"[0-9a-f]{32}-us[0-9]{1,2}" + _E, reach=(33, 8), at_anchor=False),
    _d("Square OAuth Secret", ("sq0csp-", "sq0atp-"), r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}" + _ED),
    _d("Shopify Token", ("shpat_", "shpss_", "shpca_", "shppa_"), r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}" + _E),
    _d("NPM tokens", ("npm_",), _BD + r"npm_[A-Za-z0-9]{36,}" + _E),
    _d("PyPI Token", ("pypi-age",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _d("Artifactory Credentials", ("akcp",), _B + r"AKCp[A-Za-z0-9]{60,}" + _E),
    _d("Telegram Bot Token", (":aa",), _B + r"[0-9]{8,10}:AA[0-9A-Za-z_-]{33}" + _ED, reach=(12, 48), at_anchor=False),
    _d("Discord Bot Token", ("discord",), _BD + r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}" + _ED, reach=(0, 256), at_anchor=False),
    # generic formats
    _d("JSON Web Token", ("eyj",), _BD + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _ED, reach=(2, 65536)),
    _d(
        "Private Key", ("-----begin",),
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?=(?:\s|\\[nr])+[A-Za-z0-9+/=]{16})"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
        flags=re.DOTALL, check=None, multiline=True,
    ),
    # by context
    _d("Basic Auth Credentials", ("://",),
       r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'<>]+:(?P<secret>[^\s/@\"'<>]{3,})@[A-Za-z0-9\[]",
       check=lambda v: not _PLACEHOLDER.search(v) and v.lower() not in _DEFAULT_PASSWORDS and not v.startswith("$"), priority=1, at_anchor=False),
    _d("Bearer Token", ("bearer", "authorization"),
       r"(?:\bbearer|\bauthorization\s*[:=]\s*(?:bearer|token|basic|bot)?)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})(?![A-Za-z0-9._~+/=-])",
       flags=re.IGNORECASE, check=plausible_value, priority=1),
    _d("Secret Keyword", ("pass", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
                          "privatekey", "private_key", "private-key", "authkey", "auth_key", "auth-key", "credential"),
       _SECRET_WORDS + r"(?:\s+|=)(?P<q>[\"']?)(?P<secret>" + _VALUE + r"{8,})(?P=q)(?!\S)",
       flags=re.IGNORECASE, check=plausible_value, priority=2, reach=(0, 600), accept=_is_option),
    _d("Secret Keyword", ("pass", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
                          "privatekey", "private_key", "private-key", "authkey", "auth_key", "auth-key", "credential"),
       r"(?P<name>" + _SECRET_WORDS + r")(?:[_-]?[0-9]+)?(?![A-Za-z0-9])"
       r"(?:\\?[\"'`])?\s*(?:=>|:=|=|:)\s*(?:(?P<q>\\?[\"'`])(?P<qsecret>" + _VALUE + r"{8,}?)(?P=q)|(?P<secret>" + _VALUE + r"{8,}))",
       flags=re.IGNORECASE, check=plausible_value, priority=2, type_of=_assignment_type, reach=(0, 600)),
)
"""Every format the scanner finds, most specific first."""
