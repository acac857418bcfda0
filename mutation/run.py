"""Mutation testing of the critical modules with cosmic-ray (a manual job, not CI).

Each critical module is mapped to the test files that exercise it, so one
mutant costs one bounded pytest run (``-x``: the first failing test kills it).
A run may sample mutants per module (``--sample``), seeded, so two runs with the
same seed test the same mutants.

    pip install -e '.[dev,mutation]'
    python mutation/run.py                         # every module, every mutant
    python mutation/run.py --sample 12 --seed 17   # 12 mutants per module
    python mutation/run.py discovery network       # chosen modules only

Sessions (SQLite, one per module) go to ``.mutation/``; ``cr-report
.mutation/<module>.sqlite`` shows them again. Mutants are applied IN PLACE to
the source files and restored after each test run: do not edit the tree while a
run is going, and run one campaign at a time. A surviving mutant is printed with
its diff; kill it with a test or record in docs/contributing.md why it is
equivalent. A line may opt out with ``# pragma: no mutate`` (say why).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT / ".mutation"


@dataclasses.dataclass(frozen=True)
class Target:
    """A critical module (one or more source files) and the tests that exercise it."""

    sources: tuple[str, ...]
    tests: tuple[str, ...]
    #: sources whose annotations are read at run time (a tool built from a function
    #: of theirs): mutants in their annotations are tested, not skipped
    runtime_annotations: tuple[str, ...] = ()


TARGETS: dict[str, Target] = {
    "loop_core": Target(
        ("harness/loop/_core.py", "harness/loop/_trace_builder.py", "harness/loop/_calls.py"),
        (
            "tests/loop/test_loop_core.py",
            "tests/loop/test_loop_bad_input.py",
            "tests/loop/test_loop_hostile_input.py",
            "tests/loop/test_loop_trace.py",
            "tests/loop/test_loop_async_tools.py",
        ),
    ),
    "loop_completions": Target(
        ("harness/loop/_completions.py", "harness/loop/_ledger.py"),
        (
            "tests/loop/test_completion_queue.py",
            "tests/loop/test_loop_async_tools.py",
            "tests/loop/test_async_tools_properties.py",
        ),
    ),
    "completion_callback": Target(
        ("harness/tools/_completion.py",),
        ("tests/loop/test_loop_async_tools.py", "tests/loop/test_async_tools_properties.py"),
    ),
    "context_injection": Target(
        ("harness/tools/_inject.py",),
        (
            "tests/tools/test_tool_injection.py",
            "tests/tools/test_injection_properties.py",
            "tests/loop/test_loop_injection.py",
        ),
    ),
    "loop_phases": Target(("harness/loop/_phases.py",), ("tests/loop/test_loop_phases.py",)),
    "loop_execution": Target(
        ("harness/loop/_execution.py",),
        (
            "tests/loop/test_loop_execution.py",
            "tests/loop/test_loop_timeouts.py",
            "tests/loop/test_loop_drivers.py",
        ),
    ),
    "discovery": Target(
        ("harness/injection/_discovery.py",),
        (
            "tests/injection/test_entity_discovery.py",
            "tests/injection/test_discovery_object_graphs.py",
            "tests/injection/test_discovery_limit_boundary.py",
        ),
    ),
    "facade": Target(
        ("harness/injection/_facade.py",),
        ("tests/injection/test_facade.py", "tests/injection/test_facade_declarative.py"),
    ),
    "playbook": Target(("harness/injection/_playbook.py",), ("tests/injection/test_playbook.py",)),
    "state_machine": Target(
        ("harness/injection/_state_machine.py",), ("tests/injection/test_state_machine.py",)
    ),
    "sections": Target(
        (
            "harness/injection/_sections.py",
            "harness/injection/_sections_run.py",
            "harness/injection/_sections_strategy.py",
        ),
        ("tests/injection/test_sections.py", "tests/loop/test_loop_strategy.py"),
        runtime_annotations=("harness/injection/_sections_strategy.py",),  # read_section
    ),
    "scrubbing": Target(
        ("harness/testing/_scrub.py", "harness/_secrets.py"),
        ("tests/test_secrets.py", "tests/plugin/test_cassette_secrets.py"),
    ),
    "network_guard": Target(
        ("harness/testing/_network.py",),
        ("tests/plugin/test_network_guard.py", "tests/plugin/test_plugin_network.py"),
    ),
    "sdk_fast_path": Target(
        ("harness/models/_openai/_fast.py", "harness/models/_wire/_decode.py"),
        ("tests/models/test_openai_fast_path.py", "tests/models/test_wire_incremental.py"),
    ),
    "wire_validation": Target(
        ("harness/formats/_openai.py", "harness/formats/anthropic_messages/_validation.py"),
        ("tests/models/test_wire_validation.py", "tests/models/test_anthropic_wire.py"),
    ),
}


def test_command(target: Target) -> str:
    # -B: no bytecode is written, so a mutant never leaves a stale .pyc behind.
    args = [sys.executable, "-B", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    return shlex.join([*args, *target.tests])


def _config(name: str, target: Target, timeout: float) -> Path:
    path = SESSIONS / f"{name}.toml"
    paths = ", ".join(json.dumps(s) for s in target.sources)
    path.write_text(
        "[cosmic-ray]\n"
        f"module-path = [{paths}]\n"
        f"timeout = {timeout:.1f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command(target))}\n"
        '\n[cosmic-ray.distributor]\nname = "local"\n',
        encoding="utf-8",
    )
    return path


def _baseline(target: Target) -> float:
    """Seconds the unmutated tests take; they must pass, or no mutant can be judged."""
    start = time.monotonic()
    done = subprocess.run(shlex.split(test_command(target)), cwd=ROOT, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"the tests of {target.sources} fail unmutated:\n{done.stdout.decode()[-2000:]}")
    return time.monotonic() - start


Span = tuple[tuple[int, int], tuple[int, int]]


def _annotation_spans(path: Path) -> list[Span]:
    """(line, column) spans of annotations: with ``from __future__ import annotations``
    they are never evaluated, so mutants inside them are equivalent by construction."""
    spans: list[Span] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        found: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node.returns)
            every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            every += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
            found.extend(a.annotation for a in every)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for annotation in found:
            if annotation is not None:
                end = (annotation.end_lineno or 0, annotation.end_col_offset or 0)
                spans.append(((annotation.lineno, annotation.col_offset), end))
    return spans


def in_annotation(position: tuple[int, int], spans: list[Span]) -> bool:
    """Whether a mutation starting at ``position`` (line, column) is inside an annotation."""
    return any(start <= position < end for start, end in spans)


def _sample(session: Path, target: Target, size: int | None, seed: int) -> tuple[int, int, int]:
    """Skip annotation mutants, then all but ``size`` seeded-random pending ones.

    Returns (mutants, annotation mutants skipped, mutants kept).
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    skip = WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="annotation")
    annotations = {
        (ROOT / source).resolve(): _annotation_spans(ROOT / source)
        for source in target.sources
        if source not in target.runtime_annotations
    }
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = list(db.pending_work_items)
        in_annotations = [
            item.job_id
            for item in items
            if in_annotation(
                tuple(item.mutations[0].start_pos),
                annotations.get((ROOT / item.mutations[0].module_path).resolve(), []),
            )
        ]
        if in_annotations:
            db.set_multiple_results(in_annotations, skip)
        pending = sorted(set(item.job_id for item in items) - set(in_annotations))
        total = len(items)
        if size is None or size >= len(pending):
            return total, len(in_annotations), len(pending)
        keep = set(random.Random(f"{seed}:{session.stem}").sample(pending, size))
        skipped = [job for job in pending if job not in keep]
        db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return total, len(in_annotations), size
        total = len(pending)
        if size is None or size >= total:
            return total, total
        keep = set(random.Random(f"{seed}:{session.stem}").sample(pending, size))
        skipped = [job for job in pending if job not in keep]
        db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return total, size


