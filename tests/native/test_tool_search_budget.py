"""The regex tool search has one time budget per search, not per text (issue 34 section 2):
a pattern that backtracks for a second or two on each of 20 deferred tools' descriptions
stayed within a budget per text and took 33-48 s for one search."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ScriptError, ToolSearch, run
from harness.formats import ToolDefinition
from harness.models import (
    ANTHROPIC_CAPABILITIES,
    CapabilitiesOverride,
    ScriptedModel,
    call,
    reply,
    search,
)
from harness.tools import Tool, _patterns, _search
from harness.tools._patterns import PatternTimeout
from harness.tools._search import regex_search

BACKTRACKS = "(a|aa)+(?=b)"  # look-ahead: the backtracking engine, exponential in the a's
TEXT = "a" * 24  # about 0.1 s per text on a loaded 2-core machine: well within one budget
TOOLS = 60  # ... but sixty of them are many budgets


def _tools() -> list[Tool]:
    return [
        Tool.from_schema(f"tool{i}", TEXT, {"type": "object", "properties": {}}, lambda a: "x")
        for i in range(TOOLS)
    ]


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> float:
    """The default budget, shortened (a search of all the texts is still many of them)."""
    monkeypatch.setattr(_patterns, "DEFAULT_BUDGET", 0.5)
    return 0.5


def test_every_text_of_one_search_shares_one_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def spy(pattern: str, text: str) -> bool:
        seen.append(_patterns._BUDGET.get())
        return False

    monkeypatch.setattr(_search, "pattern_search", spy)
    definitions = [ToolDefinition(name=f"tool{i}", description=TEXT) for i in range(5)]
    assert regex_search(definitions, BACKTRACKS, seconds=0.5) == []
    assert len(seen) == 10 and seen[0] is not None and seen[0][1] == 0.5
    assert all(budget == seen[0] for budget in seen)  # one deadline for name and description
    regex_search(definitions, BACKTRACKS)
    assert seen[-1][1] == _patterns.DEFAULT_BUDGET and seen[-1] != seen[0]  # a new search


def test_one_search_over_many_texts_ends_within_its_budget(bounded: Any) -> None:
    definitions = [ToolDefinition(name=f"tool{i}", description=TEXT) for i in range(TOOLS)]
    with bounded(3.0), pytest.raises(PatternTimeout, match=r"0\.5s budget"):
        regex_search(definitions, BACKTRACKS, seconds=0.5)
    assert regex_search(definitions, "^A{24}$", limit=2) == ["tool0", "tool1"]  # linear engine


def test_the_local_search_tool_answers_a_hanging_pattern_with_an_error(
    bounded: Any, short_budget: float
) -> None:
    model = ScriptedModel([call("tool_search", {"query": BACKTRACKS}), reply("none found")])
    with bounded(3.0):
        result = run(model, "go", strategies=[ToolSearch(_tools(), search="regex", native="never")])
    (record,) = result.trace.calls
    assert record.is_error and "PatternTimeout" in record.content and "budget" in record.content
    assert result.output == "none found"


def test_a_scripted_hosted_search_with_a_hanging_pattern_is_a_script_error(
    bounded: Any, short_budget: float
) -> None:
    # a model that runs Anthropic's regex search (a plain ScriptedModel plays Chat Completions)
    model = CapabilitiesOverride(
        ScriptedModel([search(BACKTRACKS), reply("none found")]), ANTHROPIC_CAPABILITIES
    )
    with bounded(3.0), pytest.raises(ScriptError, match=r"regex search .* failed: .*budget"):
        run(model, "go", strategies=[ToolSearch(_tools(), search="regex")])
