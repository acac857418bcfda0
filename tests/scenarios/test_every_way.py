"""One scenario, every way: the seed flow and an unfolding scenario run in process, through the
OpenAI wire fake (Chat Completions and Responses, via the openai SDK) and through the
Anthropic wire fake (via the anthropic SDK), streamed and not, sync and async, with the
same expectations and the same trace."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.loop import Model, arun
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    fake_anthropic_client,
    fake_async_anthropic_client,
    fake_openai_client,
)
from harness.scenarios import Scenario, ScenarioOutcome, load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios"
SCENARIOS = ["discovery/seed_average_spend", "unfolding/exclusive_file_tools"]

Wrap = Callable[[Model], Model]
WAYS: dict[str, Wrap] = {
    "in-process": lambda m: m,
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
    "openai-chat-stream": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test", stream=True),
    "openai-responses": lambda m: OpenAIResponsesModel(fake_openai_client(m), "gpt-test"),
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "anthropic-stream": lambda m: AnthropicModel(
        fake_anthropic_client(m), "claude-test", stream=True
    ),
    "anthropic-strict": lambda m: AnthropicModel(
        fake_anthropic_client(m, profile="strict"), "claude-test"
    ),
}


@dataclasses.dataclass(frozen=True)
class Served(Scenario):
    """The scenario's script served behind an adapter and a wire fake."""

    wrap: Wrap = WAYS["in-process"]

    def build_model(self) -> Model:
        return self.wrap(super().build_model())


def _outcome(name: str, way: str) -> ScenarioOutcome:
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    return run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=WAYS[way]))


@pytest.fixture(scope="module")
def baselines() -> dict[str, ScenarioOutcome]:
    return {name: _outcome(name, "in-process") for name in SCENARIOS}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("name", SCENARIOS)
def test_same_expectations_and_same_trace(
    name: str, way: str, baselines: dict[str, ScenarioOutcome]
) -> None:
    outcome = _outcome(name, way)
    assert outcome.passed, f"{way}: {outcome.problem}"
    baseline = baselines[name]
    assert outcome.trace is not None and baseline.trace is not None
    assert outcome.trace.to_dict() == baseline.trace.to_dict()
    assert outcome.rows == baseline.rows
    assert outcome.result is not None and baseline.result is not None
    assert outcome.result.output == baseline.result.output
    assert list(outcome.result.messages) == list(baseline.result.messages)


@pytest.mark.parametrize("stream", [False, True])
def test_async_anthropic_run_gives_the_same_trace(
    stream: bool, baselines: dict[str, ScenarioOutcome]
) -> None:
    scenario = load_scenario(CATALOG / "discovery/seed_average_spend.yaml")
    served = scenario.build_model()
    model = AnthropicModel(fake_async_anthropic_client(served), "claude-test", stream=stream)
    result = asyncio.run(
        arun(
            model,
            scenario.build_prompt(),
            tools=scenario.build_tools(),
            strategies=scenario.build_strategies(),
            system=scenario.spec.system,
            options=scenario.build_options(),
        )
    )
    baseline = baselines["discovery/seed_average_spend"].trace
    assert baseline is not None
    assert result.trace.to_dict() == baseline.to_dict()
