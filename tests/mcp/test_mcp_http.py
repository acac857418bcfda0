"""MCP over streamable HTTP on loopback: McpHttpServer, ToolsAsMcp and ``harness serve --mcp``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import ScriptedModel, call, llm_tool, reply, run
from harness._errors import UsageError
from harness.cli._app import app
from harness.mcp import FakeMcpServer, McpHttpServer, McpServer, McpTools, ToolsAsMcp
from harness.tools import CallContext, as_tool

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "scenarios" / "mcp" / "list_changed_injection.yaml"
SEED = ROOT / "scenarios" / "discovery" / "seed_average_spend.yaml"


def test_list_changes_reach_a_client_over_http() -> None:
    fake = FakeMcpServer(
        "shop",
        [{"name": "login", "result": "ok"}],
        changes=[{"after_call": "login", "add": [{"name": "buy", "result": "bought"}]}],
    )
    with McpHttpServer(fake) as http, McpServer("shop", http.url) as server:
        assert http.url.startswith("http://127.0.0.1:")
        result = run(
            ScriptedModel([call("login"), call("buy"), reply("x")]),
            "go",
            strategies=[McpTools(server)],
        )
    assert [it.offered for it in result.trace.iterations] == [
        ("login",),
        ("login", "buy"),
        ("login", "buy"),
    ]
    assert result.trace.iterations[1].calls[0].content == "bought"


@llm_tool
def greet(name: str, context: CallContext) -> str:
    """Greet someone."""
    return f"hello {name} from {context.get('tenant', '?')}"


@llm_tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("boom")


def test_harness_tools_served_as_mcp() -> None:
    with (
        McpHttpServer(ToolsAsMcp("local", [greet, explode])) as http,
        McpServer("local", http.url) as server,
    ):
        assert [t.name for t in server.tools()] == ["greet", "explode"]
        ok = server.call("greet", {"name": "Ada"}, CallContext({"tenant": "acme"}))
        bad_args = server.call("greet", {})
        fails = server.call("explode", {})
        unknown = server.call("nope", {})
    assert (ok.is_error, ok.content) == (False, "hello Ada from acme")
    assert bad_args.is_error and "argument 'name' is required" in bad_args.content
    assert fails.is_error and "RuntimeError: boom" in fails.content
    assert unknown.is_error and "Unknown tool 'nope'; tools: greet, explode" in unknown.content


def test_only_loopback_and_unique_names() -> None:
    with pytest.raises(UsageError, match="loopback only"):
        McpHttpServer(FakeMcpServer("x"), host="0.0.0.0")
    with pytest.raises(UsageError, match=r"duplicate tool names \['greet'\]"):
        ToolsAsMcp("x", [greet, as_tool(greet).with_description("again")])


def _serve(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, list[str]]:
    seen: list[str] = []

    def interrupted(self: McpHttpServer) -> None:
        with McpServer("probe", self.url) as probe:
            seen.extend(t.name for t in probe.tools())
        self.stop()
        raise KeyboardInterrupt

    monkeypatch.setattr(McpHttpServer, "serve_forever", interrupted)
    result = CliRunner().invoke(app, ["serve", *args])
    return result.exit_code, result.output, seen


def test_serve_mcp_serves_the_only_fake_server(monkeypatch: pytest.MonkeyPatch) -> None:
    code, output, seen = _serve(monkeypatch, "--mcp", "--scenario", str(BANK))
    assert code == 0, output
    assert "MCP_URL=http://127.0.0.1:" in output
    assert "stopped" in output
    assert seen == ["login", "rates"]


def test_serve_mcp_serves_the_scenarios_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    code, output, seen = _serve(monkeypatch, "--mcp", "--scenario", str(SEED))
    assert code == 0, output
    assert seen == ["search_customer"]


def test_serve_mcp_names_the_fake_servers_when_asked_for_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, output, _ = _serve(monkeypatch, "--mcp-server", "nope", "--scenario", str(BANK))
    assert code == 2
    assert "no fake MCP server 'nope'; fake servers: ['bank']" in output
    code, output, seen = _serve(monkeypatch, "--mcp-server", "bank", "--scenario", str(BANK))
    assert code == 0 and seen == ["login", "rates"]
