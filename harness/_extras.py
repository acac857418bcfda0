"""Optional dependencies: import them on use, with an error that names the extra to install.

Libraries that register pytest plugins (hypothesis, faker) are extras rather than
requirements: installed, their plugins load at every pytest start in the
environment, even in projects that never use the harness.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "require"]

EXTRAS: dict[str, str] = {
    "faker": "personas",
    "hypothesis": "fuzz",
    "hypothesis_jsonschema": "fuzz",
}
"""Top-level module -> the extra of ``tool-loop-harness`` that installs it."""


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``; ``ImportError`` naming the extra when it is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name != top or top not in EXTRAS:
            raise
        extra = EXTRAS[top]
        raise ImportError(
            f"{feature} needs {top!r}, which is not installed; install the {extra!r} extra: "
            f"pip install 'tool-loop-harness[{extra}]' (the 'dev' extra includes it)"
        ) from None
