"""A small tool domain for the persona tests: a discovery step and an unfolding facade."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

import harness
from harness import InjectionContext, InjectionStrategy, ToolsetChange, as_tool, llm_tool
from harness.tools import Tool

TARGET = "customer_*_get_average_spend"


@harness.tool_provider
class Customer:
    """A customer found by ``find_customer``; its methods become tools."""

    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def get_average_spend(self) -> float:
        """The customer's average order value."""
        return 42.5

    @llm_tool
    def get_orders(self, limit: Annotated[int, Field(ge=1, le=5)] = 3) -> list[str]:
        """The customer's latest orders."""
        return [f"order-{i}" for i in range(limit)]


@llm_tool
def find_customer(name: str) -> Customer:
    """Find a customer by name."""
    return Customer(id="c1")


@llm_tool
def weather(city: str, days: Annotated[int, Field(ge=1, le=7)]) -> str:
    """The forecast for a city."""
    return f"sunny in {city} for {days} days"


@llm_tool
def note(text: str, tags: list[str] | None = None, priority: Literal["low", "high"] = "low") -> str:
    """Write a note."""
    return "noted"


@llm_tool
def open_toolbox() -> str:
    """Open the toolbox: its tools replace this one."""
    return "opened"


@llm_tool
def hammer(nails: int) -> str:
    """Hammer some nails."""
    return f"{nails} nails in"


@llm_tool
def saw(length_cm: float) -> str:
    """Saw a plank."""
    return "sawn"


class Unfold(InjectionStrategy):
    """``open_toolbox`` unfolds: it is removed and ``hammer``/``saw`` are added."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        call, result = context.call, context.result
        if call is None or result is None or result.is_error or call.name != "open_toolbox":
            return None
        if "hammer" in context.tools:
            return None
        return ToolsetChange(
            remove=("open_toolbox",), add=(as_tool(hammer), as_tool(saw)), reason="unfolded"
        )


def base_tools() -> list[Tool]:
    """The starting toolset: a discovery tool and two plain tools."""
    return [as_tool(find_customer), as_tool(weather), as_tool(note)]


def run(model: harness.Model, tools: list[Any] | None = None, **options: Any) -> harness.RunResult:
    """Run ``model`` over the domain with entity discovery and the unfolding facade."""
    options.setdefault("max_iterations", 40)
    return harness.run(
        model,
        "Find the average spend of customer Ada.",
        tools=tools if tools is not None else base_tools(),
        strategies=[harness.EntityDiscovery(), Unfold()],
        **options,
    )
