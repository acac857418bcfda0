"""What a credential is called and what one looks like: the one rule every surface shares.

The cassette scrubber, ``harness cassette check``, the blackboard tools, the MCP
``_meta`` converters, the adapters' error messages and the wire server all ask here.

**Names.** A name is split into lower-case words at separators (``-``, ``_``, ``.``,
spaces) and camelCase humps (``awsSecretAccessKey`` -> aws, secret, access, key). It
names a credential when

- a word is a credential word (``auth``, ``authorization``, ``session``, ``cookie``,
  ``signature``, ``credential``, ``passphrase``, ``dsn``, ``jwt``...), or the words
  glued together contain one (``secret``, ``passw``, ``apikey``, ``accesstoken``...);
- the last word is ``token`` or ``sig`` (``max_tokens`` is not: ``tokens``);
- ``key`` follows a word that says what kind of key (``api``, ``secret``, ``private``,
  ``ssh``, ``signing``, ``access``...: ``aws_access_key_id``), or is the last word and
  does not follow a word that says it is no secret (``cache``, ``idempotency``,
  ``sort``, ``public``...: ``prompt_cache_key``);
- it is a connection string: a store (``database``, ``db``, ``redis``...) and a last
  word ``url``, ``uri``, ``dsn`` or ``string`` (``database_url``).

Headers add ``organization`` and ``openai-project`` (and skip ``x-ratelimit-*``,
``content-*``, ``accept*``); query and form parameters add ``code`` (OAuth).

**Values.** ``credential_shapes`` finds text shaped like a provider key: OpenAI and
Anthropic keys, Google API keys, GitHub tokens, AWS access key ids, Slack tokens.

**Placeholders.** ``is_placeholder`` says a value is a stand-in (empty, ``[hidden]``,
``<...>``, ``***``, ``xxx``, ``...-XXX``, ``redacted``, ``fake``/``dummy``/``test`` values).
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "credential_shapes",
    "credential_words",
    "is_credential_field",
    "is_credential_header",
    "is_credential_name",
    "is_credential_param",
    "is_placeholder",
]

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_WORDS = frozenset(
    {
        "auth",
        "oauth",
        "authorization",
        "authorisation",
        "authenticate",
        "authentication",
        "session",
        "cookie",
        "cookies",
        "signature",
        "credential",
        "credentials",
        "passphrase",
        "passcode",
        "pwd",
        "dsn",
        "jwt",
        "bearer",
        "otp",
    }
)
"""A name holding one of these words names a credential."""
_GLUED = (
    "secret",
    "passw",
    "apikey",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "sessiontoken",
    "privatekey",
    "secretkey",
    "sessionid",
)
"""...and so does one whose words, glued together, contain one of these."""
_LAST = frozenset({"token", "sig"})
_KEY_KINDS = frozenset(
    {
        "api",
        "secret",
        "private",
        "ssh",
        "signing",
        "access",
        "encryption",
        "master",
        "client",
        "license",
        "licence",
        "service",
        "session",
        "auth",
        "app",
        "deploy",
        "hmac",
        "webhook",
        "consumer",
        "gpg",
        "pgp",
        "rsa",
    }
)
"""``<kind> key`` anywhere in a name is a credential (``aws_access_key_id``)."""
_NOT_SECRET_KEYS = frozenset(
    {
        "cache",
        "idempotency",
        "sort",
        "partition",
        "primary",
        "foreign",
        "public",
        "group",
        "grouping",
        "dedup",
        "dedupe",
        "routing",
        "lookup",
        "index",
        "hash",
        "row",
        "map",
        "object",
        "item",
        "entry",
        "shard",
        "search",
        "order",
        "unique",
        "composite",
        "join",
        "table",
        "cursor",
        "page",
    }
)
"""``<word> key`` at the end of a name is no credential for these words."""
_STORES = frozenset(
    {
        "database",
        "db",
        "redis",
        "postgres",
        "postgresql",
        "pg",
        "mysql",
        "mongo",
        "mongodb",
        "amqp",
        "rabbitmq",
        "broker",
        "sqlalchemy",
        "connection",
        "conn",
    }
)
_STORE_LAST = frozenset({"url", "uri", "dsn", "string"})


def credential_words(name: str) -> tuple[str, ...]:
    """``name`` as lower-case words (separators and camelCase humps split it)."""
    return tuple(w.lower() for w in _WORD.findall(str(name)))


def _unglued(word: str) -> tuple[str, ...]:
    """A lower-cased word split where a known prefix meets ``key``, ``token`` or a
    store's ``url``: ``signingkey``, ``csrftoken``, ``databaseurl`` (header names lose
    their case), but ``monkey`` stays whole."""
    if word.endswith("token") and len(word) > 5:
        return (word[:-5], "token")
    for suffix, prefixes in (("key", _KEY_KINDS | _NOT_SECRET_KEYS), ("url", _STORES)):
        if word.endswith(suffix) and word[: -len(suffix)] in prefixes:
            return (word[: -len(suffix)], suffix)
    return (word,)


@functools.lru_cache(maxsize=4096)
def is_credential_name(name: str) -> bool:
    """True when ``name`` (a key, field, header or parameter name) names a credential."""
    words = tuple(part for word in credential_words(name) for part in _unglued(word))
    if not words:
        return False
    glued = "".join(words)
    if any(part in glued for part in _GLUED) or any(w in _WORDS for w in words):
        return True
    last = words[-1]
    if last in _LAST:
        return True
    for index, word in enumerate(words):
        if word != "key":
            continue
        before = words[index - 1] if index else None
        if before in _KEY_KINDS:
            return True
        if index == len(words) - 1 and before not in _NOT_SECRET_KEYS:
            return True
    return last in _STORE_LAST and any(w in _STORES for w in words[:-1])


_HEADER_EXTRA = re.compile(r"organization|^openai-project$", re.IGNORECASE)
_NOT_CREDENTIAL_HEADERS = re.compile(r"^x-ratelimit-|^content-|^accept", re.IGNORECASE)


def is_credential_header(name: str) -> bool:
    """``is_credential_name`` for header names, plus ``*organization*`` and
    ``OpenAI-Project``, minus ``x-ratelimit-*`` counters, ``content-*`` and ``accept*``."""
    name = str(name).strip()
    if _NOT_CREDENTIAL_HEADERS.search(name):
        return False
    return is_credential_name(name) or bool(_HEADER_EXTRA.search(name))


def is_credential_param(name: str) -> bool:
    """``is_credential_name`` for query and form parameter names, plus ``code`` (OAuth)."""
    name = str(name).strip()
    return is_credential_name(name) or name.lower() == "code"


_NOT_SECRET_FIELDS = frozenset({("thought", "signature")})
"""JSON fields named like a credential that are none: Gemini's ``thoughtSignature`` is the
model's own state, sent back unchanged (scrubbing it breaks the next request)."""


