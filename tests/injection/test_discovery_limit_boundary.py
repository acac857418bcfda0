"""max_injected_tools at the boundary: reaching the limit exactly is allowed."""

from __future__ import annotations

import pytest

from harness import EntityDiscovery, ScriptedModel, call, llm_tool, reply, run, tool_provider
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
    assert [event.value for event in limits] == [0, 0]
