"""``fuzz_agent`` bounds the agent's own code (issue 34 sections 2 and 3): a factory or a
property that never returns ends the search within the time budget with a ``UsageError``
naming it, and one raising a ``BaseException`` (not an ``Exception``) is a usage error
too, never a traceback."""

from __future__ import annotations

import threading
from typing import Any

import planted_agents
import pytest
from typer.testing import CliRunner

from harness import UsageError
from harness.cli._app import app
from harness.fuzz import fuzz_agent
from harness.fuzz._watchdog import UserCodeTimeout, watched


@pytest.mark.parametrize(
    ("factory", "properties"),
    [
        ("sleepy_factory", []),  # at once: the fuzzer's first check of the factory
        ("sleepy_from_fifth", []),  # in the middle of the search
        ("sound", ["planted_agents:sleepy_property"]),
    ],
)
def test_a_factory_or_property_that_never_returns_ends_within_max_seconds(
    factory: str, properties: list[str], bounded: Any
) -> None:
    planted_agents.FACTORY_CALLS[0] = 0
    culprit = properties[0] if properties else f"planted_agents:{factory}"
    with bounded(20.0), pytest.raises(UsageError) as caught:
        fuzz_agent(f"planted_agents:{factory}", properties, max_seconds=1, seed=1)
    message = str(caught.value)
    assert culprit in message and "UserCodeTimeout" in message and "within 1s" in message


def test_the_cli_names_the_hung_factory_and_exits_2(bounded: Any) -> None:
    with bounded(20.0):
        result = CliRunner().invoke(
            app, ["fuzz", "--agent", "planted_agents:sleepy_factory", "--max-seconds", "1"]
        )
    assert result.exit_code == 2, result.output
    assert "planted_agents:sleepy_factory" in result.output and "within 1s" in result.output


@pytest.mark.parametrize(
    ("factory", "properties", "raised"),
    [
        ("raises_base_exception", [], "Stop: the factory stopped"),
        ("sound", ["planted_agents:property_raising_generator_exit"], "GeneratorExit: closed"),
    ],
)
def test_a_base_exception_from_a_factory_or_property_is_a_usage_error(
    factory: str, properties: list[str], raised: str
) -> None:
    with pytest.raises(UsageError, match=raised):
        fuzz_agent(f"planted_agents:{factory}", properties, max_examples=20, seed=1)
    command = ["fuzz", "--agent", f"planted_agents:{factory}", "--examples", "20"]
    for prop in properties:
        command += ["--property", prop]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2 and raised in result.output, result.output


def test_off_the_main_thread_a_hung_call_is_left_in_a_daemon_thread() -> None:
    outcome: list[Any] = []
    release = threading.Event()

    def hangs() -> str:
        release.wait(60)
        return "late"

    def fails() -> None:
        raise KeyError("inner")

    def work() -> None:
        for function in (hangs, fails, lambda: "fine"):
            try:
                outcome.append(watched(function, 0.2)())
            except BaseException as exc:
                outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    release.set()
    assert isinstance(outcome[0], UserCodeTimeout) and "within 0.2s" in str(outcome[0])
    assert isinstance(outcome[1], KeyError) and outcome[2] == "fine"
