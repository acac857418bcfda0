"""Per-iteration cost of the harness loop against a bare hand-written loop.

Both loops do the same work per iteration: build a request from the history and
the offered tools, get one tool call from a scripted model, look the tool up by
name, parse the JSON arguments, call the tool, and append the assistant and tool
messages. The bare loop uses a dict of functions, ``json.loads`` and a list of
message dicts; the harness loop adds validation, results, trace, events and the
strategy chain.

Run: ``python benchmarks/loop_overhead.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness import EntityDiscovery, ScriptedModel, Tool, Toolset, call, llm_tool, reply, run


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _filler_tools(count: int) -> list[Tool]:
    base = Tool.from_function(add)
    return [base.with_name(f"filler_{i}") for i in range(count)]


def _arguments(i: int) -> dict[str, int]:
    return {"a": i, "b": 1}


def harness_loop(n: int, offered: int) -> Callable[[], Any]:
    """A closure running the harness loop for ``n`` tool-calling iterations."""
    steps = [call("add", _arguments(i)) for i in range(n)] + [reply("done")]
    tools = Toolset([add, *_filler_tools(offered - 1)])
    tools.definitions()  # built once, like the bare loop's definition list

    def go() -> Any:
        model = ScriptedModel(steps)
        return run(
            model, "add numbers", tools=tools, strategies=[EntityDiscovery()], max_iterations=n + 1
        )

    return go


def bare_loop(n: int, offered: int) -> Callable[[], Any]:
    """A closure running the hand-written loop for ``n`` tool-calling iterations."""

    def add_fn(a: int, b: int) -> int:
        return a + b

    tools: dict[str, Callable[..., Any]] = {"add": add_fn}
    definitions = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    for i in range(offered - 1):
        tools[f"filler_{i}"] = add_fn
        definitions.append({"type": "function", "function": {"name": f"filler_{i}"}})

    def model(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn >= n:
            return {"role": "assistant", "content": "done"}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{turn}",
                    "type": "function",
                    "function": {"name": "add", "arguments": json.dumps(_arguments(turn))},
                }
            ],
        }

    def go() -> Any:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "add numbers"}]
        turn = 0
        while True:
            request = {"messages": messages, "tools": definitions}
            message = model(request, turn)
            turn += 1
            messages.append(message)
            if not message.get("tool_calls"):
                return message["content"]
            for tool_call in message["tool_calls"]:
                function = tools[tool_call["function"]["name"]]
                arguments = json.loads(tool_call["function"]["arguments"])
                result = function(**arguments)
                messages.append(
                    {"role": "tool", "tool_call_id": tool_call["id"], "content": json.dumps(result)}
                )

    return go


def measure(go: Callable[[], Any], repeats: int) -> float:
    """Best-of-``repeats`` wall time in seconds (GC disabled while timing)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        go()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times) if repeats < 5 else statistics.median(sorted(times)[: repeats // 2 + 1])


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args(argv)
    sizes = [10, 100] if args.quick else [10, 100, 1000]
    repeats = 1 if args.quick else 7
    results: dict[str, float] = {}
    print(f"{'case':<28}{'bare us/it':>12}{'harness us/it':>15}{'ratio':>8}")
    for offered in (10, 10_000):
        for n in sizes:
            bare = measure(bare_loop(n, offered), repeats) / n * 1e6
            ours = measure(harness_loop(n, offered), repeats) / n * 1e6
            label = f"N={n} tools={offered}"
            results[label] = ours / bare
            results[f"{label} harness_us"] = ours
            print(f"{label:<28}{bare:>12.2f}{ours:>15.2f}{ours / bare:>7.1f}x")
    big = sizes[-1]
    linear = results[f"N={big} tools=10 harness_us"] / results[f"N={sizes[0]} tools=10 harness_us"]
    tools_ratio = (
        results[f"N={big} tools=10000 harness_us"] / results[f"N={big} tools=10 harness_us"]
    )
    print(f"\nper-iteration cost N={big} vs N={sizes[0]} (1.0 = linear total time): {linear:.2f}")
    print(f"per-iteration cost with 10,000 tools vs 10 tools (N={big}): {tools_ratio:.2f}")
    results["linearity"] = linear
    results["tools_ratio"] = tools_ratio
    return results


if __name__ == "__main__":
    main()
