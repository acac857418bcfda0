"""A stdio server ends within ``McpServer(shutdown_grace=...)`` whatever it does: on
``close()``, at interpreter exit, after a handshake or a ``tools/list`` that timed out; the
whole process group (children included); a server that had to be killed is named by an
``McpServerKilled`` warning. Checked by the processes' ends (/proc), never by a clock."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_helpers import (
    STDIO,
    needs_proc,
    pids_from,
    running,
    running_servers_of_this_process,
    still_running,
)

from harness import ScriptedModel, call, reply, run
from harness.mcp import McpServer, McpServerKilled, McpTimeout, McpTools

pytestmark = needs_proc

GRACE = 0.4
"""For servers that will be killed anyway."""
CALM_GRACE = 2.0
"""For servers that must end without a kill, on a loaded machine too (one that exits on
stdin close ends at once; a child left behind gets SIGTERM after half of it)."""


@pytest.fixture(autouse=True)
def _leave_nothing_behind(tmp_path: Path) -> Iterator[None]:
    """Should the feature break, kill what the test's servers left, so a failing test
    neither hangs the next ones nor leaks stubborn processes."""
    yield
    for pid_file in tmp_path.glob("*.pids"):
        for pid in pids_from(pid_file):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def stdio(tmp_path: Path, *options: str, name: str = "server") -> tuple[list[str], Path]:
    """The test server's command line with ``options``, and the file its pids go to."""
    pid_file = tmp_path / f"{name}.pids"
    return [*STDIO, *options, "--pid-file", str(pid_file)], pid_file


def test_a_server_that_exits_when_its_stdin_closes_ends_without_a_warning(
    tmp_path: Path,
) -> None:
    command, pid_file = stdio(tmp_path)
    server = McpServer("calm", command, shutdown_grace=CALM_GRACE)
    assert server.tools()
    (pid,) = pids_from(pid_file)
    assert running(pid)
    server.close()  # filterwarnings=error: a kill warning would fail here
    assert not running(pid)  # close() returns once the server is gone


def test_a_server_that_ignores_stdin_close_and_sigterm_is_killed_with_a_warning(
    tmp_path: Path,
) -> None:
    command, pid_file = stdio(tmp_path, "--stubborn")
    server = McpServer("stubborn", command, shutdown_grace=GRACE)
    assert server.tools()
    (pid,) = pids_from(pid_file)
    with pytest.warns(McpServerKilled, match=rf"MCP server 'stubborn' \(pid {pid}\)") as seen:
        server.close()
    (warning,) = seen
    assert isinstance(warning.message, McpServerKilled)
    assert (warning.message.server, warning.message.pid) == ("stubborn", pid)
    assert "within 0.4s" in str(warning.message) and "shutdown_grace" in str(warning.message)
    assert not running(pid)
    assert not server.connected
    server.close()  # idempotent, nothing left to warn about


@pytest.mark.parametrize("stubborn", [False, True], ids=["child-obeys-sigterm", "stubborn"])
def test_children_the_server_left_behind_are_ended_with_its_process_group(
    tmp_path: Path, stubborn: bool
) -> None:
    options = ["--child", "--stubborn"] if stubborn else ["--child"]
    command, pid_file = stdio(tmp_path, *options)
    server = McpServer("parent", command, shutdown_grace=GRACE if stubborn else CALM_GRACE)
    assert server.tools()
    pid, child = pids_from(pid_file)
    assert running(child)
    if stubborn:
        with pytest.warns(McpServerKilled, match="'parent'"):
            server.close()
    else:  # the server exits on stdin close; its child gets SIGTERM, no warning
        server.close()
    assert still_running([pid, child], groups=[pid]) == []


@pytest.mark.slow  # the server must start and write its pids within init_timeout
def test_a_server_that_hangs_on_initialise_is_ended_before_the_timeout_is_raised(
    tmp_path: Path,
) -> None:
    command, pid_file = stdio(tmp_path, "hang", "--stubborn")
    server = McpServer("sleepy", command, init_timeout=2, shutdown_grace=GRACE)
    with (
        pytest.warns(McpServerKilled, match="'sleepy'"),
        pytest.raises(McpTimeout, match=r"'sleepy'.*within 2s \(init_timeout\)"),
    ):
        server.tools()
    (pid,) = pids_from(pid_file)
    assert not running(pid)  # ended already: before McpTimeout reached us
    server.close()


