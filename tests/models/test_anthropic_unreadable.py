"""``AnthropicModel`` given a 200 answer it cannot read: a typed ``MalformedResponse``.

An empty, truncated, not-JSON or undecompressable body, and a compression bomb: the body
is read chunk by chunk, decompressed as it arrives, and refused once it passes
``max_response_bytes`` (so a small gzip body cannot inflate to gigabytes in memory).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator

import anthropic
import httpx2
import pytest
from wire_helpers import model_request

from harness import MalformedResponse, ProviderError, UsageError
from harness.models import AnthropicModel
from harness.models._http import DEFAULT_MAX_RESPONSE_BYTES

MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "hello"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}


class _Wire(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A body arriving in 16 KiB pieces, as from a socket (not read up front)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self.body), 16384):
            self.sent += 1
            yield self.body[start : start + 16384]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self:
            yield piece


def _answering(body: bytes, **headers: str) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "application/json", **headers}, stream=_Wire(body)
        )

    return httpx2.MockTransport(handler)


def _model(transport: httpx2.MockTransport, **options: int) -> AnthropicModel:
    client = anthropic.Anthropic(
        base_url="http://claude.test",
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    )
    return AnthropicModel(client, "claude-test", **options)


def _bomb(size: int) -> bytes:
    """``size`` spaces, gzip-compressed a MiB at a time (never all in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    piece = b" " * (1024 * 1024)
    parts = [packer.compress(piece) for _ in range(size // len(piece))]
    return b"".join([*parts, packer.compress(b" " * (size % len(piece))), packer.flush()])


@pytest.mark.parametrize(
    ("body", "headers", "says"),
    [
        (b"", {}, "body is empty"),
        (b"   \n", {}, "body is empty"),
        (json.dumps(MESSAGE).encode()[:40], {}, "not valid JSON"),
        (b"<html>502 Bad Gateway</html>", {}, "not valid JSON"),
        (b"\xff\xfe not utf-8", {}, "not valid JSON"),
        (b"not gzip at all", {"content-encoding": "gzip"}, "could not be decompressed"),
        (
            gzip.compress(json.dumps(MESSAGE).encode(), mtime=0)[:60],
            {"content-encoding": "gzip"},
            "not valid JSON|body is empty",
        ),
        (b'["a", "list"]', {}, "expected an Anthropic message object"),
    ],
    ids=["empty", "blank", "truncated", "html", "not-utf8", "not-gzip", "cut-gzip", "a-list"],
)
def test_unreadable_bodies_are_malformed_responses(
    body: bytes, headers: dict[str, str], says: str
) -> None:
    with pytest.raises(MalformedResponse, match=says) as info:
        _model(_answering(body, **headers)).request(model_request())
    assert isinstance(info.value, ProviderError) and not info.value.retryable


def test_a_gzip_bomb_is_refused_past_the_limit_without_inflating_it() -> None:
    bomb = _bomb(8 * 1024 * 1024)  # 8 KiB on the wire
    assert len(bomb) < 64 * 1024
    model = _model(_answering(bomb, **{"content-encoding": "gzip"}), max_response_bytes=1_000_000)
    with pytest.raises(MalformedResponse, match="max_response_bytes=1000000") as info:
        model.request(model_request())
    assert info.value.code == "malformed_response"


def test_a_bomb_is_never_held_in_memory() -> None:
    bomb = _bomb(256 * 1024 * 1024)  # 256 MiB once inflated, 250 KiB on the wire
    model = _model(_answering(bomb, **{"content-encoding": "gzip"}), max_response_bytes=1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(MalformedResponse, match="compression bomb"):
            model.request(model_request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"peak {peak} bytes: the body was inflated past the limit"


def test_the_default_limit_refuses_a_bomb_larger_than_it() -> None:
    bomb = _bomb(DEFAULT_MAX_RESPONSE_BYTES + 1024 * 1024)
    with pytest.raises(MalformedResponse, match="compression bomb"):
        _model(_answering(bomb, **{"content-encoding": "gzip"})).request(model_request())


def test_a_compressed_answer_within_the_limit_is_read() -> None:
    body = gzip.compress(json.dumps(MESSAGE).encode(), mtime=0)
    model = _model(_answering(body, **{"content-encoding": "gzip"}), max_response_bytes=1000)
    assert model.request(model_request()).message.content == "hello"


def test_the_async_client_reads_bounded_too() -> None:
    client = anthropic.AsyncAnthropic(
        base_url="http://claude.test",
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.AsyncClient(
            transport=_answering(_bomb(4_000_000), **{"content-encoding": "gzip"})
        ),
    )
    model = AnthropicModel(client, "claude-test", max_response_bytes=100_000)
    with pytest.raises(MalformedResponse, match="max_response_bytes=100000"):
        asyncio.run(model.arequest(model_request()))
    ok = AnthropicModel(
        anthropic.AsyncAnthropic(
            base_url="http://claude.test",
            api_key="test-key",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=_answering(json.dumps(MESSAGE).encode())),
        ),
        "claude-test",
    )
    assert asyncio.run(ok.arequest(model_request())).message.content == "hello"


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "10"])
def test_the_limit_is_checked_at_construction(limit: object) -> None:
    with pytest.raises(UsageError, match="max_response_bytes"):
        _model(_answering(b""), max_response_bytes=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("body", [b"", b"event: ping\ndata: {}\n\n"], ids=["empty", "ping-only"])
def test_a_stream_without_a_message_is_a_malformed_response(body: bytes) -> None:
    transport = _answering(body, **{"content-type": "text/event-stream"})
    client = anthropic.Anthropic(
        base_url="http://claude.test",
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    )
    streaming = AnthropicModel(client, "claude-test", stream=True)
    with pytest.raises(MalformedResponse, match="ended before its message_start event"):
        streaming.request(model_request())
    async_client = anthropic.AsyncAnthropic(
        base_url="http://claude.test",
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport),
    )
    with pytest.raises(MalformedResponse, match="ended before its message_start event"):
        asyncio.run(
            AnthropicModel(async_client, "claude-test", stream=True).arequest(model_request())
        )
