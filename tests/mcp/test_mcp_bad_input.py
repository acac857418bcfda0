"""Bad input at the MCP boundary: each a clear error naming server and tool, history intact."""

from __future__ import annotations

import socket
import sys
import time

import pytest
from mcp_helpers import STDIO

from harness import ScriptedModel, call, reply, run
from harness.loop import StrategyWarning
from harness.mcp import (
    FakeMcpServer,
    McpCallError,
    McpConnectError,
    McpServer,
    McpTimeout,
    McpToolError,
    McpTools,
)
from harness.mcp._convert import schema_problem


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_down_command_is_a_connect_error_and_keeps_the_trace() -> None:
    server = McpServer("ghost", ["/nonexistent/harness-test-mcp-server"], init_timeout=10)
    with pytest.raises(McpConnectError, match=r"MCP server 'ghost': cannot connect") as caught:
        run(ScriptedModel([reply("x")]), "go", strategies=[McpTools(server)])
    assert caught.value.server == "ghost"
    assert caught.value.trace is not None
    assert caught.value.messages is not None and len(caught.value.messages) == 1
    server.close()


def test_server_down_url_is_a_connect_error() -> None:
    server = McpServer("web", f"http://127.0.0.1:{_closed_port()}/mcp", init_timeout=10)
    with pytest.raises(McpConnectError, match="MCP server 'web': cannot connect"):
        server.tools()
    server.close()


def test_server_that_hangs_on_initialise_times_out() -> None:
    server = McpServer("sleepy", [*STDIO, "hang"], init_timeout=0.5, shutdown_grace=0.5)
    started = time.monotonic()
    with pytest.raises(McpTimeout, match=r"MCP server 'sleepy'.*within 0.5s \(init_timeout\)"):
        server.tools()
    assert time.monotonic() - started < 5
    server.close()


BAD = FakeMcpServer(
    "bad",
    [
        {"name": "good", "result": "fine"},
        {"name": "bad name!", "result": "x"},
        {"name": "loose", "input_schema": {"type": "object", "properties": 5}},
    ],
)


def test_invalid_names_and_malformed_schemas_are_left_out_with_reasons() -> None:
    with McpServer("bad", BAD) as server:
        assert [t.name for t in server.tools()] == ["good"]
        problems = {s.tool: s.problem for s in server.skipped}
        with pytest.raises(McpToolError, match=r"server 'bad', tool 'bad name!'.*not a valid"):
            server.required_tool_by_name("bad name!")
        result = run(ScriptedModel([reply("x")]), "go", strategies=[McpTools(server)])
    assert "not a valid model-visible name" in problems["bad name!"]
    assert "not a valid JSON Schema" in problems["loose"]
    warnings = [e.message for e in result.trace.events if isinstance(e, StrategyWarning)]
    assert len(warnings) == 2
    assert all(w.startswith("MCP server 'bad', tool '") for w in warnings)
    assert result.trace.iterations[0].offered == ("good",)


def test_schema_checks() -> None:
    assert schema_problem([1]) == "the input schema is not a JSON object: [1]"
    assert schema_problem({"type": "array"}) == (
        "the input schema must have type 'object' at the root, got 'array'"
    )
    assert schema_problem({"type": "object"}) is None


def test_a_listing_the_sdk_refuses_is_an_error_naming_the_server() -> None:
    fake = FakeMcpServer("odd", [{"name": "listy", "input_schema": {"type": "array"}}])
    server = McpServer("odd", fake)
    with pytest.raises(McpConnectError, match=r"MCP server 'odd': tools/list failed") as caught:
        run(ScriptedModel([reply("x")]), "go", strategies=[McpTools(server)])
    assert caught.value.trace is not None
    server.close()


def test_a_crash_mid_call_is_an_error_result_and_the_next_use_reconnects() -> None:
    server = McpServer("stdio", STDIO)
    model = ScriptedModel([call("crash"), call("add", {"a": 2, "b": 3}), reply("x")])
    result = run(model, "go", strategies=[McpTools(server)])
    crash, add = (it.calls[0] for it in result.trace.iterations[:2])
    assert crash.is_error and crash.error_kind == "exception"
    assert "McpCallError: MCP server 'stdio', tool 'crash'" in crash.content
    assert "did the server crash?" in crash.content
    assert isinstance(crash.exception, McpCallError)
    assert (add.is_error, add.content) == (False, "5")
    assert len(server.connections) == 2
    assert result.output == "x"
    assert [m.role for m in result.messages].count("tool") == 2  # history intact
    server.close()


def test_unknown_tool_on_the_server_is_an_error_result() -> None:
    fake = FakeMcpServer("s", [{"name": "a"}])
    with McpServer("s", fake) as server:
        result = server.call("gone", {})
    assert result.is_error and "Unknown tool: gone" in result.content


def test_missing_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    server = McpServer("s", "http://127.0.0.1:1/mcp")
    with pytest.raises(ImportError, match=r"pip install 'tool-loop-harness\[mcp\]'"):
        server.tools()
