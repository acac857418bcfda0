"""The state machine, groups, sections and agentic scenarios pass with the exact toolsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import StrategyWarning
from harness.injection import (
    GroupsChanged,
    PhaseChanged,
    ProgressReported,
    RunRestarted,
    StateTransition,
)
from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios"

GLOBAL = ("order_status",)
BROWSING = (*GLOBAL, "search_products", "add_to_cart")
CART = (*GLOBAL, "add_to_cart", "view_cart", "empty_cart", "checkout")
PAYMENT = (*GLOBAL, "pay", "cancel_order")
SHIPPED = (*GLOBAL, "track_shipment")
MANAGE = ("activate_group", "deactivate_group")
FILES = ("read_file", "write_file")
WEB = ("search_web", "fetch_page")
SECTIONS = ("read_section", "search_faq")
ORDERS = ("lookup_order", "refund_order")
CUSTOMER = (
    "customer_c123_get_average_spend",
    "customer_c123_list_orders",
    "customer_c123_get_contact",
)
INTROSPECTION = (
    "run_introspection",
    "run_introspection_context",
    "run_status",
    "tool_usage",
    "call_history",
    "report_progress",
    "send_message",
)

EXPECTED: dict[str, list[tuple[str, ...]]] = {
    "state_machine/order_flow": [
        BROWSING,
        BROWSING,
        CART,
        CART,
        PAYMENT,
        PAYMENT,
        SHIPPED,
        SHIPPED,
    ],
    "state_machine/resumed_run": [PAYMENT, GLOBAL, GLOBAL],
    "state_machine/back_to_browsing": [
        BROWSING,
        CART,
        (*GLOBAL, "add_to_cart", "search_products"),
        CART,
        CART,
    ],
    "groups/activate_by_tool": [
        MANAGE + FILES,
        MANAGE + FILES + WEB,
        MANAGE + FILES + WEB,
        MANAGE + WEB,
        MANAGE + WEB,
        MANAGE + WEB,
    ],
    "groups/role_mapping": [MANAGE + FILES, *[(*MANAGE, *FILES, "search_cache")] * 2],
    "groups/rule_and_domain_tool": [MANAGE + FILES, MANAGE + FILES + WEB, MANAGE + FILES + WEB],
    "groups/planning_phases": [
        *[("ask_user", "draft_plan", "submit_plan")] * 3,
        *[("ask_user", "run_step")] * 2,
    ],
    "sections/dynamic_expansion": [SECTIONS, *[SECTIONS + ORDERS] * 3],
    "sections/restart_fallback": [SECTIONS + ORDERS] * 3,
    "sections/unknown_key": [SECTIONS, SECTIONS, SECTIONS, (*SECTIONS, "track_parcel")],
    "sections/duplicate_tool": [SECTIONS, *[(*SECTIONS, "track_parcel")] * 2],
    "sections/last_summary_restart": [()],
    "agentic/research_delegation": [("research_agent",)] * 2,
    "agentic/capture_artifacts": [("crm_agent",), *[("crm_agent", *CUSTOMER)] * 2],
    "agentic/artifacts_not_captured": [("crm_agent", "broken_agent")] * 3,
    "agentic/introspection": [("run_introspection",), *[INTROSPECTION] * 5],
    "agentic/introspection_no_channel": [("run_introspection",), *[INTROSPECTION] * 2],
}


def _run(name: str) -> ScenarioOutcome:
    outcome = run_scenario(load_scenario(CATALOG / f"{name}.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    return outcome


def test_every_scenario_of_these_folders_is_pinned() -> None:
    folders = ("state_machine", "groups", "sections", "agentic")
    files = {
        p.relative_to(CATALOG).with_suffix("").as_posix()
        for folder in folders
        for p in (CATALOG / folder).glob("*.yaml")
    }
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_offers_exactly_the_expected_tools(name: str) -> None:
    outcome = _run(name)
    assert outcome.trace is not None
    assert [it.offered for it in outcome.trace] == EXPECTED[name]


def test_state_machine_trace_names_every_transition() -> None:
    trace = _run("state_machine/order_flow").trace
    assert trace is not None
    moves = [(e.from_state, e.to_state) for e in trace.events_of(StateTransition)]  # type: ignore[attr-defined]
    assert moves == [
        (None, "BROWSING"),
        ("BROWSING", "CART"),
        ("CART", "PAYMENT"),
        ("PAYMENT", "SHIPPED"),
    ]
    assert (
        "'pay' works only in state(s) PAYMENT; the current state is CART" in trace.calls[2].content
    )


def test_groups_and_phases_record_who_switched_them() -> None:
    groups = _run("groups/rule_and_domain_tool").trace
    assert groups is not None
    sources = [e.source for e in groups.events_of(GroupsChanged)]  # type: ignore[attr-defined]
    assert sources == ["initial", "rule"]
    phases = _run("groups/planning_phases").trace
    assert phases is not None
    assert [e.to_phase for e in phases.events_of(PhaseChanged)] == ["planning", "execution"]  # type: ignore[attr-defined]


def test_sections_dynamic_and_restart_paths_agree() -> None:
    dynamic = _run("sections/dynamic_expansion")
    static = _run("sections/restart_fallback")
    assert dynamic.trace is not None and static.trace is not None
    assert dynamic.trace.iterations[-1].offered == static.trace.iterations[-1].offered
    assert dynamic.result is not None and static.result is not None
    assert dynamic.result.output == static.result.output
    assert (dynamic.trace.restarts, static.trace.restarts) == (0, 1)
    assert len(static.trace.events_of(RunRestarted)) == 1
    duplicate = _run("sections/duplicate_tool").trace
    assert duplicate is not None and len(duplicate.events_of(StrategyWarning)) == 1


def test_agentic_scenarios_nest_traces_and_report_progress() -> None:
    research = _run("agentic/research_delegation").trace
    assert research is not None
    assert [c.name for c in research.children[0].calls] == ["search_web", "fetch_page"]
    introspection = _run("agentic/introspection").trace
    assert introspection is not None
    assert len(introspection.events_of(ProgressReported)) == 1
