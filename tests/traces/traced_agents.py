"""Agents traced by third-party OpenTelemetry instrumentations, run against the wire fake.

Each source runs one tool-injection flow (``get_average_spend`` is offered only after
``search_customer`` returned) through a framework or a raw SDK loop, with an
instrumentation writing spans to an in-memory exporter. ``record(name)`` returns the
spans and the wire trace of the same run (what the fake saw), so a test can check the
import against it; ``tests/traces/make_otlp.py`` writes the spans to the OTLP JSON files
of ``tests/traces/otlp/``. Only loopback and in-process transports are used.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from harness.cassettes import trace_from_wire
from harness.loop import Trace
from harness.models import (
    OpenAIWireTransport,
    ScriptedModel,
    call,
    fake_anthropic_client,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)

PROMPT = "What's John Smith's average spend?"
SEARCH = {
    "name": "search_customer",
    "description": "Find a customer id by name.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
}
SPEND = {
    "name": "get_average_spend",
    "description": "The customer's average order value.",
    "parameters": {
        "type": "object",
        "properties": {"customer_id": {"type": "string"}},
        "required": ["customer_id"],
    },
}
ANSWER = "John Smith spends 42 on average."


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("get_average_spend", customer_id="c-123"),
            reply(ANSWER),
        ]
    )


def _execute(name: str) -> str:
    return "c-123" if name == "search_customer" else "42.0"


# -- the agents ----------------------------------------------------------------------------


def raw_openai(transport: OpenAIWireTransport, tracer: Any) -> None:
    """A hand-written Chat Completions loop: the kind of agent a team writes on the SDK."""
    client = fake_openai_client(transport)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    tools = [SEARCH]
    with tracer.start_as_current_span("agent run"):
        for _ in range(5):
            answer = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,  # type: ignore[arg-type]
                tools=[{"type": "function", "function": t} for t in tools],  # type: ignore[misc]
            )
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for made in message.tool_calls:
                content = _execute(made.function.name)  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": made.id, "content": content})
            if SPEND not in tools:
                tools.append(SPEND)


def _anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": tool["name"],
        "description": tool["description"],
        "input_schema": tool["parameters"],
    }


def raw_anthropic(transport: OpenAIWireTransport, tracer: Any) -> None:
    """A hand-written Messages loop over the ``anthropic`` SDK."""
    client = fake_anthropic_client(transport)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    tools = [SEARCH]
    with tracer.start_as_current_span("agent run"):
        for _ in range(5):
            answer = client.messages.create(
                model="claude-test",
                max_tokens=512,
                messages=messages,  # type: ignore[arg-type]
                tools=[  # type: ignore[misc]
                    {
                        "name": t["name"],
                        "description": t["description"],
                        "input_schema": t["parameters"],
                    }
                    for t in tools
                ],
            )
            blocks = [b.model_dump(exclude_none=True) for b in answer.content]
            messages.append({"role": "assistant", "content": blocks})
            uses = [b for b in answer.content if b.type == "tool_use"]
            if not uses:
                return
            results = [
                {"type": "tool_result", "tool_use_id": u.id, "content": _execute(u.name)}
                for u in uses
            ]
            messages.append({"role": "user", "content": results})
            if SPEND not in tools:
                tools.append(SPEND)


def pydantic_ai_agent(transport: OpenAIWireTransport, tracer_provider: Any, content: bool) -> None:
    """pydantic-ai with its own instrumentation (the ``Instrumentation`` capability, what
    ``Agent(instrument=...)`` was): ``get_average_spend`` prepared only after a search."""
    import pydantic_ai
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def search_customer(name: str) -> str:
        """Find a customer id by name."""
        return "c-123"

    def get_average_spend(customer_id: str) -> float:
        """The customer's average order value."""
        return 42.0

    async def after_search(ctx: Any, tool_def: Any) -> Any:
        found = any(
            isinstance(part, ToolReturnPart) and part.tool_name == "search_customer"
            for message in ctx.messages
            for part in getattr(message, "parts", ())
        )
        return tool_def if found else None

    client = fake_async_openai_client(transport)
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    settings = InstrumentationSettings(tracer_provider=tracer_provider, include_content=content)
    agent = pydantic_ai.Agent(
        model,
        tools=[search_customer, pydantic_ai.Tool(get_average_spend, prepare=after_search)],
        capabilities=[Instrumentation(settings=settings)],
    )
    result = asyncio.run(agent.run(PROMPT))
    assert result.output == ANSWER


def agents_sdk(transport: OpenAIWireTransport) -> None:
    """The OpenAI Agents SDK (Responses API): ``get_average_spend`` enabled after a search."""
    import agents

    found = {"customer": False}

    @agents.function_tool  # type: ignore[untyped-decorator]
    def search_customer(name: str) -> str:
        """Find a customer id by name."""
        found["customer"] = True
        return "c-123"

    @agents.function_tool(is_enabled=lambda ctx, agent: found["customer"])  # type: ignore[untyped-decorator]
    def get_average_spend(customer_id: str) -> float:
        """The customer's average order value."""
        return 42.0

    client = fake_async_openai_client(transport)
    agent = agents.Agent(
        name="crm",
        instructions="You are a CRM assistant.",
        tools=[search_customer, get_average_spend],
        model=agents.OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client),
    )
    result = asyncio.run(agents.Runner.run(agent, PROMPT))
    assert result.final_output == ANSWER


# -- instrumentations ----------------------------------------------------------------------


@contextlib.contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def instrumented(instrumentor: Any, provider: Any, **kwargs: Any) -> Iterator[None]:
    instrumentor.instrument(tracer_provider=provider, **kwargs)
    try:
        yield
    finally:
        with contextlib.suppress(ModuleNotFoundError):  # OpenLLMetry 0.47 unwraps modules
            instrumentor.uninstrument()  # anthropic 2 no longer has (completions)


