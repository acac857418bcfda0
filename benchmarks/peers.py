"""The same tool loop on the harness and on the agent frameworks people test with, side by side.

The workload, identical for every system: a fake model calls ``add(a=i, b=1)``
N times, one call per turn, then answers ``done``. No network, no tracing
exporters. Systems: a bare hand-written loop (the unit every ratio is taken
against), ``harness.run`` with a ``ScriptedModel``, pydantic-ai (``FunctionModel``),
LangGraph (``create_react_agent`` with a fake chat model) and the OpenAI Agents
SDK (a custom ``Model``). Peers come from the optional ``bench`` extra
(``pip install 'tool-loop-harness[bench]'``); a peer that is not installed is
skipped with a note.

Every timed run is checked: N tool results holding the right sums, and the
final answer. Cases are interleaved (each once per round), best of the rounds.

Run: ``python benchmarks/peers.py`` (``--quick`` for a smoke run, ``--sizes``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

from harness import RunResult, ScriptedModel, call, llm_tool, reply, run


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _expected(n: int) -> list[int]:
    return [i + 1 for i in range(n)]


def _checked(system: str, sums: list[Any], output: Any, n: int) -> None:
    got = [int(s) for s in sums]
    if got != _expected(n) or output != "done":
        raise RuntimeError(
            f"{system}: the timed run did not do the work: {len(got)}/{n} results "
            f"(first ones: {got[:3]!r}), output={output!r}"
        )


# -- the systems ----------------------------------------------------------------------


def bare(n: int) -> None:
    """A hand-written loop: dict messages, a dict of functions, ``json.loads``."""
    functions: dict[str, Callable[..., Any]] = {"add": lambda a, b: a + b}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add numbers"}]
    sums = []
    for turn in range(n + 1):
        if turn == n:
            messages.append({"role": "assistant", "content": "done"})
            break
        arguments = json.dumps({"a": turn, "b": 1})
        messages.append({"role": "assistant", "tool_calls": [{"name": "add", "args": arguments}]})
        result = functions["add"](**json.loads(arguments))
        sums.append(result)
        messages.append({"role": "tool", "content": json.dumps(result)})
    _checked("bare", sums, messages[-1]["content"], n)


def harness_run(n: int) -> None:
    """``harness.run`` with a ``ScriptedModel`` (trace, events, default strategies)."""
    steps = [call("add", {"a": i, "b": 1}) for i in range(n)] + [reply("done")]
    result: RunResult = run(ScriptedModel(steps), "add numbers", tools=[add], max_iterations=n + 1)
    calls = result.trace.calls
    _checked("harness", [c.value for c in calls if not c.is_error], result.output, n)


def _pydantic_ai() -> Callable[[int], None]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    def go(n: int) -> None:
        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            done = sum(1 for m in messages for p in m.parts if isinstance(p, ToolReturnPart))
            if done >= n:
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart("add", {"a": done, "b": 1})])

        agent = Agent(FunctionModel(respond), tools=[add])
        # asyncio.run, not run_sync: run_sync leaves its event loop open
        limits = UsageLimits(request_limit=None)
        result = asyncio.run(agent.run("add numbers", usage_limits=limits))
        sums = [
            p.content
            for m in result.all_messages()
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        _checked("pydantic-ai", sums, result.output, n)

    return go


def _langgraph() -> Callable[[int], None]:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as lc_tool

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    class Scripted(BaseChatModel):
        n: int

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            done = sum(1 for m in messages if isinstance(m, ToolMessage))
            if done >= self.n:
                message = AIMessage(content="done")
            else:
                message = AIMessage(
                    content="",
                    tool_calls=[{"name": "add", "args": {"a": done, "b": 1}, "id": f"c{done}"}],
                )
            return ChatResult(generations=[ChatGeneration(message=message)])

    @lc_tool
    def lc_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    lc_add.name = "add"

    def go(n: int) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(Scripted(n=n), [lc_add])
        state = agent.invoke(
            {"messages": [("user", "add numbers")]}, {"recursion_limit": 2 * n + 10}
        )
        sums = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
        _checked("langgraph", sums, state["messages"][-1].content, n)

    return go


def _openai_agents() -> Callable[[int], None]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    class Scripted(Model):
        def __init__(self, n: int) -> None:
            self.n = n

        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            done = sum(
                1
                for item in input
                if isinstance(item, dict) and item.get("type") == "function_call_output"
            )
            if done >= self.n:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output: list[Any] = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            else:
                output = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"c{done}",
                        name="add",
                        arguments=json.dumps({"a": done, "b": 1}),
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            raise NotImplementedError

    @function_tool
    def agents_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    agents_add.name = "add"

    def go(n: int) -> None:
        agent = Agent(name="bench", model=Scripted(n), tools=[agents_add])
        result = asyncio.run(Runner.run(agent, "add numbers", max_turns=n + 5))
        sums = [
            item.output for item in result.new_items if type(item).__name__ == "ToolCallOutputItem"
        ]
        _checked("openai-agents", sums, result.final_output, n)

    return go


PEERS: dict[str, tuple[str, Callable[[], Callable[[int], None]]]] = {
    "pydantic-ai": ("pydantic-ai-slim", _pydantic_ai),
    "langgraph": ("langgraph", _langgraph),
    "openai-agents": ("openai-agents", _openai_agents),
}


def systems(notes: list[str]) -> dict[str, Callable[[int], None]]:
    """The bare loop, the harness, and every installed peer (missing ones noted)."""
    found: dict[str, Callable[[int], None]] = {"bare loop": bare, "harness.run": harness_run}
    for name, (distribution, load) in PEERS.items():
        try:
            found[f"{name} {importlib.metadata.version(distribution)}"] = load()
        except ImportError as exc:
            notes.append(f"{name}: skipped, not installed ({exc.name}); pip install '.[bench]'")
    return found


def measure(found: dict[str, Callable[[int], None]], n: int, rounds: int) -> dict[str, float]:
    """Best-of-``rounds`` µs per iteration of each system, interleaved (GC off while timing)."""
    best = dict.fromkeys(found, float("inf"))
    for go in found.values():
        go(min(n, 3))  # warm up
    for _ in range(rounds):
        for name, go in found.items():
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                go(n)
                best[name] = min(best[name], time.perf_counter() - start)
            finally:
                gc.enable()
    return {name: seconds / n * 1e6 for name, seconds in best.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one round")
    parser.add_argument("--sizes", type=int, nargs="+", help="iterations per run (default 10 100)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([3, 10] if args.quick else [10, 100])
    rounds = 1 if args.quick else args.rounds
    notes: list[str] = []
    found = systems(notes)
    costs = {n: measure(found, n, rounds) for n in sizes}
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}; harness {importlib.metadata.version('tool-loop-harness')}"
    )
    head = " | ".join(f"N={n} µs (×bare)" for n in sizes)
    print(f"| system | {head} | growth {sizes[0]}→{sizes[-1]} |")
    print("| --- |" + " ---: |" * (len(sizes) + 1))
    results: dict[str, Any] = {"notes": notes}
    for name in found:
        cells = []
        for n in sizes:
            cost = costs[n][name]
            ratio = cost / costs[n]["bare loop"]
            results[f"{name} N={n}"] = cost
            results[f"{name} N={n} ratio"] = ratio
            cells.append(f"{cost:,.1f} ({ratio:,.0f}×)")
        growth = (costs[sizes[-1]][name] * sizes[-1]) / (costs[sizes[0]][name] * sizes[0])
        results[f"{name} growth"] = growth
        print(f"| {name} | " + " | ".join(cells) + f" | {growth:,.1f}× |")
    for note in notes:
        print(note)
    return results


if __name__ == "__main__":
    main()
