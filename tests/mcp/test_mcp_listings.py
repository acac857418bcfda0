"""MCP listings (issue 27 section 4): every page is read up to ``max_pages`` and a cut
listing is reported; tools colliding on one model-visible name are left out with a
warning naming server and tools instead of killing the run."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ScriptedModel, UsageError, call, reply, run
from harness.loop import StrategyWarning
from harness.mcp import McpServer, McpTools


def paged(pages: int | None, *, repeat_cursor: bool = False) -> Any:
    """An SDK server listing one tool per page; ``pages=None`` never ends (new cursors),
    ``repeat_cursor`` sends the same cursor forever."""
    import mcp_types as types
    from mcp.server import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        cursor = getattr(params, "cursor", None) if params is not None else None
        index = 0 if cursor is None else int(str(cursor).split("-")[-1])
        last = pages is not None and index + 1 >= pages
        following = None if last else ("page-1" if repeat_cursor else f"page-{index + 1}")
        tool = types.Tool(name=f"t{index}", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool], next_cursor=following)

    async def call_tool(ctx: Any, params: Any) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    return Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


def _warnings(result: Any) -> list[str]:
    return [e.message for e in result.trace.events if isinstance(e, StrategyWarning)]


def test_150_pages_are_all_offered() -> None:
    with McpServer("paged", paged(150)) as server:
        result = run(ScriptedModel([reply("done")]), "go", strategies=[McpTools(server)])
        assert server.incomplete is None
    assert len(result.trace.iterations[0].offered) == 150
    assert _warnings(result) == []


def test_an_endless_listing_stops_at_max_pages_with_a_warning(bounded: Any) -> None:
    with bounded(60), McpServer("paged", paged(None), max_pages=20) as server:
        result = run(ScriptedModel([reply("done")]), "go", strategies=[McpTools(server)])
    assert len(result.trace.iterations[0].offered) == 20
    assert _warnings(result) == [
        "MCP server 'paged': the listing stopped after 20 pages (max_pages) with 20 tool(s); "
        "the server has more: raise McpServer(max_pages=...)"
    ]


def test_a_repeated_cursor_stops_the_listing_at_once_with_a_warning(bounded: Any) -> None:
    with bounded(60), McpServer("paged", paged(None, repeat_cursor=True)) as server:
        result = run(ScriptedModel([reply("done")]), "go", strategies=[McpTools(server)])
    assert result.trace.iterations[0].offered == ("t0", "t1")
    assert _warnings(result) == [
        "MCP server 'paged': the server sent the cursor 'page-1' again after 2 page(s); "
        "listing stopped there with 2 tool(s)"
    ]


@pytest.mark.parametrize("pages", [0, -1, 1.5, True])
def test_max_pages_must_be_a_positive_int(pages: Any) -> None:
    with pytest.raises(UsageError, match=r"max_pages must be an int >= 1"):
        McpServer("s", paged(1), max_pages=pages)


def listing(names: list[str]) -> Any:
    """An SDK server listing ``names`` in one page, described by their position."""
    import mcp_types as types
    from mcp.server import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=n, description=f"#{i}", input_schema={"type": "object"})
                for i, n in enumerate(names)
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        text = f"called {params.name}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("listing", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize(
    ("names", "listed", "offered", "left_out"),
    [
        ("keep", ["dup", "dup", "other"], ("dup", "other"), "dup"),
        ("prefix", ["a.b", "a b", "other"], ("s_ab", "s_other"), "a b"),
    ],
)
def test_colliding_names_in_one_listing_leave_the_later_tool_out_with_a_warning(
    names: Any, listed: list[str], offered: tuple[str, ...], left_out: str
) -> None:
    model = ScriptedModel([call(offered[0]), reply("done")])
    with McpServer("s", listing(listed), names=names) as server:
        result = run(model, "go", strategies=[McpTools(server)])
        kept = server.tool_by_name(offered[0])
    assert result.trace.iterations[0].offered == offered
    assert kept is not None and kept.description == "#0"  # the first listed tool
    assert result.trace.calls[0].content == f"called {listed[0]}"
    (warning,) = _warnings(result)
    assert warning == (
        f"MCP server 's', tool {left_out!r}: its model-visible name {offered[0]!r} is taken by "
        f"the server's tool {listed[0]!r} listed before it; only the first is offered. Rename "
        "one on the server (or filter= one out)"
    )
