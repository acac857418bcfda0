"""``harness run --json``: the report CI tools read (a contract: docs/scenarios.md#json-report).

```json
{"scenarios": [{"name": "seed_two_turns", "path": "scenarios/sessions/seed_two_turns.yaml",
                "passed": true, "model_requests": 4, "turns": 2, "iterations": 4,
                "error": null}],
 "passed": 1, "failed": 0}
```

Extra keys may be added (``notes``: the tool results that differ from a recording's);
these never change meaning. ``error`` says why a scenario
failed (``null`` when it passed); a file that cannot be loaded gives an empty
``scenarios`` list and a top-level ``error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.cli._output import json_text
from harness.scenarios import ScenarioOutcome

__all__ = ["json_report", "scenario_entry"]


def scenario_entry(outcome: ScenarioOutcome) -> dict[str, Any]:
    """One scenario's entry of the report."""
    path = outcome.scenario.path
    return {
        "name": outcome.scenario.name,
        "path": str(path) if path is not None else "",
        "passed": outcome.passed,
        "model_requests": outcome.model_requests
        if outcome.model_requests is not None
        else outcome.iterations,
        "turns": outcome.turns,
        "iterations": outcome.iterations,
        "error": None if outcome.passed else (outcome.problem or "failed"),
        "notes": list(outcome.notes),
    }


def json_report(outcomes: Sequence[ScenarioOutcome], *, error: str | None = None) -> str:
    """The whole report as JSON text (``error``: the files could not be loaded)."""
    entries = [scenario_entry(o) for o in outcomes]
    failed = sum(1 for e in entries if not e["passed"])
    report: dict[str, Any] = {
        "scenarios": entries,
        "passed": len(entries) - failed,
        "failed": failed,
    }
    if error is not None:
        report["error"] = error
    return json_text(report)
