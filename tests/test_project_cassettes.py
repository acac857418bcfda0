"""The project's own cassettes (``cassettes/``): the seed flow through the real ``openai``
SDK, replayed offline by the pytest plugin.

The cassette was recorded from ``harness serve`` on loopback::

    harness serve --scenario scenarios/discovery/seed_average_spend.yaml --port 8765 &
    HARNESS_RECORD_BASE_URL=http://127.0.0.1:8765/v1 \\
        pytest tests/test_project_cassettes.py --harness-record-mode=once
"""

from __future__ import annotations

import os
from pathlib import Path

import openai
import pytest

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness.assertions import expect_timeline
from harness.models import OpenAIChatModel
from harness.testing import HarnessConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def harness_config() -> HarnessConfig:
    return HarnessConfig(
        cassette_dir=str(ROOT / "cassettes"),
        # replay never connects; recording points the client at a loopback server
        openai_base_url=os.environ.get("HARNESS_RECORD_BASE_URL", "http://127.0.0.1:9/v1"),
        match_on=["method", "path"],
    )


@pytest.mark.harness_cassette
def test_seed_flow_replays_from_the_project_cassette(harness_openai: openai.OpenAI) -> None:
    result = run(
        OpenAIChatModel(harness_openai, "gpt-4o-mini"),
        "What's John Smith's average spend?",
        system="You are a CRM assistant. Use the tools to answer.",
        tools=[search_customer],
        strategies=[EntityDiscovery()],
    )
    assert expect_timeline(
        result,
        [
            "call search_customer",
            "offered gains customer_c123_get_average_spend",
            "call customer_c123_get_average_spend",
            "answer",
        ],
    )
    assert (
        result.trace.iterations[1].calls[0].value
        == search_customer("John Smith")[0].get_average_spend()
    )


def test_project_cassettes_hold_no_credentials() -> None:
    cassettes = sorted((ROOT / "cassettes").rglob("*.yaml"))
    assert cassettes, "the project ships at least one cassette"
    for path in cassettes:
        text = path.read_text(encoding="utf-8").lower()
        for header in ("authorization", "api-key", "openai-organization", "set-cookie"):
            assert f"{header}:" not in text, f"{path} stores the {header} header"
        assert "sk-harness-test" not in text
