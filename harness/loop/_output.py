"""Structured output: parse the final answer into the run's output type, or say why not."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

__all__ = ["OutputParser"]


class OutputParser:
    """Validates final answers against an output type (a pydantic model or any type)."""

    def __init__(self, output_type: Any) -> None:
        self.adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        self.schema: dict[str, Any] = self.adapter.json_schema()
        """The JSON Schema offered to the model (``ModelSettings.output_schema``)."""
        self.name: str | None = getattr(output_type, "__name__", None)

    def parse(self, text: str | None) -> tuple[Any, str | None]:
        """``(value, None)`` for a valid answer, ``(None, problem)`` otherwise."""
        if text is None:
            return None, "the answer had no text; reply with a JSON value"
        try:
            return self.adapter.validate_json(text), None
        except ValidationError as exc:
            return None, _describe(exc)

    def correction(self, problem: str) -> str:
        """What the model is told when its answer did not validate."""
        return (
            f"Your answer did not match the required output format: {problem}. "
            f"Reply again with only JSON matching this schema: {json.dumps(self.schema)}"
        )


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)
