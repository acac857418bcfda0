"""Hidden parameters: the call context and presets never reach the model."""

import json
from typing import Any, Optional

import pytest

from harness._errors import ToolDefinitionError
from harness.tools import CallContext, PreparedCall, Tool, ToolResult, as_tool, llm_tool

API_KEY = "sk-live-0123456789abcdef"
TOKEN = "tok-9f8e7d6c5b4a"


def _prepare(tool: Tool, arguments: str, context: CallContext) -> PreparedCall:
    prepared = tool.prepare(arguments, context)
    assert isinstance(prepared, PreparedCall), prepared
    return prepared


def _visible(tool: Tool, *extra: Any) -> str:
    """Everything about a tool that could reach a model, a log line or a report."""
    return "\n".join(
        [
            json.dumps(tool.definition().to_data()),
            repr(tool),
            str(tool.parameters),
            *map(repr, extra),
        ]
    )


# -- CallContext --------------------------------------------------------------------------


def test_context_is_a_read_only_mapping() -> None:
    ctx = CallContext({"user_id": "u1", "token": TOKEN})
    assert dict(ctx) == {"user_id": "u1", "token": TOKEN}
    assert ctx["user_id"] == "u1"
    assert len(ctx) == 2
    assert "token" in ctx
    assert ctx.get("missing") is None
    with pytest.raises(TypeError):
        ctx["user_id"] = "u2"  # type: ignore[index]


def test_call_level_values_win_over_run_level_values() -> None:
    run = CallContext({"user_id": "u1", "tenant": "acme"}, run_id="run-1")
    call = run.for_call(
        tool_name="search", tool_call_id="call_1", iteration=3, values={"user_id": "u2"}
    )
    assert dict(call) == {"user_id": "u2", "tenant": "acme"}
    assert (call.tool_name, call.tool_call_id, call.iteration) == ("search", "call_1", 3)
    assert call.run_id == "run-1"
    assert call.state is run.state  # one blackboard for the whole run
    assert dict(run) == {"user_id": "u1", "tenant": "acme"}  # the run context is unchanged
    plain = run.for_call(tool_name="t", tool_call_id="c", iteration=1)
    assert dict(plain) == dict(run)


def test_loop_id_never_falls_back_to_the_run_id() -> None:
    assert CallContext(run_id="r1").loop_id == ""
    assert CallContext(run_id="r1", loop_id="L").loop_id == "L"
    assert CallContext({"loop_id": 7}, run_id="r1", loop_id="L").loop_id == "7"
    call = CallContext(loop_id="L").for_call(tool_name="t", tool_call_id="c", iteration=1)
    assert call.loop_id == "L"


def test_context_repr_shows_keys_but_never_values() -> None:
    ctx = CallContext({"token": TOKEN, "user": "alice-secret"}).for_call(
        tool_name="t", tool_call_id="c", iteration=2
    )
    text = repr(ctx)
    assert "token" in text
    assert "user" in text
    assert TOKEN not in text
    assert "alice-secret" not in text
    assert text == "CallContext(keys=[token, user], tool='t', iteration=2)"


# -- context injection --------------------------------------------------------------------


@llm_tool
def whoami(greeting: str, ctx: CallContext) -> str:
    """Greet the current user."""
    return f"{greeting} {ctx['user']} ({ctx.tool_call_id})"


def maybe_ctx(ctx: Optional[CallContext] = None) -> str:  # noqa: UP045
    """Optional context, typing spelling."""
    return "none" if ctx is None else str(ctx["user"])


def maybe_ctx_union(ctx: CallContext | None = None) -> str:
    """Optional context, union spelling."""
    return "none" if ctx is None else str(ctx["user"])


def test_context_parameter_is_hidden_and_injected() -> None:
    tool = as_tool(whoami)
    assert list(tool.parameters["properties"]) == ["greeting"]
    assert tool.parameters["required"] == ["greeting"]
    ctx = CallContext({"user": "alice"}).for_call(
        tool_name="whoami", tool_call_id="call_7", iteration=1
    )
    assert _prepare(tool, '{"greeting": "hi"}', ctx).run_sync() == "hi alice (call_7)"


@pytest.mark.parametrize("func", [maybe_ctx, maybe_ctx_union])
def test_optional_context_is_injected_too(func: Any) -> None:
    tool = as_tool(func)
    assert tool.parameters["properties"] == {}
    assert _prepare(tool, "{}", CallContext({"user": "bob"})).run_sync() == "bob"


def test_model_cannot_pass_the_context_itself() -> None:
    result = as_tool(whoami).prepare(
        '{"greeting": "hi", "ctx": {"user": "mallory"}}', CallContext()
    )
    assert isinstance(result, ToolResult)
    assert "argument 'ctx' is not a parameter of this tool" in result.content


