"""The scripted model's complete step set: callable arguments, provider errors, usage,
refusals, finish reasons, strict/lenient and the same steps from YAML."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml

import harness
from harness import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ScriptedModel,
    ScriptError,
    Usage,
    call,
    calls,
    llm_tool,
    reply,
)
from harness.loop import ModelRequest
from harness.messages import ToolMessage
from harness.models import (
    RaiseStep,
    RefuseStep,
    output,
    raise_error,
    refuse,
    step_from_data,
    steps_from_data,
)


@llm_tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key}"


@llm_tool
def ping() -> str:
    """Ping."""
    return "pong"


# -- arguments as a callable of the request ------------------------------------------


def test_callable_arguments_see_offered_tools_and_history() -> None:
    seen: list[tuple[tuple[str, ...], int]] = []

    def args(request: ModelRequest) -> dict[str, Any]:
        seen.append((request.tool_names, len(request.messages)))
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return {"key": f"after-{last.content}"}
        return {"key": f"{len(request.tool_names)}-tools"}

    model = ScriptedModel([call("lookup", args), call("lookup", args), reply("done")])
    result = harness.run(model, "go", tools=[lookup, ping])
    calls_made = result.trace.calls
    assert json.loads(calls_made[0].arguments) == {"key": "2-tools"}
    assert json.loads(calls_made[1].arguments) == {"key": "after-value-of-2-tools"}
    assert seen == [(("lookup", "ping"), 1), (("lookup", "ping"), 3)]


def test_callable_arguments_may_return_raw_json_text() -> None:
    model = ScriptedModel([call("lookup", lambda r: '{"key": "raw"}'), reply("ok")])
    result = harness.run(model, "go", tools=[lookup])
    assert result.trace.calls[0].content == "value-of-raw"


# -- provider errors -------------------------------------------------------------------


def test_rate_limit_step_raises_with_status_retry_after_and_code() -> None:
    model = ScriptedModel([call("ping"), raise_error(status=429, retry_after=2.0)])
    with pytest.raises(RateLimited) as info:
        harness.run(model, "go", tools=[ping])
    err = info.value
    assert isinstance(err, ProviderError)
    assert (err.status, err.retry_after, err.code) == (429, 2.0, "rate_limit_exceeded")
    assert err.retryable
    assert "try again in 2s" in str(err)
    # the run state so far is attached: the first call happened
    assert err.trace is not None
    assert [c.name for c in err.trace.calls] == ["ping"]
    assert err.messages is not None
    assert len(err.messages) == 3


@pytest.mark.parametrize(
    ("step", "cls", "status", "code", "retryable"),
    [
        (raise_error(status=500), ProviderError, 500, "server_error", True),
        (raise_error("server_error", status=503), ProviderError, 503, "server_error", True),
        (raise_error("timeout"), ProviderTimeout, None, "timeout", True),
        (
            raise_error("context_length"),
            ContextLengthExceeded,
            400,
            "context_length_exceeded",
            False,
        ),
        (raise_error(status=403, code="forbidden"), ProviderError, 403, "forbidden", False),
        (raise_error("rate_limit"), RateLimited, 429, "rate_limit_exceeded", True),
    ],
)
def test_error_kinds(
    step: RaiseStep, cls: type[ProviderError], status: int | None, code: str, retryable: bool
) -> None:
    model = ScriptedModel([step])
    with pytest.raises(cls) as info:
        harness.run(model, "go")
    assert type(info.value) is cls
    assert info.value.status == status
    assert info.value.code == code
    assert info.value.retryable is retryable
    assert info.value.retry_after is None


def test_error_message_override_and_describe() -> None:
    step = raise_error(status=429, message="slow down")
    assert str(step.error()) == "slow down"
    assert step.describe() == "raise rate_limit 429"
    assert raise_error("timeout").describe() == "raise timeout"


def test_script_continues_after_a_provider_error() -> None:
    """A caller that retries after the error gets the next step (like a real retry)."""
    model = ScriptedModel([raise_error("rate_limit", retry_after=0.1), reply("second try")])
    with pytest.raises(RateLimited):
        harness.run(model, "go")
    assert harness.run(model, "go").output == "second try"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "give a kind"),
        ({"kind": "nope"}, "kind must be one of"),
        ({"status": 200}, "got 200"),
        ({"status": True}, "got True"),
        ({"status": 429, "retry_after": -1}, "got -1"),
        ({"kind": "timeout", "status": 504}, "a timeout has no HTTP status"),
    ],
)
def test_raise_error_validates_up_front(kwargs: dict[str, Any], fragment: str) -> None:
    kind = kwargs.pop("kind", None)
    with pytest.raises(ScriptError, match="raise_error") as info:
        raise_error(kind, **kwargs)
    assert fragment in str(info.value)


# -- usage -----------------------------------------------------------------------------


def test_usage_per_step_is_summed_in_the_result() -> None:
    model = ScriptedModel(
        [
            call("ping", usage={"input_tokens": 10, "output_tokens": 3}),
            calls(
                call("ping"),
                call("ping"),
                usage=Usage(input_tokens=20, output_tokens=7, total_tokens=27),
            ),
            reply("done", usage={"input_tokens": 30, "output_tokens": 5, "total_tokens": 40}),
        ]
    )
    result = harness.run(model, "go", tools=[ping])
    assert result.usage == Usage(input_tokens=60, output_tokens=15, total_tokens=80)


def test_steps_without_usage_count_zero() -> None:
    result = harness.run(ScriptedModel([reply("x")]), "go")
    assert result.usage == Usage()


@pytest.mark.parametrize(
    "bad",
    [{"input_tokens": -1}, {"prompt_tokens": 3}, {"input_tokens": "3"}, 5, {"output_tokens": True}],
)
def test_bad_usage_is_rejected(bad: Any) -> None:
    with pytest.raises(ScriptError, match="usage") as info:
        reply("x", usage=bad)
    assert repr(bad) in str(info.value) or "got" in str(info.value)


def test_usage_on_inner_calls_is_rejected() -> None:
    with pytest.raises(ScriptError, match=r"inner call\(s\) \['ping'\]"):
        calls(call("ping", usage={"input_tokens": 1}))


# -- refusal and finish reasons ----------------------------------------------------------


def test_refusal_is_a_message_with_refusal_and_stop() -> None:
    model = ScriptedModel([refuse("I can't help with that.", usage={"output_tokens": 4})])
    result = harness.run(model, "go")
    last = result.messages[-1]
    assert isinstance(last, harness.AssistantMessage)
    assert last.refusal == "I can't help with that."
    assert last.content is None
    assert result.trace.iterations[-1].finish_reason == "stop"
    assert result.output == "I can't help with that."
    assert result.usage.output_tokens == 4
    assert model.requests
    assert isinstance(model.steps[0], RefuseStep)


def test_default_refusal_text() -> None:
    assert "can't" in refuse().text


def test_length_reply_is_cut_off_text_with_finish_reason_length() -> None:
    model = ScriptedModel([reply("The answer is forty-", finish_reason="length")])
    result = harness.run(model, "go")
    assert result.output == "The answer is forty-"
    assert result.trace.iterations[-1].finish_reason == "length"


def test_finish_reasons_of_call_steps() -> None:
    model = ScriptedModel(
        [
            call("ping"),
            call("ping", finish_reason="stop"),
            calls(call("ping"), finish_reason="length"),
            output({"a": 1}, finish_reason="stop"),
        ]
    )
    result = harness.run(model, "go", tools=[ping])
    reasons = [it.finish_reason for it in result.trace.iterations]
    assert reasons == ["tool_calls", "stop", "length", "stop"]
    assert json.loads(result.output) == {"a": 1}


@pytest.mark.parametrize(
    "make",
    [
        lambda: reply("x", finish_reason="tool_calls"),  # type: ignore[arg-type]
        lambda: call("x", finish_reason="content_filter"),  # type: ignore[arg-type]
        lambda: output(1, finish_reason="bogus"),  # type: ignore[arg-type]
    ],
)
def test_bad_finish_reason_is_rejected(make: Any) -> None:
    with pytest.raises(ScriptError, match="finish_reason must be one of"):
        make()


# -- strict and lenient -------------------------------------------------------------------


def test_strict_by_default_rejects_a_tool_not_offered() -> None:
    model = ScriptedModel([call("ghost"), reply("x")])
    with pytest.raises(ScriptError, match="'ghost' matches no offered tool") as info:
        harness.run(model, "go", tools=[ping])
    assert "ping" in str(info.value)


def test_lenient_sends_the_unknown_name_and_the_loop_reports_it() -> None:
    model = ScriptedModel([call("ghost"), reply("x")], lenient=True)
    result = harness.run(model, "go", tools=[ping])
    record = result.trace.calls[0]
    assert record.name == "ghost"
    assert record.is_error
    assert record.error_kind == "unknown_tool"
    assert "ping" in record.content


def test_lenient_still_rejects_an_unmatched_glob() -> None:
    model = ScriptedModel([call("gho*"), reply("x")], lenient=True)
    with pytest.raises(ScriptError, match="glob 'gho\\*' matches no offered tool"):
        harness.run(model, "go", tools=[ping])


# -- async --------------------------------------------------------------------------------


def test_arun_plays_new_step_kinds() -> None:
    model = ScriptedModel([call("ping", usage={"input_tokens": 2}), raise_error(status=502)])
    with pytest.raises(ProviderError) as info:
        asyncio.run(harness.arun(model, "go", tools=[ping]))
    assert info.value.status == 502
    assert len(info.value.trace.calls) == 1


# -- YAML ------------------------------------------------------------------------------

SCRIPT = """
- call: lookup
  args: {key: a}
  usage: {input_tokens: 10, output_tokens: 2}
