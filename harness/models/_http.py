"""Reading a provider's answer over HTTP, for every SDK adapter: bounded, and typed when it fails.

The official SDKs (``openai``, ``anthropic``) both run on ``httpx2``. The adapters take the
answer of a non-streamed call as a raw response and read it here: chunk by chunk, as it
is decompressed, refused past ``max_response_bytes`` (``bounded``), so a small gzip body
cannot inflate to gigabytes before anything fails. An ``httpx2`` error raised while
reading (a body shorter than its ``Content-Length``, a connection reset, a timeout, a
body that is not the gzip it claims) is outside the SDK's own error mapping;
``reading_error`` types it, naming the endpoint. Each adapter family keeps one
error-mapping context manager (``openai_errors``, ``anthropic_errors``) that the sync and
async paths share, the way httpx's ``map_httpcore_exceptions`` serves both of its clients.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Iterable, Sequence
from typing import Any

from harness._errors import MalformedResponse, ProviderError, ProviderTimeout
from harness._secrets import scrub_message, scrub_url
from harness.formats._read import not_json

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "abounded",
    "body_json",
    "bounded",
    "connection_error",
    "endpoint",
    "reading_error",
]

DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The largest answer body an SDK adapter reads, once decompressed (32 MiB): a larger one
(a compression bomb, a runaway proxy) is a ``MalformedResponse``, not a memory error."""


def _too_big(limit: int, provider: str, adapter: str) -> MalformedResponse:
    return MalformedResponse(
        f"the {provider} response body is larger than max_response_bytes={limit} once "
        "decompressed (a compression bomb or a runaway answer); raise max_response_bytes "
        f"on {adapter} if such answers are expected"
    )


def bounded(chunks: Iterable[bytes], limit: int, provider: str, adapter: str) -> bytes:
    """The decompressed body, read chunk by chunk, refused past ``limit`` bytes (the
    error names the ``provider`` and the ``adapter`` whose limit to raise)."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise _too_big(limit, provider, adapter)
        parts.append(chunk)
    return b"".join(parts)


async def abounded(chunks: AsyncIterable[bytes], limit: int, provider: str, adapter: str) -> bytes:
    """``bounded`` for an async body."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise _too_big(limit, provider, adapter)
        parts.append(chunk)
    return b"".join(parts)


def body_json(body: bytes, provider: str, expected: str) -> Any:
    """The JSON of a 200 body: an empty or truncated one is a ``MalformedResponse``."""
    if not body.strip():
        raise MalformedResponse(
            f"the {provider} response body is empty (status 200); expected {expected}"
        )
    try:
        return json.loads(body)
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise not_json(exc) from None


def endpoint(exc: BaseException, base_url: object) -> str:
    """The URL ``exc`` was raised for (its request's, else the client's ``base_url``),
    without credentials (userinfo, key parameters)."""
    try:
        url = str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # an httpx2 error with no request attached
        url = str(base_url)
    return scrub_url(url)[0]


def reading_error(
    exc: BaseException, provider: str, url: str, secrets: Sequence[str]
) -> ProviderError:
    """The typed error for an ``httpx2`` error raised while the answer from ``url`` was
    read: a timeout is a ``ProviderTimeout``; a body that cannot be decompressed, or that
    was cut short (shorter than its ``Content-Length``, the connection reset), is a
    ``MalformedResponse`` (retryable when cut short: another try may get it whole)."""
    import httpx2

    detail = scrub_message(f"{type(exc).__name__}: {exc}", secrets)
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderTimeout(f"reading the {provider} answer from {url} timed out ({detail})")
    if isinstance(exc, httpx2.DecodingError):
        return MalformedResponse(
            f"the {provider} response body from {url} could not be decompressed ({detail})"
        )
    if isinstance(exc, httpx2.TransportError):
        return MalformedResponse(
            f"the {provider} answer from {url} was cut short ({detail})", retryable=True
        )
    return ProviderError(f"reading the {provider} answer from {url} failed ({detail})")


def connection_error(
    exc: BaseException, provider: str, secrets: Sequence[str], *, timed_out: bool
) -> ProviderError:
    """The typed error for an SDK's connection failure (its ``APIConnectionError``, an
    ``APITimeoutError`` when ``timed_out``), naming the endpoint and what the transport
    said (the exception's cause): a ``ProviderTimeout``, else a retryable ``ProviderError``
    with ``code="connection_error"``."""
    import httpx2

    url = endpoint(exc, f"the {provider} API")
    cause = exc.__cause__
    said = f"{exc} ({type(cause).__name__}: {cause})" if cause is not None else str(exc)
    if timed_out:
        return ProviderTimeout(
            scrub_message(f"{provider} request to {url} timed out: {said}", secrets)
        )
    if cause is None or isinstance(cause, httpx2.ConnectError):
        message = f"could not reach the {provider} endpoint {url}: {said}"
    else:  # the endpoint answered, then the exchange failed (a body cut short...)
        message = f"the connection to the {provider} endpoint {url} failed: {said}"
    return ProviderError(scrub_message(message, secrets), code="connection_error", retryable=True)
