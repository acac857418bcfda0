"""Time-to-bug of ``harness fuzz --agent`` on agents with planted bugs, beside a random walk.

For each agent of ``benchmarks/fuzz_agents`` (mail, crm, shop, admin, bank, support,
seats, research, release: 2 to 8 calls deep) and each seed, it runs:

- ``fuzz_agent`` (the harness: hypothesis, values copied from results, guided search,
  shrinking) with a 60 s budget, one process;
- the deliberately simple random walk of ``benchmarks/fuzz_walk.py``, with and without
  copying values from earlier results, with the same budget.

Each line gives whether the bug was found, the wall and CPU seconds to the first
failing run, the runs it took, and (harness) the model turns of the shrunk
counterexample next to the target (depth + 2, depth counting the tool calls of the
shortest path to the bug). The machine is shared: CPU seconds are
the fairer clock. It ends with totals and the harness's runs per CPU second.

Run: ``python benchmarks/fuzz_agents_bench.py`` (``--seeds 0,1,2``, ``--agents mail,shop``,
``--seconds 60``, ``--guidance coverage|corpus|target|none`` to compare the guided search
with plain generation, ``--no-walk``, ``--quick`` for the smoke test).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from fuzz_agents import AGENTS, BenchAgent  # noqa: E402
from fuzz_walk import walk  # noqa: E402

from harness.fuzz import fuzz_agent  # noqa: E402


def _harness(
    agent: BenchAgent, seed: int, seconds: float, guidance: str, examples: int = 10**7
) -> dict[str, Any]:
    cpu = time.process_time()
    report = fuzz_agent(
        agent.factory,
        list(agent.properties),
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
    }


def _walk(agent: BenchAgent, seed: int, seconds: float, copy: bool) -> dict[str, Any]:
    cpu = time.process_time()
    result = walk(agent.factory, agent.properties, seconds=seconds, seed=seed, copy=copy)
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
    wall = f"{row['wall']:6.1f}s" if row["wall"] is not None else "      -"
    cpu = f"{row['cpu']:6.1f}s" if row["cpu"] is not None else "      -"
    runs = f"{row['runs']:6d}" if row["runs"] is not None else "     -"
    steps = (
        f" steps={row['steps']} (target {agent.depth + 2})" if row.get("steps") is not None else ""
    )
    return (
        f"{name:16} {agent.name:9} seed={seed} {found} wall={wall} cpu={cpu} runs={runs}"
        f"{steps} rate={row['rate']:.0f}/cpu-s"
    )


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Run the benchmark; return the rows per fuzzer (for the smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--agents", default="")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--guidance", default="coverage")
    parser.add_argument("--no-walk", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="two shallow agents, at most 500 examples each (the smoke test: a count, not a "
        "time budget, so a loaded machine finds the same bugs)",
    )
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    chosen = [a for a in AGENTS if not args.agents or a.name in args.agents.split(",")]
    seconds, examples = args.seconds, 10**7
    if args.quick:
        chosen, seeds = [a for a in AGENTS if a.name in ("mail", "bank")], [0]
        seconds, examples = 600.0, 500  # the seconds only stop a run that hangs
    rows: dict[str, list[dict[str, Any]]] = {"harness": [], "walk": [], "walk-no-copy": []}
    for agent in chosen:
        for seed in seeds:
            row = _harness(agent, seed, seconds, args.guidance, examples)
            rows["harness"].append({"agent": agent.name, **row})
            print(_line(f"harness/{args.guidance}", agent, seed, row), flush=True)
            if args.no_walk:
                continue
            for name, copy in (("walk", True), ("walk-no-copy", False)):
                row = _walk(agent, seed, seconds, copy)
                rows[name].append({"agent": agent.name, **row})
                print(_line(name, agent, seed, row), flush=True)
    print()
    for name, items in rows.items():
        if not items:
            continue
        found = [r for r in items if r["found"]]
        cpu = [r["cpu"] for r in found]
        median = f"{statistics.median(cpu):.1f}s" if cpu else "-"
        rate = statistics.mean(r["rate"] for r in items)
        print(
            f"{name:16} found {len(found)}/{len(items)}, median CPU to the bug {median}, "
            f"{rate:.0f} runs/CPU-s"
        )
    return rows


if __name__ == "__main__":
    main()
