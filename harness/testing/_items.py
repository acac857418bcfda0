"""Scenario files collected as pytest items, and the ``harness_scenario`` marker's runs."""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import _check_sink as _sink
from harness._errors import HarnessError, UsageError
from harness.assertions import render_table
from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

__all__ = [
    "ScenarioFailed",
    "ScenarioFile",
    "ScenarioItem",
    "describe_failure",
    "matches_patterns",
    "run_scenario_file",
    "scenario_paths",
]


class ScenarioFailed(Exception):
    """A scenario run did not meet its expectations."""

    def __init__(self, outcome: ScenarioOutcome) -> None:
        self.outcome = outcome
        super().__init__(describe_failure(outcome))


def describe_failure(outcome: ScenarioOutcome) -> str:
    """The problem and the timeline table, the divergence marked."""
    divergence = outcome.divergence
    lines = [f"scenario {outcome.scenario.name!r} failed: {outcome.problem}"]
    if outcome.rows or divergence is not None:
        lines.extend(
            render_table(
                outcome.rows,
                mark=divergence.iteration if divergence else None,
                expected=divergence.expected if divergence else None,
            )
        )
    return "\n".join(lines)


def run_scenario_file(path: Path) -> ScenarioOutcome:
    """Load and run one scenario; its trace goes to the test report."""
    outcome = run_scenario(load_scenario(path))
    _sink.record_trace(outcome.trace)
    return outcome


def matches_patterns(path: Path, root: Path, patterns: Iterable[str]) -> bool:
    """True when ``path`` (relative to ``root``, ``/``-separated) matches a glob pattern."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return False
    return any(fnmatch.fnmatchcase(relative, p.strip()) for p in patterns if p.strip())


def scenario_paths(pattern: str, bases: Iterable[Path]) -> list[Path]:
    """Files for a marker's path or glob, tried relative to each base folder in turn."""
    for base in bases:
        full = Path(pattern) if Path(pattern).is_absolute() else base / pattern
        found = sorted(Path(p) for p in glob.glob(str(full), recursive=True))
        if found:
            return found
    raise UsageError(
        f"harness_scenario({pattern!r}) matches no file (looked relative to "
        f"{', '.join(str(b) for b in bases)}); fix the path or glob"
    )


class ScenarioItem(pytest.Item):
    """Runs one scenario file and checks its expectations (timeline, output, error)."""

    def runtest(self) -> None:
        from harness.testing import _options as opts
        from harness.testing._network import deny_network

        network = opts.cli_or_ini(self.config, opts.NETWORK) or "deny"
        if network == "allow":
            outcome = run_scenario_file(self.path)
        else:
            how = "Scenario files run offline; pass --harness-network=allow to permit it."
            with deny_network(self.nodeid, how):
                outcome = run_scenario_file(self.path)
        if not outcome.passed:
            raise ScenarioFailed(outcome)

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        if isinstance(excinfo.value, HarnessError):
            return f"scenario {self.name!r}: {type(excinfo.value).__name__}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.name}"


class ScenarioFile(pytest.File):
    """A scenario YAML file: one item named after the scenario."""

    def collect(self) -> Iterator[ScenarioItem]:
        scenario = load_scenario(self.path)
        yield ScenarioItem.from_parent(self, name=scenario.name)
