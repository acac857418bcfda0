"""Runtime list changes as injections and removals; lazy first use; facades and groups."""

from __future__ import annotations

import pytest

from harness import ScriptedModel, call, expect_offered, reply, run
from harness._errors import UsageError
from harness.injection import ToolGroups
from harness.loop import StrategyWarning, ToolsInjected, ToolsRemoved
from harness.mcp import (
    FakeMcpServer,
    McpConnected,
    McpServer,
    McpTools,
    mcp_facade,
    mcp_group,
)


def test_list_changed_shows_as_injection_and_removal_with_the_server_as_cause(
    shop_server: McpServer, shop: FakeMcpServer
) -> None:
    model = ScriptedModel(
        [
            call("login"),
            expect_offered(includes=["buy"], excludes=["echo"]),
            call("buy"),
            reply("ok"),
        ]
    )
    result = run(model, "go", strategies=[McpTools(shop_server)])
    first, second, third = result.trace.iterations
    assert first.offered == ("search", "echo", "login")
    assert second.offered == ("search", "login", "buy")
    assert third.offered == second.offered
    (change,) = second.changes
    assert change.strategy == "mcp:shop"
    assert (change.added, change.removed) == (("buy",), ("echo",))
    assert "sent notifications/tools/list_changed: +buy -echo" in change.reason
    injected = [e for e in result.trace.events if isinstance(e, ToolsInjected)]
    removed = [e for e in result.trace.events if isinstance(e, ToolsRemoved)]
    assert [(e.strategy, e.tool_names) for e in injected] == [
        ("mcp:shop", ("search", "echo", "login")),
        ("mcp:shop", ("buy",)),
    ]
    assert [(e.strategy, e.tool_names) for e in removed] == [("mcp:shop", ("echo",))]
    assert [c.tool for c in shop.calls] == ["login", "buy"]


def test_a_changed_definition_is_replaced() -> None:
    fake = FakeMcpServer(
        "s",
        [{"name": "go", "description": "v1"}],
        changes=[{"after_calls": 1, "add": [{"name": "go", "description": "v2"}]}],
    )
    with McpServer("s", fake) as server:
        result = run(
            ScriptedModel([call("go"), call("go"), reply("x")]),
            "go",
            strategies=[McpTools(server)],
        )
    change = result.trace.iterations[1].changes[0]
    assert change.replaced == ("go",)
    assert "~go" in change.reason


def test_connection_happens_before_the_first_request_and_is_an_event(
    shop_server: McpServer,
) -> None:
    strategy = McpTools(shop_server)
    assert not shop_server.connected
    result = run(ScriptedModel([reply("x")]), "go", strategies=[strategy])
    (event,) = [e for e in result.trace.events if isinstance(e, McpConnected)]
    assert (event.server, event.iteration, event.tools) == (
        "shop",
        1,
        ("search", "echo", "login"),
    )
    again = run(ScriptedModel([reply("x")]), "go", strategies=[strategy])
    assert not [e for e in again.trace.events if isinstance(e, McpConnected)]  # reported once


def test_strategy_is_reusable_across_runs(shop_server: McpServer, shop: FakeMcpServer) -> None:
    strategy = McpTools(shop_server)
    for _ in range(2):
        result = run(ScriptedModel([reply("x")]), "go", strategies=[strategy])
        assert result.trace.iterations[0].offered[0] == "search"


def test_facade_unfolds_lazily_and_follows_changes_within_its_scope() -> None:
    fake = FakeMcpServer(
        "gh",
        [
            {"name": "issues_list", "description": "List"},
            {"name": "issues_create", "description": "Create", "result": "created"},
            {"name": "repo_info", "description": "Repo"},
        ],
        changes=[
            {
                "after_call": "issues_create",
                "add": [{"name": "issues_close"}, {"name": "repo_stars"}],
            }
        ],
    )
    server = McpServer("gh", fake)
    issues = mcp_facade(server, "issues", "GitHub issues", patterns=["issues_.*"])
    assert not server.connected
    model = ScriptedModel([call("issues"), call("issues_create"), call("issues_close"), reply("x")])
    with server:
        result = run(model, "go", tools=[issues], strategies=[McpTools(server, offer=False)])
    first, second, third, _ = result.trace.iterations
    assert first.offered == ("issues",)
    assert second.offered == ("issues", "issues_context", "issues_list", "issues_create")
    assert third.offered[-1] == "issues_close"
    assert "repo_stars" not in third.offered  # outside the facade's patterns
    assert [e.iteration for e in result.trace.events if isinstance(e, McpConnected)] == [1]