def is_credential_field(name: str) -> bool:
    """``is_credential_name`` for JSON field names (``max_tokens`` and Gemini's
    ``thoughtSignature`` are not ones)."""
    name = str(name).strip()
    if credential_words(name) in _NOT_SECRET_FIELDS:
        return False
    return is_credential_name(name)


_SHAPES = re.compile(
    r"\b("
    # OpenAI, Anthropic
    r"sk-(?:proj-|ant-(?:api\d+-|admin\d+-)?|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
    r"|AIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub tokens
    r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}"  # AWS access key ids
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r")\b"
)
_AWS_SECRET = re.compile(
    r"aws.{0,20}secret.{0,20}?[\"':=\s]+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", re.IGNORECASE
)


def credential_shapes(text: str) -> list[str]:
    """The pieces of ``text`` shaped like a provider credential (keys and tokens of
    OpenAI, Anthropic, Google, GitHub, AWS, Slack), placeholders left out."""
    found = [m.group(1) for m in _SHAPES.finditer(text)]
    found += [m.group(1) for m in _AWS_SECRET.finditer(text)]
    return [f for f in found if not is_placeholder(f)]


_PLACEHOLDER = re.compile(
    r"^(bearer |basic |token )?"
    r"(|\[hidden\]|<.*>|\*+|x+|redacted|\[redacted\]|fake.*|dummy.*|test.*|sk-test.*"
    r"|sk-harness.*|.*[-_]x{3,}|placeholder.*|example.*|changeme|none|null)$",
    re.IGNORECASE,
)


def is_placeholder(value: str) -> bool:
    """True for stand-in values (what a scrubbed or a sample cassette holds)."""
    return bool(_PLACEHOLDER.match(str(value).strip()))
