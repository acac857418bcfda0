"""Recording the requests runs send, paired with their traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import UsageError
from harness.cost import RecordingModel, analyse, load_prices, record_requests
from harness.injection import EntityDiscovery
from harness.loop import override_model, run
from harness.models import ScriptedModel, call, reply
from harness.tools import llm_tool


@llm_tool
def lookup(name: str) -> str:
    """Look a customer up."""
    return f"{name} is c1"


def _script() -> ScriptedModel:
    return ScriptedModel([call("lookup", {"name": "Ann"}), reply("done")])


def test_every_run_in_the_block_is_recorded_with_its_trace() -> None:
    with record_requests() as log:
        first = run(_script(), "who is Ann?", tools=[lookup])
        second = run(_script(), "who is Bob?", tools=[lookup])
    assert [len(r.requests) for r in log.runs] == [2, 2]
    assert [r.trace for r in log.runs] == [first.trace, second.trace]
    assert log.runs[0].trace is first.trace and log.runs[1].trace is second.trace
    assert len(log.requests) == 4 and len(log) == 2
    report = analyse(log, format="anthropic-messages")
    assert [r.run for r in report.requests] == [1, 1, 2, 2]
    assert report.traces == (first.trace, second.trace)


def test_an_outer_override_still_chooses_the_model() -> None:
    replacement = _script()
    with override_model(replacement), record_requests() as log:
        run(ScriptedModel([reply("never used")]), "who is Ann?", tools=[lookup])
    assert len(replacement.requests) == 2  # the override answered, through the recorder
    assert log.requests == replacement.requests


def test_a_recording_model_forwards_and_keeps_requests() -> None:
    inner = _script()
    model = RecordingModel(inner)
    assert model.capabilities == inner.capabilities and model.name == inner.name
    result = run(model, "who is Ann?", tools=[lookup], strategies=[EntityDiscovery()])
    assert result.output == "done"
    assert model.requests == inner.requests
    assert analyse(model).requests[0].index == 1
    with pytest.raises(UsageError, match="wraps a harness Model"):
        RecordingModel("not a model")  # type: ignore[arg-type]


def test_analyse_says_what_it_reads() -> None:
    result = run(_script(), "who is Ann?", tools=[lookup])
    with pytest.raises(UsageError, match="record_requests"):
        analyse(result)
    with pytest.raises(UsageError, match="unknown format"):
        analyse([], format="anthropic")


def test_prices_come_from_a_file_and_match_models_by_prefix(tmp_path: Path) -> None:
    file = tmp_path / "prices.yaml"
    file.write_text(
        "models:\n"
        "  claude-sonnet-4: {input: 3.0, cached_input: 0.3, cache_write: 3.75}\n"
        "  default: {input: 1.0}\n"
    )
    table = load_prices(file)
    price = table.for_model("claude-sonnet-4-5-20250929")
    assert price is not None and (price.input, price.cached_input, price.cache_write) == (
        3.0,
        0.3,
        3.75,
    )
    fallback = table.for_model("gpt-4o")
    assert fallback is not None and fallback.cached_input == 1.0  # not given: the input price
    assert price.of(uncached=1_000_000, cached=1_000_000, written=0) == pytest.approx(3.3)
    assert price.of(uncached=1_000_000, cached=0, written=1_000_000) == pytest.approx(3.75)
    assert load_prices({"models": {"x": {"input": 1}}}).for_model("y") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("models: []\n", "must hold 'models'"),
        ("models:\n  m: {cached_input: 1}\n", "at least 'input'"),
        ("models:\n  m: {input: -1}\n", "m.input must be a finite number >= 0"),
        ("models:\n  m: {input: .nan}\n", "m.input must be a finite number >= 0.*got nan"),
        ("models:\n  m: {input: 1, cached_input: .inf}\n", "m.cached_input .* got inf"),
        ("models:\n  m: {input: 1e999}\n", "m.input must be a finite number"),
        ("models:\n  m: {input: 1, output: 2}\n", "unknown price fields \\['output'\\]"),
    ],
)
def test_a_bad_price_file_names_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    file = tmp_path / "prices.yaml"
    file.write_text(text)
    with pytest.raises(UsageError, match=problem):
        load_prices(file)
