"""The plugin under pytest-xdist (-n 2), with -p no:cacheprovider and --strict-markers."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

from harness.models import ScriptedModel, WireServer, reply

SUITE = """
import os
import pytest
from harness import call, reply, llm_tool
from harness.assertions import has_iterations
from harness.testing import HarnessConfig

@llm_tool
def ping() -> str:
    "Ping."
    return "pong"

@pytest.fixture
def harness_config():
    return HarnessConfig(openai_base_url=os.environ["FAKE_URL"], match_on=["method", "path"])

@pytest.mark.parametrize("n", range(4))
def test_snapshot(n, harness_runner, harness_scripted, harness_snapshot):
    model = harness_scripted([call("ping")] * n + [reply("ok")])
    result = harness_runner.run(model, "go", tools=[ping])
    harness_snapshot(result)

@pytest.mark.parametrize("n", range(2))
@pytest.mark.harness_cassette
def test_cassette(n, harness_openai):
    response = harness_openai.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}]
    )
    assert response.choices[0].message.content == "recorded"

def test_fails(harness_runner, harness_scripted):
    result = harness_runner.run(harness_scripted([call("ping"), reply("ok")]), "go", tools=[ping])
    assert result.trace == has_iterations(5)
"""


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer(ScriptedModel([reply("recorded"), reply("recorded")])) as running:
        yield running


@pytest.mark.slow
def test_suite_under_two_workers(
    pytester: pytest.Pytester, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("FAKE_URL", server.url)
    xml = pytester.path / "junit.xml"
    args = ["-n", "2", "-p", "no:cacheprovider", "--strict-markers", f"--junitxml={xml}"]
    result = pytester.runpytest_subprocess(*args, "--harness-record-mode=once")
    result.assert_outcomes(passed=6, failed=1)
    out = result.stdout.str()
    assert "harness: 4 timeline snapshot(s) written" in out
    summary = out.split("harness timelines")[1]
    assert "test_suite.py::test_fails" in summary
    assert "expected 5 iterations, got 2" in summary

    snapshots = sorted((pytester.path / "__timelines__" / "test_suite").iterdir())
    assert [p.name for p in snapshots] == [f"test_snapshot[{n}].timeline" for n in range(4)]
    cassettes = sorted((pytester.path / "cassettes" / "test_suite").iterdir())
    assert [p.name for p in cassettes] == ["test_cassette[0].yaml", "test_cassette[1].yaml"]
    cases = {c.get("name"): c for c in ET.parse(xml).iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_snapshot[3]"].iter("property")}
    assert props["harness_iterations"] == "4"

    # A second run replays the cassettes offline and matches every snapshot.
    monkeypatch.setenv("FAKE_URL", "http://127.0.0.1:9/v1")
    again = pytester.runpytest_subprocess(*args)
    again.assert_outcomes(passed=6, failed=1)
    assert "snapshot(s) written" not in again.stdout.str()
    assert len(server.requests) == 2
