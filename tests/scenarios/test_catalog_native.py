"""The native-tools scenarios (``scenarios/native_tools``), every way they can run: in
process, through each SDK fake (streamed and not) whose provider has the feature, and
recorded through the loopback wire server into a cassette then replayed by the cassette
model: the same expectations and the same trace every way. A scenario asking for a
provider's own feature (``native: always``) is refused by a provider without it, with a
``UsageError`` that names the capability: those ways are skipped, and the refusal tested."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path

import anthropic
import openai
import pytest

from harness.cassettes import CassetteModel, load_cassette
from harness.loop import Model
from harness.models import (
    AnthropicModel,
    GeminiModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    WireServer,
    fake_anthropic_client,
    fake_gemini_client,
    fake_openai_client,
)
from harness.scenarios import Scenario, ScenarioOutcome, load_scenario, run_scenario
from harness.testing import open_cassette

FOLDER = Path(__file__).resolve().parents[2] / "scenarios" / "native_tools"
SCENARIOS = sorted(FOLDER.glob("*.yaml"))

Wrap = Callable[[Model], Model]
WAYS: dict[str, Wrap] = {
    "in-process": lambda m: m,
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
    "openai-chat-stream": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test", stream=True),
    "openai-responses": lambda m: OpenAIResponsesModel(fake_openai_client(m), "gpt-test"),
    "openai-responses-stream": lambda m: OpenAIResponsesModel(
        fake_openai_client(m), "gpt-test", stream=True
    ),
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "anthropic-stream": lambda m: AnthropicModel(
        fake_anthropic_client(m), "claude-test", stream=True
    ),
    "gemini": lambda m: GeminiModel(fake_gemini_client(m), "gemini-test"),
    "gemini-stream": lambda m: GeminiModel(fake_gemini_client(m), "gemini-test", stream=True),
}


@dataclasses.dataclass(frozen=True)
class Served(Scenario):
    """The scenario's script served behind an adapter and a wire fake."""

    wrap: Wrap = WAYS["in-process"]

    def build_model(self) -> Model:
        return self.wrap(super().build_model())


def _outcome(path: Path, wrap: Wrap) -> ScenarioOutcome:
    scenario = load_scenario(path)
    return run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=wrap))


def _refused(outcome: ScenarioOutcome) -> bool:
    return not outcome.passed and "native='always'" in (outcome.problem or "")


def test_the_catalog_has_four_native_scenarios() -> None:
    assert len(SCENARIOS) >= 4


@pytest.fixture(scope="module")
def baselines() -> dict[str, ScenarioOutcome]:
    return {p.stem: _outcome(p, WAYS["in-process"]) for p in SCENARIOS}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_same_expectations_and_same_trace(
    path: Path, way: str, baselines: dict[str, ScenarioOutcome]
) -> None:
    outcome = _outcome(path, WAYS[way])
    if _refused(outcome):
        assert "capabilit" in (outcome.problem or "").lower()
        pytest.skip(f"{way} has no such native feature: {outcome.problem}")
    assert outcome.passed, f"{way}: {outcome.problem}"
    baseline = baselines[path.stem]
    assert baseline.passed, baseline.problem
    assert outcome.trace is not None and baseline.trace is not None
    assert outcome.trace.to_dict() == baseline.trace.to_dict()
    assert outcome.rows == baseline.rows
    assert outcome.result is not None and baseline.result is not None
    assert outcome.result.output == baseline.result.output


def test_every_scenario_runs_on_at_least_one_sdk_fake() -> None:
    for path in SCENARIOS:
        served = [w for w in WAYS if w != "in-process" and _outcome(path, WAYS[w]).passed]
        assert served, f"{path.stem} runs through no SDK fake"


# -- recorded into a cassette, replayed by the cassette model -----------------------------

Adapter = Callable[[WireServer, contextlib.ExitStack], Model]


def _openai(server: WireServer, stack: contextlib.ExitStack) -> openai.OpenAI:
    return stack.enter_context(
        openai.OpenAI(base_url=server.url, api_key="sk-test-record", max_retries=0)
    )


def _anthropic(server: WireServer, stack: contextlib.ExitStack) -> anthropic.Anthropic:
    return stack.enter_context(
        anthropic.Anthropic(
            base_url=server.url.removesuffix("/v1"), api_key="sk-ant-record", max_retries=0
        )
    )


RECORDERS: dict[str, Adapter] = {
    "openai-chat": lambda s, k: OpenAIChatModel(_openai(s, k), "gpt-test"),
    "openai-responses": lambda s, k: OpenAIResponsesModel(_openai(s, k), "gpt-test", stream=True),
    "anthropic": lambda s, k: AnthropicModel(_anthropic(s, k), "claude-test"),
    "anthropic-stream": lambda s, k: AnthropicModel(_anthropic(s, k), "claude-test", stream=True),
}


@pytest.mark.parametrize("flavor", sorted(RECORDERS))
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_recorded_into_a_cassette_and_replayed_by_the_cassette_model(
    path: Path, flavor: str, baselines: dict[str, ScenarioOutcome], tmp_path: Path
) -> None:
    target = tmp_path / "recorded.yaml"
    with contextlib.ExitStack() as stack:
        stack.enter_context(open_cassette(target, record_mode="once"))

        def wrap(model: Model) -> Model:
            return RECORDERS[flavor](stack.enter_context(WireServer(model)), stack)

        recorded = _outcome(path, wrap)
    if _refused(recorded):
        pytest.skip(f"{flavor} has no such native feature")
    assert recorded.passed, f"recording {flavor}: {recorded.problem}"
    model = CassetteModel(target)
    replayed = _outcome(path, lambda _m: model)
    assert replayed.passed, f"cassette {flavor}: {replayed.problem}"
    assert model.position == len(load_cassette(target))
    baseline = baselines[path.stem]
    for leg in (recorded, replayed):
        assert leg.trace is not None and baseline.trace is not None
        assert leg.trace.to_dict() == baseline.trace.to_dict()
        assert leg.rows == baseline.rows