@pytest.mark.slow  # the handshake must succeed first, on a loaded machine too
def test_a_server_that_hangs_in_tools_list_is_ended_and_its_session_closed(
    tmp_path: Path,
) -> None:
    command, pid_file = stdio(tmp_path, "--hang-list", "--stubborn")
    server = McpServer("lister", command, init_timeout=4, shutdown_grace=GRACE)
    with (
        pytest.warns(McpServerKilled, match="'lister'"),
        pytest.raises(McpTimeout, match=r"tools/list did not answer within 4s.*reconnects"),
    ):
        server.tools()
    (pid,) = pids_from(pid_file)
    assert not running(pid)
    assert not server.connected
    server.close()


@pytest.mark.slow  # four servers, one after the other
def test_no_server_process_outlives_the_servers_of_a_test(tmp_path: Path) -> None:
    """Servers of every kind, children included, used and closed: afterwards none of this
    process's children runs the test server, and nothing runs in their process groups."""
    kinds = {
        "plain": [],
        "child": ["--child"],
        "stubborn_child": ["--child", "--stubborn"],
        "stubborn": ["--stubborn"],
    }
    servers = []
    for name, options in kinds.items():
        command, pid_file = stdio(tmp_path, *options, name=name)
        grace = GRACE if "--stubborn" in options else CALM_GRACE
        server = McpServer(name, command, shutdown_grace=grace)
        result = run(
            ScriptedModel([call("add", {"a": 1, "b": 1}), reply("ok")]),
            "go",
            strategies=[McpTools(server)],
        )
        assert result.trace.calls[0].content == "2"
        servers.append((server, pids_from(pid_file)))
    started = [pid for _, pids in servers for pid in pids]
    assert all(running(pid) for pid in started)
    with pytest.warns(McpServerKilled) as seen:
        close_all([server for server, _ in servers])
    assert sorted(w.message.server for w in seen) == ["stubborn", "stubborn_child"]  # type: ignore[union-attr]
    leaders = [pids[0] for _, pids in servers]
    assert still_running(started, groups=leaders) == []
    assert running_servers_of_this_process() == []


def close_all(servers: list[McpServer]) -> None:
    for server in servers:
        server.close()


USER_SCRIPT = """
import sys
from harness import ScriptedModel, call, reply, run
from harness.mcp import McpServer, McpTools

server = McpServer("stuck", {command!r}, call_timeout=0.3, shutdown_grace={grace!r})
result = run(ScriptedModel([call("hang"), reply("x")]), "go", strategies=[McpTools(server)])
print("returned", result.trace.calls[0].error_kind, flush=True)
if {close!r}:
    server.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("close", [True, False], ids=["close", "interpreter-exit"])
def test_the_process_that_used_a_stuck_server_exits_within_the_grace(
    tmp_path: Path, close: bool
) -> None:
    """The issue's case: a tool that never answers on a server that ignores stdin close
    and SIGTERM. After the run returned, the user's process (closing the server itself,
    or leaving it to interpreter exit) exits within the grace plus 2 s, server gone."""
    grace = 1.0
    command, pid_file = stdio(tmp_path, "--stubborn", "--child")
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent(USER_SCRIPT).format(command=command, grace=grace, close=close),
        encoding="utf-8",
    )
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w", encoding="utf-8") as errors_to:  # a file: a survivor may hold it
        user = subprocess.Popen(
            [sys.executable, "-W", "default", str(script)],
            stdout=subprocess.PIPE,
            stderr=errors_to,
            text=True,
        )
    try:
        assert user.stdout is not None
        assert user.stdout.readline() == "returned exception\n"  # the run returned
        user.wait(timeout=grace + 2)  # the user's process exited within grace + 2 s
    finally:
        user.kill()
        user.wait()
        user.stdout.close()  # type: ignore[union-attr]
    errors = stderr.read_text(encoding="utf-8")
    assert user.returncode == 0, errors
    assert "McpServerKilled: MCP server 'stuck'" in errors
    pid, child = pids_from(pid_file)
    assert still_running([pid, child], groups=[pid]) == []