- calls:
    - call: ping
    - call: lookup
      args: {key: b}
  usage: {input_tokens: 12, output_tokens: 4}
  finish_reason: tool_calls
- raise: {status: 429, retry_after: 1.5}
- raise: timeout
- raise: 503
- raise: {kind: context_length, message: too long}
- refuse: no way
- reply: partial answ
  finish_reason: length
  usage: {output_tokens: 8}
- output: {total: 3}
  usage: {input_tokens: 1}
"""


def test_new_keys_load_from_yaml() -> None:
    steps = steps_from_data(yaml.safe_load(SCRIPT))
    assert [s.describe() for s in steps] == [
        "call 'lookup'",
        "calls ['ping', 'lookup']",
        "raise rate_limit 429",
        "raise timeout",
        "raise server_error 503",
        "raise context_length 400",
        "refuse 'no way'",
        "reply 'partial answ'",
        "output",
    ]
    first, multi, rate, _, _, ctx, refusal, cut, out = steps
    assert first == call("lookup", {"key": "a"}, usage={"input_tokens": 10, "output_tokens": 2})
    assert multi.usage == Usage(input_tokens=12, output_tokens=4, total_tokens=16)  # type: ignore[union-attr]
    assert isinstance(rate, RaiseStep)
    assert rate.retry_after == 1.5
    assert isinstance(ctx, RaiseStep)
    assert str(ctx.error()) == "too long"
    assert refusal == refuse("no way")
    assert cut == reply("partial answ", finish_reason="length", usage={"output_tokens": 8})
    assert out == output({"total": 3}, usage={"input_tokens": 1})


def test_yaml_script_runs_end_to_end() -> None:
    data = yaml.safe_load(
        """
        - call: lookup
          args: {key: a}
          usage: {input_tokens: 5, output_tokens: 1}
        - reply: done
          usage: {input_tokens: 7, output_tokens: 2}
        """
    )
    result = harness.run(ScriptedModel.from_data(data), "go", tools=[lookup])
    assert result.output == "done"
    assert result.usage == Usage(input_tokens=12, output_tokens=3, total_tokens=15)


def test_yaml_raise_step_raises_from_the_model() -> None:
    model = ScriptedModel.from_data(yaml.safe_load("- raise: {status: 429, retry_after: 3}"))
    with pytest.raises(RateLimited) as info:
        harness.run(model, "go")
    assert info.value.retry_after == 3.0


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"reply": "x", "usage": {"bogus": 1}}, "step 1: usage"),
        ({"reply": "x", "finish_reason": "weird"}, "finish_reason must be one of"),
        ({"reply": "x", "color": "red"}, "unknown keys ['color'] for 'reply'"),
        ({"refuse": "x", "finish_reason": "stop"}, "unknown keys ['finish_reason']"),
        ({"raise": [1, 2]}, "raise takes a kind"),
        ({"raise": {"status": 429, "after": 2}}, "raise: unknown keys ['after']"),
        ({"raise": "meteor"}, "step 1: raise_error(): kind must be one of"),
        ({"raise": 404, "usage": {}}, "no other keys"),
        ({"calls": [{"call": "a", "usage": {"input_tokens": 1}}]}, "unknown keys ['usage']"),
        ({"calls": ["a"]}, "step 1 call 1: expected a mapping"),
        ({"call": "a", "finish_reason": "content_filter"}, "finish_reason must be one of"),
    ],
)
def test_bad_yaml_steps_are_reported_with_their_position(data: Any, fragment: str) -> None:
    with pytest.raises(ScriptError) as info:
        step_from_data(data)
    assert fragment in str(info.value)


def test_scripted_model_accepts_mappings_with_new_keys() -> None:
    model = ScriptedModel([{"refuse": "nope"}])
    assert harness.run(model, "go").messages[-1].refusal == "nope"  # type: ignore[union-attr]
