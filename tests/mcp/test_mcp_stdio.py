"""A real MCP server in a subprocess over stdio (the SDK's MCPServer)."""

from __future__ import annotations

import asyncio

from conftest import STDIO

from harness import ScriptedModel, arun, call, reply, run
from harness.mcp import McpServer, McpTools, allow_keys


def test_stdio_server_tools_run_in_both_drivers() -> None:
    with McpServer("calc", STDIO, meta=allow_keys("user")) as server:
        names = [t.name for t in server.tools()]
        assert names == ["add", "echo_meta", "crash"]
        assert server.required_tool_by_name("add").parameters["required"] == ["a", "b"]
        model = ScriptedModel([call("add", {"a": 1, "b": 2}), call("echo_meta"), reply("x")])
        result = run(
            model,
            "go",
            strategies=[McpTools(server)],
            context={"user": "u1", "token": "t-secret"},
        )
        contents = [it.calls[0].content for it in result.trace.iterations[:2]]
        assert contents == ["3", "user"]
        model = ScriptedModel([call("add", {"a": 5, "b": 5}), reply("x")])
        again = asyncio.run(arun(model, "go", strategies=[McpTools(server)], tool_timeout=10))
        assert again.trace.iterations[0].calls[0].content == "10"
