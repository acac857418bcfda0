"""``Delivery`` and ``AddTools``: one ``via=`` option decides how injected tools reach the
model, for every injecting strategy, with its fallback to editing ``tools`` and the
refusal under ``native="always"``."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import UsageError, run
from harness.assertions import injected
from harness.injection import (
    AddTools,
    Delivery,
    EntityDiscovery,
    Playbook,
    SectionDisclosure,
    StateMachine,
    facade,
    run_with_sections,
    unlock,
)
from harness.loop import InjectionContext, InjectionStrategy, ModelCapabilities, ToolsetChange
from harness.models import ScriptedModel, call, reply, with_capabilities
from harness.tools import llm_tool

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.customers import search_customer  # noqa: E402
from fixtures.documents import support_template  # noqa: E402


@llm_tool
def search() -> str:
    """Search."""
    return "found"


@llm_tool
def fetch() -> str:
    """Fetch."""
    return "fetched"


def _context(additions: bool) -> InjectionContext:
    return InjectionContext(
        history=(),
        offered=(),
        tools={},
        iteration=1,
        state={},
        capabilities=ModelCapabilities(tool_additions=additions),
    )


# -- the option ----------------------------------------------------------------------------


def test_delivery_reads_its_forms_and_refuses_others_naming_the_choices() -> None:
    assert Delivery.of("edit") == Delivery()
    assert Delivery.of("addition") == Delivery("addition", "auto")
    assert Delivery.of({"via": "addition", "native": "always"}) == Delivery("addition", "always")
    same = Delivery("addition", "never")
    assert Delivery.of(same) is same
    with pytest.raises(UsageError, match="'edit', 'addition'"):
        Delivery.of("tools")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="native must be one of 'auto', 'always', 'never'"):
        Delivery.of({"via": "addition", "native": "sometimes"})
    with pytest.raises(UsageError, match="via must be one of 'edit', 'addition'"):
        Delivery("append")  # type: ignore[arg-type]


def test_an_addition_falls_back_to_an_edit_or_refuses_under_always() -> None:
    change = ToolsetChange(add=(search,))
    assert Delivery("addition").deliver(change, _context(True)).via == "addition"
    assert Delivery("addition").deliver(change, _context(False)).via == "edit"
    assert Delivery("addition", "never").deliver(change, _context(True)).via == "edit"
    assert Delivery("edit").deliver(change, _context(True)) is change
    removal = ToolsetChange(remove=("search",))
    assert Delivery("addition").deliver(removal, _context(True)) is removal  # nothing injected
    with pytest.raises(UsageError, match=r"native='always'.*tool_additions is false.*'auto'"):
        Delivery("addition", "always").deliver(change, _context(False))


# -- AddTools around any strategy ----------------------------------------------------------


class Unlocks(InjectionStrategy):
    name = "unlocks"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.call is not None and context.call.name == "search":
            return ToolsetChange(add=(fetch,), reason="search was called")
        return None

    def tool_choice(self, context: InjectionContext) -> Any:
        return "auto"


def _script() -> ScriptedModel:
    return ScriptedModel([call("search"), call("fetch"), reply("done")])


def test_add_tools_delivers_what_the_strategy_injects_and_keeps_its_name() -> None:
    model = _script()
    played = _with_additions(model)
    result = run(played, "go", tools=[search], strategies=[AddTools(Unlocks())])
    change = result.trace.iterations[0].changes[0]
    assert (change.added, change.via, change.strategy) == (("fetch",), "addition", "unlocks")
    assert [d.name for d in model.requests[1].tools] == ["search"]
    assert model.requests[1].settings.tool_choice is not None  # its tool_choice still asked
    assert "Unlocks" in repr(AddTools(Unlocks())) and "native=" in repr(AddTools(Unlocks()))


def test_add_tools_falls_back_on_a_model_without_additions() -> None:
    model = with_capabilities(_script(), tool_additions=False)
    result = run(model, "go", tools=[search], strategies=[AddTools(Unlocks())])
    assert injected("fetch", via="edit").evaluate(result.trace) is None


def test_add_tools_takes_strategies_only() -> None:
    with pytest.raises(UsageError, match="AddTools takes the strategies"):
        AddTools()
    with pytest.raises(UsageError, match="AddTools takes the strategies"):
        AddTools(search)  # type: ignore[arg-type]


# -- via= on each injecting strategy -------------------------------------------------------


def _with_additions(model: Any) -> Any:
    """The scripted model standing for a provider with additions (it plays Chat
    Completions, which has none, by default)."""
    return with_capabilities(model, tool_additions=True)


def _discovery(via: Any, wrap: Any = _with_additions) -> Any:
    model = ScriptedModel(
        [
            call("search_customer", {"name": "John"}),
            call("customer_c123_get_average_spend"),
            reply("42"),
        ]
    )
    strategy = EntityDiscovery(via=via)
    return run(wrap(model), "Spend?", tools=[search_customer], strategies=[strategy])


def _facade(via: Any, wrap: Any = _with_additions) -> Any:
    tool = facade("kit", "Search and fetch.", [fetch], via=via)
    return run(wrap(ScriptedModel([call("kit"), call("fetch"), reply("done")])), "go", tools=[tool])


def _playbook(via: Any, wrap: Any = _with_additions) -> Any:
    book = Playbook(always=[search], unlocks=[unlock(fetch, when="search")], mode="hidden", via=via)
    return run(wrap(_script()), "go", strategies=[book])


class Step(enum.Enum):
    FIND = 1
    GET = 2


def _machine(via: Any, wrap: Any = _with_additions) -> Any:
    machine = StateMachine(
        Step,
        initial=Step.FIND,
        tools={Step.FIND: [search], Step.GET: [fetch]},
        transitions={"search": Step.GET},
        via=via,
    )
    return run(wrap(_script()), "go", strategies=[machine])


def _sections(via: Any, wrap: Any = _with_additions) -> Any:
    script = ScriptedModel(
        [
            call("read_section", {"key": "orders"}),
            call("lookup_order", {"order_id": "A1"}),
            reply("Order A1 is looked up."),
        ]
    )
    sections = SectionDisclosure(support_template(), via=via)
    return run_with_sections(wrap(script), "Look A1 up", sections=sections)


STRATEGIES = {
    "discovery": (_discovery, "customer_c123_*"),
    "facade": (_facade, "fetch"),
    "playbook": (_playbook, "fetch"),
    "state_machine": (_machine, "fetch"),
    "sections": (_sections, "lookup_order"),
}


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_each_injecting_strategy_delivers_by_addition_when_asked(kind: str) -> None:
    go, name = STRATEGIES[kind]
    added = go("addition")
    assert injected(name, via="addition", at=1).evaluate(added.trace) is None
    first = added.trace.iterations[0].offered
    later = [it.offered for it in added.trace.iterations[1:]]
    assert all(name.rstrip("*") in " ".join(o) for o in later)
    edited = go("edit")
    assert injected(name, via="edit", at=1).evaluate(edited.trace) is None
    assert added.output == edited.output
    assert first == edited.trace.iterations[0].offered  # the same start either way


def test_an_addition_keeps_the_facade_and_read_section_where_an_edit_replaces_them() -> None:
    kept = _facade("addition").trace.iterations[1].offered
    assert kept[0] == "kit"
    sections = _sections("addition").trace.iterations[1].offered
    assert "read_section" in sections


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_native_always_refuses_where_the_model_has_no_additions(kind: str) -> None:
    go, _ = STRATEGIES[kind]

    def without(model: Any) -> Any:
        return with_capabilities(model, tool_additions=False)

    with pytest.raises(UsageError, match="native='always'"):
        go(Delivery("addition", native="always"), without)
    fallback = go("addition", without)  # native="auto": an edit
    assert all(c.via == "edit" for c in fallback.trace.changes)


def test_a_model_with_static_tools_takes_no_additions_so_sections_restart() -> None:
    from harness.models import StaticToolsModel

    model = StaticToolsModel(
        ScriptedModel(
            [
                call("read_section", {"key": "orders"}),
                call("lookup_order", {"order_id": "A1"}),
                reply("Order A1 is looked up."),
            ]
        )
    )
    assert model.capabilities.tool_additions is False
    sections = SectionDisclosure(support_template(), via="addition")
    result = run_with_sections(model, "Look A1 up", sections=sections)
    assert result.output == "Order A1 is looked up." and result.trace.restarts == 1
    assert all(c.via == "edit" for c in result.trace.changes)
