"""Optional dependencies: import them on use, with an error that names the extra to install.

The one way the harness says "install the extra": ``require(module, feature)``.

Libraries that register pytest plugins are extras rather than requirements: installed,
their plugins load at every pytest start in the environment, even in projects that
never use the harness. hypothesis and faker register their own; ``openai`` and
``httpx2`` require ``anyio``, whose plugin imports asyncio and its backends (about
0.15 s a start, 0.35 s where the rewritten-assertion cache cannot be written, e.g.
with ``PYTHONDONTWRITEBYTECODE=1``). ``benchmarks/pytest_startup.py`` measures it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "require"]

EXTRAS: dict[str, str] = {
    "anthropic": "anthropic",
    "boto3": "bedrock",
    "botocore": "bedrock",
    "faker": "personas",
    "google": "gemini",
    "hypothesis": "fuzz",
    "hypothesis_jsonschema": "fuzz",
    "httpx2": "openai",
    "mcp": "mcp",
    "openai": "openai",
    "opentelemetry": "otel",
    "ray": "ray",
    "syrupy": "snapshots",
}
"""Top-level module -> the extra of ``tool-loop-harness`` that installs it."""


def require(module: str, feature: str, *, extra: str | None = None) -> ModuleType:
    """Import ``module`` for ``feature``; ``ImportError`` naming the extra when it is missing.

    ``extra`` names the extra to suggest when ``feature`` is installed by another one than
    ``EXTRAS`` says (the Anthropic fake needs httpx2, which the 'anthropic' extra brings).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name not in (top, module) or top not in EXTRAS:  # google.genai: a namespace
            raise
        extra = extra or EXTRAS[top]
        raise ImportError(
            f"{feature} needs {top!r}, which is not installed; install the {extra!r} extra: "
            f"pip install 'tool-loop-harness[{extra}]' (the 'dev' extra includes it)"
        ) from None
