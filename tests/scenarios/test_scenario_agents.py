"""Scenario files that name an agent factory and check properties of the whole run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness import MaxIterationsExceeded, ScenarioError, UsageError, llm_tool, run
from harness.models import ScriptedModel
from harness.scenarios import AgentRun, build_agent, load_scenario, run_scenario

MODULE = textwrap.dedent(
    '''
    import uuid
    from harness import llm_tool, LoopOptions

    def make():
        box = {"items": [f"i-{uuid.uuid4().hex[:6]}" for _ in range(2)], "taken": []}

        @llm_tool
        def list_items() -> list:
            """Items."""
            return [{"item_id": i} for i in box["items"]]

        @llm_tool
        def take(item_id: str) -> str:
            """Take an item."""
            box["taken"].append(item_id)
            return "taken"

        return {"prompt": "Take the second item.", "tools": [list_items, take],
                "system": "You take items.", "state": {"box": box}, "max_iterations": 4}

    def took_the_second(run):
        box = run.state["box"]
        assert box["taken"] == box["items"][1:], f"took {box['taken']}"

    def never_finishes(run):
        assert run.finished, f"ended with {type(run.error).__name__}"
    '''
)


def _scenario(folder: Path, body: str) -> Path:
    (folder / "scenario_agent_mod.py").write_text(MODULE, encoding="utf-8")
    path = folder / "s.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_an_agent_scenario_replays_with_references_on_fresh_ids(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        """
        name: take
        agent: scenario_agent_mod:make
        model:
          steps:
            - call: list_items
            - call: take
              args: {item_id: {$from: call 1, path: "[1].item_id"}}
            - reply: Done.
        expect:
          properties: [scenario_agent_mod:took_the_second]
          invariants: true
        """,
    )
    for _ in range(2):
        outcome = run_scenario(load_scenario(path))
        assert outcome.passed, outcome.problem
        assert (
            outcome.result is not None and outcome.result.messages[0].content == "You take items."
        )


def test_a_failing_property_fails_the_scenario(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        """
        name: wrong
        agent: scenario_agent_mod:make
        model:
          steps:
            - call: list_items
            - call: take
              args: {item_id: {$from: call 1, path: "[0].item_id"}}
            - reply: Done.
        expect: {properties: [scenario_agent_mod:took_the_second]}
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed
    assert (outcome.problem or "").startswith(
        "property failed: [scenario_agent_mod:took_the_second]"
    )


def test_properties_judge_runs_that_end_in_an_error(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        """
        name: limit
        agent: scenario_agent_mod:make
        options: {max_iterations: 1}
        model:
          steps: [{call: list_items}, {call: list_items}]
        expect:
          error: MaxIterationsExceeded
          properties: [scenario_agent_mod:never_finishes]
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed  # the file's options win over the factory's max_iterations=4
    assert "ended with MaxIterationsExceeded" in (outcome.problem or "")


def test_a_bad_agent_entry_is_a_scenario_error(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        """
        name: bad
        agent: scenario_agent_mod:took_the_second
        model: {steps: [{reply: hi}]}
        """,
    )
    outcome = run_scenario(load_scenario(path))
    assert isinstance(outcome.error, ScenarioError)
    assert "agent factory scenario_agent_mod:took_the_second raised TypeError" in str(outcome.error)


def test_an_error_carries_the_run_state_as_a_result_does() -> None:
    @llm_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    state = {"world": "here"}
    with pytest.raises(MaxIterationsExceeded) as caught:
        run(
            ScriptedModel([{"call": "ping"}, {"call": "ping"}]),
            "go",
            tools=[ping],
            state=state,
            max_iterations=1,
        )
    assert caught.value.state is state
    view = AgentRun.from_error(caught.value)
    assert view.state is state and not view.finished and len(view.trace.iterations) == 1


def test_an_untyped_error_carries_the_state_too() -> None:
    from harness.loop import ModelRequest
    from harness.models import CallbackModel

    def boom(request: ModelRequest) -> str:
        raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError) as caught:
        run(CallbackModel(boom), "go", state={"k": 1})
    assert caught.value.harness_state == {"k": 1}  # type: ignore[attr-defined]
    assert AgentRun.from_error(caught.value).state == {"k": 1}


@pytest.mark.parametrize(
    ("made", "message"),
    [
        ({"tools": []}, "must return a 'prompt'"),
        ({"prompt": "x", "options": 3}, "'options' must be a harness.LoopOptions"),
        ({"prompt": "x", "max_iterations": 2, "options": None, "tools": "t"}, "'tools' must be"),
        ({"prompt": "x", "strategies": [1]}, "not InjectionStrategy instances"),
        ({"prompt": "x", "max_iterations": 0}, "max_iterations"),
        ({"prompt": "x", "state": []}, "'state' must be a dict"),
    ],
)
def test_build_agent_names_what_is_wrong(made: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        build_agent(lambda: made, name="mod:make")
    assert message in str(caught.value) and "mod:make" in str(caught.value)
