"""Known secret values and scrubbing them from text (layer 0: every layer may use it).

A secret is known when it is configured: an API key given to an adapter or to
``HarnessConfig``, a tool's preset parameter, a call-context value wrapped in
:class:`Secret`, ``OPENAI_API_KEY``/``ANTHROPIC_API_KEY`` from the environment when
a cassette records, and any value a cassette saw in a credential header, query
parameter or URL userinfo. ``scrub_text`` replaces every known value, and the forms
it takes when quoted or escaped (upper-cased, URL-quoted, JSON-escaped,
``repr``-escaped, inside a bytes ``repr``), by :data:`REDACTED`.

Values shorter than :data:`MIN_SECRET_LENGTH` characters cannot be scrubbed by value
without mangling unrelated text (``"10"`` is everywhere), so they are not
registered; configuring one warns once (``ShortSecretWarning``).

The credential *name* rules (``is_credential_header``, ``is_credential_param``,
``is_credential_field``) are re-exported from ``harness._credentials``, the one rule
cassettes, ``harness cassette check``, the blackboard, MCP ``_meta``, error messages
and the wire server share.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
import urllib.parse
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness._credentials import (
    credential_shapes,
    is_credential_field,
    is_credential_header,
    is_credential_param,
)
from harness._errors import HarnessWarning

__all__ = [
    "ENV_SECRETS",
    "MIN_SECRET_LENGTH",
    "MIN_VALUE_LENGTH",
    "PLACEHOLDERS",
    "REDACTED",
    "Secret",
    "ShortSecretWarning",
    "carries_secret",
    "forget_secrets",
    "hidden_values",
    "is_credential_field",
    "is_credential_header",
    "is_credential_param",
    "is_placeholder",
    "is_secret_value",
    "known_secrets",
    "register_secret",
    "scrub_bytes",
    "scrub_message",
    "scrub_text",
    "scrub_url",
    "secret_finder",
    "secret_forms",
    "secrets_known",
]

REDACTED = "[hidden]"
"""What a scrubbed value is replaced by."""
MIN_SECRET_LENGTH = 8
"""Shorter values are not scrubbed by value (they would match unrelated text)."""
MIN_VALUE_LENGTH = 4
"""Preset and call-context values shorter than this are not hidden from a tool's error
message (``hidden_values``): they are too common to replace."""
ENV_SECRETS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_ADMIN_KEY", "AZURE_OPENAI_API_KEY")
"""Environment variables whose values are secrets when a cassette records."""


class ShortSecretWarning(HarnessWarning):
    """A secret shorter than ``MIN_SECRET_LENGTH`` cannot be scrubbed reliably by value."""

    __module__ = "harness"  # the public package, in warnings and reprs


PLACEHOLDERS = frozenset(
    {
        "test", "fake", "dummy", "mock", "key", "none", "null", "empty", "demo", "foo", "bar",
        "replay", "ollama", "abc", "123", "1234", "secret", "x", "xx", "xxx", "xxxx",
    }
)  # fmt: skip
"""Well-known dummy keys (``sk-test``, ``test``, ``EMPTY``, ``ollama``...; an ``sk-`` or
``sk-ant-`` prefix and the case do not matter): too short to scrub, and no real secret,
so configuring one does not warn (``filterwarnings = error`` must not fail a test for
it)."""


def is_placeholder(text: str) -> bool:
    """True for a well-known dummy key (see :data:`PLACEHOLDERS`)."""
    bare = text.lower()
    for prefix in ("sk-ant-", "sk-"):
        if bare.startswith(prefix):
            bare = bare[len(prefix) :]
            break
    return bare in PLACEHOLDERS


class Secret(str):
    """A string marked secret: its ``repr`` hides it and it is scrubbed everywhere.

    Use it for call-context values (``run(..., context={"token": Secret(t)})``) or any
    value the harness must never show; it is an ordinary ``str`` to the code using it.
    """

    __slots__ = ()

    def __new__(cls, value: object) -> Secret:
        made = super().__new__(cls, value)
        register_secret(made, source="a Secret(...) value")
        return made

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"


_LOCK = threading.Lock()
_KNOWN: set[str] = set()
_WARNED: set[str] = set()


def register_secret(value: Any, *, source: str = "a configured secret", warn: bool = True) -> bool:
    """Remember ``value`` (by its ``str``) as a secret to scrub; ``True`` if registered.

    ``None`` and empty values are ignored. A string shorter than ``MIN_SECRET_LENGTH``
    warns once (``ShortSecretWarning``) and is not registered; short non-strings (a
    preset ``limit=10``) are silently left alone, and so are well-known dummy keys
    (``sk-test``: :data:`PLACEHOLDERS`) and short values given with ``warn=False``.
    """
    if value is None or isinstance(value, bool):
        return False
    is_text = isinstance(value, (str, bytes))
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if not text:
        return False
    if len(text) < MIN_SECRET_LENGTH:
        if is_text and warn and not is_placeholder(text):
            with _LOCK:
                first = text not in _WARNED
                _WARNED.add(text)
            if first:
                warnings.warn(
                    f"{source} is {len(text)} characters long: secrets shorter than "
                    f"{MIN_SECRET_LENGTH} characters cannot be scrubbed reliably by value from "
                    "cassettes, messages and reports; use a longer value (a real key is)",
                    ShortSecretWarning,
                    stacklevel=3,
                )
        return False
    with _LOCK:
        _KNOWN.add(text)
    return True


def secrets_known() -> bool:
    """Whether any secret is registered (read without the lock: a plain truth test)."""
    return bool(_KNOWN)


def known_secrets() -> frozenset[str]:
    """Every registered secret value (a snapshot)."""
    with _LOCK:
        return frozenset(_KNOWN)


def forget_secrets(values: Iterable[str] | None = None) -> None:
    """Forget ``values`` (or every registered secret): for tests of the registry."""
    with _LOCK:
        if values is None:
            _KNOWN.clear()
            _WARNED.clear()
        else:
            _KNOWN.difference_update(values)


def secret_forms(secret: str) -> set[str]:
    """The forms ``secret`` takes in text: as is, upper/lower-cased, URL-quoted,
    JSON-escaped, ``repr``-escaped and inside a bytes ``repr``."""
    forms = {secret, secret.upper(), secret.lower()}
    forms.add(urllib.parse.quote(secret, safe=""))
    forms.add(urllib.parse.quote(secret))
    forms.add(urllib.parse.quote_plus(secret))
    forms.add(json.dumps(secret)[1:-1])
    forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    forms.add(repr(secret)[1:-1])
    forms.add(ascii(secret)[1:-1])
    encoded = secret.encode("utf-8", "surrogatepass")
    forms.add(repr(encoded)[2:-1])
    forms.add(encoded.decode("latin-1"))  # utf-8 bytes read as latin-1 (mojibake)
    more = set()
    for form in forms:
        more.add(form.upper())
        more.add(json.dumps(form)[1:-1])  # escaped twice (JSON inside JSON)
    forms |= more
    return {f for f in forms if len(f) >= min(len(secret), MIN_SECRET_LENGTH)}


def _all(extra: Iterable[Any]) -> set[str]:
    values = set(known_secrets())
    for value in extra:
        if value is None or isinstance(value, bool):
            continue
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if text:
            values.add(text)
    return values


_PATTERN_CACHE: dict[frozenset[str], re.Pattern[str]] = {}


def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    pattern = _PATTERN_CACHE.get(secrets)
    if pattern is None:
        forms = set().union(*(secret_forms(s) for s in secrets))
        ordered = sorted(forms, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(f) for f in ordered))
        if len(_PATTERN_CACHE) > 256:
            _PATTERN_CACHE.clear()
        _PATTERN_CACHE[secrets] = pattern
    return pattern


def _marker(secrets: Iterable[str]) -> str:
    for marker in (REDACTED, "***", "\x00"):
        if not any(s in marker or marker in s for s in secrets):
            return marker
    return ""


def hidden_values(values: Iterable[Any]) -> list[str]:
    """The texts to hide for preset and call-context ``values`` (``scrub_text``'s
    ``extra``): each value by its ``str``, except ``None``, booleans and texts shorter
    than ``MIN_VALUE_LENGTH``."""
    shown = {str(v) for v in values if v is not None and not isinstance(v, bool)}
    return [text for text in shown if len(text) >= MIN_VALUE_LENGTH]


def is_secret_value(name: object, value: Any) -> bool:
    """Whether a value kept from the model's schema (a preset, a call-context value, a
    context object's field, under ``name``) is also a secret, hidden wherever the harness
    shows text: a :class:`Secret`, a value under a credential name (``api_key``,
    ``token``, ``password``: ``is_credential_field``), or one shaped like a credential
    (a provider key such as ``sk-...`` or ``ghp_...``: ``credential_shapes``; a URL with
    a password, ``postgres://app:pw@db/main``). Any other value (a region, a chat id, a
    user name) is only kept out of the schema: a tool may show it."""
    if isinstance(value, Secret):
        return True
    if value is None or isinstance(value, bool):
        return False
    if name is not None and is_credential_field(str(name)):
        return True
    if not isinstance(value, str):
        return False
    return bool(credential_shapes(value)) or _url_password(value)


def _url_password(text: str) -> bool:
    """``text`` is a URL whose userinfo holds a password."""
    if "://" not in text or "@" not in text:
        return False
    try:
        return bool(urllib.parse.urlsplit(text.strip()).password)
    except ValueError:
        return False


def scrub_text(text: str, extra: Iterable[Any] = ()) -> str:
    """``text`` with every known secret (and ``extra`` values, by their ``str``) in any
    of its ``secret_forms`` replaced by :data:`REDACTED`."""
    if not isinstance(text, str) or not text:
        return text
    secrets = frozenset(_all(extra))
    pattern = _pattern(secrets)
    if pattern is None:
        return text
    marker = _marker(secrets)
    for _ in range(8):  # a replacement can complete a new occurrence; repeat until stable
        text, count = pattern.subn(marker, text)
        if count == 0:
            return text
    return pattern.sub("", text)


_NOT_NAME = re.compile(r"[^a-z0-9]+")
_FOLD_CACHE: dict[frozenset[str], re.Pattern[str] | None] = {}


def _folded(text: str) -> str:
    """What a name part keeps of ``text``, with case and punctuation ignored: its ASCII
    letters (accents dropped) and digits (``Sk-Café_1`` -> ``skcafe1``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NOT_NAME.sub("", ascii_text.lower())


def _fold_pattern(values: frozenset[str]) -> re.Pattern[str] | None:
    if values in _FOLD_CACHE:
        return _FOLD_CACHE[values]
    folds = {f for f in map(_folded, values) if len(f) >= MIN_VALUE_LENGTH}
    ordered = sorted(folds, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
    if len(_FOLD_CACHE) > 256:
        _FOLD_CACHE.clear()
    _FOLD_CACHE[values] = pattern
    return pattern


def secret_finder(extra: Iterable[Any] = ()) -> Callable[[str], bool]:
    """``carries_secret`` for many texts: the known secrets and ``extra`` are read once."""
    values = frozenset(_all(extra))
    forms = _pattern(values)
    if forms is None:
        return lambda text: False
    folds = _fold_pattern(values)

    def carries(text: str) -> bool:
        if not isinstance(text, str) or not text:
            return False
        if forms.search(text) is not None:
            return True
        return folds is not None and folds.search(_folded(text)) is not None

    return carries


def carries_secret(text: str, extra: Iterable[Any] = ()) -> bool:
    """Whether ``text`` carries a known secret (or an ``extra`` value, by its ``str``):
    in any of its ``secret_forms``, or as a name part would keep it (its letters and
    digits, case, accents and punctuation ignored; 4 such characters or more).

    A name derived from such a text (an entity's id in a discovered tool's name) must not
    use it: ``EntityDiscovery`` names the entity by an index instead.
    """
    return secret_finder(extra)(text)


def scrub_bytes(data: bytes, extra: Iterable[Any] = ()) -> bytes:
    """``data`` with known secrets scrubbed (as UTF-8 text when it decodes, else byte-wise)."""
    if not data:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        scrubbed = scrub_text(text, extra)
        return data if scrubbed == text else scrubbed.encode("utf-8", "surrogatepass")
    secrets = _all(extra)
    marker = _marker(secrets).encode()
    forms = sorted(
        {f.encode("utf-8", "surrogatepass") for s in secrets for f in secret_forms(s)},
        key=len,
        reverse=True,
    )
    for _ in range(8):
        before = data
        for form in forms:
            data = data.replace(form, marker)
        if data == before:
            break
    return data


def scrub_url(url: str, extra: Iterable[Any] = ()) -> tuple[str, set[str]]:
    """``url`` without userinfo and credential query parameters, known secrets scrubbed;
    also returns the credential values it removed (to scrub them elsewhere)."""
    found: set[str] = set()
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return scrub_text(url, extra), found
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, netloc = netloc.rpartition("@")
        for piece in userinfo.split(":", 1):
            if piece:
                found.add(urllib.parse.unquote(piece))
                found.add(piece)
    query = parts.query
    if query:
        kept = []
        for pair in query.split("&"):
            name, _, value = pair.partition("=")
            if is_credential_param(urllib.parse.unquote_plus(name)):
                if value:
                    found.add(urllib.parse.unquote_plus(value))
                    found.add(value)
                continue
            kept.append(pair)
        query = "&".join(kept)
    rebuilt = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return scrub_text(rebuilt, [*extra, *found]), found


_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def scrub_message(text: str, extra: Iterable[Any] = ()) -> str:
    """``scrub_text`` plus, in every URL the text contains, userinfo and credential
    query parameters (``?key=...``) removed: for error messages and reports."""
    if not isinstance(text, str) or "://" not in text:
        return scrub_text(text, extra)
    values = list(extra)
    found: set[str] = set()

    def clean(match: re.Match[str]) -> str:
        cleaned, removed = scrub_url(match.group(0), values)
        found.update(removed)
        return cleaned

    text = _URL_IN_TEXT.sub(clean, text)
    return scrub_text(text, [*values, *(v for v in found if len(v) >= MIN_SECRET_LENGTH)])


def scrub_mapping_repr(values: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``values`` with credential-named entries hidden (for reprs and reports)."""
    return {k: (REDACTED if is_credential_field(k) else v) for k, v in values.items()}
