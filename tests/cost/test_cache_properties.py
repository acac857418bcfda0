"""The cache model's invariants, for every format (the issue's "done means"):

- a request sequence whose tools never change has no ``tools-changed`` break;
- editing the tools at request k breaks exactly at k (and the cache refills from k on),
  attributed to the change record of that iteration;
- appending to the conversation never breaks, and each request reads the whole
  previous one from the cache.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.cost import CacheRules, EstimateTokenizer, analyse, cache_rules
from harness.cost._record import RecordedRun
from harness.loop import (
    ChangeRecord,
    IterationRecord,
    ModelRequest,
    ModelSettings,
    Trace,
)
from harness.loop._model import HistoryView
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.tools import ToolDefinition

FORMATS = ("openai-chat", "openai-responses", "anthropic-messages")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_WORDS = st.text("abcdefghij xyz", min_size=1, max_size=40)


def _eager(format_name: str) -> CacheRules:
    """The format's rules with no minimum length and no increments, so every request is
    cached and every shared token is read (the invariants hold for any minimum too)."""
    return dataclasses.replace(
        cache_rules(format_name), minimum_tokens=0, increment=1, partial=False
    )


def _tool(name: str, description: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
    )


@st.composite
def conversations(draw: st.DrawFn) -> list[list[Message]]:
    """The history of each request of one run: each extends the one before by a turn
    (an assistant message with calls and their results, or a text and a user turn),
    at most 12 messages at a time (within Anthropic's 20-block lookback)."""
    history: list[Message] = [UserMessage(content=draw(_WORDS))]
    out = [list(history)]
    ids = iter(range(10_000))
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            calls = tuple(
                ToolCall(id=f"c{next(ids)}", name="t0", arguments='{"q": "x"}')
                for _ in range(draw(st.integers(1, 3)))
            )
            history.append(AssistantMessage(content=None, tool_calls=calls))
            history.extend(ToolMessage(tool_call_id=c.id, content=draw(_WORDS)) for c in calls)
        else:
            history.append(AssistantMessage(content=draw(_WORDS)))
            history.append(UserMessage(content=draw(_WORDS)))
        out.append(list(history))
    return out


def _requests(
    histories: list[list[Message]], tools_at: list[tuple[ToolDefinition, ...]]
) -> list[ModelRequest]:
    final = histories[-1]
    return [
        ModelRequest(
            messages=HistoryView(final, len(history)),
            tools=tools,
            tool_names=tuple(t.name for t in tools),
            settings=ModelSettings(),
            iteration=number,
        )
        for number, (history, tools) in enumerate(zip(histories, tools_at, strict=True), 1)
    ]


def _trace(count: int, changes: dict[int, ChangeRecord]) -> Trace:
    return Trace(
        iterations=[
            IterationRecord(index=i, offered=(), changes=(changes[i],) if i in changes else ())
            for i in range(1, count + 1)
        ]
    )


_TOOLS = st.lists(_WORDS, min_size=1, max_size=5).map(
    lambda ds: tuple(_tool(f"t{i}", d) for i, d in enumerate(ds))
)


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(histories=conversations(), tools=_TOOLS)
def test_tools_that_never_change_never_break_and_appending_reads_everything_before(
    name: str, histories: list[list[Message]], tools: tuple[ToolDefinition, ...]
) -> None:
    requests = _requests(histories, [tools] * len(histories))
    report = analyse(requests, format=name, rules=_eager(name), tokenizer=EstimateTokenizer())
    assert report.breaks == []
    for before, now in zip(report.requests, report.requests[1:], strict=False):
        assert now.cached_tokens == before.input_tokens  # the whole previous request
        assert now.cached_tokens < now.input_tokens


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(
    histories=conversations(),
    tools=_TOOLS,
    data=st.data(),
    edit=st.sampled_from(["add", "remove", "replace"]),
)
def test_editing_the_tools_at_request_k_breaks_exactly_there_attributed_to_its_change(
    name: str,
    histories: list[list[Message]],
    tools: tuple[ToolDefinition, ...],
    data: st.DataObject,
    edit: str,
) -> None:
    k = data.draw(st.integers(2, len(histories)), label="k")
    if edit == "add":
        edited = (*tools, _tool("added", "a new tool"))
    elif edit == "remove" and len(tools) > 1:
        edited = tools[:-1]
    else:
        edited = (*tools[:-1], _tool(tools[-1].name, tools[-1].description + " (changed)"))
    record = ChangeRecord(
        strategy="the-strategy", reason="an edit", added=("x",), after_call="t0", after_call_id="c"
    )
    trace = _trace(len(histories), {k - 1: record})
    requests = _requests(histories, [tools] * (k - 1) + [edited] * (len(histories) - k + 1))
    run = RecordedRun(requests=tuple(requests), trace=trace)
    report = analyse(run, format=name, rules=_eager(name), tokenizer=EstimateTokenizer())
    (only,) = report.breaks
    assert (only.request, only.cause, only.by, only.change) == (
        k,
        "tools-changed",
        "the-strategy",
        record,
    )
    before, at = report.requests[k - 2], report.requests[k - 1]
    assert at.cached_tokens < before.input_tokens  # what followed the edit is lost
    assert at.cached_tokens <= before.tool_tokens  # read at most up to the edit
    for earlier, later in zip(report.requests[k - 1 :], report.requests[k:], strict=False):
        assert later.cached_tokens == earlier.input_tokens  # from k on, the cache refills


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(histories=conversations(), tools=_TOOLS, data=st.data())
def test_a_break_lies_where_the_tools_changed_and_nowhere_else(
    name: str,
    histories: list[list[Message]],
    tools: tuple[ToolDefinition, ...],
    data: st.DataObject,
) -> None:
    """Any schedule of tool lists: breaks are exactly the requests whose tools differ from
    the previous request's."""
    pool = [tools, (*tools, _tool("extra", "more")), tools[:1]]
    schedule = [data.draw(st.sampled_from(pool)) for _ in histories]
    report = analyse(
        _requests(histories, schedule),
        format=name,
        rules=_eager(name),
        tokenizer=EstimateTokenizer(),
    )
    changed = [i for i in range(2, len(schedule) + 1) if schedule[i - 1] != schedule[i - 2]]
    assert [b.request for b in report.breaks] == changed
    assert {b.cause for b in report.breaks} <= {"tools-changed"}
