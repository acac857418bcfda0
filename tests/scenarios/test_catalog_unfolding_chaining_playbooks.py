"""Catalog scenarios for unfolding, chaining, playbooks, decorators and their composition.

Each scenario must pass, offer exactly the listed tools at each iteration, and record
which strategy changed the toolset.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios"

FILES_READ = ("file_tools", "file_tools_context", "read_file", "list_files", "file_size")
FILES_ALL = (
    "file_tools",
    "file_tools_context",
    "read_file",
    "list_files",
    "write_file",
    "delete_file",
    "file_size",
)
ADMIN_1 = ("admin_operations", "server_status", "admin_operations_context", "audit_log")
ADMIN_2 = (*ADMIN_1, "user_management", "user_management_context", "list_users", "create_user")
ADMIN_3 = (*ADMIN_2, "user_permissions", "user_permissions_context")
ADMIN_4 = (*ADMIN_3, "grant_permission", "list_permissions")
CART = ("shop", "database", "shop_context", "add_to_cart", "view_cart", "checkout")
PAPER = ("paper_summary", "paper_citation")
ALWAYS = ("search_papers", "fetch_paper", "take_notes")
GATED = (*ALWAYS, "list_sources", "draft_report", "review_report", "publish", "outline", "finalize")
CUSTOMER = (
    "customer_c123_get_average_spend",
    "customer_c123_list_orders",
    "customer_c123_get_contact",
)
COMPOSED_1 = ("search_customer", "file_tools", "send_report", "archive_report")
COMPOSED_2 = (*COMPOSED_1, *CUSTOMER)
COMPOSED_3 = (*COMPOSED_2, "file_tools_context", "write_file", "delete_file", "file_size")

EXPECTED: dict[str, list[tuple[str, ...]]] = {
    "unfolding/category_file_tools": [
        ("file_tools",),
        *[FILES_READ] * 4,
        *[(*FILES_READ, "write_file", "delete_file")] * 3,
    ],
    "unfolding/exclusive_file_tools": [("file_tools", "get_time"), FILES_ALL, FILES_ALL],
    "unfolding/exclusive_after_use": [
        ("file_tools", "get_time"),
        ("file_tools", "get_time"),
        FILES_ALL,
        FILES_ALL,
    ],
    "unfolding/nested_admin": [
        ("admin_operations", "server_status"),
        (*ADMIN_1, "user_management"),
        (
            *ADMIN_1,
            "user_management",
            "user_management_context",
            "list_users",
            "create_user",
            "user_permissions",
        ),
        ADMIN_4,
        ADMIN_4,
    ],
    "unfolding/plain_facade": [
        ("workspace",),
        ("workspace", "workspace_context", "list_files", "read_file"),
        ("workspace", "workspace_context", "list_files", "read_file"),
    ],
    "unfolding/selector_database": [
        ("database",),
        ("database",),
        ("database", "database_context", "query"),
        ("database", "database_context", "query"),
    ],
    "unfolding/selector_duplicates": [("broken",), ("broken",)],
    "unfolding/selector_shop_cart": [("shop", "database"), CART, CART, CART, CART],
    "chaining/paper_placeholders": [("search_papers", "fetch_paper", *PAPER)] * 6,
    "chaining/predicate_filter": [("fetch_paper", *PAPER)] * 5,
    "chaining/auto_mode": [
        ("open_cart", "fetch_paper"),
        ("open_cart", "fetch_paper", "add_item", "view", "checkout"),
        ("open_cart", "fetch_paper", "add_item", "view", "checkout"),
        ("open_cart", "fetch_paper", *PAPER),
        ("open_cart", "fetch_paper", *PAPER),
    ],
    "playbook/gated_research": [GATED] * 8,
    "playbook/hidden_research": [
        ALWAYS,
        (*ALWAYS, "list_sources", "draft_report"),
        (*ALWAYS, "list_sources", "draft_report", "review_report", "finalize"),
        (*ALWAYS, "list_sources", "draft_report", "review_report", "finalize", "publish"),
        (*ALWAYS, "list_sources", "draft_report", "review_report", "finalize", "publish"),
    ],
    "playbook/playbook_with_chaining": [
        (*ALWAYS, *PAPER),
        (*ALWAYS, *PAPER),
        (*ALWAYS, *PAPER, "list_sources", "draft_report", "finalize"),
        (*ALWAYS, *PAPER, "list_sources", "draft_report", "finalize"),
        (*ALWAYS, *PAPER, "list_sources", "draft_report", "finalize", "review_report"),
    ],
    "decorators/one_shot_style_guide": [("load_style_guide",)] * 3,
    "decorators/artifact_sink_reports": [("draft_report", "list_reports")] * 4,
    "composition/discovery_facade_playbook": [
        COMPOSED_1,
        COMPOSED_2,
        COMPOSED_2,
        COMPOSED_3,
        COMPOSED_3,
        COMPOSED_3,
    ],
}


def _run(name: str) -> ScenarioOutcome:
    outcome = run_scenario(load_scenario(CATALOG / f"{name}.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    return outcome


def test_every_owned_scenario_file_is_listed() -> None:
    folders = ("unfolding", "chaining", "playbook", "decorators")
    found = {
        p.relative_to(CATALOG).with_suffix("").as_posix()
        for folder in folders
        for p in (CATALOG / folder).glob("*.yaml")
    }
    found.add("composition/discovery_facade_playbook")
    assert found == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_passes_with_exact_offered_toolsets(name: str) -> None:
    outcome = _run(name)
    assert outcome.trace is not None
    assert [it.offered for it in outcome.trace.iterations] == EXPECTED[name]


STRATEGY_OF = {
    "unfolding": {"unfolding"},
    "chaining": {"chaining"},
    "playbook": {"playbook", "chaining"},
}


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.split("/")[0] in STRATEGY_OF))
def test_changes_name_their_strategy_and_reason(name: str) -> None:
    outcome = _run(name)
    assert outcome.trace is not None
    changes = outcome.trace.changes
    assert {c.strategy for c in changes} <= STRATEGY_OF[name.split("/")[0]]
    assert all(c.reason for c in changes)
    assert all(c.after_call for c in changes if c.strategy == "unfolding")


def test_composition_mixes_three_strategies() -> None:
    outcome = _run("composition/discovery_facade_playbook")
    assert outcome.trace is not None
    by_strategy = {c.strategy: c for c in outcome.trace.changes}
    assert set(by_strategy) == {"playbook", "discovery", "unfolding"}
    assert by_strategy["discovery"].added == CUSTOMER
    unlocks = [c for c in outcome.trace.changes if c.reason.startswith("unlocked")]
    assert [(c.replaced, c.after_call) for c in unlocks] == [
        (("send_report",), "customer_c123_get_average_spend"),
        (("archive_report",), "write_file"),
    ]


def test_selector_errors_keep_the_facade_and_explain() -> None:
    outcome = _run("unfolding/selector_database")
    assert outcome.trace is not None
    first = outcome.trace.calls[0]
    assert first.is_error and "unsupported connection string 'postgres://prod'" in first.content
    outcome = _run("unfolding/selector_duplicates")
    assert outcome.trace is not None
    assert "duplicate tool names ['lookup']" in outcome.trace.calls[0].content


def test_decorator_scenarios_show_their_effect() -> None:
    outcome = _run("decorators/one_shot_style_guide")
    assert outcome.trace is not None
    second = outcome.trace.calls[1].content
    assert second == (
        "ALREADY LOADED. The body of 'load_style_guide' was returned earlier in this turn "
        "\N{EM DASH} read it from your conversation history above. "
        "Do not call this tool again. "
        "Reuse the style guide you already loaded."
    )
    outcome = _run("decorators/artifact_sink_reports")
    assert outcome.result is not None
    assert outcome.result.state["reports"] == ["First", "Second"]
    assert outcome.trace is not None
    assert outcome.trace.calls[2].content == '["First","Second"]'