def _report(session: Path) -> dict[str, object]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    killed = survived = incompetent = 0
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome is WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome is TestOutcome.KILLED:
                killed += 1
            elif result.test_outcome is TestOutcome.SURVIVED:
                survived += 1
                mutation = item.mutations[0]
                survivors.append(
                    {
                        "job": item.job_id,
                        "where": f"{mutation.module_path}:{mutation.start_pos[0]}",
                        "operator": mutation.operator_name,
                        "diff": result.diff,
                    }
                )
            else:
                incompetent += 1
    judged = killed + survived
    return {
        "killed": killed,
        "survived": survived,
        "incompetent": incompetent,
        "kill_rate": round(100 * killed / judged, 1) if judged else None,
        "survivors": survivors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(TARGETS)}")
    parser.add_argument("--sample", type=int, default=None, help="mutants per module")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules) - set(TARGETS))
    if unknown:
        parser.error(f"unknown modules {unknown}; choose from {', '.join(TARGETS)}")
    SESSIONS.mkdir(exist_ok=True)
    summary = {}
    for name in args.modules or list(TARGETS):
        target = TARGETS[name]
        baseline = _baseline(target)
        config = _config(name, target, timeout=max(30.0, 4 * baseline))
        session = SESSIONS / f"{name}.sqlite"
        subprocess.run(["cosmic-ray", "init", "--force", str(config), str(session)], check=True)
        subprocess.run(["cr-filter-pragma", str(session)], check=True)
        total, annotation, kept = _sample(session, target, args.sample, args.seed)
        start = time.monotonic()
        subprocess.run(["cosmic-ray", "exec", str(config), str(session)], check=True)
        result = _report(session)
        result.update(
            mutants=total,
            annotation_mutants=annotation,
            tested=kept,
            seconds=round(time.monotonic() - start),
        )
        summary[name] = result
        print(
            f"{name}: {result['killed']}/{result['killed'] + result['survived']} killed "  # type: ignore[operator]
            f"({result['kill_rate']}%), {kept} of {total} mutants "
            f"({annotation} in annotations skipped), {result['seconds']}s",
            flush=True,
        )
        for survivor in result["survivors"]:  # type: ignore[attr-defined]
            print(f"  SURVIVED {survivor['where']} {survivor['operator']}\n{survivor['diff']}")
    (SESSIONS / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
