"""Tool decorators: delegating base, one-shot per loop, artifact sinking."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from harness import (
    CallContext,
    CompositeSink,
    DelegatingTool,
    ListSink,
    OneShotTool,
    RetryableToolError,
    ScriptedModel,
    SinkingTool,
    StateSink,
    ToolResult,
    UsageError,
    arun,
    as_tool,
    call,
    calls,
    llm_tool,
    one_shot,
    reply,
    run,
    sink_artifacts,
)
from harness.tools import ArtifactSink, PreparedCall, artifacts_in


@dataclasses.dataclass
class Report:
    title: str


@llm_tool
def greet(name: str, context: CallContext) -> str:
    """Greet someone."""
    return f"{context.get('greeting', 'hi')} {name}"


@llm_tool
async def agreet(name: str) -> str:
    """Greet asynchronously."""
    await asyncio.sleep(0)
    return f"hi {name}"


@llm_tool
def make_reports(count: int) -> list[Any]:
    """Some reports and a note."""
    return [*(Report(f"r{n}") for n in range(count)), "note", None]


@llm_tool
def fail() -> str:
    """Fails."""
    raise RuntimeError("nope")


class Shout(DelegatingTool):
    """Upper-cases results."""

    def after(self, result: ToolResult, context: CallContext) -> ToolResult:
        return result.with_content(result.content.upper())


class Deny(DelegatingTool):
    """Answers without running the inner tool."""

    def before(self, context: CallContext) -> ToolResult | None:
        return ToolResult.error("denied", kind="denied")


def run_direct(tool: Any, arguments: str, context: CallContext) -> Any:
    prepared = tool.prepare(arguments, context)
    assert isinstance(prepared, PreparedCall)
    return tool.to_result(prepared.run_sync())


# -- delegating base -----------------------------------------------------------------


def test_delegating_tool_is_offered_like_the_inner_tool_and_unwraps() -> None:
    inner = as_tool(greet)
    wrapped = Shout.wrap(greet)
    assert wrapped.definition() == inner.definition()
    assert wrapped.unwrap().definition() == inner.definition()
    chained = Shout.wrap(one_shot(greet))
    assert [type(t).__name__ for t in chained.layers] == ["Shout", "OneShotTool", "Tool"]
    assert chained.innermost().name == "greet"
    with pytest.raises(UsageError, match="wraps nothing"):
        DelegatingTool(name="x", description="", parameters={}, handler=print).unwrap()


def test_delegating_tool_forwards_the_call_context_in_a_run() -> None:
    model = ScriptedModel([call("greet", {"name": "Ada"}), reply("ok")])
    result = run(model, "go", tools=[Shout.wrap(greet)], context={"greeting": "hello"})
    assert result.trace.calls[0].content == "HELLO ADA"


def test_wrapper_can_answer_without_running_and_bad_arguments_pass_through() -> None:
    model = ScriptedModel([call("greet", {"name": "x"}), call("greet", {"nom": "x"}), reply("ok")])
    result = run(model, "go", tools=[Deny.wrap(greet)])
    first, second = result.trace.calls
    assert first.content == "denied" and first.error_kind == "denied"
    assert second.error_kind == "invalid_arguments"


def test_copies_keep_the_wrapper_and_update_the_inner_tool() -> None:
    wrapped = Shout.wrap(greet).with_name("salute").with_description("Salute.")
    assert isinstance(wrapped, Shout)
    assert wrapped.unwrap().name == "salute"
    assert wrapped.definition().description == "Salute."
    preset = Shout.wrap(greet).with_presets(name="Bobby Tables")
    assert isinstance(preset, Shout)
    assert "name" not in preset.parameters["properties"]
    assert run_direct(preset, "{}", CallContext()).content == "HI BOBBY TABLES"


def test_async_inner_tool_runs_in_both_drivers() -> None:
    tool = Shout.wrap(agreet)
    model = ScriptedModel([call("agreet", {"name": "Ada"}), reply("ok")])
    assert run(model, "go", tools=[tool]).trace.calls[0].content == "HI ADA"
    model = ScriptedModel([call("agreet", {"name": "Bo"}), reply("ok")])
    result = asyncio.run(arun(model, "go", tools=[one_shot(tool)]))
    assert result.trace.calls[0].content == "HI BO"


# -- one-shot ------------------------------------------------------------------------


def test_one_shot_runs_once_per_loop_with_advice() -> None:
    runs: list[str] = []

    @llm_tool
    def load_guide() -> str:
        """Load the guide."""
        runs.append("x")
        return "the guide"

    tool = one_shot(load_guide, advice="Use the guide above.")
    for _ in range(2):  # two runs = two loops: each runs it once
        model = ScriptedModel([call("load_guide"), call("load_guide"), reply("ok")])
        result = run(model, "go", tools=[tool])
        first, second = result.trace.calls
        assert first.content == "the guide"
        assert second.content == (  # seed 003's text, then the advice
            "ALREADY LOADED. The body of 'load_guide' was returned earlier in this turn "
            "\N{EM DASH} read it from your conversation history above. "
            "Do not call this tool again. "
            "Use the guide above."
        )
        assert not second.is_error
        assert [r.tool_names for r in model.requests] == [("load_guide",)] * 3
    assert runs == ["x", "x"]


def test_one_shot_loop_identity_comes_from_the_context() -> None:
    tool = one_shot(greet)
    for _ in range(2):
        model = ScriptedModel([call("greet", {"name": "a"}), reply("ok")])
        result = run(model, "go", tools=[tool], context={"loop_id": "shared"})
    assert result.trace.calls[0].content.startswith("ALREADY LOADED")
    assert "The body of 'greet' was returned earlier" in result.trace.calls[0].content
    assert tool.loaded_in("shared")


def test_one_shot_without_loop_id_passes_through() -> None:
    tool = one_shot(greet)
    for _ in range(2):
        assert run_direct(tool, '{"name": "x"}', CallContext()).content == "hi x"
    for _ in range(2):  # a run id alone is not a loop id: no fallback to it
        assert run_direct(tool, '{"name": "x"}', CallContext(run_id="r1")).content == "hi x"
    assert not tool.loaded_in("r1")


def test_one_shot_without_advice_answers_the_seed_text_naming_the_tool() -> None:
    model = ScriptedModel([call("greet", {"name": "a"}), call("greet", {"name": "a"}), reply("ok")])
    result = run(model, "go", tools=[one_shot(greet)])
    assert result.trace.calls[1].content == (
        "ALREADY LOADED. The body of 'greet' was returned earlier in this turn "
        "\N{EM DASH} read it from your conversation history above. Do not call this tool again."
    )


def test_one_shot_names_the_tool_as_the_model_sees_it() -> None:
    renamed = one_shot(as_tool(greet, name="say_hello"), advice="Say hello yourself.")
    model = ScriptedModel([call("say_hello", {"name": "a"})] * 2 + [reply("ok")])
    second = run(model, "go", tools=[renamed]).trace.calls[1].content
    assert second.startswith("ALREADY LOADED. The body of 'say_hello' was returned")
    assert second.endswith("Do not call this tool again. Say hello yourself.")


def test_one_shot_parallel_calls_run_once() -> None:
    runs: list[int] = []

    @llm_tool
    def slow() -> str:
        """Slow."""
        runs.append(1)
        return "done"

    model = ScriptedModel([calls(call("slow"), call("slow"), call("slow")), reply("ok")])
    result = run(model, "go", tools=[one_shot(slow)])
    assert runs == [1]
    assert sorted(c.content[:14] for c in result.trace.calls) == [
        "ALREADY LOADED",
        "ALREADY LOADED",
        "done",
    ]


def test_one_shot_failures_do_not_count() -> None:
    attempts: list[int] = []

    @llm_tool
    def flaky() -> str:
        """Fails the first time."""
        attempts.append(1)
        if len(attempts) == 1:
            raise RetryableToolError("again")
        if len(attempts) == 2:
            return ToolResult.error("soft failure")  # type: ignore[return-value]
        return "loaded"

    model = ScriptedModel([call("flaky"), call("flaky"), call("flaky"), reply("ok")])
    result = run(model, "go", tools=[one_shot(flaky)], tool_retries=0)
    contents = [c.content for c in result.trace.calls]
    assert contents[0].startswith("Tool 'flaky' failed: RetryableToolError")
    assert contents[1] == "soft failure" and contents[2] == "loaded"


def test_one_shot_bad_advice() -> None:
    with pytest.raises(UsageError, match="advice must be a non-empty text"):
        one_shot(greet, advice=3)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="advice must be a non-empty text"):
        one_shot(greet, advice="  ")
    assert isinstance(one_shot(greet), OneShotTool)


# -- artifact sinking ----------------------------------------------------------------


def test_artifacts_in() -> None:
    assert artifacts_in(None) == []
    assert artifacts_in((1, None, 2)) == [1, 2]
    assert artifacts_in({"a": 1}) == [{"a": 1}]


def test_list_sink_with_type_filter_and_transform() -> None:
    titles = ListSink(types=(Report,), transform=lambda r: r.title)
    everything = ListSink()
    tool = sink_artifacts(make_reports, CompositeSink([titles, everything]))
    assert isinstance(tool, SinkingTool)
    model = ScriptedModel([call("make_reports", {"count": 2}), call("fail"), reply("ok")])
    run(model, "go", tools=[tool, sink_artifacts(fail, everything)])
    assert titles.items == ["r0", "r1"]
    assert [type(x).__name__ for x in everything.items] == ["Report", "Report", "str"]
    assert repr(titles) == "ListSink(2 items)"


def test_state_sink_collects_into_the_runs_shared_state() -> None:
    sink = StateSink("reports", types=(Report,))
    model = ScriptedModel(
        [call("make_reports", {"count": 1}), call("make_reports", {"count": 2}), reply("ok")]
    )
    result = run(model, "go", tools=[sink_artifacts(make_reports, sink)])
    assert [r.title for r in result.state["reports"]] == ["r0", "r0", "r1"]


def test_composite_sink_applies_its_own_filter_first() -> None:
    inner = ListSink()
    outer = CompositeSink([inner], types=(str,), transform=str.upper)
    tool = sink_artifacts(make_reports, outer)
    run_direct(tool, '{"count": 1}', CallContext(run_id="r"))
    assert inner.items == ["NOTE"]


def test_state_sink_refuses_a_non_list_slot() -> None:
    tool = sink_artifacts(make_reports, StateSink("slot"))
    model = ScriptedModel([call("make_reports", {"count": 1}), reply("ok")])
    result = run(model, "go", tools=[tool], state={"slot": "taken"})
    assert "state['slot'] holds a str, not a list" in result.trace.calls[0].content


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ListSink(types=("Report",)), "types must be classes"),  # type: ignore[arg-type]
        (lambda: ListSink(transform=3), "transform must be a function"),  # type: ignore[arg-type]
        (lambda: CompositeSink([]), "one or more ArtifactSink"),
        (lambda: CompositeSink([[]]), "one or more ArtifactSink"),  # type: ignore[list-item]
        (lambda: StateSink(""), "key must be a non-empty text"),
        (lambda: sink_artifacts(greet, []), "sink must be an ArtifactSink"),  # type: ignore[arg-type]
    ],
)
def test_sink_bad_input(build: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build()


def test_base_sink_put_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        ArtifactSink().offer(1, CallContext())


def test_async_one_shot_second_call_and_failure_release() -> None:
    attempts: list[int] = []

    @llm_tool
    async def aload() -> str:
        """Async load that fails once."""
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first time fails")
        return "loaded"

    tool = one_shot(aload)
    model = ScriptedModel([call("aload"), call("aload"), call("aload"), reply("ok")])
    result = asyncio.run(arun(model, "go", tools=[tool]))
    contents = [c.content for c in result.trace.calls]
    assert contents[0].startswith("Tool 'aload' failed: RuntimeError")
    assert contents[1] == "loaded"
    assert contents[2].startswith("ALREADY LOADED")
    assert len(attempts) == 2


def test_plain_delegating_tool_changes_nothing_and_sink_none_passes() -> None:
    tool = DelegatingTool.wrap(greet)
    assert run_direct(tool, '{"name": "x"}', CallContext()).content == "hi x"
    sinking = SinkingTool.wrap(make_reports)  # no sink configured
    assert run_direct(sinking, '{"count": 1}', CallContext()).value[0] == Report("r0")
