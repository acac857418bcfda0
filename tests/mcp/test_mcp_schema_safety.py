"""An MCP server's input schemas cannot make the harness fetch, read files, hang or die.

The ``$ref`` targets are a loopback server that counts its requests: it must count zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import ScriptedModel, call, reply, run
from harness.loop import StrategyWarning
from harness.mcp import FakeMcpServer, McpServer, McpTools


def _schema(x: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": x}}


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_tools_with_remote_file_or_deep_schemas_are_left_out_and_nothing_is_fetched(
    counting_server: Any, tmp_path: Path
) -> None:
    target = tmp_path / "s.json"
    target.write_text('{"type": "string"}')
    fake = FakeMcpServer(
        "s",
        [
            {"name": "remote", "input_schema": _schema({"$ref": f"{counting_server.url}/s.json"})},
            {"name": "local_file", "input_schema": _schema({"$ref": target.as_uri()})},
            {"name": "deep", "input_schema": _deep(100)},
            {"name": "fine", "input_schema": _schema({"type": "integer"}), "echo": True},
        ],
    )
    model = ScriptedModel([call("fine", x=1), call("remote", x=1), reply("done")], lenient=True)
    with McpServer("s", fake) as server:
        result = run(model, "go", strategies=[McpTools(server)])
        problems = {s.tool: s.problem for s in server.skipped}
    assert result.output == "done"
    assert result.trace.iterations[0].offered == ("fine",)
    assert result.trace.calls[1].error_kind == "unknown_tool"
    assert counting_server.requests == []
    assert (
        f"$ref: '{counting_server.url}/s.json' at /properties/x does not resolve"
        in (problems["remote"])
    )
    assert f"$ref: '{target.as_uri()}' at /properties/x does not resolve" in problems["local_file"]
    assert "the input schema is nested 201 levels deep" in problems["deep"]
    assert all(p.endswith("the tool is not offered") for p in problems.values())
    warnings = [e.message for e in result.trace.events if isinstance(e, StrategyWarning)]
    assert sorted(w.split(":")[0] for w in warnings) == [
        "MCP server 's', tool 'deep'",
        "MCP server 's', tool 'local_file'",
        "MCP server 's', tool 'remote'",
    ]


def test_a_catastrophic_pattern_in_a_server_schema_gets_a_verdict(bounded: Any) -> None:
    fake = FakeMcpServer(
        "s", [{"name": "p", "input_schema": _schema({"type": "string", "pattern": "^(a+)+$"})}]
    )
    model = ScriptedModel([call("p", x="a" * 34 + "!"), reply("done")])
    with McpServer("s", fake) as server, bounded(30):
        result = run(model, "go", strategies=[McpTools(server)], tool_timeout=2)
    (record,) = result.trace.calls
    assert record.error_kind == "invalid_arguments" and "does not match" in record.content
    assert fake.calls == []  # never reached the server
