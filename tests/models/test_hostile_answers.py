"""Hostile answers on a real socket: every SDK adapter fails with a typed ``ProviderError``.

A raw loopback server (a thread writing the bytes as given) answers the real SDKs with a
body shorter than its ``Content-Length``, or a gzip bomb: a few hundred KiB on the wire
that inflate to hundreds of MiB. Each adapter (Chat Completions, Responses, Anthropic;
sync and async clients) raises a ``MalformedResponse`` naming the endpoint or the limit,
and stops decompressing at ``max_response_bytes``: the peak memory of the request stays
far below the inflated size.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import openai
import pytest
from wire_helpers import model_request

from harness import MalformedResponse, ProviderError, UsageError
from harness.loop import Model, ModelResponse
from harness.models import AnthropicModel, OpenAIChatModel, OpenAIResponsesModel
from harness.models._http import DEFAULT_MAX_RESPONSE_BYTES

API_KEY = "sk-hostile-answers-key"
LIMIT = 1_000_000


class HostileServer:
    """A loopback HTTP/1.1 server that reads each request and answers with ``payload``
    exactly as given (status line, headers and body), then closes the connection."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.requests = 0
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:  # closed
                return
            with conn:
                self._read_request(conn)
                self.requests += 1
                with contextlib.suppress(OSError):  # the client stopped reading (the bomb)
                    conn.sendall(self.payload)

    @staticmethod
    def _read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")[1:]
        length = next(
            int(line.split(":", 1)[1])
            for line in lines
            if line.lower().startswith("content-length")
        )
        while len(body) < length:
            body += conn.recv(65536)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # shutdown wakes the thread blocked in accept()
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        self._thread.join(timeout=10)


@pytest.fixture
def serve() -> Iterator[Callable[[bytes], HostileServer]]:
    servers: list[HostileServer] = []

    def start(payload: bytes) -> HostileServer:
        servers.append(HostileServer(payload))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _answer(body: bytes, *, length: int | None = None, gzipped: bool = False) -> bytes:
    """An HTTP 200 answer carrying ``body``, claiming ``length`` bytes (default: its own)."""
    headers = [
        "HTTP/1.1 200 OK",
        "content-type: application/json",
        f"content-length: {len(body) if length is None else length}",
        "connection: close",
    ]
    if gzipped:
        headers.append("content-encoding: gzip")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


