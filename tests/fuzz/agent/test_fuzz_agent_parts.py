"""The parts of ``fuzz_agent``: values seen, script shrinking, the corpus."""

from __future__ import annotations

from typing import Any

import planted_agents
from hypothesis import given, settings, strategies as st

from harness.fuzz.agent._args import ArgumentMaker, stated_numbers
from harness.fuzz.agent._corpus import Corpus, depth, is_progress
from harness.fuzz.agent._judge import Finding
from harness.fuzz.agent._player import _inputs_ready
from harness.fuzz.agent._seen import SeenValues
from harness.fuzz.agent._shrink import shrink_steps, without_turns
from harness.loop import ModelRequest, ModelSettings
from harness.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.models import ScriptedModel, steps_from_data
from harness.scenarios import AgentRun, build_agent, run_agent


def _request(*messages: Any, names: tuple[str, ...] = ()) -> ModelRequest:
    return ModelRequest(
        messages=list(messages),
        tools=[],
        tool_names=names,
        settings=ModelSettings(),
        iteration=1,
    )


def test_values_seen_keep_a_reference_that_finds_them_again() -> None:
    call = ToolCall(id="c1", name="list_orders", arguments="{}")
    request = _request(
        UserMessage(content='Refund "ord-9" for Ann'),
        AssistantMessage(tool_calls=(call,)),
        ToolMessage(tool_call_id="c1", content='{"orders": [{"order_id": "o-1f3e", "total": 12}]}'),
        names=("customer_c81f2a_refund", "customer_c81f2a_view", "ping"),
    )
    seen = SeenValues()
    seen.read(request)
    found = {(s.value, s.ref.describe()) for s in seen.values}
    assert ("o-1f3e", "call 1 .orders[0].order_id") in found
    assert (12, "call 1 .orders[0].total") in found
    assert ("ord-9", "prompt quoted 0") in found
    assert ("c81f2a", "tool customer_*_refund #1 word 1") in found
    for value, _ in found:  # every reference resolves to its value in the same request
        refs = [s.ref for s in seen.values if s.value == value]
        assert all(ref.resolve(request) == value for ref in refs)
    keys, latest = seen.keys()
    assert {"order_id", "total"} <= keys and latest == {"order_id", "total"}


def test_a_one_token_text_result_is_a_value_to_copy() -> None:
    calls = [ToolCall(id=f"c{n}", name="find", arguments="{}") for n in (1, 2)]
    request = _request(
        UserMessage(content="Credit Ann"),
        AssistantMessage(tool_calls=tuple(calls)),
        ToolMessage(tool_call_id="c1", content="cus-ann"),
        ToolMessage(tool_call_id="c2", content="no such customer"),
    )
    seen = SeenValues()
    seen.read(request)
    found = {(s.value, s.ref.describe()) for s in seen.values}
    assert ("cus-ann", "call 1") in found
    assert all(ref.resolve(request) == "cus-ann" for v, ref in _refs(seen) if v == "cus-ann")
    assert "no such customer" not in {v for v, _ in found}  # a sentence gives its words


def _refs(seen: SeenValues) -> list[tuple[Any, Any]]:
    return [(s.value, s.ref) for s in seen.values]


