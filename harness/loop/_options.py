"""Loop options, validated at construction, and the tool retry policy."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

from harness._errors import UsageError
from harness.messages import ToolCall

__all__ = ["LoopOptions", "RetryableToolError", "UnknownToolPolicy"]

UnknownToolPolicy = Literal["error_result", "raise"]


class RetryableToolError(Exception):
    """Raise from a tool to ask the loop to retry it (with backoff, up to ``tool_retries``)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LoopOptions:
    """How the loop runs. Invalid values raise ``UsageError`` here, not mid-run."""

    max_iterations: int = 20
    """Maximum number of model requests in one run."""
    tool_timeout: float | None = None
    """Seconds a single tool call may take; ``None`` for no limit."""
    tool_retries: int = 0
    """How many times a tool raising a retryable error is retried."""
    retry_backoff: float = 0.1
    """First retry delay in seconds; doubles on each retry."""
    retry_on: tuple[type[BaseException], ...] = (RetryableToolError,)
    """Exception types that are retried."""
    unknown_tool: UnknownToolPolicy = "error_result"
    """``error_result``: tell the model which tools exist; ``raise``: raise ``ToolNotFound``."""
    output_type: Any = None
    """A type (e.g. a pydantic model) the final answer must parse into."""
    output_retries: int = 1
    """How many times the model is asked to fix an invalid structured answer."""
    parallel_tool_calls: bool = True
    """Run several calls of one turn concurrently."""
    max_workers: int = 8
    """Thread pool size of the sync driver for parallel calls and timeouts."""
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Run-level call context values (secret-safe: never shown to the model)."""
    call_context: Callable[[ToolCall], Mapping[str, Any]] | None = None
    """Per-call context values; they win over run-level values on conflict."""
    tool_choice: str | Mapping[str, Any] | None = None
    """Passed to the model on every request."""
    model_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Extra provider settings passed to the model."""

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.max_iterations, int) or self.max_iterations < 1:
            problems.append(f"max_iterations must be an int >= 1, got {self.max_iterations!r}")
        if self.tool_timeout is not None and not self.tool_timeout > 0:
            problems.append(f"tool_timeout must be > 0 seconds or None, got {self.tool_timeout!r}")
        if not isinstance(self.tool_retries, int) or self.tool_retries < 0:
            problems.append(f"tool_retries must be an int >= 0, got {self.tool_retries!r}")
        if self.retry_backoff < 0:
            problems.append(f"retry_backoff must be >= 0, got {self.retry_backoff!r}")
        if self.unknown_tool not in ("error_result", "raise"):
            problems.append(
                f"unknown_tool must be 'error_result' or 'raise', got {self.unknown_tool!r}"
            )
        if not isinstance(self.output_retries, int) or self.output_retries < 0:
            problems.append(f"output_retries must be an int >= 0, got {self.output_retries!r}")
        if self.max_workers < 1:
            problems.append(f"max_workers must be >= 1, got {self.max_workers!r}")
        if problems:
            raise UsageError("invalid loop options: " + "; ".join(problems))

    def retry_delay(self, attempt: int, exc: BaseException) -> float | None:
        """Delay before retry number ``attempt`` (1-based), or ``None`` to stop retrying."""
        if attempt > self.tool_retries or not isinstance(exc, self.retry_on):
            return None
        return float(self.retry_backoff * (2 ** (attempt - 1)))
