"""Fixtures for the MCP tests: both protocol eras, a scripted shop server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import shop_fake

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
