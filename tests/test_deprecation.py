"""Renamed public names keep working for a minor version and say what replaced them."""

from __future__ import annotations

import enum
import subprocess
import sys
import types
from pathlib import Path

import pytest

from harness import (
    EntityDiscovery,
    ModelRequest,
    ScriptedModel,
    StateMachine,
    ToolDefinition,
    call,
    llm_tool,
    reply,
    run,
    tool_provider,
)
from harness._deprecation import Renamed, deprecated_getattr, deprecated_names, renamed_label
from harness.assertions import cache_breaks, has_events, injected, removed
from harness.loop import ToolsInjected
from harness.models import CallbackModel

RENAMED = Renamed(
    old="Old", new="OrderedDict", module="collections", since="0.2.0", removal="0.3.0"
)


def test_an_old_name_answers_the_new_object_and_warns_with_both_names() -> None:
    import collections

    getattr_ = deprecated_getattr("pkg", {"Old": RENAMED})
    with pytest.warns(DeprecationWarning, match="pkg.Old is deprecated") as caught:
        assert getattr_("Old") is collections.OrderedDict
    message = str(caught[0].message)
    assert "pkg.Old is deprecated since 0.2.0" in message
    assert "removed in 0.3.0" in message
    assert "use pkg.OrderedDict instead" in message


def test_other_names_go_to_the_fallback_or_raise_attribute_error() -> None:
    getattr_ = deprecated_getattr("pkg", {"Old": RENAMED}, fallback=lambda name: name.upper())
    assert getattr_("other") == "OTHER"
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'missing'"):
        deprecated_getattr("pkg", {})("missing")


def test_the_warning_points_at_the_callers_line() -> None:
    module = types.ModuleType("pkg")
    module.__getattr__ = deprecated_getattr("pkg", {"Old": RENAMED})  # type: ignore[method-assign]
    with pytest.warns(DeprecationWarning, match="pkg.Old is deprecated") as caught:
        _ = module.Old
    assert caught[0].filename == __file__


def test_a_renamed_label_is_translated_with_a_warning_and_new_labels_pass_silently() -> None:
    labels = {
        "entity": Renamed(old="entity", new="discovery", module="", since="0.2.0", removal="0.3.0")
    }
    with pytest.warns(DeprecationWarning, match=r"injected\(strategy=\.\.\.\): the label 'entity'"):
        assert renamed_label("entity", labels, "injected(strategy=...)") == "discovery"
    assert renamed_label("discovery", labels, "injected(strategy=...)") == "discovery"


