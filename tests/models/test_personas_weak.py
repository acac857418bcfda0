"""Weak-model behaviours: each knob at rate 1 misbehaves and the loop copes; rate 0 never."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from persona_domain import TARGET, open_toolbox, run, weather

from harness import StrategyWarning, UsageError
from harness.models import Explorer, GoalDirected, WeakBehavior

KNOBS = [f.name for f in dataclasses.fields(WeakBehavior)]


def _quirks(persona: Any) -> list[str]:
    return [q for d in persona.decisions for q in d.quirks]


def _json_ok(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_rate_zero_never_misbehaves_and_matches_the_plain_persona() -> None:
    for seed in range(5):
        plain = run(Explorer(seed=seed)).trace.to_dict()
        zero = Explorer(seed=seed, weak=WeakBehavior.all(0.0))
        assert run(zero).trace.to_dict() == plain
        assert _quirks(zero) == []
        assert not WeakBehavior().active


def test_stop_early_answers_before_calling_anything() -> None:
    persona = Explorer(weak=WeakBehavior(stop_early=1.0))
    result = run(persona)
    assert result.trace.calls == []
    assert result.output == "I think I have enough to answer now."
    assert persona.decisions[0].action == "stop_early"
    assert persona.decisions[0].quirks == ("stop_early",)


def test_invent_names_gets_an_unknown_tool_result() -> None:
    persona = GoalDirected(TARGET, weak=WeakBehavior(invent_names=1.0), max_steps=3)
    result = run(persona)
    records = result.trace.calls
    assert records
    assert all(r.error_kind == "unknown_tool" for r in records)
    assert all(r.name not in it.offered for it in result.trace for r in it.calls)
    assert "find_customer" in records[0].content  # the loop lists what is offered
    assert set(_quirks(persona)) == {"invent_names"}


def test_malformed_json_gets_an_error_result() -> None:
    persona = Explorer(seed=1, weak=WeakBehavior(malformed_json=1.0), max_calls=6)
    result = run(persona)
    assert result.trace.calls
    for record in result.trace.calls:
        assert not _json_ok(record.arguments), record.arguments
        assert record.is_error
        assert "not valid JSON" in record.content


def test_wrong_types_get_validation_errors() -> None:
    persona = Explorer(seed=2, weak=WeakBehavior(wrong_types=1.0), max_calls=6)
    result = run(persona)
    assert result.trace.calls
    for record in result.trace.calls:
        assert _json_ok(record.arguments)
        assert record.is_error, record
        assert "invalid arguments" in record.content or "JSON object" in record.content


def test_repeat_ids_are_renamed_by_the_loop() -> None:
    persona = Explorer(seed=0, weak=WeakBehavior(repeat_ids=1.0))
    result = run(persona)
    sent = [c.id for d in persona.decisions for c in d.calls]
    assert len(sent) != len(set(sent))
    received = [c.id for c in result.trace.calls]
    assert len(received) == len(set(received))
    assert any("_dup" in i for i in received)
    warnings = [e for e in result.trace.events if isinstance(e, StrategyWarning)]
    assert any("reused tool call id" in w.message for w in warnings)


def test_multi_call_emits_several_calls_per_turn() -> None:
    persona = GoalDirected(TARGET, seed=0, weak=WeakBehavior(multi_call=1.0))
    result = run(persona)
    first = result.trace.iterations[0]
    assert len(first.calls) >= 2
    assert all(len(d.calls) >= 2 for d in persona.decisions if d.calls)
    assert result.output.startswith("customer_c1_get_average_spend returned")


def test_recall_one_shot_repeats_a_previous_call() -> None:
    persona = Explorer(seed=0, weak=WeakBehavior(recall_one_shot=1.0), max_calls=4)
    result = run(persona)
    names = [c.name for c in result.trace.calls]
    first = names[0]
    assert names.count(first) >= 2
    repeated = [c for c in result.trace.calls if c.name == first]
    assert repeated[0].arguments == repeated[1].arguments
    assert "recall_one_shot" in _quirks(persona)


def test_recall_unfolded_calls_the_facade_again_and_gets_unknown_tool() -> None:
    persona = GoalDirected("saw", seed=0, weak=WeakBehavior(recall_unfolded=1.0), max_steps=4)
    result = run(persona, tools=[open_toolbox, weather])
    names = [c.name for c in result.trace.calls]
    assert names[0] == "open_toolbox"
    later = result.trace.calls[1:]
    assert later
    assert all(c.name == "open_toolbox" for c in later)
    assert all(c.error_kind == "unknown_tool" for c in later)
    assert "hammer" in later[0].content
    assert "recall_unfolded" in _quirks(persona)


@pytest.mark.parametrize("knob", KNOBS)
def test_each_knob_at_rate_one_is_recorded(knob: str) -> None:
    persona = Explorer(seed=3, weak=WeakBehavior(**{knob: 1.0}), max_calls=5)
    run(persona, tools=[open_toolbox, weather])
    assert knob in _quirks(persona)
    assert set(_quirks(persona)) == {knob}


@pytest.mark.parametrize("knob", KNOBS)
def test_each_knob_at_rate_zero_never_fires(knob: str) -> None:
    others = {k: 1.0 for k in KNOBS if k not in (knob, "stop_early")}
    persona = Explorer(seed=3, weak=WeakBehavior(**{**others, knob: 0.0}), max_calls=5)
    run(persona, tools=[open_toolbox, weather])
    assert knob not in _quirks(persona)


def test_everything_at_once_still_ends_cleanly() -> None:
    for seed in range(6):
        persona = GoalDirected(TARGET, seed=seed, weak=WeakBehavior.all(0.5), max_steps=8)
        result = run(persona)
        assert len(result.trace.calls) == sum(len(d.calls) for d in persona.decisions)
        ids = [c.id for c in result.trace.calls]
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"invent_names": 1.5}, "invent_names=1.5"),
        ({"stop_early": -0.1}, "stop_early=-0.1"),
        ({"multi_call": "often"}, "multi_call='often'"),
        ({"repeat_ids": True}, "repeat_ids=True"),
        ({"wrong_types": 2, "malformed_json": -1}, "malformed_json=-1, wrong_types=2"),
    ],
)
def test_rates_outside_zero_one_are_rejected(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(UsageError, match="rates must be numbers in") as info:
        WeakBehavior(**kwargs)
    assert fragment in str(info.value)
