"""An agent counterexample as a scenario file that ``harness run`` replays on a fresh agent.

The file names the agent by its factory (``agent: module:function``), plays the shrunk
turns with references to earlier results and tools by pattern and rank (so fresh ids
do not make it stale), carries the loop options the fuzzer set, and expects what makes
it fail while the bug is there: the invariants, the properties, and no unexpected error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.fuzz._scenario_file import write_scenario_file
from harness.fuzz.agent._judge import EXPECTED_ENDINGS, Finding

__all__ = ["agent_counterexample_data", "write_agent_counterexample"]

NO_TIMEOUTS = "harness.fuzz:no_timeouts"
"""The property a hang counterexample is checked with."""


def _importable(path: str) -> bool:
    module, _, attr = path.partition(":")
    return bool(module and attr) and "<" not in attr and module != "__main__"


def agent_counterexample_data(
    steps: list[dict[str, Any]],
    finding: Finding,
    *,
    error: BaseException | None = None,
    agent: str,
    properties: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    wire: str | None = None,
    name: str = "fuzz_counterexample",
    note: str = "",
) -> dict[str, Any]:
    """The scenario-file data replaying ``fuzzed`` (see the module docstring). With
    ``wire`` the agent is a wire factory, served the steps in that wire format: the run
    is judged by its properties alone (its error is theirs to judge)."""
    expect: dict[str, Any] = {} if wire is not None else {"invariants": True}
    checked = [p for p in properties if _importable(p)]
    if finding.name == "hang" and wire is None:
        checked.append(NO_TIMEOUTS)
    if checked:
        expect["properties"] = checked
    if wire is None and error is not None and isinstance(error, EXPECTED_ENDINGS):
        expect["error"] = type(error).__name__
    description = f"{note}: {finding}" if note else str(finding)
    if not _importable(agent):
        description += (
            f" (the agent factory {agent} is not importable: define it at module level to "
            "replay this file)"
        )
    left_out = [p for p in properties if not _importable(p)]
    if left_out:
        description += f" (properties not importable, not checked on replay: {left_out})"
    data: dict[str, Any] = {
        "name": name,
        "description": description,
        "agent": agent,
    }
    if wire is not None:
        data["wire"] = wire
    if options:
        data["options"] = dict(options)
    data["model"] = {"steps": steps}
    data["expect"] = expect
    data["tags"] = ["fuzz"]
    return data


def write_agent_counterexample(
    steps: list[dict[str, Any]],
    finding: Finding,
    directory: str | Path,
    *,
    error: BaseException | None = None,
    agent: str,
    properties: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    wire: str | None = None,
    note: str = "",
) -> Path:
    """Write the counterexample under ``directory``; return the file's path."""
    played = json.dumps(steps, sort_keys=True, default=str)
    digest = hashlib.sha1(f"{agent}\n{finding.name}\n{played}".encode()).hexdigest()[:10]
    name = f"fuzz_{digest}"
    data = agent_counterexample_data(
        steps,
        finding,
        error=error,
        agent=agent,
        properties=properties,
        options=options,
        wire=wire,
        name=name,
        note=note,
    )
    return write_scenario_file(data, directory, name)
