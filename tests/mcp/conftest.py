"""Shared pieces for the MCP tests: fake servers and the stdio server script."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.mcp import FakeMcpServer, McpServer

STDIO_SERVER = Path(__file__).with_name("stdio_server.py")
STDIO = [sys.executable, str(STDIO_SERVER)]

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}


def shop_fake() -> FakeMcpServer:
    """Two tools; the first call of ``login`` adds ``buy`` and removes ``echo``."""
    return FakeMcpServer(
        "shop",
        [
            {
                "name": "search",
                "description": "Search products",
                "input_schema": SEARCH_SCHEMA,
                "result": {"hits": ["a1"]},
            },
            {"name": "echo", "description": "Echo", "echo": True},
            {"name": "login", "description": "Log in", "result": "ok"},
        ],
        changes=[
            {
                "after_call": "login",
                "add": [{"name": "buy", "description": "Buy", "result": "bought"}],
                "remove": ["echo"],
            }
        ],
    )


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
