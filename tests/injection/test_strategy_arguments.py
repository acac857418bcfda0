"""Strategy arguments checked when given (issue 34 section 6): ``ToolSearch(limit=...)``
is an int >= 1, and ``AllowedTools`` naming a tool that is not offered is an error on
every model (where the provider has no allowed subset it took every tool away), with a
message of bounded size."""

from __future__ import annotations

from typing import Any

import pytest

from harness import StrategyError, UsageError, run
from harness.injection import AllowedTools, ToolSearch
from harness.loop import ModelCapabilities
from harness.models import ScriptedModel, reply
from harness.tools import llm_tool


@llm_tool
def get_weather(city: str) -> str:
    """The weather."""
    return "sunny"


@llm_tool
def send_email(to: str) -> str:
    """Send an email."""
    return "sent"


class NoSubsets(ScriptedModel):
    """A model whose provider takes no allowed subset (Anthropic Messages)."""

    capabilities = ModelCapabilities(allowed_tools=False)


@pytest.mark.parametrize("limit", [2.5, "5", None, True, 0, -1])
def test_a_tool_search_limit_is_an_int_of_one_or_more(limit: Any) -> None:
    with pytest.raises(UsageError, match=rf"ToolSearch limit must be an int >= 1, got {limit!r}"):
        ToolSearch([get_weather], limit=limit)
    assert ToolSearch([get_weather], limit=2).limit == 2


@pytest.mark.parametrize("model", [ScriptedModel, NoSubsets])
def test_a_typo_in_an_allowed_subset_is_an_error_on_every_model(model: type) -> None:
    with pytest.raises(StrategyError) as caught:
        run(
            model([reply("ok")], require_exhausted=False),
            "go",
            tools=[get_weather, send_email],
            strategies=[AllowedTools([["get_wether"]])],
        )
    message = str(caught.value)
    assert "'get_wether'" in message and "not offered" in message
    assert "'get_weather', 'send_email'" in message


@pytest.mark.parametrize("model", [ScriptedModel, NoSubsets])
def test_100000_undeclared_names_give_a_short_message(model: type) -> None:
    names = [f"tool_{i}" for i in range(100_000)]
    with pytest.raises(StrategyError) as caught:
        run(
            model([reply("ok")], require_exhausted=False),
            "go",
            tools=[get_weather],
            strategies=[AllowedTools([names])],
        )
    message = str(caught.value)
    assert len(message) < 2_000 and "and 99980 more" in message


def test_a_valid_subset_still_narrows_the_tools_without_subsets() -> None:
    result = run(
        NoSubsets([reply("ok")]),
        "go",
        tools=[get_weather, send_email],
        strategies=[AllowedTools([["send_email"]])],
    )
    assert result.trace.iterations[0].offered == ("send_email",)
