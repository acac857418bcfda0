"""McpServer: lazy connection, listing, names, results, sync and async calls."""

from __future__ import annotations

import asyncio
import base64

import pytest
from mcp_helpers import SEARCH_SCHEMA

from harness import ScriptedModel, arun, call, reply, run
from harness._errors import UsageError
from harness.mcp import FakeMcpServer, McpCallError, McpServer, McpToolError, McpTools
from harness.tools import CallContext


def test_nothing_is_opened_at_construction_and_first_use_connects(shop: FakeMcpServer) -> None:
    server = McpServer("shop", shop)
    assert not server.connected
    assert server.connections == []
    assert shop.calls == []
    tools = server.tools()
    assert server.connected
    assert [t.name for t in tools] == ["search", "echo", "login"]
    (info,) = server.connections
    assert info.server == "shop"
    assert info.tools == ("search", "echo", "login")
    assert info.seconds >= 0
    server.close()
    assert not server.connected


def test_target_function_is_called_on_first_use_only(shop: FakeMcpServer) -> None:
    asked: list[int] = []

    def target() -> FakeMcpServer:
        asked.append(1)
        return shop

    server = McpServer("shop", target)
    assert asked == []
    server.tools()
    assert asked == [1]
    server.close()


def test_tools_keep_the_servers_schema_and_description(shop_server: McpServer) -> None:
    search = shop_server.required_tool_by_name("search")
    assert search.description == "Search products"
    assert dict(search.parameters) == SEARCH_SCHEMA
    assert search.metadata["mcp_server"] == "shop"
    assert search.metadata["mcp_tool"] == "search"


def test_tool_by_name_and_required_tool_by_name(shop_server: McpServer) -> None:
    assert shop_server.tool_by_name("nope") is None
    assert shop_server.tool_by_name("echo") is not None
    with pytest.raises(McpToolError, match=r"server 'shop', tool 'nope'.*available: search, echo"):
        shop_server.required_tool_by_name("nope")


def test_filter_keeps_only_chosen_tools(shop: FakeMcpServer) -> None:
    with McpServer("shop", shop, filter=lambda t: t.name != "echo") as server:
        assert [t.name for t in server.tools()] == ["search", "login"]


def test_prefix_policy_names_tools_after_the_server(shop: FakeMcpServer) -> None:
    with McpServer("shop", shop, names="prefix") as server:
        names = [t.name for t in server.tools()]
        assert names == ["shop_search", "shop_echo", "shop_login"]
        result = run(
            ScriptedModel([call("shop_search", {"q": "x"}), reply("done")]),
            "go",
            strategies=[McpTools(server)],
        )
    assert result.trace.iterations[0].calls[0].content == '{"hits": ["a1"]}'
    assert shop.calls[0].tool == "search"  # the server still gets its own name


def test_keep_policy_refuses_a_collision_across_servers() -> None:
    one = McpServer("one", FakeMcpServer("one", [{"name": "status", "result": "1"}]))
    two = McpServer("two", FakeMcpServer("two", [{"name": "status", "result": "2"}]))
    with one, two, pytest.raises(McpToolError) as caught:
        run(ScriptedModel([reply("x")]), "go", strategies=[McpTools(one, two)])
    message = str(caught.value)
    assert "MCP server 'two', tool 'status'" in message
    assert "already offered by MCP server 'one'" in message
    assert "names='prefix'" in message
    assert caught.value.trace is not None  # the run's trace survives


def test_sync_and_async_drivers_call_through_the_session(shop_server: McpServer) -> None:
    def model() -> ScriptedModel:
        return ScriptedModel([call("search", {"q": "x"}), reply("done")])

    sync = run(model(), "go", strategies=[McpTools(shop_server)])
    timed = run(model(), "go", strategies=[McpTools(shop_server)], tool_timeout=5)
    asynced = asyncio.run(arun(model(), "go", strategies=[McpTools(shop_server)]))
    for result in (sync, timed, asynced):
        record = result.trace.iterations[0].calls[0]
        assert (record.is_error, record.content, record.value) == (
            False,
            '{"hits": ["a1"]}',
            {"hits": ["a1"]},
        )


def test_schema_invalid_arguments_never_reach_the_server(shop_server: McpServer) -> None:
    result = run(
        ScriptedModel([call("search", {"q": 3}), reply("x")]),
        "go",
        strategies=[McpTools(shop_server)],
    )
    record = result.trace.iterations[0].calls[0]
    assert record.error_kind == "invalid_arguments"
    assert "argument 'q'" in record.content


