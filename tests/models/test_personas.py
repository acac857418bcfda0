"""Explorer and goal-directed personas: behaviour, determinism by seed, exact replay."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator
from persona_domain import TARGET, base_tools, open_toolbox, run, weather

import harness
from harness import ScriptError, UsageError
from harness.loop import ModelRequest
from harness.models import Decision, Explorer, GoalDirected, Persona, ReplayModel, WeakBehavior


def _trace(result: harness.RunResult) -> dict[str, Any]:
    return result.trace.to_dict()


def _schemas(result: harness.RunResult, persona: Persona) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for request in persona.requests:
        for definition in request.tools:
            out[definition.name] = definition.parameters
    return out


# -- explorer ---------------------------------------------------------------------------


def test_explorer_calls_each_tool_once_including_injected_ones() -> None:
    persona = Explorer(seed=0)
    result = run(persona)
    names = [c.name for c in result.trace.calls]
    assert sorted(names) == sorted(
        [
            "find_customer",
            "weather",
            "note",
            "customer_c1_get_average_spend",
            "customer_c1_get_orders",
        ]
    )
    assert len(names) == len(set(names))
    # the injected tools were called only after discovery
    assert names.index("find_customer") < names.index("customer_c1_get_orders")
    assert not any(c.is_error for c in result.trace.calls)
    assert result.output.startswith("Done. I used:")
    assert [d.action for d in persona.decisions] == ["call"] * 5 + ["answer"]


def test_explorer_arguments_are_schema_valid_for_many_seeds() -> None:
    for seed in range(12):
        persona = Explorer(seed=seed)
        result = run(persona)
        schemas = _schemas(result, persona)
        for record in result.trace.calls:
            validator = Draft202012Validator(schemas[record.name])
            assert validator.is_valid(json.loads(record.arguments)), (seed, record)
            assert not record.is_error, (seed, record.content)


def test_explorer_calls_tools_of_an_unfolded_facade() -> None:
    persona = Explorer(seed=4)
    result = run(persona, tools=[open_toolbox, weather])
    names = [c.name for c in result.trace.calls]
    assert sorted(names) == ["hammer", "open_toolbox", "saw", "weather"]


def test_explorer_per_turn_and_max_calls() -> None:
    persona = Explorer(seed=1, per_turn=3)
    result = run(persona)
    assert len(result.trace.iterations[0].calls) == 3
    limited = Explorer(seed=1, max_calls=2)
    result = run(limited)
    assert len(result.trace.calls) == 2
    assert limited.decisions[-1].action == "give_up"
    assert "max_calls=2" in limited.decisions[-1].reason


def test_explorer_answers_immediately_with_tool_choice_none() -> None:
    persona = Explorer()
    result = run(persona, tool_choice="none")
    assert result.trace.calls == []
    assert persona.decisions[0].reason == "tool_choice is 'none'"


def test_persona_answers_with_schema_valid_json_when_an_output_type_is_asked() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        spend: float
        customer: str

    persona = Explorer(seed=2)
    result = run(persona, output_type=Answer)
    assert isinstance(result.output, Answer)


def test_explorer_runs_under_arun() -> None:
    persona = Explorer(seed=5)
    result = asyncio.run(
        harness.arun(persona, "go", tools=base_tools(), strategies=[harness.EntityDiscovery()])
    )
    assert len(result.trace.calls) == 5


def test_argument_overrides_by_glob_and_callable() -> None:
    def orders(request: ModelRequest) -> dict[str, int]:
        return {"limit": len(request.tool_names)}

    persona = Explorer(
        seed=0, arguments={"find_*": {"name": "Ada"}, "customer_*_get_orders": orders}
    )
    result = run(persona)
    by_name = {c.name: json.loads(c.arguments) for c in result.trace.calls}
    assert by_name["find_customer"] == {"name": "Ada"}
    assert 1 <= by_name["customer_c1_get_orders"]["limit"] <= 5


# -- goal-directed ------------------------------------------------------------------------


def test_goal_reaches_a_target_behind_a_discovery_step() -> None:
    persona = GoalDirected(TARGET, seed=0)
    result = run(persona)
    names = [c.name for c in result.trace.calls]
    assert names == ["find_customer", "customer_c1_get_average_spend"]
    assert result.output == "customer_c1_get_average_spend returned: 42.5"
    assert [d.action for d in persona.decisions] == ["call", "call", "answer"]
    assert "score" in persona.decisions[0].reason


@pytest.mark.parametrize("seed", range(8))
def test_goal_prefers_the_discovery_tool_for_every_seed(seed: int) -> None:
    persona = GoalDirected(TARGET, seed=seed)
    result = run(persona)
    assert [c.name for c in result.trace.calls][-1] == "customer_c1_get_average_spend"
    assert len(result.trace.calls) == 2


def test_goal_uses_hints_to_open_a_facade() -> None:
    persona = GoalDirected("hammer", hints=["open*"], seed=1)
    result = run(persona, tools=[weather, open_toolbox])
    assert [c.name for c in result.trace.calls] == ["open_toolbox", "hammer"]


def test_goal_recalls_a_discovery_tool_when_nothing_new_is_left() -> None:
    # the target never appears: after trying everything once, the persona calls
    # find_customer again (it injected tools), then gives up at max_steps
    persona = GoalDirected("invoice_*", seed=0, max_steps=6)
    result = run(persona)
    names = [c.name for c in result.trace.calls]
    assert len(names) == 6
    assert names.count("find_customer") >= 2
    assert persona.decisions[-1].action == "give_up"
    assert "max_steps=6" in persona.decisions[-1].reason
    assert "injected tools before" in " ".join(d.reason for d in persona.decisions)


def test_goal_gives_up_when_no_tool_leads_anywhere() -> None:
    persona = GoalDirected("nothing_*", seed=0)
    result = run(persona, tools=[weather])
    assert [c.name for c in result.trace.calls] == ["weather"]
    assert persona.decisions[-1].action == "give_up"
    assert result.output == "I could not find a way to use nothing_*."


def test_goal_with_a_target_offered_from_the_start() -> None:
    persona = GoalDirected("weather", seed=0)
    result = run(persona)
    assert [c.name for c in result.trace.calls] == ["weather"]


# -- determinism and replay ---------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: Explorer(seed=seed),
        lambda seed: GoalDirected(TARGET, seed=seed),
        lambda seed: Explorer(seed=seed, weak=WeakBehavior.all(0.3)),
        lambda seed: GoalDirected("invoice_*", seed=seed, weak=WeakBehavior.all(0.3)),
    ],
)
def test_same_seed_same_trace_different_seeds_differ(make: Any) -> None:
    first = _trace(run(make(7)))
    assert _trace(run(make(7))) == first
    others = [_trace(run(make(seed))) for seed in range(4)]
    assert any(other != first for other in others)


def test_a_persona_reruns_identically_from_its_seed() -> None:
    persona = Explorer(seed=3, weak=WeakBehavior.all(0.2))
    first = _trace(run(persona))
    decisions = list(persona.decisions)
    assert _trace(run(persona)) == first
    assert persona.decisions == decisions


@pytest.mark.parametrize(
    "make",
    [
        lambda: Explorer(seed=11, weak=WeakBehavior.all(0.4)),
        lambda: GoalDirected(TARGET, seed=2, weak=WeakBehavior.all(0.25)),
    ],
)
def test_replay_reproduces_the_identical_trace(make: Any) -> None:
    persona = make()
    original = run(persona)
    replay = persona.replayer()
    again = run(replay)
    assert _trace(again) == _trace(original)
    assert again.messages == original.messages
    assert replay.position == len(persona.decisions)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), rate=st.floats(0, 1), goal=st.booleans())
def test_same_seed_and_replay_are_exact_for_any_seed_and_rates(
    seed: int, rate: float, goal: bool
) -> None:
    def make() -> Persona:
        weak = WeakBehavior.all(rate)
        if goal:
            return GoalDirected(TARGET, seed=seed, weak=weak, max_steps=6)
        return Explorer(seed=seed, weak=weak, max_calls=6)

    persona = make()
    original = _trace(run(persona))
    assert _trace(run(make())) == original
    assert _trace(run(persona.replayer())) == original


def test_decisions_round_trip_through_json_for_replay() -> None:
    persona = GoalDirected(TARGET, seed=5, weak=WeakBehavior(malformed_json=0.5))
    original = run(persona)
    saved = json.dumps([d.to_dict() for d in persona.decisions])
    loaded = [Decision.from_dict(d) for d in json.loads(saved)]
    assert loaded == persona.decisions
    assert _trace(run(ReplayModel(json.loads(saved)))) == _trace(original)


def test_decisions_are_frozen() -> None:
    persona = Explorer()
    run(persona)
    with pytest.raises(AttributeError):
        persona.decisions[0].action = "x"  # type: ignore[misc]


def test_replay_detects_a_diverged_toolset() -> None:
    persona = Explorer(seed=0)
    run(persona)
    with pytest.raises(ScriptError, match="replay diverged at decision 1") as info:
        run(persona.replayer(), tools=[weather])
    assert "missing: ['find_customer', 'note']" in str(info.value)


def test_replay_runs_out() -> None:
    persona = Explorer(seed=0)
    run(persona)
    replay = ReplayModel(persona.decisions[:2])
    with pytest.raises(ScriptError, match="replay ran out: iteration 3"):
        run(replay)


def test_bad_decision_data_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="not a persona decision"):
        Decision.from_dict({"action": "call"})


# -- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: GoalDirected(""), "target must be a tool name or glob"),
        (lambda: GoalDirected("   "), "got '   '"),
        (lambda: GoalDirected(None), "got None"),  # type: ignore[arg-type]
        (lambda: GoalDirected("x", max_steps=0), "max_steps must be an int >= 1, got 0"),
        (lambda: GoalDirected("x", hints="find"), "hints must be a list"),
        (lambda: Explorer(per_turn=0), "per_turn must be an int >= 1, got 0"),
        (lambda: Explorer(max_calls=True), "max_calls must be an int >= 1, got True"),
        (lambda: Explorer(seed="1"), "seed must be an int, got '1'"),  # type: ignore[arg-type]
        (lambda: Explorer(weak={"stop_early": 1}), "weak must be a WeakBehavior"),  # type: ignore[arg-type]
        (lambda: Explorer(arguments=[1]), "arguments must map"),  # type: ignore[arg-type]
    ],
)
def test_constructor_arguments_are_validated(make: Any, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        make()
    assert fragment in str(info.value)
