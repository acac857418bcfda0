"""``fuzz_agent`` on N worker processes or on Ray: distinct seeds, the first failure wins.

Each worker runs its own search (seed ``seed + 1000 * i``, an equal share of the
example budget, the same time budget). The first worker to report a failure makes the
others stop (a stop file on this machine; cancelled tasks on Ray); its shrunk
counterexample is the campaign's, written by the worker that found it.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness.fuzz._ray import connect_ray
from harness.fuzz.agent._report import AgentFuzzReport
from harness.fuzz.agent._search import SearchConfig, search_entry

__all__ = ["run_parallel"]


def _configs(config: SearchConfig, workers: int, stop_file: str) -> list[SearchConfig]:
    share = max(1, math.ceil(config.max_examples / workers))
    return [
        dataclasses.replace(
            config, seed=config.seed + 1000 * i, max_examples=share, stop_file=stop_file
        )
        for i in range(workers)
    ]


def _merge(report: AgentFuzzReport, part: AgentFuzzReport, stop_file: str) -> None:
    if part.found and not report.found:
        Path(stop_file).touch()  # the others stop at their next example
    report.merge(part)


def run_parallel(
    config: SearchConfig,
    *,
    workers: int,
    ray: str | None,
    progress: Callable[[int], None] | None = None,
) -> AgentFuzzReport:
    """Run ``config``'s search on ``workers`` processes (or Ray tasks) and merge them."""
    if config.factory_spec is None or config.properties_spec is None:
        raise UsageError(
            "with workers or Ray, name the agent factory and the properties by import path "
            "('module:function'), so that every worker process can import them"
        )
    if ray is not None and not ray.strip():
        raise UsageError("ray must be 'local' or a cluster address, got an empty string")
    folder = tempfile.mkdtemp(prefix="harness-fuzz-")
    stop_file = str(Path(folder) / "stop")
    started = time.perf_counter()
    report = AgentFuzzReport(agent=config.factory_spec, seed=config.seed, workers=workers)
    report.seed = config.seed
    try:
        configs = _configs(config, workers, stop_file)
        if ray:
            _on_ray(configs, ray, workers, report, stop_file, progress)
        else:
            _on_processes(configs, workers, report, stop_file, progress)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    return report


def _on_processes(
    configs: list[SearchConfig],
    workers: int,
    report: AgentFuzzReport,
    stop_file: str,
    progress: Callable[[int], None] | None,
) -> None:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = [pool.submit(search_entry, c) for c in configs]
        try:
            for future in concurrent.futures.as_completed(futures):
                part = future.result()
                _merge(report, part, stop_file)
                if progress is not None:
                    progress(part.examples)
        except KeyboardInterrupt:
            report.interrupted = True
            Path(stop_file).touch()


def _on_ray(
    configs: list[SearchConfig],
    address: str,
    workers: int,
    report: AgentFuzzReport,
    stop_file: str,
    progress: Callable[[int], None] | None,
) -> None:
    ray, started_here = connect_ray(address, workers)
    remote: Any = ray.remote(search_entry)
    pending = [remote.remote(c) for c in configs]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                part = ray.get(ref)
                _merge(report, part, stop_file)
                if progress is not None:
                    progress(part.examples)
            if report.found:  # workers elsewhere cannot see the stop file
                for ref in pending:
                    ray.cancel(ref)
                for ref in pending:
                    try:
                        _merge(report, ray.get(ref), stop_file)
                    except Exception:  # cancelled before it reported
                        continue
                pending = []
    except KeyboardInterrupt:
        report.interrupted = True
        for ref in pending:
            ray.cancel(ref)
    finally:
        if started_here:
            ray.shutdown()
