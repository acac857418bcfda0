"""A run exported as OpenTelemetry spans reads back as the same trace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import ScriptedModel, call, calls, reply, run
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange, Trace
from harness.scenarios import load_scenario, run_scenario
from harness.tools import Tool
from harness.traces import export_otel, otel_conversations, otel_json, trace_from_otel, write_otel


def _make(name: str) -> Any:
    def tool(n: int) -> str:
        if n == 3:
            raise ValueError(f"{name} cannot take 3")
        return f"{name}:{n}"

    tool.__name__ = name
    tool.__doc__ = f"The {name} tool."
    return Tool.from_function(tool)


TOOLS = {name: _make(name) for name in ("alpha", "beta", "gamma", "delta")}


class Rules(InjectionStrategy):
    """After a call to a tool, add and remove the tools its rule names."""

    def __init__(self, rules: dict[str, tuple[list[str], list[str]]]) -> None:
        self.rules = rules

    @property
    def name(self) -> str:
        return "rules"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.call is None or context.call.name not in self.rules:
            return None
        add, remove = self.rules[context.call.name]
        offered = set(context.offered)
        adding = tuple(TOOLS[n] for n in add if n not in offered)
        removing = tuple(n for n in remove if n in offered and n not in add)
        if not adding and not removing:
            return None
        return ToolsetChange(
            add=adding, remove=removing, reason=f"after {context.call.name}", strategy="rules"
        )


_NAMES = st.sampled_from(sorted(TOOLS))
_STEP = st.one_of(
    st.tuples(_NAMES, st.integers(0, 4)).map(lambda p: call(p[0], n=p[1])),
    st.lists(st.tuples(_NAMES, st.integers(0, 4)), min_size=2, max_size=3).map(
        lambda ps: calls(*[call(name, n=n) for name, n in ps])
    ),
)
_RULES = st.dictionaries(
    _NAMES, st.tuples(st.lists(_NAMES, max_size=2), st.lists(_NAMES, max_size=1)), max_size=3
)


def _run(first: list[str], steps: list[Any], rules: dict[str, Any]) -> Any:
    model = ScriptedModel([*steps, reply("done")], lenient=True)
    return run(model, "go", tools=[TOOLS[n] for n in first], strategies=[Rules(rules)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(_NAMES, min_size=1, max_size=3, unique=True),
    steps=st.lists(_STEP, max_size=5),
    rules=_RULES,
)
def test_export_then_import_is_the_identity_on_the_trace(
    first: list[str], steps: list[Any], rules: dict[str, Any]
) -> None:
    result = _run(first, steps, rules)
    back = trace_from_otel(otel_json(result))
    assert back == result.trace
    assert back.to_dict() == result.trace.to_dict()
    assert back.injected == result.trace.injected


def _spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def test_the_injection_is_on_the_request_that_first_offers_the_tool() -> None:
    result = _run(["alpha"], [call("alpha", n=1), call("beta", n=2)], {"alpha": (["beta"], [])})
    chats = [s for s in _spans(otel_json(result)) if s["name"].startswith("chat")]
    first, second, third = (_attributes(s) for s in chats)
    assert "harness.injected" not in first
    assert second["harness.injected"] == {"values": [{"stringValue": "beta"}]}
    assert second["harness.changed_by"] == {"values": [{"stringValue": "rules"}]}
    assert "harness.injected" not in third
    assert json.loads(first["harness.changes"])[0]["added"] == ["beta"]  # made after request 1
    assert first["gen_ai.operation.name"] == "chat"
    assert [d["name"] for d in json.loads(second["gen_ai.tool.definitions"])] == [
        "alpha",
        "beta",
    ]


def test_spans_follow_the_genai_conventions() -> None:
    result = _run(["alpha"], [call("alpha", n=3)], {})
    spans = {s["name"]: _attributes(s) for s in _spans(otel_json(result, name="crm"))}
    agent = spans["invoke_agent crm"]
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.agent.name"] == "crm"
    tool = spans["execute_tool alpha"]
    assert tool["gen_ai.tool.name"] == "alpha"
    assert tool["gen_ai.tool.call.id"] == result.trace.calls[0].id
    assert tool["gen_ai.tool.call.arguments"] == '{"n": 3}'
    assert tool["error.type"] == result.trace.calls[0].error_kind
    chats = [_attributes(s) for s in _spans(otel_json(result)) if s["name"] == "chat"]
    messages = json.loads(chats[0]["gen_ai.output.messages"])
    assert [p["name"] for p in messages[0]["parts"] if p["type"] == "tool_call"] == ["alpha"]
    assert json.loads(chats[1]["gen_ai.input.messages"])[0]["role"] == "user"
    assert json.loads(chats[1]["gen_ai.input.messages"])[-1]["role"] == "tool"


def test_without_content_the_import_names_what_is_missing() -> None:
    result = _run(["alpha"], [call("alpha", n=1)], {})
    document = otel_json(result, content=False)
    assert "alpha:1" not in json.dumps(document)
    (conversation,) = otel_conversations(document)
    assert "tool results" in conversation.missing()[0]
    back = conversation.trace()
    assert [it.offered for it in back] == [it.offered for it in result.trace]
    assert back.calls[0].content == ""


def test_secrets_never_reach_the_spans() -> None:
    """A registered secret is scrubbed from every span, even where the trace holds it as
    sent (the model's own arguments); a preset the model never sees is never exported."""
    from pathlib import Path

    from harness import Secret
    from harness.tools import as_tool

    def fetch_account(account: str, api_key: str) -> str:
        """Read an account."""
        return f"account {account} read with {api_key}"

    tool = as_tool(fetch_account, presets={"api_key": Secret("sk-live-trace-export-0123456789")})

    result = run(  # the model repeats the key as an argument: the trace keeps what it sent
        ScriptedModel(
            [call("fetch_account", {"account": "sk-live-trace-export-0123456789"}), reply("done")]
        ),
        "read a-1",
        tools=[tool],
    )
    text = json.dumps(otel_json(result.trace, content=True))
    assert "sk-live-trace-export-0123456789" in json.dumps(result.trace.calls[0].args)
    assert "fetch_account" in text and "sk-live-trace-export-0123456789" not in text

    outcome = run_scenario(load_scenario(Path("scenarios/context/preset_override.yaml")))
    assert outcome.trace is not None
    exported = json.dumps(otel_json(outcome.trace))
    assert "tenant-7731-acme" not in exported  # never sent to the model, never exported


def test_through_a_tracer_provider_the_user_configured() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = _run(["alpha"], [call("alpha", n=1)], {"alpha": (["gamma"], ["alpha"])})
    export_otel(result, tracer_provider=provider, attributes={"team": "crm"})
    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} == {"invoke_agent harness", "chat", "execute_tool alpha"}
    root = next(s for s in spans if s.parent is None)
    assert root.attributes is not None and root.attributes["team"] == "crm"
    assert trace_from_otel(spans) == result.trace


