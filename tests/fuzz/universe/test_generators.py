"""Generators: valid universes and decisions, realistic seeded names, up-front argument checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, find, given, settings, strategies as st
from jsonschema import Draft202012Validator

from harness import ProviderError, UsageError
from harness.fuzz import (
    DECISION_KINDS,
    FAULTS,
    PROFILE_PREFIX,
    UNIVERSE_KINDS,
    DecisionModel,
    FuzzDecision,
    FuzzParamSpec,
    FuzzToolSpec,
    UniverseSpec,
    build_universe,
    decisions,
    example_arguments,
    fuzz_scenarios,
    tool_specs,
    tool_universes,
    universe_strategies,
    universe_tools,
)
from harness.loop import ModelRequest, ModelSettings
from harness.tools import Tool, ToolDefinition, is_valid_name

CI = settings.get_profile(PROFILE_PREFIX + "ci")
"""Our own fuzz tests run under the registered ``ci`` profile (bounded, derandomised)."""


def _count_in_data(data: Any) -> int:
    """Tools in plain universe data: each tool spec, and per provider level its methods
    plus its search or ``children`` tool."""
    if isinstance(data, dict):
        own = len(data["methods"]) + 1 if "methods" in data else int("params" in data)
        return own + sum(_count_in_data(v) for v in data.values())
    if isinstance(data, list):
        return sum(_count_in_data(v) for v in data)
    return 0


def _all_tools(built: Any) -> list[Any]:
    tools = list(built.tools)
    for strategy in built.strategies:
        for attr in ("always", "unlocks"):
            for item in getattr(strategy, attr, ()):
                tools.append(item)
    return [t for t in tools if isinstance(t, Tool)]


@settings(CI, max_examples=40)
@given(data=st.data(), kind=st.sampled_from(UNIVERSE_KINDS))
def test_universes_build_with_valid_schemas_and_names(data: st.DataObject, kind: str) -> None:
    spec = data.draw(tool_universes(kind, max_tools=12))
    assert spec.kind == kind
    assert spec.size() <= 2 * 12  # the budget, plus the few structural tools a kind needs
    # size() and faults() walk the specs; the plain data says the same
    assert spec.size() == _count_in_data(spec.model_dump())
    text = spec.model_dump_json()
    assert spec.faults() == {f for f in FAULTS if f'"fault":"{f}"' in text}
    built = build_universe(spec)
    names = [t.name for t in built.tools]
    assert len(names) == len(set(names))
    for tool in _all_tools(built):
        assert is_valid_name(tool.name)
        Draft202012Validator.check_schema(dict(tool.parameters))
        if tool.validator is not None:  # generated tools accept their example arguments
            assert not list(tool.validator.iter_errors(example_arguments(tool.parameters)))
    # the data round-trips: a counterexample file rebuilds the same universe
    again = UniverseSpec.model_validate(spec.model_dump(mode="json"))
    assert [t.name for t in universe_tools(again)] == names
    assert len(universe_strategies(again.model_dump())) == len(built.strategies)


def test_names_come_from_faker_and_depend_only_on_the_seed() -> None:
    from faker import Faker

    first = find(tool_specs(seed=7), lambda spec: True)
    assert "_" in first.name and first.description.endswith(".")
    verb, noun = first.name.split("_")[:2]
    fake = Faker("en_US")
    assert verb in fake.get_words_list(part_of_speech="verb")
    assert noun in fake.get_words_list(part_of_speech="noun")
    assert first.description[0].isupper() and len(first.description.split()) >= 4

    @settings(CI, max_examples=5, database=None)
    @given(spec=tool_universes("tools", max_tools=5))
    def same(spec: UniverseSpec) -> None:
        seen.append(spec)

    seen: list[UniverseSpec] = []
    from hypothesis import seed

    seed(3)(same)()
    before = [s.model_dump() for s in seen]
    seen.clear()
    seed(3)(same)()
    assert [s.model_dump() for s in seen] == before


@settings(CI, max_examples=60)
@given(
    moves=decisions(max_turns=8),
    offered=st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4),
)
def test_every_decision_list_is_valid_for_every_toolset(
    moves: list[FuzzDecision], offered: list[str]
) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "k": {"type": "string", "enum": ["x", "y"]}},
        "required": ["n", "k"],
    }
    tools = [ToolDefinition(name=n, parameters=schema) for n in offered]
    model = DecisionModel(moves)
    for iteration in range(1, len(moves) + 2):
        request = ModelRequest(
            messages=[],
            tools=tools,
            tool_names=tuple(offered),
            settings=ModelSettings(),
            iteration=iteration,
        )
        if iteration <= len(moves) and moves[iteration - 1].kind == "provider_error":
            with pytest.raises(ProviderError):
                model.request(request)
            continue
        response = model.request(request)
        for tool_call in response.message.tool_calls:
            assert tool_call.name in offered or tool_call.name == "no_such_tool"
    assert len(model.steps) == len(moves) + 1
    assert model.steps[-1] == {"reply": "Done."}


def test_example_arguments_follow_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"enum": ["p", "q"]},
            "c": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            "d": {"type": ["number", "null"]},
            "e": {"type": "string"},
        },
        "required": ["a", "b", "c", "d"],
    }
    assert example_arguments(schema, 1) == {"a": 1, "b": "q", "c": True, "d": 1.5}
    Draft202012Validator(schema).validate(example_arguments(schema))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: tool_universes("galaxy"), "kind must be one of"),
        (lambda: tool_universes(max_tools=-1), "max_tools must be an int >= 1, got -1"),
        (lambda: tool_universes(max_depth=0), "max_depth must be an int >= 1, got 0"),
        (lambda: tool_universes(max_fan_out=True), "max_fan_out must be an int >= 1, got True"),
        (lambda: tool_universes(faults=["explode"]), "faults: unknown 'explode'"),
        (lambda: tool_universes(faults="raise"), "must be a list of names"),
        (lambda: decisions(max_turns=-2), "max_turns must be an int >= 0"),
        (lambda: decisions(kinds=[]), "kinds must name at least one"),
        (lambda: decisions(kinds=["dance"]), "kinds: unknown 'dance'"),
        (lambda: fuzz_scenarios(max_iterations=0), "max_iterations must be an int >= 1"),
    ],
)
def test_bad_generator_parameters_fail_at_once(build: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build()


def test_the_public_lists_match_the_generators() -> None:
    assert "timeout" in FAULTS and "context" in FAULTS
    assert DECISION_KINDS[0] == "call" and "provider_error" in DECISION_KINDS
    only_calls = find(decisions(max_turns=3, kinds=["call"]), lambda moves: len(moves) == 3)
    assert all(d.kind == "call" for d in only_calls)


@pytest.mark.parametrize("kind", DECISION_KINDS)
def test_every_decision_kind_is_generated_and_shrinks_to_its_simplest_form(kind: str) -> None:
    found = find(
        decisions(max_turns=5),
        lambda moves: any(d.kind == kind for d in moves),
        settings=settings(CI, max_examples=500, database=None),
    )
    # one decision, on the first offered tool, with valid arguments (a parallel turn:
    # two calls, the first tool and the next)
    simplest = {
        "parallel": FuzzDecision(kind="parallel", more=(1,)),
        "provider_error": FuzzDecision(kind="provider_error", status=500),
    }.get(kind, FuzzDecision(kind=kind))  # type: ignore[arg-type]
    assert found == [simplest]


def test_parallel_decisions_make_up_to_four_calls() -> None:
    many = find(
        decisions(max_turns=3, kinds=["parallel"]),
        lambda moves: any(len(d.more) == 3 for d in moves),
        settings=settings(CI, max_examples=500, database=None),
    )
    assert many == [FuzzDecision(kind="parallel", more=(1, 2, 3))]


def test_mixed_universes_mix_every_kind() -> None:
    mixed = tool_universes("mixed", max_tools=10)
    every = find(
        mixed,
        lambda u: bool(u.machine and u.groups and u.sections and u.tools),
        settings=settings(CI, max_examples=500, database=None, phases=[Phase.generate]),
    )
    built = build_universe(every)
    names = {type(s).__name__ for s in built.strategies}
    assert {"SectionDisclosure", "StateMachine"} <= names, names


def test_generated_names_stay_unique_when_words_repeat() -> None:
    from harness.fuzz.universe._generators import _Namer

    first = _Namer(5).tool()
    namer = _Namer(5)  # the same seed draws the same words again
    namer.used.add(first)
    assert namer.tool() == f"{first}_2"
    assert namer.unique("get-x y") == "getxy" and namer.unique("get-x y") == "getxy_2"


def test_built_tools_are_shared_by_equal_specs_and_the_cache_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.fuzz.universe import _specs

    spec = FuzzToolSpec(name="t", params=[FuzzParamSpec(name="n", type="integer")])
    assert spec.build() is FuzzToolSpec.model_validate(spec.model_dump()).build()
    assert spec.build() is not FuzzToolSpec(name="t", fault="raise").build()  # content decides
    monkeypatch.setattr(_specs, "_CACHE_SIZE", 2)
    for i in range(5):
        FuzzToolSpec(name=f"t{i}").build()
    assert len(_specs._TOOLS) <= 3
