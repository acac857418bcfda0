"""End to end: an async tool's follow-up travels through the real ``openai`` (and
``anthropic``) SDK to the wire fake, where the served script asserts it arrived, in both
drivers, streamed and not; the trace matches the in-process run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from harness import CallContext, RunResult, ToolResult, arun, llm_tool, run
from harness.loop import CompletionsAwaited, Event, Model
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    Step,
    call,
    expect_message,
    fake_anthropic_client,
    fake_async_anthropic_client,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)

SECRET = "sk-e2e-async-0123456789"


class Exports:
    """``start_export`` reports back from a worker thread released by ``approve``;
    ``start_audit`` reports back while the loop waits at the end of the run."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.reported = threading.Event()
        self.audit: list[Any] = []

    def tools(self) -> list[Any]:
        exports = self

        @llm_tool
        def start_export(report: str, ctx: CallContext) -> ToolResult:
            """Export a report in the background."""
            completion = ctx.completion

            def work() -> None:
                exports.gate.wait(10)
                completion(ToolResult.user(f"{report} exported"))
                exports.reported.set()

            threading.Thread(target=work, daemon=True).start()
            return ToolResult.started(f"exporting {report}")

        @llm_tool
        def approve() -> str:
            """Approve the export and wait for its report."""
            exports.gate.set()
            exports.reported.wait(10)
            return "approved"

        @llm_tool
        def start_audit(ctx: CallContext) -> ToolResult:
            """Audit in the background; it finishes once the model has answered."""
            exports.audit.append(ctx.completion)
            return ToolResult.started("auditing")

        return [start_export, approve, start_audit]

    def finish_audit(self, event: Event) -> None:
        if isinstance(event, CompletionsAwaited):
            completion = self.audit[0]
            threading.Timer(0.01, lambda: completion("audit clean")).start()


def steps() -> list[Step]:
    return [
        call("start_export", report="sales"),
        call("approve"),
        expect_message("sales exported", tool="start_export", call_id="call_1", role="user"),
        call("start_audit"),
        reply("Exported; the audit is running."),
        expect_message("audit clean", tool="start_audit"),
        reply("Exported and audited."),
    ]


def run_sync(model: Model) -> RunResult:
    exports = Exports()
    return run(
        model,
        "Export and audit.",
        tools=exports.tools(),
        observers=[exports.finish_audit],
        completion_deadline=10,
    )


def run_async(model: Model) -> RunResult:
    exports = Exports()
    return asyncio.run(
        arun(
            model,
            "Export and audit.",
            tools=exports.tools(),
            observers=[exports.finish_audit],
            completion_deadline=10,
        )
    )


def shape(result: RunResult) -> list[Any]:
    return [[(c.name, c.content, c.is_async) for c in it.calls] for it in result.trace] + [
        (r.call_id, r.name, r.status, r.iteration, r.content) for r in result.trace.completions
    ]


@pytest.fixture(scope="module")
def baseline() -> RunResult:
    result = run_sync(ScriptedModel(steps()))
    assert result.output == "Exported and audited."
    assert [r.status for r in result.trace.completions] == ["delivered", "delivered"]
    return result


Factory = Callable[[ScriptedModel], Model]

SYNC: dict[str, Factory] = {
    "chat": lambda m: OpenAIChatModel(fake_openai_client(m, api_key=SECRET), "gpt-test"),
    "chat-stream": lambda m: OpenAIChatModel(
        fake_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
    "responses": lambda m: OpenAIResponsesModel(fake_openai_client(m, api_key=SECRET), "gpt-test"),
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
}
ASYNC: dict[str, Factory] = {
    "chat": lambda m: OpenAIChatModel(fake_async_openai_client(m, api_key=SECRET), "gpt-test"),
    "responses-stream": lambda m: OpenAIResponsesModel(
        fake_async_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
    "anthropic": lambda m: AnthropicModel(fake_async_anthropic_client(m), "claude-test"),
}


def check(result: RunResult, baseline: RunResult, served: ScriptedModel) -> None:
    assert result.output == "Exported and audited."
    assert shape(result) == shape(baseline)
    assert result.user_outputs == baseline.user_outputs == ["sales exported"]
    assert served.remaining == []  # every expect_message held on the far side of the wire
    follow_up = served.requests[2].messages[-1]
    assert follow_up.role == "user"
    assert follow_up.content == (
        "[Async result] tool 'start_export' (call call_1) reported back:\nsales exported"
    )
    assert SECRET not in repr(result.trace.to_dict())


@pytest.mark.parametrize("kind", sorted(SYNC))
def test_sync_run_through_the_sdk_delivers_follow_ups(kind: str, baseline: RunResult) -> None:
    served = ScriptedModel(steps())
    check(run_sync(SYNC[kind](served)), baseline, served)


@pytest.mark.parametrize("kind", sorted(ASYNC))
def test_async_run_through_the_sdk_delivers_follow_ups(kind: str, baseline: RunResult) -> None:
    served = ScriptedModel(steps())
    check(run_async(ASYNC[kind](served)), baseline, served)
