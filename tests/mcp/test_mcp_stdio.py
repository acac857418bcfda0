"""A real MCP server in a subprocess over stdio (the SDK's MCPServer)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp_helpers import STDIO

from harness import ScriptedModel, arun, call, reply, run
from harness.mcp import McpCallError, McpServer, McpTools, allow_keys


def test_stdio_server_tools_run_in_both_drivers() -> None:
    with McpServer("calc", STDIO, meta=allow_keys("user")) as server:
        names = [t.name for t in server.tools()]
        assert names == ["add", "echo_meta", "hang", "crash", "crash_once"]
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


def test_the_loops_retry_rules_apply_a_crash_is_retried_on_a_new_session(tmp_path: Path) -> None:
    marker = str(tmp_path / "crashed")
    with McpServer("calc", STDIO) as server:
        result = run(
            ScriptedModel([call("crash_once", {"marker": marker}), reply("x")]),
            "go",
            strategies=[McpTools(server)],
            tool_retries=1,
            retry_on=(McpCallError,),
            retry_backoff=0,
        )
        record = result.trace.iterations[0].calls[0]
        assert (record.is_error, record.content, record.attempts) == (False, "recovered", 2)
        assert len(server.connections) == 2
