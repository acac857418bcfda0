"""Where the commands import the user's code from: the current folder and ``--path``."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["extend_import_path"]


def extend_import_path(folders: list[Path]) -> None:
    """Make the project's own packages importable, as ``python -m`` would: each folder
    goes to the **end** of ``sys.path`` (never shadowing an installed module) when it is
    not there yet."""
    for folder in folders:
        entry = str(folder.resolve())
        if entry not in sys.path:
            sys.path.append(entry)
