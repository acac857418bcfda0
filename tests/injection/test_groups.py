"""Tool groups (by tool, rule, caller; roles; permissions) and phase-based tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import (
    LoopCore,
    LoopOptions,
    ScriptedModel,
    StrategyWarning,
    UsageError,
    call,
    reply,
    run,
)
from harness.injection import (
    GroupRequest,
    GroupsChanged,
    InjectionContext,
    PhaseChanged,
    Phases,
    ToolGroup,
    ToolGroups,
    phase_after,
)
from harness.loop import default_strategy
from harness.tools import Toolset

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.groups import (  # noqa: E402
    GROUPS,
    draft_plan,
    go_online,
    plan_then_execute,
    read_file,
    research_groups,
    search_web,
)

MANAGE = ("activate_group", "deactivate_group")
FILES = ("read_file", "write_file")
WEB = ("search_web", "fetch_page")


def _offered(result: object) -> list[tuple[str, ...]]:
    return [it.offered for it in result.trace]  # type: ignore[attr-defined]


def test_activation_by_tool_resolves_roles_and_records_why() -> None:
    model = ScriptedModel(
        [
            call("activate_group", {"name": "web"}),
            call("deactivate_group", {"name": "files"}),
            reply("x"),
        ]
    )
    result = run(model, "go", strategies=[research_groups()])
    assert _offered(result) == [MANAGE + FILES, MANAGE + FILES + WEB, MANAGE + WEB]
    changes = result.trace.changes
    assert changes[2].reason == "groups +web_duckduckgo (tool: activate_group('web'))"
    assert changes[3].removed == FILES
    events = result.trace.events_of(GroupsChanged)
    assert [(e.activated, e.deactivated, e.source) for e in events] == [  # type: ignore[attr-defined]
        (("files",), (), "initial"),
        (("web_duckduckgo",), (), "tool"),
        ((), ("files",), "tool"),
    ]
    assert ToolGroups.active(result.state) == ("web_duckduckgo",)


def test_the_group_catalog_shows_descriptions_permissions_and_roles() -> None:
    groups = research_groups(web="web_offline")
    description = groups.tools[0].description
    assert "- web_duckduckgo: live web search (needs network)" in description
    assert "- web: role, currently web_offline" in description


def test_permissions_and_unknown_names_are_refused_with_the_choices() -> None:
    model = ScriptedModel(
        [
            call("activate_group", {"name": "admin"}),
            call("activate_group", {"name": "webb"}),
            call("deactivate_group", {"name": "webb"}),
            reply("x"),
        ]
    )
    result = run(model, "go", strategies=[research_groups()])
    first, second, third = result.trace.calls
    assert first.is_error and "needs permission(s) ['admin']" in first.content
    assert second.is_error and "unknown group or role 'webb'" in second.content
    assert "roles: ['web']" in second.content
    assert third.is_error and third.error_kind == "refused"
    assert _offered(result)[-1] == MANAGE + FILES


def test_any_tool_returning_a_group_request_switches_groups() -> None:
    groups = ToolGroups(GROUPS, roles={"web": "web_offline"}, manage=False)
    result = run(
        ScriptedModel([call("go_online"), reply("x")]), "go", tools=[go_online], strategies=[groups]
    )
    assert _offered(result) == [("go_online",), ("go_online", "search_cache")]
    assert "(tool: go_online)" in result.trace.changes[0].reason


def test_bad_requests_from_tools_warn_and_change_nothing() -> None:
    def bad() -> GroupRequest:
        """Ask for nonsense."""
        return GroupRequest(activate=("nope", "admin"), deactivate=("ghost",))

    groups = ToolGroups(GROUPS, permissions=set(), manage=False)
    result = run(ScriptedModel([call("bad"), reply("x")]), "go", tools=[bad], strategies=[groups])
    messages = [e.message for e in result.trace.events_of(StrategyWarning)]  # type: ignore[attr-defined]
    assert any("unknown group or role 'ghost'" in m for m in messages)
    assert any("ignored activating 'nope'" in m for m in messages)
    assert any("'admin' needs permission(s) ['admin']" in m for m in messages)
    assert _offered(result) == [("bad",), ("bad",)]


def test_a_rule_activates_a_group_before_a_turn() -> None:
    model = ScriptedModel(
        [call("read_file", {"path": "a"}), call("search_web", {"query": "q"}), reply("x")]
    )
    result = run(model, "go", strategies=[research_groups(rule=True)])
    assert _offered(result)[1] == MANAGE + FILES + WEB
    assert result.trace.iterations[1].changes[0].reason.startswith("groups +web_duckduckgo (rule:")


def test_the_caller_switches_groups_between_turns() -> None:
    groups = ToolGroups(GROUPS, active=["files"], manage=False)
    core = LoopCore(
        messages=[],
        toolset=Toolset(),
        strategy=default_strategy([groups]),
        options=LoopOptions(),
    )
    model = ScriptedModel(
        [call("read_file", {"path": "a"}), call("search_web", {"query": "q"}), reply("x")]
    )
    request = core.begin_iteration()
    assert request.tool_names == FILES
    (pending,) = core.receive_response(model.request(request))
    assert pending.prepared is not None
    core.receive_results([(pending.tool.to_result(pending.prepared.run_sync()), 1)])  # type: ignore[union-attr]
    groups.activate("web_duckduckgo")
    groups.deactivate("files")
    request = core.begin_iteration()
    assert request.tool_names == WEB
    events = core.trace.events_of(GroupsChanged)
    assert [e.source for e in events] == ["initial", "caller", "caller"]  # type: ignore[attr-defined]


def test_caller_mistakes_and_bad_definitions_raise_usage_errors() -> None:
    groups = research_groups()
    with pytest.raises(UsageError, match=r"needs permission\(s\) \['admin'\]"):
        groups.activate("admin")
    with pytest.raises(UsageError, match="unknown group or role 'x'"):
        groups.deactivate("x")
    with pytest.raises(UsageError, match="role 'web' maps to unknown group 'nope'"):
        ToolGroups(GROUPS, roles={"web": "nope"})
    with pytest.raises(UsageError, match="role 'files' has the name of a group"):
        ToolGroups(GROUPS, roles={"files": "admin"})
    with pytest.raises(UsageError, match="cannot use 'ghost' in active"):
        ToolGroups(GROUPS, active=["ghost"])
    with pytest.raises(UsageError, match="non-empty name"):
        ToolGroup(name="", tools=(read_file,))


def test_groups_sharing_a_tool_keep_it_while_one_is_active() -> None:
    shared = (
        ToolGroup(name="a", tools=(read_file, search_web)),
        ToolGroup(name="b", tools=(read_file,)),
    )
    groups = ToolGroups(shared, active=["a", "b"])
    model = ScriptedModel([call("deactivate_group", {"name": "a"}), reply("x")])
    result = run(model, "go", strategies=[groups])
    assert _offered(result) == [(*MANAGE, "read_file", "search_web"), (*MANAGE, "read_file")]


def test_phases_switch_tools_before_each_turn() -> None:
    model = ScriptedModel(
        [
            call("draft_plan", {"goal": "g"}),
            call("submit_plan"),
            call("run_step", {"step": "s"}),
            reply("x"),
        ]
    )
    result = run(model, "go", strategies=[plan_then_execute()])
    assert _offered(result) == [
        ("ask_user", "draft_plan", "submit_plan"),
        ("ask_user", "draft_plan", "submit_plan"),
        ("ask_user", "run_step"),
        ("ask_user", "run_step"),
    ]
    events = result.trace.events_of(PhaseChanged)
    assert [(e.from_phase, e.to_phase) for e in events] == [  # type: ignore[attr-defined]
        (None, "planning"),
        ("planning", "execution"),
    ]
    assert result.trace.iterations[2].changes[0].reason == "phase planning -> execution"
    assert result.state["phase"] == "execution"


def test_a_phase_function_returning_an_unknown_phase_fails_clearly() -> None:
    def wrong(context: InjectionContext) -> str:
        return "testing"

    phases = Phases({"planning": [draft_plan]}, phase=wrong)
    with pytest.raises(
        UsageError, match=r"returned 'testing' at iteration 1; phases: \['planning'\]"
    ):
        run(ScriptedModel([reply("x")]), "go", strategies=[phases])
    with pytest.raises(UsageError, match="at least one phase"):
        Phases({}, phase=wrong)
    with pytest.raises(UsageError, match="phase must be a function"):
        Phases({"a": []}, phase="a")  # type: ignore[arg-type]
    assert phase_after("x", before="a", after="b").__name__ == "phase_after_x"


def test_a_group_takes_tools_or_a_source_not_both() -> None:
    with pytest.raises(UsageError, match="give either tools or a source function"):
        ToolGroup(name="a", tools=(read_file,), source=lambda: [])