@pytest.mark.parametrize(
    "path", ["scenarios/agentic/research_delegation.yaml", "scenarios/sessions/seed_two_turns.yaml"]
)
def test_nested_runs_and_sessions_round_trip(path: str) -> None:
    from pathlib import Path

    outcome = run_scenario(load_scenario(Path(path)))
    traces = [s.trace for s in outcome.sessions] if outcome.sessions else [outcome.trace]
    for trace in traces:
        assert trace is not None
        back = trace_from_otel(otel_json(trace))
        assert back == trace
        assert back.children == trace.children


def test_write_appends_lines_that_read_as_several_conversations(tmp_path: Any) -> None:
    one = _run(["alpha"], [call("alpha", n=1)], {})
    two = _run(["beta"], [], {})
    path = write_otel(one, tmp_path / "runs.jsonl")
    write_otel([two], path, append=True)
    assert len(path.read_text("utf-8").splitlines()) == 2
    found = otel_conversations(path)
    assert [c.trace() for c in found] == [one.trace, two.trace]
    with pytest.raises(Exception, match="2 conversations"):
        trace_from_otel(path)
    assert trace_from_otel(path, conversation=1) == two.trace


def test_an_unknown_export_option_is_refused() -> None:
    from harness import UsageError

    with pytest.raises(UsageError, match="unknown export option"):
        otel_json(Trace(), colour="red")
