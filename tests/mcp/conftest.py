"""Fixtures for the MCP tests: both protocol eras, a scripted shop server, and a check
that no stdio test server outlives the test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import PROC, running_servers_of_this_process, shop_fake

from harness.mcp import FakeMcpServer, McpServer


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both protocol eras: 2026-07-28 (subscriptions/listen) and the handshake era."""
    return str(request.param)


@pytest.fixture
def shop() -> FakeMcpServer:
    return shop_fake()


@pytest.fixture
def shop_server(shop: FakeMcpServer, mode: str) -> Iterator[McpServer]:
    server = McpServer("shop", shop, mode=mode)
    yield server
    server.close()


@pytest.fixture(scope="session", autouse=True)
def no_stdio_server_outlives_the_session() -> Iterator[None]:
    """At the end of the session, no child of this process still runs the test server
    (every test closes its ``McpServer``; a close leaves no server behind)."""
    yield
    if PROC.is_dir():
        left = running_servers_of_this_process()
        assert left == [], f"stdio test servers still running after the tests: pids {left}"
