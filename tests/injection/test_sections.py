"""Progressive disclosure of prompt sections: rendering, read_section, restart fallback."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from harness import (
    Event,
    ModelCapabilities,
    ScriptedModel,
    StrategyWarning,
    SystemMessage,
    ToolsInjected,
    UsageError,
    UserMessage,
    VisibilityExpansionRequired,
    call,
    calls,
    llm_tool,
    reply,
    run,
)
from harness.injection import (
    SUMMARY_SUFFIX,
    PromptTemplate,
    RunRestarted,
    Section,
    SectionDisclosure,
    SectionSession,
    Visibility,
    arun_with_sections,
    run_with_sections,
)
from harness.models import Step

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.documents import static_model, support_sections, support_template  # noqa: E402

REFUND_SCRIPT: list[Step] = [
    call("read_section", {"key": "orders"}),
    call("lookup_order", {"order_id": "A1"}),
    call("refund_order", {"order_id": "A1"}),
    reply("Order A1 is refunded."),
]


def _session(result: object) -> SectionSession:
    session = result.state["harness.sections"]  # type: ignore[attr-defined]
    assert isinstance(session, SectionSession)
    return session


# -- rendering ------------------------------------------------------------------------------


def test_a_summarised_section_renders_its_summary_and_the_exact_suffix() -> None:
    text = support_template().render()
    suffix = (
        '[This section is summarized. To view full content, call `read_section` with key "orders".]'
    )
    assert f"# Orders\n\nHow to look up and refund orders.\n---\n{suffix}" in text
    assert SUMMARY_SUFFIX.format(key="orders") == suffix
    assert "You are the support agent of ACME." in text  # $company filled in
    assert "Refund policy" not in text  # the child is hidden under the summary
    assert "tool" not in text.lower().replace("look up", "")  # never says tools are attached


@llm_tool
def _ping() -> str:
    """Ping."""
    return "pong"


def test_the_suffix_is_the_same_with_or_without_tools() -> None:
    bare = PromptTemplate([Section(key="a", template="x", summary="s", visibility="summary")])
    tooled = PromptTemplate(
        [Section(key="a", template="x", summary="s", visibility=Visibility.SUMMARY, tools=(_ping,))]
    )
    assert bare.render() == tooled.render() == "# a\n\ns\n---\n" + SUMMARY_SUFFIX.format(key="a")


def test_full_rendering_nests_headings_and_keeps_summarised_children_summarised() -> None:
    template = PromptTemplate(
        [
            Section(
                key="top",
                title="Top",
                template="top text",
                children=(
                    Section(
                        key="kid",
                        template="kid text",
                        summary="kid summary",
                        visibility=Visibility.SUMMARY,
                    ),
                ),
            )
        ]
    )
    assert template.render() == (
        "# Top\n\ntop text\n\n## kid\n\nkid summary\n---\n" + SUMMARY_SUFFIX.format(key="kid")
    )
    assert template.render({"kid": "full"}) == "# Top\n\ntop text\n\n## kid\n\nkid text"
    assert template.render_section("kid", {"kid": Visibility.FULL}) == "## kid\n\nkid text"
    assert template.summarized() == ["kid"]
    assert template.keys == ("top", "kid")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"key": " "}, "key must be a non-empty string"),
        ({"visibility": "folded"}, "visibility must be 'summary' or 'full'"),
        ({"visibility": Visibility.SUMMARY}, "needs a summary text"),
        ({"children": ("text",)}, "children must be Section objects"),
    ],
)
def test_bad_sections_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Section(**{"key": "k", "template": "t", **kwargs})  # type: ignore[arg-type]


def test_bad_templates_are_rejected() -> None:
    one = Section(key="k", template="t")
    with pytest.raises(UsageError, match=r"duplicates \['k'\]"):
        PromptTemplate([one, Section(key="p", template="t", children=(one,))])
    with pytest.raises(UsageError, match="takes Section objects"):
        PromptTemplate(["k"])  # type: ignore[list-item]
    with pytest.raises(KeyError, match="no section 'x'"):
        support_template().section("x")


# -- read_section with a dynamic model ------------------------------------------------------


def test_read_section_injects_the_tools_of_the_section_and_its_descendants() -> None:
    result = run_with_sections(
        ScriptedModel(list(REFUND_SCRIPT)), "Refund A1", sections=support_template()
    )
    offered = [it.offered for it in result.trace]
    assert offered[0] == ("read_section", "search_faq")
    assert offered[1] == ("read_section", "search_faq", "lookup_order", "refund_order")
    content = result.trace.calls[0].content
    assert content.startswith("# Orders\n\nLook orders up by id")
    assert "## Refund policy\n\nRefund delivered orders only." in content
    injected = [e for e in result.trace.events_of(ToolsInjected) if e.section_key == "orders"]  # type: ignore[attr-defined]
    assert [e.tool_names for e in injected] == [("lookup_order", "refund_order")]  # type: ignore[attr-defined]
    assert result.trace.changes[-1].reason == "read_section opened section 'orders'"
    session = _session(result)
    assert session.overrides == {"orders": Visibility.FULL}
    assert (session.tools_injected, session.dynamic_expansions, session.restarts) == (2, 1, 0)


def test_unknown_key_names_the_key_and_lists_valid_keys() -> None:
    model = ScriptedModel([call("read_section", {"key": "ordrs"}), reply("x")])
    result = run_with_sections(model, "go", sections=support_template())
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "unknown_section"
    assert record.content == (
        "Unknown section key 'ordrs'. Valid keys: 'role', 'faq', 'orders', 'refunds', 'shipping'."
    )
    assert result.trace.iterations[1].offered == ("read_section", "search_faq")


def test_already_expanded_returns_content_without_tools_and_hidden_names_its_parent() -> None:
    model = ScriptedModel(
        [
            call("read_section", {"key": "refunds"}),
            call("read_section", {"key": "faq"}),
            reply("x"),
        ]
    )
    result = run_with_sections(model, "go", sections=support_template())
    hidden, faq = result.trace.calls
    assert hidden.is_error and "inside the summarised section 'orders'" in hidden.content
    assert not faq.is_error and faq.content == (
        "Section is already expanded.\n\n# FAQ\n\nAnswer common questions."
    )
    # the section tools are set up before the first request: offered from the start
    assert result.trace.injected == []
    assert {"read_section", "search_faq"} <= set(result.trace.offered_at_start)
    assert result.trace.iterations[0].set_up == ("read_section", "search_faq")


def test_duplicate_tool_names_are_skipped_with_a_warning_event() -> None:
    model = ScriptedModel([call("read_section", {"key": "shipping"}), reply("x")])
    result = run_with_sections(model, "go", strategies=[support_sections(duplicate=True)])
    assert result.trace.iterations[-1].offered == ("read_section", "search_faq", "track_parcel")
    (warning,) = result.trace.events_of(StrategyWarning)
    assert "tool 'search_faq' is already offered" in warning.message  # type: ignore[attr-defined]


def test_a_tool_already_offered_at_the_start_is_skipped_with_a_warning() -> None:
    from fixtures.documents import search_faq

    result = run_with_sections(
        ScriptedModel([reply("x")]), "go", sections=support_template(), tools=[search_faq]
    )
    (warning,) = result.trace.events_of(StrategyWarning)
    assert "section 'faq': tool 'search_faq' is already offered" in warning.message  # type: ignore[attr-defined]


def test_opening_the_last_summary_removes_read_section() -> None:
    @llm_tool
    def secret() -> str:
        """A tool of the only summarised section."""
        return "s"

    template = PromptTemplate(
        [
            Section(
                key="only",
                template="all",
                summary="some",
                visibility=Visibility.SUMMARY,
                tools=(secret,),
            )
        ]
    )
    model = ScriptedModel(
        [
            calls(call("read_section", {"key": "only"}), call("read_section", {"key": "only"})),
            reply("x"),
        ]
    )
    result = run_with_sections(model, "go", sections=template)
    assert [it.offered for it in result.trace] == [("read_section",), ("secret",)]
    assert _session(result).dynamic_expansions == 1  # the second call in the turn changed nothing


# -- the restart fallback -------------------------------------------------------------------


def test_same_scenario_dynamic_and_static_models_end_the_same_way() -> None:
    dynamic = run_with_sections(
        ScriptedModel(list(REFUND_SCRIPT)), "Refund A1", sections=support_template()
    )
    static = run_with_sections(
        static_model(list(REFUND_SCRIPT)), "Refund A1", sections=support_template()
    )
    assert _session(dynamic).overrides == _session(static).overrides == {"orders": Visibility.FULL}
    assert dynamic.trace.iterations[-1].offered == static.trace.iterations[-1].offered
    assert dynamic.output == static.output == "Order A1 is refunded."
    assert (dynamic.trace.restarts, static.trace.restarts) == (0, 1)
    assert static.trace.to_dict()["restarts"] == 1
    (restarted,) = static.trace.events_of(RunRestarted)
    assert restarted.section_keys == ("orders",)  # type: ignore[attr-defined]
    system = static.messages[0]
    assert isinstance(system, SystemMessage)
    assert "## Refund policy" in system.content and '"orders"' not in system.content
    assert (_session(static).restarts, _session(static).dynamic_expansions) == (1, 0)
    assert static.trace.iterations[0].offered == dynamic.trace.iterations[-1].offered


def test_plain_run_with_a_static_model_raises_visibility_expansion_required() -> None:
    model = static_model(list(REFUND_SCRIPT))
    with pytest.raises(VisibilityExpansionRequired) as info:
        run(model, "Refund", strategies=[support_sections()])
    error = info.value
    assert error.overrides == {"orders": "full"}
    assert error.section_keys == ("orders",)
    assert "does not accept new tools" in error.reason
    assert error.trace is not None and len(error.trace) == 1


def test_two_sections_opened_in_one_turn_restart_once() -> None:
    script: list[Step] = [
        calls(call("read_section", {"key": "orders"}), call("read_section", {"key": "shipping"})),
        reply("x"),
    ]
    seen: list[Event] = []
    result = run_with_sections(
        static_model(script), "go", sections=support_template(), observers=[seen.append]
    )
    assert result.trace.restarts == 1
    assert result.trace.iterations[0].offered == (
        "search_faq",
        "lookup_order",
        "refund_order",
        "track_parcel",
    )
    (restarted,) = [e for e in seen if isinstance(e, RunRestarted)]
    assert restarted.section_keys == (
        "orders",
        "shipping",
    )


def _notes_template(*, with_faq: bool = False) -> PromptTemplate:
    sections = [
        Section(key="notes", template="long notes", summary="short", visibility=Visibility.SUMMARY)
    ]
    if with_faq:
        sections.append(
            Section(key="faq", template="the faq", summary="faq", visibility=Visibility.SUMMARY)
        )
    return PromptTemplate(sections)


def test_the_last_summary_without_tools_restarts_a_static_model_like_the_dynamic_path() -> None:
    # Regression (found by harness fuzz -u sections --seed 11): reading the only summarised
    # section, which has no tools, left read_section offered on a static model while the
    # dynamic path removed it. Retiring read_section is a toolset change: it restarts.
    script: list[Step] = [call("read_section", {"key": "notes"}), reply("x")]
    static = run_with_sections(static_model(list(script)), "go", sections=_notes_template())
    dynamic = run_with_sections(ScriptedModel(list(script)), "go", sections=_notes_template())
    assert dynamic.trace.iterations[-1].offered == static.trace.iterations[-1].offered == ()
    assert _session(static).overrides == _session(dynamic).overrides == {"notes": Visibility.FULL}
    assert (static.trace.restarts, dynamic.trace.restarts) == (1, 0)
    assert (_session(static).restarts, _session(static).dynamic_expansions) == (1, 0)
    assert (_session(dynamic).restarts, _session(dynamic).dynamic_expansions) == (0, 1)
    (restarted,) = static.trace.events_of(RunRestarted)
    assert restarted.section_keys == ("notes",)  # type: ignore[attr-defined]
    assert "which changes the tools offered" in restarted.reason  # type: ignore[attr-defined]
    assert static.output == dynamic.output == "x"


def test_a_section_without_tools_opens_without_a_restart_while_others_stay_summarised() -> None:
    script: list[Step] = [call("read_section", {"key": "notes"}), reply("x")]
    template = _notes_template(with_faq=True)
    static = run_with_sections(static_model(list(script)), "go", sections=template)
    dynamic = run_with_sections(ScriptedModel(list(script)), "go", sections=template)
    assert static.trace.restarts == dynamic.trace.restarts == 0
    assert static.trace.iterations[-1].offered == ("read_section",)  # faq is still summarised
    assert dynamic.trace.iterations[-1].offered == ("read_section",)
    assert _session(static).overrides == _session(dynamic).overrides == {"notes": Visibility.FULL}


def test_opening_both_tool_less_sections_in_one_turn_restarts_once_on_a_static_model() -> None:
    script: list[Step] = [
        calls(call("read_section", {"key": "notes"}), call("read_section", {"key": "faq"})),
        reply("x"),
    ]
    template = _notes_template(with_faq=True)
    static = run_with_sections(static_model(list(script)), "go", sections=template)
    dynamic = run_with_sections(ScriptedModel(list(script)), "go", sections=template)
    assert static.trace.restarts == 1
    assert static.trace.iterations[-1].offered == dynamic.trace.iterations[-1].offered == ()
    full = {"notes": Visibility.FULL, "faq": Visibility.FULL}
    assert _session(static).overrides == _session(dynamic).overrides == full


def test_out_of_restarts_re_raises() -> None:
    with pytest.raises(VisibilityExpansionRequired):
        run_with_sections(
            static_model(list(REFUND_SCRIPT)), "go", sections=support_template(), max_restarts=0
        )


def test_the_async_outer_loop_restarts_too() -> None:
    async def main() -> object:
        return await arun_with_sections(
            static_model(list(REFUND_SCRIPT)), "Refund", strategies=[support_sections()]
        )

    result = asyncio.run(main())
    assert result.trace.restarts == 1  # type: ignore[attr-defined]
    assert result.output == "Order A1 is refunded."  # type: ignore[attr-defined]


def test_message_prompts_state_and_the_render_helper() -> None:
    caller_state: dict[str, object] = {"user": "ada"}
    disclosure = support_sections()
    result = run_with_sections(
        static_model(list(REFUND_SCRIPT)),
        [UserMessage(content="Refund A1")],
        strategies=[disclosure],
        state=caller_state,
    )
    first = result.messages[0]
    assert isinstance(first, SystemMessage) and "## Refund policy" in first.content
    assert caller_state["user"] == "ada" and isinstance(
        caller_state["harness.sections"], SectionSession
    )
    assert "## Refund policy" in disclosure.render(caller_state)
    assert "## Refund policy" not in disclosure.render()


def test_run_with_sections_usage_errors() -> None:
    model = ScriptedModel([reply("x")])
    with pytest.raises(UsageError, match="exactly one SectionDisclosure"):
        run_with_sections(model, "go")
    with pytest.raises(UsageError, match="exactly one SectionDisclosure"):
        run_with_sections(model, "go", sections=support_template(), strategies=[support_sections()])
    with pytest.raises(UsageError, match="max_restarts must be an int >= 0"):
        run_with_sections(model, "go", sections=support_template(), max_restarts=-1)
    with pytest.raises(UsageError, match="pass system= only with a text prompt"):
        run_with_sections(
            model, [UserMessage(content="x")], sections=support_template(), system="s"
        )


def test_capabilities_reach_the_strategies() -> None:
    seen: list[bool] = []

    class Probe(SectionDisclosure):
        def before_turn(self, context):  # type: ignore[no-untyped-def]
            seen.append(context.capabilities.supports_dynamic_tools)
            return super().before_turn(context)

    model = ScriptedModel([reply("x")])
    model.capabilities = ModelCapabilities(supports_dynamic_tools=False)
    run(model, "go", strategies=[Probe(support_template())])
    run(ScriptedModel([reply("x")]), "go", strategies=[Probe(support_template())])
    assert seen == [False, True]


def test_a_section_is_built_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        Section("orders", "Orders: {orders}")  # type: ignore[misc]
    assert Section(key="orders", template="Orders").key == "orders"


def test_read_section_without_a_result_changes_nothing() -> None:
    from harness.loop import InjectionContext

    strategy = support_sections()
    context = InjectionContext(
        history=[], offered=(), tools={}, iteration=1, state={}, tool=strategy.read_section
    )
    assert strategy.on_tool_result(context) is None
