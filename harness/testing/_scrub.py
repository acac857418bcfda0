"""What a cassette never holds: the scrubbing engine run on every recorded interaction.

By rule (names, case-insensitive): credential headers (``harness._secrets.
is_credential_header``) in requests and responses, credential query parameters and
URL userinfo (in the URI and in URL-valued headers such as ``Location``), credential
JSON body fields and form fields. By value: every known secret (``harness._secrets``
registry, ``OPENAI_API_KEY``/``ANTHROPIC_API_KEY`` from the environment, ``secrets=``
given to ``open_cassette``, and every value a credential header/parameter/userinfo
carried in this cassette, and text shaped like a provider key or token: ``harness.
_credentials.credential_shapes``) wherever it appears: URI, header values, request and
response bodies (decoded first when gzip/deflate encoded), in any of its quoted or
escaped forms. ``harness cassette check`` asks the same rules, so what this engine
wrote always passes it.

Declarative extras follow pytest-recording/vcrpy: ``filter_headers``,
``filter_query_parameters`` and ``filter_post_data_parameters`` are lists of names
(removed) or ``(name, replacement)`` pairs (replaced; ``None`` removes).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import threading
import urllib.parse
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from harness._credentials import credential_shapes
from harness._errors import UsageError
from harness._secrets import (
    ENV_SECRETS,
    MIN_SECRET_LENGTH,
    REDACTED,
    is_credential_field,
    is_credential_header,
    is_credential_param,
    scrub_bytes,
    scrub_text,
    scrub_url,
)

__all__ = ["CassetteScrubber", "FilterSpec", "normalize_filters", "scrub_structure"]

FilterSpec = str | tuple[str, Any]
"""A name (removed) or a ``(name, replacement)`` pair (``None`` removes)."""

_URL_PREFIXES = ("http://", "https://", "ws://", "wss://")
_BEARER = ("bearer ", "basic ", "token ", "apikey ", "digest ")


def normalize_filters(value: Any, what: str) -> tuple[tuple[str, Any], ...]:
    """``filter_*`` extras as ``(lower-cased name, replacement)`` pairs; ``UsageError``
    naming ``what`` for anything else."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    pairs: list[tuple[str, Any]] = []
    for item in value:
        if isinstance(item, str) and item.strip():
            pairs.append((item.strip().lower(), None))
        elif (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and isinstance(item[0], str)
            and (item[1] is None or isinstance(item[1], str))
        ):
            pairs.append((item[0].strip().lower(), item[1]))
        else:
            raise UsageError(
                f"{what} must be a list of names or (name, replacement) pairs, got an item of "
                f"type {type(item).__name__}; e.g. {what}=['x-custom-key', ('x-tenant', 'XXX')]"
            )
    return tuple(pairs)


def _decoded_values(value: str) -> set[str]:
    """A credential value and its bare token (``Bearer sk-...`` -> ``sk-...``)."""
    found = {value}
    lowered = value.lower()
    for prefix in _BEARER:
        if lowered.startswith(prefix):
            found.add(value[len(prefix) :].strip())
    for item in list(found):
        found.add(urllib.parse.unquote_plus(item))
    return {v for v in found if len(v) >= MIN_SECRET_LENGTH}


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


