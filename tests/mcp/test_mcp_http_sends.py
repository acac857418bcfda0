"""How ``McpHttpServer`` (``harness serve --mcp``) writes its answers, recorded at the asyncio
transport: ``TCP_NODELAY`` on every accepted connection and at most two sends per answer
(uvicorn writes the head, then the body); and the served targets give the SDK a schema
lookup, so a ``tools/call`` over HTTP does not run the ``tools/list`` handler.

A listening socket created with protocol 0 left asyncio's ``TCP_NODELAY`` off: each
answer's body waited about 40 ms for the client's delayed ACK. Nothing here is timed."""

from __future__ import annotations

import asyncio.selector_events
import socket
import threading
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
    transport = asyncio.selector_events._SelectorSocketTransport
    write = transport.write

    def recording_write(self: Any, data: Any) -> None:
        recorded.record(self, data)
        write(self, data)

    monkeypatch.setattr(transport, "write", recording_write)
    return recorded


def test_answers_leave_on_no_delay_sockets_in_at_most_two_sends(writes: Writes) -> None:
    with McpHttpServer(ToolsAsMcp("weather", [get_weather])) as http:
        writes.port = http.port
        with McpServer("weather", http.url) as server:
            results = [server.call("get_weather", {"city": "Paris"}) for _ in range(5)]
    assert [r.content for r in results] == ["sunny in Paris"] * 5
    answers = sum(data.startswith(b"HTTP/1.1 ") for data, _ in writes.seen)
    assert answers >= 6  # the handshake or discovery, then the five calls
    assert all(no_delay for _, no_delay in writes.seen)
    assert len(writes.seen) <= 2 * answers  # a head and a body each, never more


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
