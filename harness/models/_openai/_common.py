"""Shared by the SDK adapters: error mapping, secret scrubbing, retry-after."""

from __future__ import annotations

import contextlib
import email.utils
import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    RateLimited,
    UnencodableText,
)
from harness._secrets import (
    hidden_values,
    is_credential_header,
    register_secret,
    scrub_message,
    scrub_url,
)
from harness.formats._json import unencodable_path
from harness.formats._openai import error_details
from harness.formats._read import not_json
from harness.models._http import connection_error, endpoint, reading_error

__all__ = [
    "map_openai_error",
    "openai_errors",
    "retry_after_seconds",
    "scrub",
    "secrets_of",
    "unencodable",
]


def secrets_of(client: Any) -> tuple[str, ...]:
    """Credentials a client holds, to scrub from error messages: its keys, organization,
    project, credential-named default headers and query parameters, and base-URL
    userinfo: the values ``harness._secrets.hidden_values`` keeps (the one rule for what
    is long enough to hide). Those of 8 characters or more are registered so cassettes
    and reports scrub them too."""
    values: list[str] = []
    for attr in ("api_key", "admin_api_key", "webhook_secret", "organization", "project"):
        value = getattr(client, attr, None)
        if isinstance(value, str):
            values.append(value)
    for attr, rule in (("_custom_headers", is_credential_header), ("_custom_query", None)):
        mapping = getattr(client, attr, None)
        if isinstance(mapping, Mapping):
            for name, value in mapping.items():
                if isinstance(value, str) and (rule is None or rule(str(name))):
                    values.append(value)
    base_url = getattr(client, "base_url", None)
    if base_url is not None:
        values.extend(scrub_url(str(base_url))[1])
    kept = tuple(dict.fromkeys(v for v in values if hidden_values([v])))
    for value in kept:
        register_secret(value, source="an OpenAI client credential", warn=False)
    return kept


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (and every registered one, in any escaped form) and
    URL credentials (userinfo, ``?key=...``) replaced by ``[hidden]``."""
    return scrub_message(text, secrets)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (number or HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def map_openai_error(exc: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """The harness ``ProviderError`` for an ``openai`` SDK exception (credentials scrubbed);
    a timeout or a connection failure names the endpoint and what the transport said."""
    import openai

    secrets = tuple(secrets)
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is one
        timed_out = isinstance(exc, openai.APITimeoutError)
        return connection_error(exc, "OpenAI", secrets, timed_out=timed_out)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        body_code, body_message = error_details(exc.body)
        code = exc.code or body_code or exc.type
        code = str(code) if code is not None else None
        detail = body_message or exc.message
        message = scrub(f"OpenAI API error (status={status}, code={code!r}): {detail}", secrets)
        retry_after = retry_after_seconds(exc.response.headers)
        cls: type[ProviderError] = ProviderError
        if status == 429:
            cls = RateLimited
        elif code == "context_length_exceeded":
            cls = ContextLengthExceeded
        return cls(message, status=status, retry_after=retry_after, code=code)
    return ProviderError(scrub(f"OpenAI SDK error: {exc}", secrets))


def unencodable(
    exc: UnicodeEncodeError, params: Mapping[str, Any], provider: str
) -> UnencodableText:
    """The typed error for a request whose text is not valid Unicode (the SDK's
    ``UnicodeEncodeError`` while writing the body), naming where the text is."""
    where = unencodable_path(params) or "the request"
    bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
    return UnencodableText(
        f"the {provider} request cannot be sent: {where} holds {bad!r}, a lone surrogate "
        "(not valid Unicode; no provider accepts it). It usually comes from bytes decoded "
        "with errors='surrogateescape'; decode them with errors='replace' (or clean the "
        "text with .encode('utf-8', 'replace').decode()) before it reaches the model.",
        where=where,
    )


@contextlib.contextmanager
def openai_errors(client: Any, params: Mapping[str, Any]) -> Iterator[None]:
    """The OpenAI adapters' one error-mapping context manager, shared by the sync and the
    async path: every failure of the SDK call with ``params`` and of reading its answer
    becomes a harness error. The SDK's errors go through ``map_openai_error``; the
    transport's, raised while the adapter reads the answer, through ``reading_error``
    (naming the endpoint); a body or streamed event that is not JSON is a
    ``MalformedResponse``; a request text that cannot be written, ``UnencodableText``.
    Credentials never appear in the message."""
    import httpx2
    import openai

    try:
        yield
    except openai.OpenAIError as exc:
        raise map_openai_error(exc, secrets=secrets_of(client)) from None
    except httpx2.HTTPError as exc:  # raised by the answer's body, past the SDK's mapping
        url = endpoint(exc, getattr(client, "base_url", "the OpenAI API"))
        raise reading_error(exc, "OpenAI", url, secrets_of(client)) from None
    except json.JSONDecodeError as exc:  # the SDK parses streamed events before we see them
        raise not_json(exc) from None
    except UnicodeEncodeError as exc:  # a lone surrogate: the body cannot be written
        raise unencodable(exc, params, "OpenAI") from None
