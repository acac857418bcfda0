"""Injection coverage: tools never offered, never called, only failing; states never reached."""

from __future__ import annotations

import enum
from typing import Any

from harness import llm_tool, run
from harness.injection import Playbook, StateMachine, facade, unlock
from harness.models import ScriptedModel
from harness.scenarios import InjectionCoverage, name_pattern


class Door(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    LOCKED = "locked"


@llm_tool
def open_door() -> str:
    """Open the door."""
    return "open"


@llm_tool
def lock_door() -> str:
    """Lock the door."""
    return "locked"


@llm_tool
def knock() -> str:
    """Knock."""
    raise RuntimeError("nobody home")


@llm_tool
def peek() -> str:
    """Peek."""
    return "dark"


@llm_tool
def shout() -> str:
    """Shout."""
    return "echo"


def _strategies() -> list[Any]:
    machine = StateMachine(
        Door,
        initial=Door.CLOSED,
        tools={Door.CLOSED: [open_door, knock], Door.OPEN: [lock_door], Door.LOCKED: []},
        transitions={"open_door": Door.OPEN, "lock_door": Door.LOCKED},
        name="door",
    )
    playbook = Playbook(always=[peek], unlocks=[unlock(shout, when="peek")], mode="hidden")
    return [machine, playbook]


def test_what_runs_never_reached_is_reported() -> None:
    tools = [facade("extras", "Extra tools.", [peek])]
    coverage = InjectionCoverage()
    coverage.declare([], _strategies())
    coverage.declare(tools, [])
    script = [{"call": "knock"}, {"call": "open_door"}, {"reply": "done"}]
    result = run(ScriptedModel(script), "Get in.", strategies=_strategies())
    coverage.add_run(result.trace)
    assert coverage.runs == 1
    assert "lock_door" in coverage.never_called and "shout" in coverage.never_offered
    assert coverage.only_errors == ["knock"]
    missing = coverage.states_never_reached
    assert missing["door"] == ["LOCKED"]
    assert missing["playbook"] == ["shout"]
    assert missing["facades"] == ["extras"]
    text = coverage.format()
    assert "declared tools never offered: " in text and "door: never reached LOCKED" in text
    assert coverage.to_dict()["called_only_with_errors"] == ["knock"]


def test_reports_merge_and_a_full_run_reaches_everything() -> None:
    first = InjectionCoverage()
    first.declare([], _strategies())
    full = [
        {"call": "peek"},
        {"call": "shout"},
        {"call": "open_door"},
        {"call": "lock_door"},
        {"reply": "done"},
    ]
    first.add_run(run(ScriptedModel(full), "Go.", strategies=_strategies()).trace)
    second = InjectionCoverage()
    second.declare([], _strategies())
    second.add_run(
        run(
            ScriptedModel([{"call": "knock"}, {"reply": "x"}]), "Go.", strategies=_strategies()
        ).trace
    )
    first.merge(second)
    assert first.runs == 2
    assert first.states_never_reached == {}
    assert first.never_offered == [] and first.only_errors == ["knock"]


def test_names_made_per_run_count_by_pattern() -> None:
    assert name_pattern("customer_c3f2a9_refund") == "customer_*_refund"
    assert name_pattern("article_7_save") == "article_7_save"  # too short to be an id
    assert name_pattern("get_weather") == "get_weather"
