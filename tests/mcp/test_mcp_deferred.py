"""MCP tools deferred behind a tool search: ``McpTools(defer_loading=True)`` declares the
server's tools deferred, ``ToolSearch`` (with no tools of its own) searches them, and a tool
the server adds later is deferred and found the same way."""

from __future__ import annotations

import pytest

from harness import ScriptedModel, call, reply, run
from harness.injection import ToolSearch
from harness.mcp import FakeMcpServer, McpServer, McpTools
from harness.models import AnthropicModel, fake_anthropic_client, search


@pytest.mark.parametrize("native", ["never", "auto"])
@pytest.mark.parametrize("through", ["in-process", "anthropic"])
def test_an_mcp_servers_tools_are_deferred_and_found_by_a_search(native: str, through: str) -> None:
    fake = FakeMcpServer(
        "shop",
        [
            {"name": "list_orders", "description": "List the customer's orders."},
            {"name": "refund_order", "description": "Refund an order."},
        ],
        changes=[
            {"after_calls": 1, "add": [{"name": "track_parcel", "description": "Track a parcel."}]}
        ],
    )
    script = ScriptedModel(
        [
            search("refund"),
            call("refund_order"),
            search("parcel"),
            call("track_parcel"),
            reply("done"),
        ]
    )
    model = (
        script
        if through == "in-process"
        else AnthropicModel(fake_anthropic_client(script), "claude-test")
    )
    with McpServer("shop", fake) as server:
        result = run(
            model,
            "refund and track",
            strategies=[McpTools(server, defer_loading=True), ToolSearch([server], native=native)],  # type: ignore[arg-type]
        )
    assert result.output == "done"
    first = result.trace.iterations[0]
    assert set(first.deferred) == {"list_orders", "refund_order"}
    discovered = [n for it in result.trace for n in it.discovered]
    assert discovered == ["refund_order", "track_parcel"]
    assert [c.tool for c in fake.calls] == ["refund_order", "track_parcel"]
    # the tool the server added later arrived deferred, never offered before it was found
    for it in result.trace:
        assert not set(it.deferred) & set(it.offered)
