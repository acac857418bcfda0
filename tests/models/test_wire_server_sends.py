"""How the loopback ``WireServer`` writes its answers, recorded at the socket: ``TCP_NODELAY``
on every accepted connection, a plain answer in one send (head and body together), a
stream in one send per event (the head with the first), keep-alive connections reused.

Split sends without ``TCP_NODELAY`` made every answer wait about 40 ms for the client's
delayed ACK (Nagle); these tests pin the fix without timing anything."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import anthropic
import openai
import pytest
from wire_helpers import read_until_closed

from harness.loop import Model, ModelRequest, ModelResponse
from harness.messages import AssistantMessage, ToolCall
from harness.models import WireServer
from harness.models._wire import _server

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROMPT = [{"role": "user", "content": "Weather in Paris?"}]


class Weather(Model):
    """Always calls ``get_weather`` for Paris."""

    __test__ = False
    name = "weather"

    def request(self, request: ModelRequest) -> ModelResponse:
        call = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
        return ModelResponse(
            message=AssistantMessage(content="Let me look.", tool_calls=(call,)),
            finish_reason="tool_calls",
        )


class Recording:
    """An accepted socket whose sends are recorded, with the socket's ``TCP_NODELAY`` at
    each (everything else goes to the socket)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sends: list[bytes] = []
        self.no_delay: list[int] = []
        self.lock = threading.Lock()

    def _record(self, data: Any) -> None:
        with self.lock:
            self.sends.append(bytes(data))
            self.no_delay.append(self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    def sendall(self, data: Any, *args: Any) -> None:
        self._record(data)
        self.sock.sendall(data, *args)

    def send(self, data: Any, *args: Any) -> int:
        self._record(data)
        return self.sock.send(data, *args)

    def sendmsg(self, buffers: Any, *args: Any) -> int:
        self._record(b"".join(buffers))
        return self.sock.sendmsg(buffers, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


@pytest.fixture
def accepted(monkeypatch: pytest.MonkeyPatch) -> list[Recording]:
    """Every connection the servers of the test accept, recorded."""
    connections: list[Recording] = []
    accept = _server._Server.get_request

    def recording_accept(self: Any) -> tuple[Any, Any]:
        connection, address = accept(self)
        connections.append(Recording(connection))
        return connections[-1], address

    monkeypatch.setattr(_server._Server, "get_request", recording_accept)
    return connections


def _events(body: bytes) -> int:
    """How many SSE events a streamed body holds."""
    return body.count(b"\n\n")


def _chat(base: str, stream: bool) -> None:
    with openai.OpenAI(base_url=f"{base}/v1", api_key="test", max_retries=0, timeout=10) as client:
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
        args: dict[str, Any] = {"model": "m", "messages": PROMPT, "tools": tools}
        if stream:
            with client.chat.completions.stream(**args) as events:
                message = events.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(**args).choices[0].message
    assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"  # type: ignore[union-attr]


def _responses(base: str, stream: bool) -> None:
    with openai.OpenAI(base_url=f"{base}/v1", api_key="test", max_retries=0, timeout=10) as client:
        tools = [{"type": "function", "name": "get_weather", "parameters": SCHEMA}]
        args: dict[str, Any] = {"model": "m", "input": "Weather in Paris?", "tools": tools}
        if stream:
            with client.responses.stream(**args) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**args)
    assert [item.type for item in response.output][-1] == "function_call"


def _messages(base: str, stream: bool) -> None:
    with anthropic.Anthropic(base_url=base, api_key="test", max_retries=0, timeout=10) as client:
        tools = [{"name": "get_weather", "input_schema": SCHEMA}]
        args: dict[str, Any] = {"model": "m", "max_tokens": 64, "messages": PROMPT, "tools": tools}
        if stream:
            with client.messages.stream(**args) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**args)
    assert [block.type for block in message.content] == ["text", "tool_use"]


FORMATS = {"chat": _chat, "responses": _responses, "messages": _messages}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_plain_answer_is_one_send_on_a_no_delay_socket(
    fmt: str, accepted: list[Recording]
) -> None:
    with WireServer(Weather()) as server:
        FORMATS[fmt](server.url.removesuffix("/v1"), False)
        answers = list(server.app.requests)
    (connection,) = accepted
    assert all(connection.no_delay)
    assert len(answers) == 1
    (send,) = connection.sends  # head and body together
    head, _, body = send.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert f"content-length: {len(body)}".encode() in head.lower()
    assert b"get_weather" in body and json.loads(body)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_stream_is_one_send_per_event_the_head_with_the_first(
    fmt: str, accepted: list[Recording]
) -> None:
    with WireServer(Weather()) as server:
        FORMATS[fmt](server.url.removesuffix("/v1"), True)
    (connection,) = accepted
    assert all(connection.no_delay)
    first, *rest = connection.sends
    head, _, first_event = first.partition(b"\r\n\r\n")
    assert b"text/event-stream" in head
    assert _events(first_event) == 1  # the first event goes with the head
    assert all(_events(send) == 1 for send in rest)  # then each event as soon as written
    assert len(rest) >= 4  # a text and a tool call: several events


def test_keep_alive_requests_share_one_connection(accepted: list[Recording]) -> None:
    with (
        WireServer(Weather()) as server,
        openai.OpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10) as client,
    ):
        for _ in range(5):
            client.chat.completions.create(model="m", messages=PROMPT)  # type: ignore[arg-type]
        client.models.list()
    (connection,) = accepted  # one connection, one thread, six answers
    assert len(connection.sends) == 6
    assert all(send.startswith(b"HTTP/1.1 200 OK\r\n") for send in connection.sends)


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GET /v1/nowhere HTTP/1.1\r\nhost: x\r\n\r\n", b"404"),
        (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: x\r\n\r\n", b"400"),
        (b"GARBAGE\r\n\r\n", b"400"),
    ],
)
def test_an_error_answer_is_one_send(raw: bytes, status: bytes, accepted: list[Recording]) -> None:
    with (
        WireServer(Weather()) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock,
    ):
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = read_until_closed(sock)
    (connection,) = accepted
    assert connection.sends == [answer]
    assert answer.startswith(b"HTTP/1.1 " + status)


def test_an_answer_to_an_http_0_9_request_is_its_bare_body(accepted: list[Recording]) -> None:
    with (
        WireServer(Weather()) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock,
    ):
        sock.sendall(b"GET /v1/models\r\n\r\n")
        answer = read_until_closed(sock)
    assert json.loads(answer)["data"][0]["id"] == "weather"
    assert accepted[0].sends == [answer]
