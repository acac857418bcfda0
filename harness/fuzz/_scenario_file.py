"""Writing a counterexample as a scenario file that ``harness run`` replays.

Both kinds of fuzzing write their counterexamples this one way: YAML with the keys in
the order given and repeated data written in full (no ``&id001`` anchors), so that the
file reads top to bottom, as ``<directory>/<name>.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = ["write_scenario_file"]


class _NoAliases(yaml.SafeDumper):
    """Writes repeated data in full (no ``&id001`` anchors), for readable scenario files."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_scenario_file(data: Mapping[str, Any], directory: str | Path, name: str) -> Path:
    """Write ``data`` as ``<directory>/<name>.yaml`` (the folder made when needed); its path."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(
        yaml.dump(dict(data), Dumper=_NoAliases, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path
