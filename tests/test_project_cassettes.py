"""The project's own cassettes (``cassettes/``): the seed flow through the real ``openai``
SDK, replayed offline by the pytest plugin.

The cassette was recorded from ``harness serve`` on loopback::

    harness serve --scenario scenarios/discovery/seed_average_spend.yaml --port 8765 &
    HARNESS_RECORD_BASE_URL=http://127.0.0.1:8765/v1 \\
        pytest tests/test_project_cassettes.py --harness-record-mode=once
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import openai
import pytest

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness._credentials import is_placeholder
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


REAL = ROOT / "cassettes" / "real"
"""Byte-faithful copies of other projects' recordings (cassettes/real/PROVENANCE.md)."""
LICENCES = ("MIT", "Apache-2.0", "Apache-2.0 OR BSD-3-Clause", "BSD-3-Clause", "BSD-2-Clause")


def test_project_cassettes_hold_no_credentials() -> None:
    cassettes = sorted((ROOT / "cassettes").rglob("*.yaml"))
    assert cassettes, "the project ships at least one cassette"
    for path in cassettes:
        text = path.read_text(encoding="utf-8").lower()
        copied = REAL in path.parents  # faithful copies keep expired cookies and org ids
        headers: tuple[str, ...] = ("authorization", "api-key", "x-api-key")
        if not copied:
            headers += ("openai-organization", "set-cookie")
        for header in headers:
            if copied:  # a copy whose recorder scrubbed the value to a placeholder keeps it
                text = re.sub(
                    rf"{header}:\n\s+- '?([^\s']+)'?\n",
                    lambda m: "" if is_placeholder(m.group(1)) else m.group(0),
                    text,
                )
            assert f"{header}:" not in text, f"{path} stores the {header} header"
        assert "sk-harness-test" not in text


def test_every_copied_recording_has_its_source_and_a_permissive_licence() -> None:
    import hashlib

    rows = {
        cells[1]: cells[2:6]
        for line in (REAL / "PROVENANCE.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| file") and "---" not in line
        for cells in [[c.strip() for c in line.split("|")]]
    }
    files = sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*.yaml"))
    assert files and sorted(rows) == files  # every file listed, every listed file there
    digests = set()
    for name, (source, licence, blob, _what) in rows.items():
        assert " @ " in source and "`" in source, (name, source)
        assert licence in LICENCES, (name, licence)
        data = (REAL / name).read_bytes()
        header = f"blob {len(data)}\0".encode()
        assert hashlib.sha1(header + data).hexdigest() == blob, f"{name} changed"
        digests.add(hashlib.sha256(data).hexdigest())
    assert len(digests) == len(rows)  # no two copies of one recording
