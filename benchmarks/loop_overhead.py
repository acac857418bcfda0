"""Per-iteration cost of the harness loop against a bare hand-written loop.

Both loops do the same work per iteration: build a request from the history and
the offered tools, get one tool call from a scripted model, look the tool up by
name, parse the JSON arguments, call the tool, and append the assistant and tool
messages. The bare loop uses a dict of functions, ``json.loads`` and a list of
message dicts; the harness loop adds validation, results, trace, events and the
default strategy chain (plus ``EntityDiscovery``).

Three targets, each a ratio measured in one run (cases interleaved):

1. ``run`` at most 4x the bare loop per iteration at N=1000;
2. runs of N=10 given 10,000 decorated functions (``many``) as ``tools=[...]`` within 1.5x
   of runs given 10 (the tools and definitions are built once and reused);
3. ``arun`` with an async tool within 1.3x of ``run`` with the same tool written
   sync (``run`` given the async tool is shown too: it starts an event loop per call).

Every timed run is checked: each call answered with a non-error result holding
the right sum, and the expected final answer. Times are the process's CPU time
(``time.process_time``: a shared machine's other work does not count), the median of
the repeats, with garbage collection off while timing.

Each target is reported ``met`` or ``MISSED``; ``--check`` exits with status 1 when one
is missed (the guard to run before and after a change of the loop).

Run: ``python benchmarks/loop_overhead.py`` (``--quick`` for a smoke run, ``--check``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness import (
    EntityDiscovery,
    RunResult,
    ScriptedModel,
    Tool,
    Toolset,
    arun,
    call,
    llm_tool,
    reply,
    run,
)

TARGETS = {"run/bare N=1000": 4.0, "many/10 tools N=10": 1.5, "arun/run": 1.3}
"""Each ratio at most this (the sizes of a full run; ``--quick`` has no N=1000)."""


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@llm_tool(name="add")
async def add_async(a: int, b: int) -> int:
    """Add two integers (a coroutine)."""
    return a + b


_FILLERS: list[Callable[..., Any]] = []


def _filler_functions(count: int) -> list[Callable[..., Any]]:
    """``count`` distinct decorated functions (made once: decorating is the user's import cost)."""

    def make(i: int) -> Callable[..., Any]:
        def filler(a: int, b: int) -> int:
            """A tool the model never calls."""
            return a - b

        return llm_tool(name=f"filler_{i}")(filler)

    _FILLERS.extend(make(i) for i in range(len(_FILLERS), count))
    return _FILLERS[:count]


def _filler_tools(count: int) -> list[Tool]:
    base = Tool.from_function(add)
    return [base.with_name(f"filler_{i}") for i in range(count)]


def _arguments(i: int) -> dict[str, int]:
    return {"a": i, "b": 1}


def _steps(n: int) -> list[Any]:
    return [call("add", _arguments(i)) for i in range(n)] + [reply("done")]


def check(result: RunResult, n: int) -> RunResult:
    """Raise unless every one of the ``n`` calls succeeded with the right sum and the run ended."""
    calls = result.trace.calls
    # call i was sent {"a": i, "b": 1} (``_arguments``): checked without re-parsing its
    # arguments, so the check costs no more than the bare loop's
    failed = [c for i, c in enumerate(calls) if c.is_error or c.value != i + 1]
    if len(calls) != n or failed or result.output != "done":
        first = failed[0] if failed else None
        raise RuntimeError(
            f"the timed run did not do the work: {len(calls)}/{n} calls, "
            f"{len(failed)} failed (first: {first!r}), output={result.output!r}"
        )
    return result


def harness_loop(n: int, offered: int) -> Callable[[], RunResult]:
    """A closure running the harness loop for ``n`` tool-calling iterations."""
    steps = _steps(n)
    tools = Toolset([add, *_filler_tools(offered - 1)])
    tools.definitions()  # built once, like the bare loop's definition list

    def go() -> RunResult:
        model = ScriptedModel(steps)
        result = run(
            model, "add numbers", tools=tools, strategies=[EntityDiscovery()], max_iterations=n + 1
        )
        return check(result, n)

    return go


def function_list_loop(n: int, offered: int) -> Callable[[], RunResult]:
    """``run`` given ``offered`` decorated functions as a plain list (a fresh list each run)."""
    steps = _steps(n)
    fillers = _filler_functions(offered - 1)

    def go() -> RunResult:
        tools = [add, *fillers]
        result = run(ScriptedModel(steps), "add numbers", tools=tools, max_iterations=n + 1)
        return check(result, n)

    return go


def async_loop(n: int, driver: str) -> Callable[[], RunResult]:
    """``run`` with the sync ``add`` (``driver="run sync"``) or the async one, or ``arun``."""
    steps = _steps(n)

    def go() -> RunResult:
        model = ScriptedModel(steps)
        if driver.startswith("run"):
            tool = add if driver == "run sync" else add_async
            result = run(model, "add numbers", tools=[tool], max_iterations=n + 1)
        else:
            result = asyncio.run(
                arun(model, "add numbers", tools=[add_async], max_iterations=n + 1)
            )
        return check(result, n)

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
        results = []
        while True:
            request = {"messages": messages, "tools": definitions}
            message = model(request, turn)
            turn += 1
            messages.append(message)
            if not message.get("tool_calls"):
                if results != [i + 1 for i in range(n)]:
                    raise RuntimeError("the bare loop did not do the work")
                return message["content"]
            for tool_call in message["tool_calls"]:
                function = tools[tool_call["function"]["name"]]
                arguments = json.loads(tool_call["function"]["arguments"])
                result = function(**arguments)
                results.append(result)
                messages.append(
                    {"role": "tool", "tool_call_id": tool_call["id"], "content": json.dumps(result)}
                )

    return go


def measure(cases: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median of ``repeats`` CPU seconds per case, interleaved (GC off while timing).

    CPU time of the process (``time.process_time``: every thread, never the time it
    waited for a core), so the ratios hold on a machine shared with other work.
    """
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for case in cases.values():
        case()  # warm up: imports, caches built on first use
    for _ in range(repeats):
        for name, case in cases.items():
            gc.collect()
            gc.disable()
            try:
                start = time.process_time()
                case()
                samples[name].append(time.process_time() - start)
            finally:
                gc.enable()
    return {name: statistics.median(times) for name, times in samples.items()}


def missed(results: dict[str, float]) -> list[str]:
    """The targets ``results`` misses (those it measured)."""
    return [name for name, limit in TARGETS.items() if results.get(name, 0.0) > limit]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    sizes = [10, 100] if args.quick else [10, 100, 1000]
    repeats = 1 if args.quick else 15
    big = sizes[-1]
    results: dict[str, float] = {}

    cases: dict[str, Callable[[], Any]] = {}
    for n in sizes:
        cases[f"bare N={n}"] = bare_loop(n, 10)
        cases[f"run N={n}"] = harness_loop(n, 10)
    many = 1_000 if args.quick else 10_000
    cases["run N=10, 10 functions"] = function_list_loop(10, 10)
    cases[f"run N=10, {many:,} functions"] = function_list_loop(10, many)
    async_n = 100 if args.quick else 1000
    cases[f"run N={async_n}, sync tool"] = async_loop(async_n, "run sync")
    cases[f"run N={async_n}, async tool"] = async_loop(async_n, "run")
    cases[f"arun N={async_n}, async tool"] = async_loop(async_n, "arun")
    seconds = measure(cases, repeats)

    def per_iteration(name: str) -> float:
        n = int(name.split("N=")[1].split(",")[0])
        return seconds[name] / n * 1e6

    print(f"{'case':<30}{'us/iteration':>14}")
    for name in cases:
        results[f"{name} us"] = per_iteration(name)
        print(f"{name:<30}{per_iteration(name):>14.2f}")
    for n in sizes:
        results[f"run/bare N={n}"] = per_iteration(f"run N={n}") / per_iteration(f"bare N={n}")
    results["many/10 tools N=10"] = (
        seconds[f"run N=10, {many:,} functions"] / seconds["run N=10, 10 functions"]
    )
    results["arun/run"] = (
        seconds[f"arun N={async_n}, async tool"] / seconds[f"run N={async_n}, sync tool"]
    )
    results["linearity"] = per_iteration(f"run N={big}") / per_iteration(f"run N={sizes[0]}")
    print(f"\n{'ratio':<30}{'measured':>10}{'target':>8}")
    failed = missed(results)
    for name in (*(f"run/bare N={n}" for n in sizes), "many/10 tools N=10", "arun/run"):
        target = TARGETS.get(name)
        shown = f"{target:.1f}x" if target else ""
        verdict = ("  MISSED" if name in failed else "  met") if target else ""
        print(f"{name:<30}{results[name]:>9.2f}x{shown:>8}{verdict}")
    label = f"linearity (N={big} vs {sizes[0]})"
    print(f"{label:<30}{results['linearity']:>9.2f}")
    if args.check and failed:
        raise SystemExit(f"missed: {', '.join(failed)}")
    return results


if __name__ == "__main__":
    main()
