"""The example database of ``fuzz_agent``: failing scripts, replayed first next time.

A campaign that finds a failure saves its shrunk script (the scripted steps, with
references to earlier results) in a hypothesis example database folder, under a key
naming the agent, its wire and its properties. The next campaign on the same agent
replays the saved scripts on a fresh agent before it searches: one that still fails is
the failure at once (and is shrunk further); one that passes now is deleted. A script
replays on an agent whose code changed since, where a choice sequence would not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

__all__ = ["ScriptDatabase"]

Steps = list[dict[str, Any]]


class ScriptDatabase:
    """Failing scripts of earlier campaigns, per agent (see the module docstring)."""

    def __init__(
        self,
        location: str | Path | ExampleDatabase,
        *,
        agent: str,
        wire: str | None = None,
        properties: Sequence[str] = (),
    ) -> None:
        self.database = (
            location
            if isinstance(location, ExampleDatabase)
            else DirectoryBasedExampleDatabase(str(location))
        )
        named = json.dumps(
            {"agent": agent, "wire": wire, "properties": sorted(properties)}, sort_keys=True
        )
        self.key = b"harness-fuzz-agent:" + hashlib.sha256(named.encode()).hexdigest().encode()

    @staticmethod
    def _encode(steps: Steps) -> bytes:
        return json.dumps(steps, sort_keys=True, default=str).encode()

    def scripts(self) -> list[Steps]:
        """The saved scripts, oldest key order (unreadable entries left out)."""
        found: list[Steps] = []
        for value in sorted(self.database.fetch(self.key)):
            try:
                steps = json.loads(value)
            except ValueError:
                continue
            if isinstance(steps, list) and all(isinstance(s, dict) for s in steps):
                found.append(steps)
        return found

    def save(self, steps: Steps) -> None:
        """Keep ``steps`` (a failing script) for the next campaign."""
        self.database.save(self.key, self._encode(steps))

    def delete(self, steps: Steps) -> None:
        """Forget ``steps`` (it no longer fails, or a smaller one replaces it)."""
        self.database.delete(self.key, self._encode(steps))