def _genai_openai() -> Any:
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openinference_openai() -> Any:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry_openai() -> Any:
    with warnings.catch_warnings():  # its module defines a pydantic model with class Config
        warnings.simplefilter("ignore", DeprecationWarning)
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openinference_anthropic() -> Any:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


def _openllmetry_anthropic() -> Any:
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


def _openinference_agents() -> Any:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    return OpenAIAgentsInstrumentor()


_CONTENT_ON = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    "TRACELOOP_TRACE_CONTENT": "true",
}
_CONTENT_OFF = {**_CONTENT_ON, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"}


@dataclasses.dataclass(frozen=True)
class Source:
    """One way of producing a traced run: the packages it needs and how to run it."""

    name: str
    packages: tuple[str, ...]
    """The distributions whose versions the README records."""
    run: Callable[[Any, OpenAIWireTransport], None]
    """Runs the agent with the instrumentation on the tracer provider."""
    content: bool = True
    """Whether messages and definitions are recorded (else the import reports them missing)."""


def _raw(
    instrumentors: tuple[Callable[[], Any], ...], agent: Callable[..., None], env: dict[str, str]
) -> Callable[[Any, OpenAIWireTransport], None]:
    def run(provider: Any, transport: OpenAIWireTransport) -> None:
        with _env(**env), contextlib.ExitStack() as stack:
            for make in instrumentors:
                stack.enter_context(instrumented(make(), provider))
            agent(transport, provider.get_tracer("tests.traces"))

    return run


def _pydantic(stacked: bool, content: bool) -> Callable[[Any, OpenAIWireTransport], None]:
    def run(provider: Any, transport: OpenAIWireTransport) -> None:
        with _env(**_CONTENT_ON), contextlib.ExitStack() as stack:
            if stacked:
                stack.enter_context(instrumented(_openinference_openai(), provider))
            pydantic_ai_agent(transport, provider, content)

    return run


def _agents(provider: Any, transport: OpenAIWireTransport) -> None:
    with instrumented(_openinference_agents(), provider):
        agents_sdk(transport)


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("pydantic-ai", ("pydantic-ai-slim",), _pydantic(False, True)),
        Source("pydantic-ai-no-content", ("pydantic-ai-slim",), _pydantic(False, False), False),
        Source(
            "pydantic-ai-stacked-openinference",
            ("pydantic-ai-slim", "openinference-instrumentation-openai"),
            _pydantic(True, True),
        ),
        Source(
            "openai-agents-openinference",
            ("openai-agents", "openinference-instrumentation-openai-agents"),
            _agents,
        ),
        Source(
            "openai-genai",
            ("opentelemetry-instrumentation-genai-openai",),
            _raw((_genai_openai,), raw_openai, _CONTENT_ON),
        ),
        Source(
            "openai-genai-no-content",
            ("opentelemetry-instrumentation-genai-openai",),
            _raw((_genai_openai,), raw_openai, _CONTENT_OFF),
            False,
        ),
        Source(
            "openai-openinference",
            ("openinference-instrumentation-openai",),
            _raw((_openinference_openai,), raw_openai, _CONTENT_ON),
        ),
        Source(
            "openai-openllmetry",
            ("opentelemetry-instrumentation-openai",),
            _raw((_openllmetry_openai,), raw_openai, _CONTENT_ON),
        ),
        Source(
            "openai-stacked-genai-openinference",
            ("opentelemetry-instrumentation-genai-openai", "openinference-instrumentation-openai"),
            _raw((_genai_openai, _openinference_openai), raw_openai, _CONTENT_ON),
        ),
        Source(
            "anthropic-openinference",
            ("openinference-instrumentation-anthropic",),
            _raw((_openinference_anthropic,), raw_anthropic, _CONTENT_ON),
        ),
        Source(
            "anthropic-openllmetry",
            ("opentelemetry-instrumentation-anthropic",),
            _raw((_openllmetry_anthropic,), raw_anthropic, _CONTENT_ON),
        ),
    )
}
"""The sources this environment can run (``make_otlp.py --flat`` adds OpenLLMetry's old
flat attributes from a separate environment: see tests/traces/otlp/README.md)."""

FLAT_SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "openai-openllmetry-flat",
            ("opentelemetry-instrumentation-openai",),
            _raw((_openllmetry_openai,), raw_openai, _CONTENT_ON),
        ),
        Source(
            "anthropic-openllmetry-flat",
            ("opentelemetry-instrumentation-anthropic",),
            _raw((_openllmetry_anthropic,), raw_anthropic, _CONTENT_ON),
        ),
    )
}
"""Run in an environment with OpenLLMetry 0.47 (its flat ``gen_ai.prompt.N.*`` attributes)."""


@dataclasses.dataclass(frozen=True)
class Recorded:
    """A traced run: the spans, and the wire trace of the same run."""

    spans: list[Any]
    wire: Trace


def record(source: Source) -> Recorded:
    """Run ``source`` against the in-process wire fake, with its instrumentation."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    transport = OpenAIWireTransport(script())
    try:
        source.run(provider, transport)
    finally:
        provider.shutdown()
    return Recorded(spans=list(exporter.get_finished_spans()), wire=trace_from_wire(transport))


def expected(wire: Trace) -> list[dict[str, Any]]:
    """Per request of the run, the tools it offered and the calls it made (the wire's)."""
    return [
        {"offered": list(it.offered), "calls": [c.name for c in it.calls]} for it in wire.iterations
    ]


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