def test_method_context_injection() -> None:
    class Account:
        @llm_tool
        def balance(self, ctx: CallContext) -> str:
            """Balance for the user."""
            return f"{ctx['user']}: 10"

    tool = as_tool(Account().balance)
    assert tool.parameters["properties"] == {}
    assert _prepare(tool, "", CallContext({"user": "carol"})).run_sync() == "carol: 10"


# -- presets ------------------------------------------------------------------------------


def fetch(url: str, api_key: str, timeout: float = 5.0) -> str:
    """Fetch a URL."""
    return f"{url}|{api_key[:3]}|{timeout}"


def test_as_tool_presets_are_bound_and_hidden() -> None:
    tool = as_tool(fetch, presets={"api_key": API_KEY})
    assert list(tool.parameters["properties"]) == ["url", "timeout"]
    assert tool.parameters["required"] == ["url"]
    prepared = _prepare(tool, '{"url": "https://x"}', CallContext())
    assert prepared.run_sync() == "https://x|sk-|5.0"
    assert API_KEY not in _visible(tool, prepared, tool.presets)
    assert "1 preset value(s) hidden" in repr(tool)


def test_decorated_function_presets() -> None:
    @llm_tool(name="fetch_page")
    def fetch_page(url: str, api_key: str) -> str:
        """Fetch."""
        return api_key

    tool = as_tool(fetch_page, presets={"api_key": API_KEY})
    assert tool.name == "fetch_page"
    assert list(tool.parameters["properties"]) == ["url"]
    assert _prepare(tool, '{"url": "u"}', CallContext()).run_sync() == API_KEY


def test_with_presets_is_a_copy() -> None:
    original = as_tool(fetch)
    bound = original.with_presets(api_key=API_KEY)
    assert "api_key" in original.parameters["properties"]
    assert "api_key" not in bound.parameters["properties"]
    more = bound.with_presets(timeout=1.0)
    assert list(more.parameters["properties"]) == ["url"]
    assert _prepare(more, '{"url": "u"}', CallContext()).run_sync() == "u|sk-|1.0"
    assert _prepare(bound, '{"url": "u"}', CallContext()).run_sync() == "u|sk-|5.0"
    # as_tool on an existing tool applies presets through with_presets
    rebound = as_tool(original, presets={"api_key": "sk-abcdefgh1234"})
    assert list(rebound.parameters["properties"]) == [
        "url",
        "timeout",
    ]


def test_model_cannot_override_a_preset() -> None:
    tool = as_tool(fetch, presets={"api_key": API_KEY})
    result = tool.prepare('{"url": "u", "api_key": "attacker"}', CallContext())
    assert isinstance(result, ToolResult)
    assert "argument 'api_key' is not a parameter of this tool" in result.content
    assert API_KEY not in result.content


def test_presets_need_a_function_tool() -> None:
    schema_tool = Tool.from_schema("s", "S.", {"type": "object"}, lambda a: a)
    with pytest.raises(ToolDefinitionError, match="presets need a function tool"):
        schema_tool.with_presets(api_key=API_KEY)


# -- secrets never leak -------------------------------------------------------------------


def leaky(query: str, api_key: str, ctx: CallContext) -> str:
    """A tool whose errors mention its secrets."""
    raise PermissionError(f"key {api_key} refused for token {ctx['token']} on {query}")


def test_secrets_never_appear_in_definitions_reprs_or_error_messages() -> None:
    tool = as_tool(leaky, presets={"api_key": API_KEY})
    ctx = CallContext({"token": TOKEN}).for_call(tool_name="leaky", tool_call_id="c1", iteration=1)
    prepared = _prepare(tool, '{"query": "orders"}', ctx)
    with pytest.raises(PermissionError) as info:
        prepared.run_sync()
    result = prepared.error_result(info.value)
    visible = _visible(tool, ctx, prepared, result.content)
    for secret in (API_KEY, TOKEN):
        assert secret not in visible
        assert secret not in result.content
    assert result.content == (
        "Tool 'leaky' failed: PermissionError: key [hidden] refused for token [hidden] on orders"
    )
    assert result.exception is info.value  # the original stays available for the trace
    # without the context only presets can be scrubbed
    assert API_KEY not in tool.error_result(info.value).content
    assert TOKEN in tool.error_result(info.value).content


def test_invalid_argument_messages_do_not_show_presets_or_context() -> None:
    tool = as_tool(leaky, presets={"api_key": API_KEY})
    result = tool.prepare('{"query": 1}', CallContext({"token": TOKEN}))
    assert isinstance(result, ToolResult)
    assert "argument 'query'" in result.content
    assert API_KEY not in result.content
    assert TOKEN not in result.content
