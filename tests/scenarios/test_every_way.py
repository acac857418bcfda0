"""One scenario, every way: the seed flow and an unfolding scenario run in process, through the
OpenAI wire fake (Chat Completions and Responses, via the openai SDK) and through the
Anthropic wire fake (via the anthropic SDK), streamed and not, sync and async, and recorded
through the loopback wire server into a cassette (OpenAI and Anthropic) then replayed by the
``CassetteModel`` with the server gone, with the same expectations and the same trace."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path

import anthropic
import openai
import pytest

from harness.cassettes import CassetteModel, codec_for, load_cassette
from harness.loop import Model, arun
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    WireServer,
    fake_anthropic_client,
    fake_async_anthropic_client,
    fake_openai_client,
)
from harness.scenarios import Scenario, ScenarioOutcome, load_scenario, run_scenario
from harness.testing import open_cassette

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


# -- the cassette legs: record through the loopback wire server, replay in process -------

Adapter = Callable[[WireServer, contextlib.ExitStack], Model]
RECORDERS: dict[str, tuple[str, Adapter]] = {
    "openai-chat": (
        "openai-chat",
        lambda server, stack: OpenAIChatModel(
            stack.enter_context(
                openai.OpenAI(base_url=server.url, api_key="sk-test-record", max_retries=0)
            ),
            "gpt-test",
        ),
    ),
    "openai-responses": (
        "openai-responses",
        lambda server, stack: OpenAIResponsesModel(
            stack.enter_context(
                openai.OpenAI(base_url=server.url, api_key="sk-test-record", max_retries=0)
            ),
            "gpt-test",
            stream=True,
        ),
    ),
    "anthropic": (
        "anthropic-messages",
        lambda server, stack: AnthropicModel(
            stack.enter_context(
                anthropic.Anthropic(
                    base_url=server.url.removesuffix("/v1"), api_key="sk-ant-record", max_retries=0
                )
            ),
            "claude-test",
        ),
    ),
    "anthropic-stream": (
        "anthropic-messages",
        lambda server, stack: AnthropicModel(
            stack.enter_context(
                anthropic.Anthropic(
                    base_url=server.url.removesuffix("/v1"), api_key="sk-ant-record", max_retries=0
                )
            ),
            "claude-test",
            stream=True,
        ),
    ),
}


def _record(name: str, flavor: str, path: Path) -> ScenarioOutcome:
    """Run the scenario through a real loopback server with vcrpy recording every request."""
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    adapter = RECORDERS[flavor][1]
    with contextlib.ExitStack() as stack:
        stack.enter_context(open_cassette(path, record_mode="once"))

        def wrap(model: Model) -> Model:
            return adapter(stack.enter_context(WireServer(model)), stack)

        return run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=wrap))


@pytest.mark.parametrize("flavor", sorted(RECORDERS))
@pytest.mark.parametrize("name", SCENARIOS)
def test_recorded_into_a_cassette_and_replayed_by_the_cassette_model(
    name: str, flavor: str, baselines: dict[str, ScenarioOutcome], tmp_path: Path
) -> None:
    path = tmp_path / "recorded.yaml"
    recorded = _record(name, flavor, path)
    assert recorded.passed, f"recording {flavor}: {recorded.problem}"
    cassette = load_cassette(path)
    codecs = {codec_for(i.method, i.path) for i in cassette.interactions}
    assert [c.name for c in codecs if c is not None] == [RECORDERS[flavor][0]]
    assert len(cassette) == len(baselines[name].trace or ())
    assert "sk-test-record" not in path.read_text() and "sk-ant-record" not in path.read_text()

    model = CassetteModel(path)  # no server, no SDK: the recording answers in process
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    outcome = run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=lambda _m: model))
    assert outcome.passed, f"cassette {flavor}: {outcome.problem}"
    assert model.position == len(cassette)
    baseline = baselines[name]
    for leg in (recorded, outcome):
        assert leg.trace is not None and baseline.trace is not None
        assert leg.trace.to_dict() == baseline.trace.to_dict()
        assert leg.rows == baseline.rows
        assert leg.result is not None and baseline.result is not None
        assert leg.result.output == baseline.result.output
        assert list(leg.result.messages) == list(baseline.result.messages)