def _bomb(size: int) -> bytes:
    """``size`` spaces, gzip-compressed a MiB at a time (never all in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    piece = b" " * (1024 * 1024)
    parts = [packer.compress(piece) for _ in range(size // len(piece))]
    return b"".join([*parts, packer.compress(b" " * (size % len(piece))), packer.flush()])


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """256 MiB once inflated, about 250 KiB on the wire."""
    return _bomb(256 * 1024 * 1024)


def _adapter(kind: str, url: str, *, is_async: bool, **options: Any) -> Model:
    if kind == "anthropic":
        cls = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
        return AnthropicModel(cls(base_url=url, api_key=API_KEY, max_retries=0), "m", **options)
    client_cls = openai.AsyncOpenAI if is_async else openai.OpenAI
    client = client_cls(base_url=f"{url}/v1", api_key=API_KEY, max_retries=0)
    if kind == "chat":
        return OpenAIChatModel(client, "m", **options)
    return OpenAIResponsesModel(client, "m", **options)


def _request(model: Model, *, is_async: bool) -> ModelResponse:
    if is_async:
        return asyncio.run(model.arequest(model_request()))
    return model.request(model_request())


KINDS = ["chat", "responses", "anthropic"]
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_body_shorter_than_its_content_length_is_a_malformed_response(
    serve: Callable[[bytes], HostileServer], kind: str, is_async: bool
) -> None:
    server = serve(_answer(b'{"id": "x", "content": [', length=1000))
    model = _adapter(kind, server.url, is_async=is_async)
    with pytest.raises(MalformedResponse) as info:
        _request(model, is_async=is_async)
    message = str(info.value)
    assert f"from {server.url}{PATHS[kind]} was cut short" in message
    assert "RemoteProtocolError" in message and "expected 1000" in message
    assert info.value.retryable  # a transfer cut short: another try may get it whole
    assert API_KEY not in message
    assert server.requests == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_gzip_bomb_stops_at_the_limit_without_inflating(
    serve: Callable[[bytes], HostileServer], bomb: bytes, kind: str, is_async: bool
) -> None:
    server = serve(_answer(bomb, gzipped=True))
    model = _adapter(kind, server.url, is_async=is_async, max_response_bytes=LIMIT)
    tracemalloc.start()
    try:
        with pytest.raises(MalformedResponse) as info:
            _request(model, is_async=is_async)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"max_response_bytes={LIMIT} once decompressed" in str(info.value)
    assert f"on {type(model).__name__}" in str(info.value)  # where to raise the limit
    assert info.value.code == "malformed_response" and not info.value.retryable
    # inflated whole, the body alone would be 256 MiB
    assert peak < 16 * 1024 * 1024, f"peak {peak} bytes: the body was inflated past the limit"


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_the_openai_default_limit_refuses_a_bomb_larger_than_it(
    serve: Callable[[bytes], HostileServer], kind: str
) -> None:
    server = serve(_answer(_bomb(DEFAULT_MAX_RESPONSE_BYTES + 1024 * 1024), gzipped=True))
    model = _adapter(kind, server.url, is_async=False)
    with pytest.raises(MalformedResponse, match=f"max_response_bytes={DEFAULT_MAX_RESPONSE_BYTES}"):
        _request(model, is_async=False)


COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
    ],
}
RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "m",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "hi", "annotations": []}],
        }
    ],
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
BODIES = {"chat": COMPLETION, "responses": RESPONSE, "anthropic": MESSAGE}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_compressed_answer_within_the_limit_is_read(
    serve: Callable[[bytes], HostileServer], kind: str, is_async: bool
) -> None:
    body = gzip.compress(json.dumps(BODIES[kind]).encode(), mtime=0)
    limit = len(json.dumps(BODIES[kind]))  # exactly the inflated size: still within
    server = serve(_answer(body, gzipped=True))
    model = _adapter(kind, server.url, is_async=is_async, max_response_bytes=limit)
    assert _request(model, is_async=is_async).message.content == "hi"


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_body_says_what_was_expected(
    serve: Callable[[bytes], HostileServer], kind: str
) -> None:
    server = serve(_answer(b""))
    with pytest.raises(MalformedResponse, match=r"response body is empty \(status 200\); expected"):
        _request(_adapter(kind, server.url, is_async=False), is_async=False)


@pytest.mark.parametrize("kind", ["chat", "responses"])
@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "10"])
def test_the_openai_limit_is_checked_at_construction(kind: str, limit: object) -> None:
    with pytest.raises(UsageError, match="max_response_bytes"):
        _adapter(kind, "http://openai.invalid", is_async=False, max_response_bytes=limit)


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_connection_names_the_endpoint(kind: str) -> None:
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}"
        with pytest.raises(ProviderError) as info:
            _request(_adapter(kind, url, is_async=False), is_async=False)
    provider = "Anthropic" if kind == "anthropic" else "OpenAI"
    assert f"could not reach the {provider} endpoint {url}{PATHS[kind]}" in str(info.value)
    assert "ConnectError" in str(info.value)
    assert info.value.code == "connection_error" and info.value.retryable


@pytest.mark.parametrize("kind", KINDS)
def test_a_connection_closed_before_any_answer_names_the_endpoint(
    serve: Callable[[bytes], HostileServer], kind: str
) -> None:
    server = serve(b"")  # reads the request, answers nothing
    with pytest.raises(ProviderError) as info:
        _request(_adapter(kind, server.url, is_async=False), is_async=False)
    provider = "Anthropic" if kind == "anthropic" else "OpenAI"
    message = str(info.value)
    assert f"the connection to the {provider} endpoint {server.url}{PATHS[kind]} failed" in message
    assert "Server disconnected without sending a response" in message
    assert info.value.code == "connection_error" and info.value.retryable