def _result_of(fake: FakeMcpServer, tool: str) -> object:
    with McpServer(fake.name, fake) as server:
        return server.call(tool, {})


def test_results_map_text_structured_errors_and_media() -> None:
    png = base64.b64encode(b"\x89PNG1234").decode()
    fake = FakeMcpServer(
        "media",
        [
            {"name": "text", "result": "plain"},
            {"name": "data", "result": {"n": 1}},
            {"name": "fails", "result": "disk full", "error": True},
            {
                "name": "mixed",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image", "data": png, "mimeType": "image/png"},
                    {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
                    {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "B!"}},
                    {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": png}},
                ],
            },
        ],
    )
    with McpServer("media", fake) as server:
        text = server.call("text", {})
        data = server.call("data", {})
        fails = server.call("fails", {})
        mixed = server.call("mixed", {})
    assert (text.content, text.value, text.is_error) == ("plain", "plain", False)
    assert (data.content, data.value) == ('{"n": 1}', {"n": 1})
    assert fails.is_error and fails.error_kind == "mcp_error"
    assert fails.content == "MCP tool 'fails' on server 'media' reported an error: disk full"
    assert mixed.content.splitlines() == [
        "see",
        "[image: image/png, 8 bytes]",
        "[resource link: file:///a.txt (a)]",
        "[resource file:///b.txt]",
        "B!",
        "[resource file:///c.bin: application/octet-stream, 8 bytes]",
    ]


def test_call_context_reaches_the_tool_as_meta(shop_server: McpServer) -> None:
    result = asyncio.run(shop_server.acall("echo", {"x": 1}, CallContext({"user": "u1"})))
    assert result.value == '{"arguments": {"x": 1}, "meta": {"user": "u1"}}'


def test_closed_server_reconnects_on_next_use(shop: FakeMcpServer) -> None:
    server = McpServer("shop", shop)
    server.tools()
    server.close()
    assert server.call("login", {}).content == "ok"
    assert len(server.connections) == 2
    server.close()


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"name": "bad name"}, "name must match"),
        ({"names": "suffix"}, "names must be one of 'keep', 'prefix'"),
        ({"init_timeout": 0}, "init_timeout must be a number of seconds > 0"),
        ({"init_timeout": True}, "init_timeout must be"),
        ({"shutdown_grace": None}, "shutdown_grace must be a number of seconds > 0"),
        ({"meta": "all"}, "meta must be a converter function"),
        ({"filter": 3}, "filter must be a function"),
        ({"target": None}, "target is missing"),
    ],
)
def test_bad_arguments_are_refused_at_construction(kwargs: dict[str, object], problem: str) -> None:
    args: dict[str, object] = {"name": "s", "target": "http://127.0.0.1:1/mcp", **kwargs}
    with pytest.raises(UsageError, match=problem):
        McpServer(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("localhost:8000", "must be a streamable HTTP URL"),
        (42, "cannot connect to 42"),
    ],
)
def test_unusable_targets_are_explained_on_first_use(target: object, problem: str) -> None:
    server = McpServer("s", target)
    with pytest.raises(UsageError, match=problem):
        server.tools()
    server.close()


def test_repr_stale_and_names_by_server_or_model_name(shop: FakeMcpServer) -> None:
    server = McpServer("shop", shop, names="prefix")
    assert repr(server) == "McpServer('shop', not connected)"
    assert not server.stale
    asyncio.run(server.aconnect())
    assert repr(server) == "McpServer('shop', connected)"
    assert server.tool_by_name("search") is server.tool_by_name("shop_search") is not None
    server.call("login", {})
    assert server.generation == 1
    assert server.stale  # announced, not listed yet
    assert "shop_buy" in [t.name for t in server.tools()]
    assert not server.stale
    server.close()


def test_a_protocol_error_from_the_server_is_a_call_error() -> None:
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    async def call_tool(ctx: object, params: object) -> types.CallToolResult:
        raise MCPError(code=-32602, message="refused by policy")

    sdk = Server("strict", on_list_tools=list_tools, on_call_tool=call_tool)
    with McpServer("strict", sdk) as server:
        with pytest.raises(McpCallError, match=r"server 'strict', tool 't': the call failed"):
            asyncio.run(server.acall("t", {}))
        assert server.connected  # a protocol error does not drop the session
