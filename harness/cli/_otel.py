"""``--otel FILE`` of ``harness run`` and ``harness fuzz``: scenario runs as OTLP JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

__all__ = ["write_counterexamples", "write_outcomes"]


def _runs(outcome: ScenarioOutcome, extra: Mapping[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
    """Each session of a scenario outcome: its trace and the attributes that name it."""
    scenario = outcome.scenario
    base = {
        "harness.scenario": scenario.name,
        "harness.scenario.path": str(scenario.path or ""),
        "harness.scenario.passed": outcome.passed,
        **extra,
    }
    if outcome.sessions:
        return [
            (s.trace, {**base, "harness.session": s.name})
            for s in outcome.sessions
            if s.trace is not None
        ]
    return [(outcome.trace, base)] if outcome.trace is not None else []


def write_outcomes(
    outcomes: Sequence[ScenarioOutcome],
    path: Path,
    *,
    kind: str = "scenario",
    extra: Mapping[str, Any] | None = None,
    append: bool = False,
) -> int:
    """Write every session of ``outcomes`` to ``path`` (one OTLP JSON line per call); the
    number of runs written."""
    from harness.traces._api import encode_runs, write_document
    from harness.traces._export import ExportOptions

    items = [
        (trace, ExportOptions(kind=kind, name=str(named["harness.scenario"]), attributes=named))
        for outcome in outcomes
        for trace, named in _runs(outcome, extra or {})
    ]
    if items:
        write_document(encode_runs(items), path, append=append)
    return len(items)


def write_counterexamples(files: Sequence[str], failures: Sequence[str], path: Path) -> int:
    """Replay each counterexample scenario file and write its runs to ``path``."""
    outcomes = []
    for file, failure in zip(files, [*failures, *[""] * len(files)], strict=False):
        extra = {"harness.fuzz.counterexample": file, "harness.fuzz.failure": failure}
        outcomes.append((run_scenario(load_scenario(Path(file))), extra))
    written = 0
    for k, (outcome, extra) in enumerate(outcomes):
        written += write_outcomes([outcome], path, kind="counterexample", extra=extra, append=k > 0)
    return written