def test_a_tool_whose_inputs_just_arrived_weighs_more() -> None:
    schema = {"properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    assert _inputs_ready(schema, {"order_id"}, {"order_id"}) == 8
    assert _inputs_ready(schema, {"order_id"}, set()) == 3
    assert _inputs_ready(schema, {"name"}, {"name"}) == 0
    assert _inputs_ready({"properties": {}}, {"x"}, {"x"}) == 0


STEPS: list[dict[str, Any]] = [
    {"call": "list_notes"},
    {"call": "list_notes"},
    {"call": "delete_note", "args": {"note_id": {"$from": "call 2", "path": "[1].note_id"}}},
    {"reply": "Done."},
]


def test_removing_a_turn_renumbers_references_or_points_them_at_a_stand_in() -> None:
    assert without_turns(STEPS, {0}) == [
        {"call": "list_notes"},
        {"call": "delete_note", "args": {"note_id": {"$from": "call 1", "path": "[1].note_id"}}},
        {"reply": "Done."},
    ]
    # the referenced call goes: the earlier call of the same tool stands in
    stood_in = without_turns(STEPS, {1})
    assert stood_in is not None and stood_in[1]["args"]["note_id"]["$from"] == "call 1"
    alone = [STEPS[0], {**STEPS[2], "args": {"note_id": {"$from": "call 1", "path": "[1]"}}}]
    assert without_turns(alone, {0}) is None  # no call left to stand in


def _replay(steps: list[dict[str, Any]]) -> tuple[AgentRun, Finding | None]:
    agent = build_agent(planted_agents.notes)
    try:
        run = AgentRun.from_result(run_agent(ScriptedModel(steps_from_data(steps)), agent))
    except Exception as exc:
        run = AgentRun.from_error(exc)
    try:
        planted_agents.pinned_notes_stay(run)
    except AssertionError as exc:
        return run, Finding(name="pinned", message=str(exc))
    return run, None


def test_the_script_shrinks_to_the_calls_the_bug_needs() -> None:
    noisy: list[dict[str, Any]] = [
        {"call": "list_notes"},
        {"calls": [{"call": "list_notes"}, {"call": "list_notes"}]},
        {"call": "delete_note", "args": {"note_id": "nope", "force": True}},
        {"call": "delete_note", "args": {"note_id": {"$from": "call 3", "path": "[1].note_id"}}},
        {"call": "list_notes"},
        {"reply": "Done."},
    ]
    shrunk = shrink_steps(noisy, Finding(name="pinned", message=""), _replay, seconds=20)
    assert shrunk is not None and shrunk.finding.name == "pinned"
    assert shrunk.steps == [
        {"call": "list_notes"},
        {"call": "delete_note", "args": {"note_id": {"$from": "call 1", "path": "[1].note_id"}}},
        {"reply": "Done."},
    ]
    assert shrunk.tries > 1
    passing = [{"call": "list_notes"}, {"reply": "Done."}]
    assert shrink_steps(passing, Finding(name="pinned", message=""), _replay) is None


def test_the_corpus_weighs_entries_by_the_rarity_of_their_progress() -> None:
    corpus = Corpus(size=2)
    runs = [_replay(STEPS)[0] for _ in range(3)]

    class Fuzzed:  # what Corpus.add reads of a FuzzedRun
        def __init__(self, steps: list[dict[str, Any]], run: AgentRun) -> None:
            self.run, self._steps = run, steps

        def steps(self) -> list[dict[str, Any]]:
            return list(self._steps)

    corpus.seen(frozenset({"common", "rare"}))
    for _ in range(9):
        corpus.seen(frozenset({"common"}))
    corpus.add(Fuzzed(STEPS, runs[0]), frozenset({"common"}))  # type: ignore[arg-type]
    corpus.add(Fuzzed(STEPS, runs[1]), frozenset({"rare", "end:answer"}))  # type: ignore[arg-type]
    entries, weights = corpus.frozen()
    assert len(entries) == 2 and weights[1] > weights[0]
    assert entries[0] == STEPS[:-1]  # up to the last successful call, without the answer
    corpus.add(Fuzzed(STEPS, runs[2]), frozenset({"rare"}))  # type: ignore[arg-type]
    assert len(corpus) == 2 and min(corpus.frozen()[1]) > weights[0]  # the lightest went
    assert depth(entries[0]) == 2
    assert is_progress("after:a>b") and not is_progress("call:a:error:exception")
    assert not is_progress("end:answer")


def test_a_fresh_id_whose_hex_digits_are_all_letters_is_masked_in_the_replay_check() -> None:
    """``sku-ddfcb`` beside ``sku-1dfcb``: both made per run (uuid hex), so a replay on
    a fresh agent is not "state shared between examples"."""
    from harness.fuzz.agent._judge import _mask

    assert _mask("sku-ddfcb") == _mask("sku-1dfcb") == "#"
    assert _mask("ticket_beefcafe_x") == "#"
    assert _mask("the sku was reserved") == "the sku was reserved"


def test_the_numbers_a_description_states_are_read() -> None:
    text = "Give credit (at most 50.00 at a time, 100.00 in all); ids like sku-12ab, v2.1.3."
    assert stated_numbers(text) == (50.0, 100.0)
    assert stated_numbers(None) == stated_numbers("") == ()


AMOUNT = {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_stated_number_is_drawn_with_a_step_either_side(data: st.DataObject) -> None:
    maker = ArgumentMaker(data.draw, copy_percent=0, limit_percent=0, stated_percent=100)
    args = maker.arguments(AMOUNT, SeenValues(), stated=(50.0,))
    assert args["amount"] in (50.0, 50.01, 49.99)
    assert maker.moves == ["stated"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_stated_number_the_schema_refuses_is_not_drawn(data: st.DataObject) -> None:
    schema = {
        "type": "object",
        "properties": {"count": {"type": "integer", "maximum": 5, "description": "up to 7"}},
        "required": ["count"],
    }
    maker = ArgumentMaker(data.draw, copy_percent=0, limit_percent=0, stated_percent=100)
    args = maker.arguments(schema, SeenValues())
    assert isinstance(args["count"], int) and args["count"] <= 5
    assert "stated" not in maker.moves  # 6, 7 and 8 are over the schema's maximum
