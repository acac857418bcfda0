"""The MCP scenarios of the catalog, and the ``mcp_servers`` section of scenario files."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness._errors import ScenarioError
from harness.mcp import McpConnected, McpServerKilled
from harness.scenarios import load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios" / "mcp"
STDIO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "stdio_server.py"

EXPECTED: dict[str, list[tuple[str, ...]]] = {
    "facade_unfolding": [
        ("issues", "repository"),
        ("repository", "issues_context", "issues_list", "issues_create", "issues_close"),
    ],
    "meta_allow_list": [("whoami",)],
    "list_changed_injection": [("login", "rates"), ("rates", "balance", "transfer")],
    "group_activated_by_tool": [
        ("activate_group", "deactivate_group"),
        ("activate_group", "deactivate_group", "forecast", "alerts"),
    ],
}


def test_every_mcp_scenario_is_listed() -> None:
    assert {p.stem for p in CATALOG.glob("*.yaml")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mcp_scenario_passes(name: str) -> None:
    outcome = run_scenario(load_scenario(CATALOG / f"{name}.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    offered = [it.offered for it in outcome.trace.iterations]
    assert offered[: len(EXPECTED[name])] == EXPECTED[name]
    connected = [e for e in outcome.trace.events if isinstance(e, McpConnected)]
    assert len(connected) == 1


def test_list_change_is_caused_by_the_server() -> None:
    outcome = run_scenario(load_scenario(CATALOG / "list_changed_injection.yaml"))
    assert outcome.trace is not None
    (change,) = outcome.trace.iterations[1].changes
    assert change.strategy == "mcp:bank"
    assert (change.added, change.removed) == (("balance", "transfer"), ("login",))


def test_group_scenario_connects_only_on_activation() -> None:
    outcome = run_scenario(load_scenario(CATALOG / "group_activated_by_tool.yaml"))
    assert outcome.trace is not None
    (event,) = [e for e in outcome.trace.events if isinstance(e, McpConnected)]
    assert event.iteration == 1
    assert outcome.trace.iterations[0].offered == ("activate_group", "deactivate_group")


def _scenario(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_a_scenario_can_declare_a_stdio_server(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        f"""
        name: stdio
        prompt: add
        context: {{user: u1, token: secret}}
        mcp_servers:
          - name: calc
            command: [python, {str(STDIO_SERVER)!r}]
            meta: {{deny: [token]}}
            names: prefix
        model:
          steps:
            - call: calc_add
              args: {{a: 2, b: 2}}
            - call: calc_echo_meta
            - reply: four
        expect:
          output: four
          timeline:
            - {{calls: [calc_add], errors: []}}
            - {{calls: [calc_echo_meta], errors: []}}
            - {{answer: true}}
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    contents = [it.calls[0].content for it in outcome.trace.iterations[:2]]
    assert contents == ["4", "user"]
    assert sys.executable  # the "python" command means this interpreter


def test_a_stuck_stdio_server_is_killed_after_the_run_within_its_shutdown_grace(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "server.pids"
    path = _scenario(
        tmp_path,
        f"""
        name: stuck
        prompt: add
        mcp_servers:
          - name: stuck
            command: [python, {str(STDIO_SERVER)!r}, --stubborn, --pid-file, {str(pid_file)!r}]
            shutdown_grace: 0.4
        model: {{steps: [{{call: add, args: {{a: 1, b: 2}}}}, {{reply: three}}]}}
        expect: {{output: three}}
        """,
    )
    with pytest.warns(McpServerKilled, match=r"MCP server 'stuck'.*within 0.4s"):
        outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem
    (pid,) = (int(p) for p in pid_file.read_text(encoding="utf-8").split())
    if Path("/proc").is_dir():
        assert not Path(f"/proc/{pid}").exists()  # killed and reaped when the run ended


@pytest.mark.slow  # two servers
def test_under_filterwarnings_error_a_kill_fails_the_run_and_every_server_still_ends(
    tmp_path: Path,
) -> None:
    servers = "".join(
        f"""
          - name: {name}
            command: [python, {str(STDIO_SERVER)!r}, --stubborn, --pid-file, {str(tmp_path / name)!r}]
            names: prefix
            shutdown_grace: 0.4"""  # noqa: E501
        for name in ("one", "two")
    )
    path = _scenario(
        tmp_path,
        f"""
        name: stuck
        prompt: add
        mcp_servers: {servers}
        model:
          steps:
            - {{call: one_add, args: {{a: 1, b: 2}}}}
            - {{call: two_add, args: {{a: 1, b: 2}}}}
            - {{reply: three}}
        """,
    )
    with pytest.raises(McpServerKilled):  # filterwarnings = error: the warning is raised
        run_scenario(load_scenario(path))
    pids = [int((tmp_path / name).read_text(encoding="utf-8")) for name in ("one", "two")]
    if Path("/proc").is_dir():
        assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        ("{name: x}", "needs exactly one of fake, command or url, got none"),
        ("{name: x, url: 'http://127.0.0.1:1/mcp', command: [a]}", "got ['command', 'url']"),
        ("{name: x, fake: {tools: []}, meta: {allow: [a], deny: [b]}}", "one of allow or deny"),
    ],
)
def test_bad_mcp_server_entries_are_scenario_errors(
    tmp_path: Path, server: str, problem: str
) -> None:
    path = _scenario(
        tmp_path,
        f"""
        name: bad
        prompt: x
        mcp_servers: [{server}]
        model: {{steps: [{{reply: x}}]}}
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed
    assert isinstance(outcome.error, ScenarioError)
    assert problem in str(outcome.error)


def test_a_server_that_is_down_fails_the_scenario_with_its_name(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        """
        name: down
        prompt: x
        mcp_servers: [{name: gone, command: [/nonexistent/harness-test-mcp-server]}]
        model: {steps: [{reply: x}]}
        expect: {error: McpConnectError}
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem
    assert "MCP server 'gone'" in str(outcome.error)
