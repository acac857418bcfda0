"""One naming convention for what the trace records as a change's strategy.

The harness's own strategies record a short lowercase name (docs/pytest-plugin.md,
"Strategy names", one table); a user's strategy records its class name unless it
says otherwise. ``EntityDiscovery`` used to record ``EntityDiscovery`` next to
``playbook`` and ``unfolding``.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path

import pytest

from harness import ScriptedModel, call, facade, llm_tool, reply, run, tool_provider
from harness.assertions import injected
from harness.cassettes import RecordedTools
from harness.injection import (
    AllowedTools,
    EntityDiscovery,
    Phases,
    Playbook,
    PromptTemplate,
    RunIntrospection,
    Section,
    SectionDisclosure,
    StateMachine,
    ToolChaining,
    ToolGroup,
    ToolGroups,
    ToolSearch,
    UsageIntrospection,
)
from harness.loop import DeclaredChanges, InjectionStrategy

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin.md"


@llm_tool
def noop() -> str:
    """Do nothing."""
    return "ok"


class Colour(enum.Enum):
    LIGHT_BLUE = 1


BUILT_IN = [
    (DeclaredChanges(), "declared"),
    (EntityDiscovery(), "discovery"),
    (ToolChaining(), "chaining"),
    (Playbook(), "playbook"),
    (
        StateMachine(Colour, initial=Colour.LIGHT_BLUE, tools={Colour.LIGHT_BLUE: [noop]}),
        "state_machine:colour",
    ),
    (ToolGroups([ToolGroup(name="g", tools=[noop], description="G.")]), "groups"),
    (Phases({"only": [noop]}, phase=lambda context: "only"), "phases"),
    (SectionDisclosure(PromptTemplate([Section(key="s", template="S.")])), "sections"),
    (RunIntrospection(), "introspection"),
    (UsageIntrospection(), "usage"),
    (RecordedTools([()]), "recorded"),
    (ToolSearch([noop]), "tool_search"),
    (AllowedTools([["noop"]]), "allowed_tools"),
]


@pytest.mark.parametrize(("strategy", "name"), BUILT_IN, ids=[n for _, n in BUILT_IN])
def test_every_built_in_strategy_records_its_documented_lowercase_name(
    strategy: InjectionStrategy, name: str
) -> None:
    assert strategy.name == name
    assert re.fullmatch(r"[a-z_]+(:[a-z_]+)?", name)
    base = name.split(":")[0]
    assert f"`{base}" in DOCS.read_text(encoding="utf-8"), f"{name} is not in the table"


def test_a_user_strategy_records_its_class_name_unless_it_names_itself() -> None:
    class MyRule(InjectionStrategy):
        pass

    class Named(InjectionStrategy):
        @property
        def name(self) -> str:
            return "mine"

    assert (MyRule().name, Named().name) == ("MyRule", "mine")


@tool_provider(prefix="customer")
class Customer:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def spend(self) -> float:
        """Average spend."""
        return 1.0


@llm_tool
def find() -> list[Customer]:
    """Find customers."""
    return [Customer("c1")]


def test_discovery_facades_and_declared_changes_in_one_trace() -> None:
    files = facade("files", "Files.", [noop])
    model = ScriptedModel([call("find"), call("files"), reply("ok")])
    result = run(model, "go", tools=[find, files], strategies=[EntityDiscovery()])
    assert [c.strategy for c in result.trace.changes] == ["discovery", "unfolding"]
    assert result.trace == injected("customer_*", strategy="discovery")
