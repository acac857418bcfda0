"""Streaming through the real ``openai`` SDK from the wire fake: large payloads and many requests.

Cases, each streamed and not, for Chat Completions and Responses:

- ``1 MB argument``: one response whose tool call carries a 1 MB JSON argument;
- ``1000 requests``: one thousand requests, each answered with a small tool call;
- ``1000 parallel calls``: one response with a thousand small tool calls (streamed,
  four events per call: the SDK's own chat stream accumulator rebuilt its whole
  snapshot for each event, 22.9 s against 0.17 s unstreamed, before the adapter
  accumulated the chunks itself: ``harness/formats/openai_chat/_stream.py``).

Every answer is checked (the argument arrives byte for byte, every call with its id).
Target: the 1 MB streamed argument in under 1 s.

Run: ``python benchmarks/streaming.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from harness.loop import Model, ModelRequest, ModelResponse, ModelSettings
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.models import OpenAIChatModel, OpenAIResponsesModel, fake_openai_client
from harness.tools import ToolDefinition

TARGET_SECONDS = 1.0
"""The 1 MB streamed argument through the SDK, at most."""


class Answer(Model):
    """Answers every request with one tool call carrying ``arguments``."""

    __test__ = False
    name = "answer"

    def __init__(self, arguments: str, calls: int = 1) -> None:
        self.arguments = arguments
        self.calls = tuple(
            ToolCall(id=f"call_{i + 1}", name="store", arguments=arguments) for i in range(calls)
        )

    def request(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            message=AssistantMessage(tool_calls=self.calls), finish_reason="tool_calls"
        )


REQUEST = ModelRequest(
    messages=[UserMessage(content="store it")],
    tools=[ToolDefinition(name="store", parameters={"type": "object"})],
    tool_names=("store",),
    settings=ModelSettings(),
    iteration=1,
)


def timed(api: str, stream: bool, arguments: str, requests: int, calls: int = 1) -> float:
    """Seconds for ``requests`` requests of ``calls`` tool calls each, each answer checked."""
    adapter = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    answer = Answer(arguments, calls)
    model = adapter(fake_openai_client(answer), "gpt-bench", stream=stream)
    gc.collect()
    start = time.perf_counter()
    for _ in range(requests):
        response = model.request(REQUEST)
        got = response.message.tool_calls
        if [(c.id, c.arguments) for c in got] != [(c.id, c.arguments) for c in answer.calls]:
            first = got[0].arguments if got else ""
            raise RuntimeError(
                f"{api} stream={stream}: the calls did not arrive intact ({len(got)} of "
                f"{calls} calls, the first {len(first)} of {len(arguments)} characters)"
            )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args(argv)
    size, count = (10_000, 20) if args.quick else (1_000_000, 1000)
    big = json.dumps({"blob": "x" * (size - 12)})
    small = json.dumps({"a": 1, "b": 2})
    cases = {
        f"{size // 1000} kB argument": (big, 1, 1),
        f"{count} requests": (small, count, 1),
        f"{count} parallel calls": (small, 1, count),
    }
    results: dict[str, Any] = {}
    print(f"{'case':<22}{'api':<11}{'plain s':>9}{'stream s':>10}{'ratio':>8}")
    for label, (arguments, requests, calls) in cases.items():
        for api in ("chat", "responses"):
            plain = timed(api, False, arguments, requests, calls)
            streamed = timed(api, True, arguments, requests, calls)
            results[f"{label} {api}"] = streamed
            results[f"{label} {api} plain"] = plain
            print(f"{label:<22}{api:<11}{plain:>9.3f}{streamed:>10.3f}{streamed / plain:>7.1f}x")
    return results


if __name__ == "__main__":
    main()
