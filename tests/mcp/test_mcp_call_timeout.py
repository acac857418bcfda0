"""A server that hangs mid-call cannot hang the run: ``McpServer(call_timeout=...)``, on by
default, cancels the call and the model reads an error naming server, tool and setting."""

from __future__ import annotations

import math
from typing import Any

import pytest
from mcp_helpers import STDIO

from harness import ScriptedModel, UsageError, call, reply, run
from harness.mcp import McpServer, McpTimeout, McpTools
from harness.mcp._server import DEFAULT_CALL_TIMEOUT, DEFAULT_SHUTDOWN_GRACE
from harness.scenarios._mcp import McpServerSpec


def test_a_call_that_hangs_is_cancelled_at_call_timeout_and_the_session_lives_on(
    bounded: Any,
) -> None:
    server = McpServer("stdio", STDIO, call_timeout=0.5, shutdown_grace=0.5)
    model = ScriptedModel([call("hang"), call("add", {"a": 2, "b": 3}), reply("done")])
    with bounded(30):
        result = run(model, "go", strategies=[McpTools(server)])
    server.close()
    hung, added = result.trace.calls
    assert hung.error_kind == "exception" and isinstance(hung.exception, McpTimeout)
    assert hung.content == (
        "Tool 'hang' failed: McpTimeout: MCP server 'stdio', tool 'hang': tools/call did not "
        "answer within 0.5s (call_timeout); the call was cancelled. Is the server stuck?"
    )
    assert (added.is_error, added.content) == (False, "5")
    assert len(server.connections) == 1  # the same session answered the next call


def test_every_server_has_a_finite_call_timeout_by_default() -> None:
    server = McpServer("s", STDIO)
    assert server.call_timeout == DEFAULT_CALL_TIMEOUT == 60.0
    assert McpServer("s", STDIO, call_timeout=None).call_timeout is None  # asked for


def test_every_stdio_server_is_given_a_finite_shutdown_grace_by_default() -> None:
    assert McpServer("s", STDIO).shutdown_grace == DEFAULT_SHUTDOWN_GRACE == 4.0
    assert McpServerSpec(name="s").shutdown_grace == DEFAULT_SHUTDOWN_GRACE  # scenario files
    assert McpServer("s", STDIO, shutdown_grace=1).shutdown_grace == 1.0


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf, 1e300, "10"])
def test_hostile_timeouts_are_refused_naming_the_setting(seconds: Any) -> None:
    with pytest.raises(UsageError, match=r"call_timeout must be a number of seconds > 0"):
        McpServer("s", STDIO, call_timeout=seconds)
    with pytest.raises(UsageError, match=r"init_timeout must be a number of seconds > 0"):
        McpServer("s", STDIO, init_timeout=seconds)
    with pytest.raises(UsageError, match=r"'s': shutdown_grace must be a number of seconds > 0"):
        McpServer("s", STDIO, shutdown_grace=seconds)