# -- the three renames a downstream suite met without warning (issue 35) ---------------------

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, *warning_filter: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter with ``-W`` filters, as a user's script would be."""
    return subprocess.run(
        [sys.executable, *warning_filter, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_tool_definition_reads_like_the_dict_it_replaced_with_a_warning() -> None:
    tool = ToolDefinition(name="lookup", description="Find it.", strict=True)
    with pytest.warns(DeprecationWarning, match=r"tool\['function'\] is deprecated since 0\.2\.0"):
        function = tool["function"]
    assert function == {
        "name": "lookup",
        "description": "Find it.",
        "parameters": {"type": "object", "properties": {}},
        "strict": True,
    }
    with pytest.warns(DeprecationWarning, match=r"removed in 0\.3\.0: read tool\.name instead"):
        assert tool["name"] == "lookup"
    with pytest.warns(DeprecationWarning, match=r"read tool\.parameters instead"):
        assert tool.get("parameters") == {"type": "object", "properties": {}}
    with pytest.warns(DeprecationWarning, match=r"tool\['type'\]"):
        assert tool["type"] == "function"
    with pytest.warns(DeprecationWarning, match=r"tool\['function'\]"):
        assert "function" in tool
    with pytest.warns(DeprecationWarning, match=r"tool\['strict'\]"):
        assert "strict" not in ToolDefinition(name="plain")  # the old entry had no strict


def test_keys_tool_entries_never_had_fail_plainly_and_a_definition_is_not_iterable() -> None:
    tool = ToolDefinition(name="lookup")
    with pytest.raises(KeyError, match=r"read tool\.name, tool\.description, tool\.parameters"):
        tool["input_schema"]
    assert tool.get("input_schema", "absent") == "absent"
    assert "input_schema" not in tool
    with pytest.raises(TypeError, match="not iterable"):
        iter(tool)  # type: ignore[call-overload]


def test_a_model_written_against_dict_tools_still_runs_and_is_told_what_to_read() -> None:
    @llm_tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    def answer(request: ModelRequest) -> str:
        names = [t["function"]["name"] for t in request.tools]
        return "tools: " + ", ".join(names)

    with pytest.warns(DeprecationWarning, match=r"read tool\.name, tool\.description") as caught:
        result = run(CallbackModel(answer), "go", tools=[lookup])
    assert result.output == "tools: lookup"
    assert caught[0].filename == __file__  # points at the line that reads the dict


def test_the_playbook_condition_called_is_was_called_with_a_warning() -> None:
    import harness.injection

    with pytest.warns(
        DeprecationWarning,
        match=r"harness\.injection\.called is deprecated since 0\.2\.0 and will be removed in "
        r"0\.3\.0: use harness\.injection\.was_called instead",
    ):
        old = harness.injection.called
    assert old is harness.injection.was_called
    assert "called" not in harness.injection.__all__
    assert deprecated_names()["harness.injection.called"].new == "was_called"


@tool_provider(prefix="customer")
class _Customer:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def get_spend(self) -> float:
        """Total spend."""
        return 1.0


@llm_tool
def _find(name: str) -> list[_Customer]:
    """Find customers."""
    return [_Customer("c1")]


@pytest.fixture(scope="module")
def discovery_trace() -> object:
    model = ScriptedModel([call("_find", {"name": "x"}), reply("done")])
    return run(model, "go", tools=[_find], strategies=[EntityDiscovery()]).trace


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda: injected("customer_*", strategy="EntityDiscovery"), "injected"),
        (lambda: has_events(ToolsInjected, strategy="EntityDiscovery"), "has_events"),
    ],
)
def test_an_old_strategy_label_matches_what_the_harness_records_now(
    discovery_trace: object, make: object, what: str
) -> None:
    with pytest.warns(
        DeprecationWarning,
        match=rf"{what}\(strategy=\.\.\.\): the label 'EntityDiscovery' is deprecated since "
        r"0\.2\.0 and will be removed in 0\.3\.0: write 'discovery'",
    ):
        expectation = make()  # type: ignore[operator]
    assert discovery_trace == expectation
    assert discovery_trace != removed("customer_*", strategy="discovery")


def test_an_old_state_machine_label_becomes_its_snake_case_name() -> None:
    class OrderState(enum.Enum):
        CART = 1
        PAID = 2

    @llm_tool
    def pay() -> str:
        """Pay."""
        return "paid"

    @llm_tool
    def receipt() -> str:
        """The receipt."""
        return "r"

    machine = StateMachine(
        OrderState,
        initial=OrderState.CART,
        tools={OrderState.CART: [pay], OrderState.PAID: [receipt]},
        transitions={"pay": OrderState.PAID},
    )
    result = run(ScriptedModel([call("pay"), reply("ok")]), "pay", strategies=[machine])
    with pytest.warns(DeprecationWarning, match=r"write 'state_machine:order_state'"):
        expectation = injected("receipt", strategy="StateMachine[OrderState]")
    assert result.trace == expectation


def test_an_old_label_in_cache_breaks_by_is_read_as_the_new_one() -> None:
    with pytest.warns(DeprecationWarning, match=r"cache_breaks\(by=\.\.\.\): the label 'Phases'"):
        expectation = cache_breaks(by="Phases")
    assert expectation.by == "phases"  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "from harness.injection import called; print(called.__name__)",
            "harness.injection.called is deprecated since 0.2.0 and will be removed in 0.3.0: "
            "use harness.injection.was_called instead",
        ),
        (
            "from harness import ToolDefinition; "
            "print(ToolDefinition(name='t')['function']['name'])",
            "tool['function'] is deprecated since 0.2.0 and will be removed in 0.3.0: read "
            "tool.name, tool.description and tool.parameters instead",
        ),
        (
            "from harness.assertions import injected; "
            "print(injected('x', strategy='SectionDisclosure').strategy)",
            "injected(strategy=...): the label 'SectionDisclosure' is deprecated since 0.2.0 and "
            "will be removed in 0.3.0: write 'sections'",
        ),
    ],
    ids=["playbook-called", "tool-dict", "strategy-label"],
)
def test_each_alias_fails_a_script_run_with_deprecations_as_errors_and_works_otherwise(
    code: str, message: str
) -> None:
    strict = _python(code, "-W", "error::DeprecationWarning")
    assert strict.returncode == 1
    assert "DeprecationWarning: " in strict.stderr
    assert message in strict.stderr
    lenient = _python(code, "-W", "always::DeprecationWarning")
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stdout.strip() in {"was_called", "t", "sections"}
    assert message in lenient.stderr
