"""Time-to-bug of ``harness fuzz --agent`` on agents with planted bugs, beside a random walk.

For each agent of ``benchmarks/fuzz_agents`` (mail, crm, shop, admin, bank, support,
seats, research, release: 2 to 8 calls deep; ledger, quota, venue: bugs in sums and
counters over several calls) and each seed, it runs:

- ``fuzz_agent`` (the harness: hypothesis, values copied from results, guided search,
  shrinking) with a 60 s budget, one process;
- the deliberately simple random walk of ``benchmarks/fuzz_walk.py``, with and without
  copying values from earlier results, with the same budget.

Then the three agents built on other frameworks (pydantic-ai, the OpenAI Agents SDK, a
hand-written ``openai`` loop), fuzzed through the wire (``fuzz_agent(..., wire=...)``);
the walk plays the harness loop only, so it has no line there.

Each line gives whether the bug was found, the wall and CPU seconds to the first
failing run, the runs it took, and (harness) the model turns of the shrunk
counterexample next to the target (depth + 2, depth counting the tool calls of the
shortest path to the bug) and the moves behind the failing run's calls. The machine is
shared: CPU seconds are the fairer clock. It ends with totals and the harness's runs per
CPU second.

``--throughput N`` measures speed alone instead: N examples of each agent with no
property (the search stops early only on the support agent, whose bug a built-in
invariant finds), runs per CPU second of the search.

Run: ``python benchmarks/fuzz_agents_bench.py`` (``--seeds 0,1,2``, ``--agents mail,shop``,
``--seconds 60``, ``--guidance coverage|corpus|target|none`` to compare the guided search
with plain generation, ``--no-walk`` or ``--walks walk``, ``--no-wire``, ``--without
repeat,limit`` to leave moves out, ``--throughput N``, ``--quick`` for the smoke test).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from fuzz_agents import AGENTS, WIRE_AGENTS, BenchAgent  # noqa: E402
from fuzz_walk import walk  # noqa: E402

from harness.fuzz import fuzz_agent  # noqa: E402

MOVES = ("repeat", "limit")
"""Moves ``--without`` can leave out (to see which finds which bug)."""


@contextlib.contextmanager
def _without(moves: set[str]) -> Iterator[None]:
    """The fuzzer with ``moves`` left out: repeated calls, walks toward a limit."""
    if not moves:
        yield
        return
    import dataclasses

    from harness.fuzz.agent import _args, _runs

    swarms = _runs.swarms
    defaults = _args.ArgumentMaker.__init__.__kwdefaults__
    limit = defaults["limit_percent"]

    def no_repeat() -> Any:
        return swarms().map(lambda s: dataclasses.replace(s, repeat_percent=0))

    if "repeat" in moves:
        _runs.swarms = no_repeat  # type: ignore[assignment]
    if "limit" in moves:
        defaults["limit_percent"] = 0
    try:
        yield
    finally:
        _runs.swarms = swarms  # type: ignore[assignment]
        defaults["limit_percent"] = limit


def _harness(
    agent: BenchAgent, seed: int, seconds: float, guidance: str, examples: int = 10**7
) -> dict[str, Any]:
    cpu = time.process_time()
    report = fuzz_agent(
        agent.factory,
        list(agent.properties),
        wire=agent.wire,
        max_seconds=seconds,
        max_examples=examples,
        seed=seed,
        guidance=guidance,  # type: ignore[arg-type]
    )
    cpu = time.process_time() - cpu
    return {
        "found": report.found,
        "wall": report.found_after,
        "cpu": report.found_cpu,
        "runs": report.examples_to_find,
        "steps": report.steps,
        "examples": report.examples,
        "rate": report.examples / cpu if cpu else 0.0,
        "finding": report.finding.name if report.finding else None,
        "moves": report.moves,
    }


def _walk(
    agent: BenchAgent, seed: int, seconds: float, copy: bool, runs: int = 1_000_000
) -> dict[str, Any]:
    cpu = time.process_time()
    result = walk(
        agent.factory, agent.properties, seconds=seconds, seed=seed, copy=copy, max_runs=runs
    )
    cpu = time.process_time() - cpu
    return {
        "found": result.found,
        "wall": result.found_after,
        "cpu": cpu if result.found else None,
        "runs": result.runs if result.found else None,
        "steps": None,
        "examples": result.runs,
        "rate": result.runs / cpu if cpu else 0.0,
    }


def _line(name: str, agent: BenchAgent, seed: int, row: dict[str, Any]) -> str:
    found = "FOUND" if row["found"] else "-----"
    wall = f"{row['wall']:7.2f}s" if row["wall"] is not None else "       -"
    cpu = f"{row['cpu']:7.2f}s" if row["cpu"] is not None else "       -"
    runs = f"{row['runs']:6d}" if row["runs"] is not None else "     -"
    steps = (
        f" steps={row['steps']} (target {agent.depth + 2})" if row.get("steps") is not None else ""
    )
    moves = row.get("moves")
    shown = " moves=" + ",".join(f"{k}:{v}" for k, v in sorted(moves.items())) if moves else ""
    return (
        f"{name:16} {agent.name:9} seed={seed} {found} wall={wall} cpu={cpu} runs={runs}"
        f"{steps} rate={row['rate']:.0f}/cpu-s{shown}"
    )


def _warm_up() -> None:
    """Imports and first-use caches (hypothesis, the schema strategies) before timing."""
    first = AGENTS[0]
    fuzz_agent(first.factory, [], max_examples=20, seed=99)
    walk(first.factory, [], max_runs=20, seconds=60)


def throughput(agents: list[BenchAgent], examples: int) -> dict[str, float]:
    """Runs per CPU second of the search on each agent (no property; see the module)."""
    rates = {}
    for agent in agents:
        cpu = time.process_time()
        report = fuzz_agent(
            agent.factory, [], wire=agent.wire, max_examples=examples, max_seconds=600, seed=1
        )
        cpu = time.process_time() - cpu
        if report.found and report.found_cpu and report.examples_to_find:
            rate = report.examples_to_find / report.found_cpu  # the search, not the shrinking
        else:
            rate = report.examples / cpu if cpu else 0.0
        rates[agent.name] = rate
        print(f"throughput {agent.name:9} {rate:6.0f} runs/cpu-s", flush=True)
    print(f"throughput mean      {statistics.mean(rates.values()):6.0f} runs/cpu-s")
    return rates


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--agents", default="")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--guidance", default="coverage")
    parser.add_argument("--no-walk", action="store_true")
    parser.add_argument(
        "--walks", default="walk,walk-no-copy", help="which walks to run (walk, walk-no-copy)"
    )
    parser.add_argument("--no-wire", action="store_true", help="leave the framework agents out")
    parser.add_argument("--without", default="", help=f"moves to leave out: {', '.join(MOVES)}")
    parser.add_argument("--throughput", type=int, default=0, help="N examples per agent")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="two shallow agents, at most 500 examples each (the smoke test: a count, not a "
        "time budget, so a loaded machine finds the same bugs)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Run the benchmark; return the rows per fuzzer (for the smoke test)."""
    args = _parse(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = set(args.agents.split(",")) if args.agents else None
    chosen = [a for a in (*AGENTS, *WIRE_AGENTS) if names is None or a.name in names]
    if args.no_wire:
        chosen = [a for a in chosen if a.wire is None]
    seconds, examples, runs = args.seconds, 10**7, 1_000_000
    if args.quick:
        chosen, seeds = [a for a in AGENTS if a.name in ("mail", "bank")], [0]
        seconds, examples, runs = 600.0, 500, 2_000  # the seconds only stop a run that hangs
    rows: dict[str, list[dict[str, Any]]] = {"harness": [], "walk": [], "walk-no-copy": []}
    without = {m for m in args.without.split(",") if m}
    if args.throughput:
        with _without(without):
            throughput(chosen, args.throughput)
        return rows
    if not args.quick:
        _warm_up()
    for agent in chosen:
        for seed in seeds:
            with _without(without):
                row = _harness(agent, seed, seconds, args.guidance, examples)
            rows["harness"].append({"agent": agent.name, "seed": seed, **row})
            print(_line(f"harness/{args.guidance}", agent, seed, row), flush=True)
            if args.no_walk or agent.wire is not None:
                continue
            for name, copy in (("walk", True), ("walk-no-copy", False)):
                if name not in args.walks.split(","):
                    continue
                row = _walk(agent, seed, seconds, copy, runs)
                rows[name].append({"agent": agent.name, "seed": seed, **row})
                print(_line(name, agent, seed, row), flush=True)
    print()
    for name, items in rows.items():
        if not items:
            continue
        found = [r for r in items if r["found"]]
        cpu = [r["cpu"] for r in found]
        median = f"{statistics.median(cpu):.2f}s" if cpu else "-"
        rate = statistics.mean(r["rate"] for r in items)
        print(
            f"{name:16} found {len(found)}/{len(items)}, median CPU to the bug {median}, "
            f"{rate:.0f} runs/CPU-s"
        )
    return rows


if __name__ == "__main__":
    main()
