"""Streaming through the real ``openai`` SDK from the wire fake: large payloads and many requests.

Cases, each streamed and not, for Chat Completions and Responses:

- ``1 MB argument``: one response whose tool call carries a 1 MB JSON argument;
- ``1000 requests``: one thousand requests, each answered with a small tool call.

Every answer is checked (the argument arrives byte for byte). Target: the 1 MB
streamed argument in under 1 s.

Run: ``python benchmarks/streaming.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from harness.formats import ToolDefinition
from harness.loop import Model, ModelRequest, ModelResponse, ModelSettings
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.models import OpenAIChatModel, OpenAIResponsesModel, fake_openai_client

TARGET_SECONDS = 1.0
"""The 1 MB streamed argument through the SDK, at most."""


class Answer(Model):
    """Answers every request with one tool call carrying ``arguments``."""

    __test__ = False
    name = "answer"

    def __init__(self, arguments: str) -> None:
        self.arguments = arguments

    def request(self, request: ModelRequest) -> ModelResponse:
        call = ToolCall(id="call_1", name="store", arguments=self.arguments)
        return ModelResponse(
            message=AssistantMessage(tool_calls=(call,)), finish_reason="tool_calls"
        )


REQUEST = ModelRequest(
    messages=[UserMessage(content="store it")],
    tools=[ToolDefinition(name="store", parameters={"type": "object"})],
    tool_names=("store",),
    settings=ModelSettings(),
    iteration=1,
)


def timed(api: str, stream: bool, arguments: str, requests: int) -> float:
    """Seconds for ``requests`` requests, each answer checked."""
    adapter = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    model = adapter(fake_openai_client(Answer(arguments)), "gpt-bench", stream=stream)
    gc.collect()
    start = time.perf_counter()
    for _ in range(requests):
        response = model.request(REQUEST)
        got = response.message.tool_calls[0].arguments if response.message.tool_calls else None
        if got != arguments:
            raise RuntimeError(
                f"{api} stream={stream}: the argument did not arrive intact "
                f"({len(got or '')} of {len(arguments)} characters)"
            )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args(argv)
    size, count = (10_000, 20) if args.quick else (1_000_000, 1000)
    big = json.dumps({"blob": "x" * (size - 12)})
    small = json.dumps({"a": 1, "b": 2})
    cases = {f"{size // 1000} kB argument": (big, 1), f"{count} requests": (small, count)}
    results: dict[str, Any] = {}
    print(f"{'case':<22}{'api':<11}{'plain s':>9}{'stream s':>10}{'ratio':>8}")
    for label, (arguments, requests) in cases.items():
        for api in ("chat", "responses"):
            plain = timed(api, False, arguments, requests)
            streamed = timed(api, True, arguments, requests)
            results[f"{label} {api}"] = streamed
            results[f"{label} {api} plain"] = plain
            print(f"{label:<22}{api:<11}{plain:>9.3f}{streamed:>10.3f}{streamed / plain:>7.1f}x")
    return results


if __name__ == "__main__":
    main()
