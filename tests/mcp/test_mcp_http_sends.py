"""How ``McpHttpServer`` (``harness serve --mcp``) writes its answers, recorded at the asyncio
transport: ``TCP_NODELAY`` on every accepted connection, a plain answer in one send (head,
body and end joined), a streamed event sent as it is written; and the served targets give
the SDK a schema lookup, so a ``tools/call`` over HTTP does not run the ``tools/list``
handler.

A listening socket created with protocol 0 left asyncio's ``TCP_NODELAY`` off: each
answer's body waited about 40 ms for the client's delayed ACK. Nothing here is timed."""

from __future__ import annotations

import asyncio.selector_events
import socket
import threading
import time
from typing import Any

import pytest

from harness.mcp import FakeMcpServer, McpHttpServer, McpServer, ToolsAsMcp
from harness.tools import as_tool, llm_tool


@llm_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"


SCHEMA = dict(as_tool(get_weather).parameters)


class Writes:
    """Every write of a server-side transport on ``port``: the bytes and the socket's
    ``TCP_NODELAY`` at that moment."""

    def __init__(self) -> None:
        self.port: int | None = None
        self.seen: list[tuple[bytes, int]] = []
        self.lock = threading.Lock()

    def record(self, transport: Any, data: Any) -> None:
        sock = transport.get_extra_info("socket")
        if sock is None or self.port is None or sock.getsockname()[1] != self.port:
            return  # a client's transport, or another server's
        if not data:  # asyncio sends nothing for it (h11 ends a sized body with b"")
            return
        no_delay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        with self.lock:
            self.seen.append((bytes(data), no_delay))


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Writes:
    recorded = Writes()
    transport = asyncio.selector_events._SelectorSocketTransport  # type: ignore[attr-defined]
    write = transport.write

    def recording_write(self: Any, data: Any) -> None:
        recorded.record(self, data)
        write(self, data)

    monkeypatch.setattr(transport, "write", recording_write)
    return recorded


def test_an_answer_leaves_in_one_send_on_a_no_delay_socket(writes: Writes) -> None:
    with McpHttpServer(ToolsAsMcp("weather", [get_weather])) as http:
        writes.port = http.port
        with McpServer("weather", http.url) as server:
            results = [server.call("get_weather", {"city": "Paris"}) for _ in range(5)]
    assert [r.content for r in results] == ["sunny in Paris"] * 5
    assert len(writes.seen) >= 6  # the discovery (or handshake), then the five calls
    assert all(no_delay for _, no_delay in writes.seen)
    for data, _ in writes.seen:  # each send a whole answer: its head, body and end
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 ")
        length = [line for line in head.lower().split(b"\r\n") if b"content-length" in line]
        assert length == [b"content-length: %d" % len(body)]


def test_a_streamed_answer_sends_each_event_as_it_is_written(writes: Writes) -> None:
    fake = FakeMcpServer(
        "shop",
        [{"name": "login", "result": "ok"}],
        changes=[{"after_call": "login", "add": [{"name": "buy", "result": "bought"}]}],
    )
    with McpHttpServer(fake) as http:
        writes.port = http.port
        with McpServer("shop", http.url) as server:
            server.call("login", {})
            for _ in range(200):  # the list change reaches the client on the listen stream
                if server.stale:
                    break
                time.sleep(0.01)
    assert server.stale
    assert all(no_delay for _, no_delay in writes.seen)
    events = [data for data, _ in writes.seen if b"list_changed" in data]
    assert len(events) == 1 and not events[0].startswith(b"HTTP/1.1 ")  # after its head


@pytest.mark.parametrize(
    "target",
    [
        ToolsAsMcp("weather", [get_weather]),
        FakeMcpServer(
            "weather",
            [{"name": "get_weather", "input_schema": SCHEMA, "result": "sunny"}],
        ),
    ],
    ids=["tools", "fake"],
)
def test_served_targets_look_a_schema_up_without_listing(target: Any) -> None:
    """The SDK's HTTP path checks a call's ``Mcp-Param`` headers against the tool's
    schema: through this lookup, else through the whole ``tools/list`` handler."""
    lookup = target.mcp_target().get_tool_input_schema
    assert lookup is not None
    assert lookup("get_weather")["properties"]["city"]["type"] == "string"
    assert lookup("nowhere") is None
