"""harness/models/_http.py: the answer read bounded, and transport failures typed with the
endpoint named and no credential shown."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest

from harness import MalformedResponse, ProviderError, ProviderTimeout
from harness.models._http import (
    abounded,
    body_json,
    bounded,
    connection_error,
    endpoint,
    reading_error,
)

URL = "https://user:hunter2-password@api.example.invalid/v1/chat?key=sk-in-the-query"
SECRET = "sk-secret-in-the-message"


class Chunks:
    """Chunks of ``size`` bytes, counting how many were pulled."""

    def __init__(self, count: int, size: int) -> None:
        self.count, self.size, self.pulled = count, size, 0

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.count):
            self.pulled += 1
            yield b"x" * self.size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self:
            yield chunk


def test_a_body_at_the_limit_is_read_and_one_byte_more_is_refused() -> None:
    assert bounded(Chunks(4, 10), 40, "OpenAI", "OpenAIChatModel") == b"x" * 40
    with pytest.raises(MalformedResponse, match=r"max_response_bytes=39 .* on OpenAIChatModel"):
        bounded(Chunks(4, 10), 39, "OpenAI", "OpenAIChatModel")


def test_reading_stops_at_the_first_chunk_past_the_limit() -> None:
    chunks = Chunks(1000, 1024)
    with pytest.raises(MalformedResponse, match="compression bomb"):
        bounded(chunks, 10 * 1024, "Anthropic", "AnthropicModel")
    assert chunks.pulled == 11  # the 11th chunk crossed the limit; none was pulled after it
    later = Chunks(1000, 1024)
    with pytest.raises(MalformedResponse, match="the Anthropic response body is larger"):
        asyncio.run(abounded(later, 10 * 1024, "Anthropic", "AnthropicModel"))
    assert later.pulled == 11
    assert asyncio.run(abounded(Chunks(2, 3), 6, "OpenAI", "x")) == b"xxxxxx"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"", r"the OpenAI response body is empty \(status 200\); expected a chat completion"),
        (b" \n", "body is empty"),
        (b'{"cut": ', "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_an_empty_or_cut_body_is_malformed(body: bytes, says: str) -> None:
    with pytest.raises(MalformedResponse, match=says):
        body_json(body, "OpenAI", "a chat completion")
    assert body_json(b'{"a": 1}', "OpenAI", "x") == {"a": 1}


def test_the_endpoint_is_the_requests_url_without_credentials() -> None:
    error = httpx2.ReadError("reset", request=httpx2.Request("POST", URL))
    shown = endpoint(error, "https://fallback.invalid")
    assert shown.startswith("https://api.example.invalid/v1/chat")
    assert "hunter2-password" not in shown and "sk-in-the-query" not in shown
    unattached = httpx2.ReadError("reset")  # no request: the client's base URL
    assert endpoint(unattached, "https://base.invalid/v1") == "https://base.invalid/v1"
    assert endpoint(ValueError("x"), URL).startswith("https://api.example.invalid")


@pytest.mark.parametrize(
    ("error", "kind", "says", "retryable"),
    [
        (httpx2.ReadTimeout("slow"), ProviderTimeout, "timed out (ReadTimeout: slow", True),
        (httpx2.DecodingError("bad gzip"), MalformedResponse, "could not be decompressed", False),
        (
            httpx2.RemoteProtocolError("peer closed connection"),
            MalformedResponse,
            "was cut short (RemoteProtocolError: peer closed connection",
            True,
        ),
        (httpx2.ReadError("reset by peer"), MalformedResponse, "was cut short (ReadError", True),
        (httpx2.TooManyRedirects("loop"), ProviderError, "failed (TooManyRedirects: loop", False),
    ],
)
def test_each_reading_failure_has_its_type(
    error: httpx2.HTTPError, kind: type[ProviderError], says: str, retryable: bool
) -> None:
    url = "https://api.example.invalid/v1/messages"
    mapped = reading_error(error, "Anthropic", url, [SECRET])
    assert type(mapped) is kind
    assert says in str(mapped) and url in str(mapped)
    assert mapped.retryable is retryable


def test_a_reading_failure_never_shows_a_secret() -> None:
    error = httpx2.RemoteProtocolError(f"bad header Authorization: Bearer {SECRET}")
    mapped = reading_error(error, "OpenAI", "https://api.example.invalid", [SECRET])
    assert SECRET not in str(mapped) and "[hidden]" in str(mapped)


def _sdk_error(cause: BaseException | None) -> Exception:
    """An SDK connection error raised ``from`` its transport error, as the SDKs do."""
    error = ConnectionError("Connection error.")
    error.request = httpx2.Request("POST", URL)  # type: ignore[attr-defined]
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("cause", "timed_out", "says"),
    [
        (httpx2.ConnectError("refused"), False, "could not reach the OpenAI endpoint"),
        (None, False, "could not reach the OpenAI endpoint"),
        (
            httpx2.RemoteProtocolError("Server disconnected"),
            False,
            "the connection to the OpenAI endpoint",
        ),
        (httpx2.ReadTimeout("slow"), True, "OpenAI request to"),
    ],
)
def test_an_sdk_connection_failure_names_the_endpoint_and_the_cause(
    cause: BaseException | None, timed_out: bool, says: str
) -> None:
    mapped = connection_error(_sdk_error(cause), "OpenAI", [], timed_out=timed_out)
    assert type(mapped) is (ProviderTimeout if timed_out else ProviderError)
    assert says in str(mapped) and "https://api.example.invalid/v1/chat" in str(mapped)
    assert "hunter2-password" not in str(mapped)
    if cause is not None:
        assert f"({type(cause).__name__}: {cause})" in str(mapped)
    assert mapped.code == ("timeout" if timed_out else "connection_error") and mapped.retryable
