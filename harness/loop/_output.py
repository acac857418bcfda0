"""The run's output: the final answer's text, or the output type parsed from it.

With ``output_type=`` an answer that does not parse is sent back with a correction, up
to ``output_retries`` times; a ``return_direct`` tool's result must parse at once (no
model turn is left to fix it).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

from harness._errors import OutputValidationError
from harness.messages import AssistantMessage, ToolCall

__all__ = ["OutputParser", "RunOutput"]


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


class RunOutput:
    """Turns a final answer (or a ``return_direct`` result) into the run's output."""

    def __init__(self, output_type: Any, retries: int) -> None:
        self.parser = OutputParser(output_type) if output_type is not None else None
        self.retries = retries
        self._attempts = 0

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON Schema offered to the model, when the run has an output type."""
        return self.parser.schema if self.parser else None

    @property
    def name(self) -> str | None:
        """A name for that schema."""
        return self.parser.name if self.parser else None

    def from_answer(self, message: AssistantMessage) -> tuple[Any, str | None]:
        """``(output, None)``, or ``(None, correction)`` for the model to answer again;
        ``OutputValidationError`` once the retries are spent."""
        text = message.content
        if self.parser is None:
            return (text if text is not None else (message.refusal or "")), None
        value, problem = self.parser.parse(text)
        if problem is None:
            return value, None
        self._attempts += 1
        if self._attempts > self.retries:
            raise OutputValidationError(
                f"the final answer did not match the output type after "
                f"{self.retries} retries: {problem}"
            )
        return None, self.parser.correction(problem)

    def from_tool(self, call: ToolCall, text: str) -> Any:
        """The output of ``return_direct`` call ``call`` whose result reads ``text``."""
        if self.parser is None:
            return text
        value, problem = self.parser.parse(text)
        if problem is not None:
            raise OutputValidationError(
                f"the result of return_direct tool {call.name!r} (call {call.id!r}) did not "
                f"match the output type, and no model turn is left to fix it: {problem}; "
                "return JSON matching the output type from the tool, or unmark it"
            )
        return value


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)
