"""Hypothesis strategies for the format tests: neutral requests and responses that every
wire format can carry, and what each format gives back for them."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import strategies as st

from harness.loop import ModelRequest, ModelResponse, ModelSettings, Usage
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.tools import ToolChoice, ToolDefinition

FORMATS = ("openai-chat", "openai-responses", "anthropic-messages")

# valid Unicode (no lone surrogates), no leading/trailing blanks lost by any format
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=16)
_NAMES = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,11}", fullmatch=True)
_ARGUMENTS = st.dictionaries(
    st.text(min_size=1, max_size=4), st.integers() | st.booleans() | _TEXT, max_size=3
).map(json.dumps)  # json.dumps' own spacing: what every format reads back verbatim


@st.composite
def histories(draw: st.DrawFn, *, tool_names: tuple[str, ...] = ("f", "g")) -> list[Message]:
    """A valid conversation: an optional system prompt, a user turn, then rounds of calls
    answered in order (results may be errors) or text answers followed by a user turn."""
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(SystemMessage(content=draw(_TEXT)))
    out.append(UserMessage(content=draw(_TEXT)))
    ids = iter(range(1000))
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            calls = tuple(
                ToolCall(
                    id=f"call_{next(ids)}",
                    name=draw(st.sampled_from(tool_names)),
                    arguments=draw(_ARGUMENTS),
                )
                for _ in range(draw(st.integers(1, 3)))
            )
            out.append(AssistantMessage(content=draw(st.none() | _TEXT), tool_calls=calls))
            out.extend(
                ToolMessage(
                    tool_call_id=c.id,
                    content=draw(_TEXT),
                    name=c.name,
                    is_error=draw(st.booleans()),
                )
                for c in calls
            )
            if draw(st.booleans()):
                out.append(UserMessage(content=draw(_TEXT)))
        else:
            out.append(AssistantMessage(content=draw(_TEXT)))
            out.append(UserMessage(content=draw(_TEXT)))
    return out


def _schema(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(
        st.dictionaries(
            st.from_regex(r"[a-z]{1,6}", fullmatch=True),
            st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]),
            max_size=3,
        )
    )
    return {"type": "object", "properties": properties}


@st.composite
def tool_definitions(
    draw: st.DrawFn, *, format_name: str, names: tuple[str, ...]
) -> list[ToolDefinition]:
    """Definitions with the fields ``format_name`` carries, one per name."""
    out = []
    for name in names:
        fields: dict[str, Any] = {
            "name": name,
            "description": draw(st.none() | _TEXT),
            "parameters": _schema(draw),
            "strict": draw(st.none() | st.booleans()),
        }
        if format_name != "openai-chat":
            fields["defer_loading"] = draw(st.booleans())
        if format_name == "openai-responses":
            fields["namespace"] = draw(st.none() | st.sampled_from(["crm", "files"]))
        if format_name == "anthropic-messages":
            fields["cache_control"] = draw(st.none() | st.just({"type": "ephemeral"}))
        if draw(st.booleans()):
            fields["provider_extra"] = {format_name: {"x_harness_extra": draw(st.integers(0, 9))}}
        out.append(ToolDefinition(**fields))
    return out


def search_tools(format_name: str) -> st.SearchStrategy[ToolDefinition]:
    """A tool-search tool ``format_name`` carries."""
    if format_name == "openai-responses":
        return st.sampled_from(
            [
                ToolDefinition(name="tool_search", search="hosted"),
                ToolDefinition(
                    name="tool_search",
                    search="client",
                    description="Find tools.",
                    parameters={"type": "object", "properties": {"query": {"type": "string"}}},
                ),
            ]
        )
    return st.sampled_from(
        [
            ToolDefinition(name="tool_search_tool_bm25", search="bm25"),
            ToolDefinition(name="tool_search_tool_regex", search="regex"),
        ]
    )


@st.composite
def tool_choices(draw: st.DrawFn, *, format_name: str, names: tuple[str, ...]) -> ToolChoice | None:
    options = [
        st.none(),
        st.sampled_from([ToolChoice.auto(), ToolChoice.none(), ToolChoice.required()]),
        st.sampled_from(names).map(ToolChoice.tool),
    ]
    if format_name != "anthropic-messages":  # Messages has no allowed subset
        options.append(
            st.tuples(
                st.lists(st.sampled_from(names), min_size=1, unique=True),
                st.sampled_from(["auto", "required"]),
            ).map(lambda a: ToolChoice.allowed_tools(a[0], mode=a[1]))
        )
    return draw(st.one_of(options))


@st.composite
def requests(draw: st.DrawFn, format_name: str) -> ModelRequest:
    """A request the loop could build, with the tools and settings ``format_name`` carries."""
    names = tuple(draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True)))
    messages = draw(histories(tool_names=names))
    tools = draw(tool_definitions(format_name=format_name, names=names))
    called = {c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    # a deferred tool is called only once revealed: keep the history's tools loaded
    tools = [dataclasses.replace(t, defer_loading=False) if t.name in called else t for t in tools]
    if any(t.defer_loading for t in tools):  # the APIs want a search tool beside them
        tools.append(draw(search_tools(format_name)))
    parallel = draw(st.none() | st.booleans())
    if format_name == "anthropic-messages" and parallel:
        parallel = None  # Messages can only say "not parallel"
    settings = ModelSettings(
        tool_choice=draw(tool_choices(format_name=format_name, names=names)),
        parallel_tool_calls=parallel,
    )
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=settings,
        iteration=1 + sum(isinstance(m, AssistantMessage) for m in messages),
    )


def carried(request: ModelRequest, format_name: str) -> ModelRequest:
    """``request`` as ``format_name`` gives it back after a round trip."""
    messages: list[Message] = []
    for message in request.messages:
        if isinstance(message, ToolMessage):
            message = message.model_copy(
                update={
                    "name": message.name if format_name == "openai-responses" else None,
                    "is_error": message.is_error and format_name == "anthropic-messages",
                }
            )
        messages.append(message)
    tools = []
    for tool in request.tools:
        if format_name == "openai-responses" and tool.strict is None:
            tool = dataclasses.replace(tool, strict=False)  # sent as false, as the SDK does
        if format_name == "anthropic-messages" and tool.description == "":
            tool = dataclasses.replace(tool, description=None)
        tools.append(tool)
    if format_name == "openai-responses":  # a namespace's tools are sent together
        first = {t.namespace: i for i, t in reversed(list(enumerate(tools)))}
        ranked = sorted(
            enumerate(tools), key=lambda p: first[p[1].namespace] if p[1].namespace else p[0]
        )
        tools = [t for _, t in ranked]
    settings = request.settings
    if format_name == "anthropic-messages":
        choice, parallel = settings.tool_choice, settings.parallel_tool_calls
        if parallel is False and choice is None:
            choice = ToolChoice.auto()  # disable_parallel_tool_use needs a tool_choice object
        if choice is not None and choice.mode == "none":
            parallel = None  # and is not sent with "none"
        settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    if format_name == "openai-responses":
        tools = [dataclasses.replace(t, strict=None) if t.search is not None else t for t in tools]
    return dataclasses.replace(
        request,
        messages=messages,
        tools=tuple(tools),
        tool_names=tuple(t.name for t in tools),
        settings=settings,
    )


@st.composite
def responses(draw: st.DrawFn, format_name: str) -> ModelResponse:
    """A model answer each format serves and reads back unchanged."""
    calls = tuple(
        ToolCall(id=f"call_{i}", name=draw(_NAMES), arguments=draw(_ARGUMENTS))
        for i in range(draw(st.integers(0, 3)))
    )
    content = draw(st.none() | _TEXT) if calls else draw(_TEXT)
    refusal = None
    if format_name != "anthropic-messages" and not calls and draw(st.booleans()):
        content, refusal = draw(st.none() | _TEXT), draw(_TEXT)
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    inputs, outputs = draw(st.integers(0, 500)), draw(st.integers(0, 500))
    return ModelResponse(
        message=AssistantMessage(content=content, tool_calls=calls, refusal=refusal),
        finish_reason=finish,
        usage=Usage(input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs),
    )
