"""The harness_mcp fixture: fake MCP servers for a test, closed afterwards."""

from __future__ import annotations

import pytest


def test_harness_mcp_fixture_serves_scripted_tools(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from harness import call, expect_offered, reply
        from harness.mcp import McpTools, allow_keys

        SERVERS = []

        def test_fake_server_in_a_run(harness_mcp, harness_runner, harness_scripted):
            server = harness_mcp(
                "shop",
                [{"name": "login", "result": "ok"}, {"name": "whoami", "echo": True}],
                changes=[{"after_call": "login", "add": [{"name": "buy", "result": "done"}]}],
                meta=allow_keys("user"),
            )
            SERVERS.append(server)
            model = harness_scripted(
                [call("login"), expect_offered(includes=["buy"]), call("whoami"), reply("x")]
            )
            result = harness_runner.run(
                model, "go", strategies=[McpTools(server)], context={"user": "u", "key": "k"}
            )
            assert result.output == "x"
            fake = harness_mcp.fake("shop")
            assert [c.tool for c in fake.calls] == ["login", "whoami"]
            assert fake.last_call.meta == {"user": "u"}
            with pytest.raises(KeyError, match="no fake MCP server 'nope'; made: \\\\['shop'\\\\]"):
                harness_mcp.fake("nope")

        def test_servers_are_closed_after_the_test():
            (server,) = SERVERS
            assert not server.connected
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
