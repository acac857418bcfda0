"""max_injected_tools at the boundary: reaching the limit exactly is allowed."""

from __future__ import annotations

import pytest

from harness import EntityDiscovery, ScriptedModel, call, calls, llm_tool, reply, run, tool_provider
from harness.loop import LimitReached


@tool_provider(prefix="account")
class Account:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def balance(self) -> float:
        """Balance."""
        return 1.0

    @llm_tool
    def owner(self) -> str:
        """Owner."""
        return "ann"


@llm_tool
def list_accounts() -> list[Account]:
    """Two accounts, two tools each."""
    return [Account("a1"), Account("a2")]


def _run(limit: int) -> tuple[list[str], list[LimitReached]]:
    model = ScriptedModel([call("list_accounts"), reply("done")])
    result = run(
        model,
        "go",
        tools=[list_accounts],
        strategies=[EntityDiscovery(max_injected_tools=limit)],
    )
    limits = [e for e in result.trace.events if isinstance(e, LimitReached)]
    return list(result.trace.injected), limits


@pytest.mark.parametrize(
    ("limit", "injected", "limited"), [(4, 4, False), (3, 2, True), (5, 4, False)]
)
def test_the_limit_reached_exactly_is_allowed(limit: int, injected: int, limited: bool) -> None:
    names, limits = _run(limit)
    assert len(names) == injected
    assert bool(limits) is limited


def test_zero_allows_no_injection() -> None:
    names, limits = _run(0)
    assert names == []
    (limit,) = limits  # one event for the limit, naming both providers it stopped
    assert limit.value == 0
    assert limit.message.startswith("max_injected_tools=0 stopped 2 providers in this iteration")
    assert "Account 'a1'" in limit.message and "Account 'a2'" in limit.message


@llm_tool
def all_accounts(count: int) -> list[Account]:
    """Many accounts."""
    return [Account(f"a{i}") for i in range(count)]


def test_100k_entities_give_one_event_per_limit_and_iteration() -> None:
    """It was one ``LimitReached`` per entity the limit stopped (9,744 for 100,000)."""
    model = ScriptedModel(
        [
            calls(call("all_accounts", count=100_000), call("all_accounts", count=300)),
            call("all_accounts", count=300),
            reply("done"),
        ]
    )
    result = run(model, "go", tools=[all_accounts], strategies=[EntityDiscovery()])
    limits = [e for e in result.trace.events if isinstance(e, LimitReached)]
    assert [(e.iteration, e.limit) for e in limits] == [
        (1, "max_walk"),
        (1, "max_injected_tools"),
        (2, "max_injected_tools"),
    ]
    walk, first, second = limits
    assert "more than max_walk=10000 objects" in walk.message
    assert first.message.startswith("max_injected_tools=256 stopped 9871 providers")
    assert first.message.endswith("and 9868 more")
    assert second.message.startswith(
        "max_injected_tools=256 stopped 172 providers"
    )  # a0-a127 known
    assert len(result.trace.injected) == 256
