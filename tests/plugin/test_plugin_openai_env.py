"""``harness_openai`` records and replays against ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``
(as ``harness serve`` suggests), and a ``harness_config`` value still wins."""

from __future__ import annotations

import pytest

from harness.testing import HarnessConfig
from harness.testing._config import (
    DEFAULT_OPENAI_API_KEY,
    DEFAULT_OPENAI_BASE_URL,
    openai_client_settings,
)


def test_config_wins_then_environment_then_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert openai_client_settings(None) == (DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_API_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert openai_client_settings(HarnessConfig()) == ("http://127.0.0.1:8765/v1", "sk-from-env")
    config = HarnessConfig(openai_base_url="http://127.0.0.1:9/v1", openai_api_key="sk-config")
    assert openai_client_settings(config) == ("http://127.0.0.1:9/v1", "sk-config")


INNER = """
import pytest

@pytest.mark.harness_cassette
def test_env(harness_openai):
    assert str(harness_openai.base_url) == "http://127.0.0.1:8765/v1/"
    assert harness_openai.api_key == "sk-from-env"
"""


def test_the_marked_client_follows_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    pytester.makepyfile(test_env=INNER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-record-mode=once")
    result.assert_outcomes(passed=1)


DUMMY_KEY = """
from harness.testing import HarnessConfig

def test_uses_a_dummy_key():
    assert HarnessConfig(openai_api_key="sk-test").openai_api_key == "sk-test"
"""


def test_a_well_known_dummy_key_does_not_fail_a_warnings_as_errors_run(
    pytester: pytest.Pytester,
) -> None:
    """A newcomer's ``HarnessConfig(openai_api_key="sk-test")`` under ``filterwarnings =
    error`` used to end in a ``ShortSecretWarning`` error."""
    pytester.makeini("[pytest]\nfilterwarnings = error\n")
    pytester.makepyfile(test_dummy=DUMMY_KEY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


SERVED_SCENARIO = """
name: served
prompt: What is 1+2?
tools: [agent:add]
model:
  steps:
    - {call: add, args: {a: 1, b: 2}}
    - {reply: "3"}
expect:
  output: "3"
"""

SERVED_TEST = """
import pytest
from harness import run
from harness.models import OpenAIChatModel
from agent import add

@pytest.mark.harness_cassette
@pytest.mark.harness_scenario("served.yaml")
def test_served(harness_openai, harness_server):
    assert str(harness_openai.base_url) == harness_server.url + "/"
    result = run(OpenAIChatModel(harness_openai, "gpt-4o-mini"), "What is 1+2?", tools=[add])
    assert result.output == "3"
"""

AGENT = """
from harness import llm_tool

@llm_tool
def add(a: int, b: int) -> int:
    "Add."
    return a + b
"""


def test_harness_server_records_a_scenario_in_one_run_then_replays(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``harness_server`` fixture serves the ``harness_scenario`` marker's model on
    loopback; a marked cassette records through it with no OPENAI_BASE_URL."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    pytester.makepyfile(agent=AGENT, test_served=SERVED_TEST)
    pytester.makefile(".yaml", served=SERVED_SCENARIO)
    recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-record-mode=once")
    recorded.assert_outcomes(passed=1)
    (cassette,) = pytester.path.rglob("cassettes/**/*.yaml")
    assert cassette.read_text().count("uri: http://127.0.0.1:") == 2
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