@dataclasses.dataclass(kw_only=True)
class CassetteScrubber:
    """The scrubbing of one cassette (it learns secret values as it sees them)."""

    filter_headers: tuple[tuple[str, Any], ...] = ()
    filter_query_parameters: tuple[tuple[str, Any], ...] = ()
    filter_post_data_parameters: tuple[tuple[str, Any], ...] = ()
    secrets: set[str] = dataclasses.field(default_factory=set)
    """Values scrubbed in this cassette besides the registry's."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    @classmethod
    def build(
        cls,
        *,
        filter_headers: Any = None,
        filter_query_parameters: Any = None,
        filter_post_data_parameters: Any = None,
        secrets: Iterable[Any] = (),
        environ: Any = None,
    ) -> CassetteScrubber:
        """Validate the extras; take ``ENV_SECRETS`` from ``environ`` (``os.environ``)."""
        environ = os.environ if environ is None else environ
        values = {str(s) for s in secrets if s is not None and str(s)}
        values.update(environ[name] for name in ENV_SECRETS if environ.get(name))
        return cls(
            filter_headers=normalize_filters(filter_headers, "filter_headers"),
            filter_query_parameters=normalize_filters(
                filter_query_parameters, "filter_query_parameters"
            ),
            filter_post_data_parameters=normalize_filters(
                filter_post_data_parameters, "filter_post_data_parameters"
            ),
            secrets={v for v in values if len(v) >= MIN_SECRET_LENGTH},
        )

    # -- helpers -------------------------------------------------------------------------

    def _learn(self, values: Iterable[str]) -> None:
        # a request can be filtered twice (vcrpy filters for matching, then to record):
        # the replacements this engine writes are not secrets
        placed = {REDACTED, *(r for _, r in self._replacements() if isinstance(r, str))}
        with self._lock:
            self.secrets.update(
                v for v in values if len(v) >= MIN_SECRET_LENGTH and v not in placed
            )

    def _replacements(self) -> Iterable[tuple[str, Any]]:
        return (
            *self.filter_headers,
            *self.filter_query_parameters,
            *self.filter_post_data_parameters,
        )

    def _known(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self.secrets)

    def _header_rule(self, name: str) -> tuple[bool, Any]:
        lowered = name.lower()
        for filtered, replacement in self.filter_headers:
            if filtered == lowered:
                return True, replacement
        return is_credential_header(name), None

    def _headers(self, headers: Any) -> None:
        """Learn then drop/replace credential headers of a (case-insensitive) mapping."""
        for name in list(headers):
            hit, replacement = self._header_rule(str(name))
            if hit:
                for value in _as_list(headers[name]):
                    self._learn(_decoded_values(str(value)))
                if replacement is None:
                    del headers[name]
                else:
                    headers[name] = (
                        [replacement] if isinstance(headers[name], list) else replacement
                    )
        for name in list(headers):
            value = headers[name]
            if isinstance(value, list):
                headers[name] = [self._text(str(v)) for v in value]
            else:
                headers[name] = self._text(str(value))

    def _text(self, text: str) -> str:
        if text.startswith(_URL_PREFIXES):
            return self._url(text)
        self._learn(credential_shapes(text))
        return scrub_text(text, self._known())

    def _url(self, url: str) -> str:
        cleaned, found = scrub_url(url, self._known())
        self._learn(found)
        return self._filter_query(cleaned)

    def _filter_query(self, url: str) -> str:
        if not self.filter_query_parameters:
            return url
        parts = urllib.parse.urlsplit(url)
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        kept = []
        for name, value in pairs:
            rule = dict(self.filter_query_parameters)
            if name.lower() in rule:
                self._learn({value})
                if rule[name.lower()] is None:
                    continue
                value = rule[name.lower()]
            kept.append((name, value))
        query = urllib.parse.urlencode(kept)
        return urllib.parse.urlunsplit(parts._replace(query=query))

    def _field_rule(self, name: str, *, response: bool) -> tuple[bool, Any]:
        lowered = name.lower()
        for filtered, replacement in self.filter_post_data_parameters:
            if filtered == lowered:
                return True, replacement
        if response and lowered == "token":  # logprobs entries carry {"token": ...}
            return False, None
        return is_credential_field(name), None

    def _json(self, value: Any, *, response: bool) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                hit, replacement = self._field_rule(str(key), response=response)
                if not hit:
                    out[key] = self._json(item, response=response)
                    continue
                self._learn(self._strings(item))
                if replacement is not None:
                    out[key] = replacement
                elif response:
                    out[key] = REDACTED  # keep the response's shape for the SDK's parser
            return out
        if isinstance(value, list):
            return [self._json(v, response=response) for v in value]
        if isinstance(value, str):
            return self._text(value)
        return value

    def _strings(self, value: Any) -> set[str]:
        if isinstance(value, str):
            return _decoded_values(value)
        if isinstance(value, dict):
            return set().union(*(self._strings(v) for v in value.values()), set())
        if isinstance(value, list):
            return set().union(*(self._strings(v) for v in value), set())
        return set()

    def _form(self, text: str) -> str:
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True)
        kept = []
        for name, value in pairs:
            hit, replacement = self._field_rule(name, response=False)
            if hit or is_credential_param(name):
                self._learn(_decoded_values(value))
                if replacement is None:
                    continue
                value = replacement
            kept.append((name, value))
        return urllib.parse.urlencode(kept)

    def _body(self, body: Any, content_type: str, *, response: bool) -> Any:
        if body is None or body in (b"", ""):
            return body
        raw = body.encode("utf-8") if isinstance(body, str) else body
        if not isinstance(raw, (bytes, bytearray)):
            return body
        raw = bytes(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return scrub_bytes(raw, self._known())
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            else:
                cleaned = self._json(parsed, response=response)
                if cleaned != parsed:
                    text = json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"))
        elif "x-www-form-urlencoded" in content_type.lower() and "=" in text:
            text = self._form(text)
        self._learn(credential_shapes(text))
        scrubbed = scrub_text(text, self._known())
        result = scrubbed.encode("utf-8", "surrogatepass")
        return result if isinstance(body, bytes) else scrubbed

    # -- vcrpy filters -----------------------------------------------------------------------

    def request(self, request: Any) -> Any:
        """``before_record_request``: scrub a (copied) vcrpy request."""
        headers = request.headers
        body = getattr(request, "body", None)
        encoding = str(headers.get("content-encoding", "")).lower()
        if encoding in ("gzip", "deflate") and isinstance(body, bytes):
            try:
                body = gzip.decompress(body) if encoding == "gzip" else zlib.decompress(body)
                request.body = body
                del headers["content-encoding"]
            except (OSError, zlib.error):
                pass
        self._headers(headers)  # learns header credentials first
        uri = getattr(request, "uri", None)
        if isinstance(uri, str):
            request.uri = self._url(uri)
        if body is not None:
            content_type = str(headers.get("content-type", ""))
            request.body = self._body(body, content_type, response=False)
        if isinstance(uri, str):
            request.uri = self._url(request.uri)  # with the values learnt from the body
        self._headers(headers)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """``before_record_response``: scrub a (decoded) vcrpy response dict."""
        headers = response.get("headers")
        if isinstance(headers, dict):
            self._headers(_CaseInsensitive(headers))
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            content_type = ""
            if isinstance(headers, dict):
                for name, value in headers.items():
                    if str(name).lower() == "content-type":
                        content_type = str(_as_list(value)[0])
            before = body["string"]
            body["string"] = self._body(before, content_type, response=True)
            if before != body["string"] and isinstance(headers, dict):
                length = len(
                    body["string"].encode("utf-8")
                    if isinstance(body["string"], str)
                    else body["string"]
                )
                for name in list(headers):
                    if str(name).lower() == "content-length":
                        headers[name] = [str(length)]
        status = response.get("status")
        if isinstance(status, dict) and isinstance(status.get("message"), str):
            status["message"] = scrub_text(status["message"], self._known())
        return response


class _CaseInsensitive:
    """A view of a plain dict with the few mapping operations ``_headers`` uses."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __iter__(self) -> Any:
        return iter(list(self.data))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def __delitem__(self, key: str) -> None:
        del self.data[key]


def scrub_structure(value: Any, secrets: Sequence[str]) -> Any:
    """A copy of a cassette's data with every string and bytes value scrubbed by value."""
    if isinstance(value, dict):
        return {k: scrub_structure(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_structure(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_structure(v, secrets) for v in value)
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, bytes):
        return scrub_bytes(value, secrets)
    return value
