"""Usage per model in the trace, and nested runs' usage accounted to the parent run."""

from __future__ import annotations

from typing import Any

from harness import ScriptedModel, call, reply, run
from harness.loop import InjectionContext, InjectionStrategy, Trace, Usage
from harness.loop._usage import UNKNOWN_MODEL, add_usage, sum_usage, total_usage
from harness.tools import Tool, ToolResult


def _u(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o}


def test_usage_is_kept_per_model_and_unnamed_models_are_unknown() -> None:
    by_model: dict[str, Usage] = {}
    add_usage(by_model, "a", Usage(input_tokens=1))
    add_usage(by_model, None, Usage(output_tokens=2))
    add_usage(by_model, "a", Usage(input_tokens=3, cache_read_tokens=1))
    assert by_model == {
        "a": Usage(input_tokens=4, cache_read_tokens=1),
        UNKNOWN_MODEL: Usage(output_tokens=2),
    }
    assert total_usage(by_model) == Usage(input_tokens=4, output_tokens=2, cache_read_tokens=1)
    assert sum_usage([]) == Usage()


def test_the_trace_records_usage_per_model_and_the_result_sums_it() -> None:
    model = ScriptedModel([call("noop", usage=_u(5, 1)), reply("ok", usage=_u(6, 2))], name="m1")

    def noop() -> str:
        """Do nothing."""
        return ""

    result = run(model, "go", tools=[noop])
    assert result.trace.usage == {"m1": Usage(input_tokens=11, output_tokens=3, total_tokens=14)}
    assert result.usage == total_usage(result.trace.usage)


def _child_trace(**usage: Usage) -> Trace:
    return Trace(usage=dict(usage))


def test_child_traces_of_a_result_are_accounted_once_and_hang_from_the_call() -> None:
    child = _child_trace(sub=Usage(input_tokens=7, output_tokens=3, total_tokens=10))
    handoff = Tool.from_schema(
        "handoff",
        "Hand off.",
        {"type": "object", "properties": {}},
        lambda arguments, context: ToolResult(content="ok", child_traces=(child,)),
    )
    model = ScriptedModel([call("handoff", usage=_u(1, 1)), reply("ok")], name="lead")
    result = run(model, "go", tools=[handoff])
    assert result.trace.children == [child]
    assert result.trace.calls[0].children == (child,)
    assert result.trace.usage["sub"] == Usage(input_tokens=7, output_tokens=3, total_tokens=10)
    assert result.usage == Usage(input_tokens=8, output_tokens=4, total_tokens=12)
    assert child.usage == {"sub": Usage(input_tokens=7, output_tokens=3, total_tokens=10)}


def test_strategies_see_the_run_id_and_the_live_usage() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    class Watch(InjectionStrategy):
        def before_turn(self, context: InjectionContext) -> None:
            seen.append((context.run_id, dict(context.usage)))

    model = ScriptedModel([call("noop", usage=_u(2, 1)), reply("ok")], name="m")

    def noop() -> str:
        """Do nothing."""
        return "x"

    result = run(model, "go", tools=[noop], strategies=[Watch()])
    (first_id, first), (second_id, second) = seen
    assert first_id == second_id != ""
    assert first == {} and second == {"m": Usage(input_tokens=2, output_tokens=1, total_tokens=3)}
    assert result.trace.calls[0].children == ()