def test_facade_by_names_with_remove_on_invoke(shop: FakeMcpServer) -> None:
    with McpServer("shop", shop) as server:
        facade = mcp_facade(server, "store", "The store", names=["search"], remove_on_invoke=True)
        result = run(ScriptedModel([call("store"), reply("x")]), "go", tools=[facade])
    change = result.trace.iterations[0].changes[0]
    assert change.removed == ("store",)
    assert result.trace.iterations[1].offered == ("store_context", "search")


def test_facade_errors_name_the_server_and_keep_the_run_going(shop: FakeMcpServer) -> None:
    with McpServer("shop", shop) as server:
        ghost = mcp_facade(server, "ghost", "Nothing", names=["nope"])
        none = mcp_facade(server, "none", "Nothing", predicate=lambda t: False)
        result = run(
            ScriptedModel([call("ghost"), call("none"), reply("x")]), "go", tools=[ghost, none]
        )
    ghost_call = result.trace.iterations[0].calls[0]
    none_call = result.trace.iterations[1].calls[0]
    assert ghost_call.is_error and "MCP server 'shop', tool 'nope'" in ghost_call.content
    assert none_call.is_error and "facade 'none' matches no tool" in none_call.content
    assert result.output == "x"


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"names": ["a"], "patterns": ["b"]}, "one of names, patterns or predicate"),
        ({"names": "abc"}, "names must be a list of texts"),
        ({"patterns": ["("]}, "is not a valid regex"),
        ({"predicate": 3}, "predicate must be a function"),
    ],
)
def test_facade_arguments_are_checked(kwargs: dict[str, object], problem: str) -> None:
    server = McpServer("s", "http://127.0.0.1:1/mcp")
    with pytest.raises(UsageError, match=problem):
        mcp_facade(server, "f", "F", **kwargs)  # type: ignore[arg-type]


def test_group_connects_on_activation_and_carries_its_provider(shop: FakeMcpServer) -> None:
    server = McpServer("shop", shop)
    group = mcp_group(server, "store", permissions=["net"], filter=lambda t: t.name != "echo")
    groups = ToolGroups([group], permissions=["net"])
    assert "store [mcp:shop]" in groups.tools[0].description
    model = ScriptedModel(
        [
            call("activate_group", {"name": "store"}),
            call("login"),
            call("deactivate_group", {"name": "store"}),
            reply("x"),
        ]
    )
    assert not server.connected
    with server:
        result = run(model, "go", strategies=[groups, McpTools(server, offer=False)])
    offered = [it.offered for it in result.trace.iterations]
    manage = ("activate_group", "deactivate_group")
    assert offered == [
        manage,
        (*manage, "search", "login"),
        (*manage, "search", "login", "buy"),  # list_changed: new tool in the group's scope
        manage,
    ]
    assert [e.server for e in result.trace.events if isinstance(e, McpConnected)] == ["shop"]


def test_mcp_tools_arguments_are_checked() -> None:
    server = McpServer("s", "http://127.0.0.1:1/mcp")
    with pytest.raises(UsageError, match="give at least one McpServer"):
        McpTools()
    with pytest.raises(UsageError, match=r"server names must be unique, got \['s'\]"):
        McpTools(server, McpServer("s", "http://127.0.0.1:1/mcp"))
    with pytest.raises(UsageError, match="is not an McpServer"):
        McpTools("s")  # type: ignore[arg-type]


def test_new_tool_taking_an_offered_name_is_skipped_with_a_warning() -> None:
    fake = FakeMcpServer(
        "s", [{"name": "a"}], changes=[{"after_calls": 1, "add": [{"name": "local"}]}]
    )

    def local() -> str:
        """A local tool."""
        return "l"

    with McpServer("s", fake) as server:
        result = run(
            ScriptedModel([call("a"), reply("x")]),
            "go",
            tools=[local],
            strategies=[McpTools(server)],
        )
    warnings = [e.message for e in result.trace.events if isinstance(e, StrategyWarning)]
    assert warnings == [
        "MCP server 's', tool 'local': not added, another tool with this name is offered"
    ]
