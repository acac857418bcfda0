"""Script steps for the scripted model, and reading them from plain data (YAML)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ScriptError,
)
from harness.loop import FinishReason, Usage

__all__ = [
    "CallStep",
    "CallsStep",
    "ExpectOffered",
    "ErrorKind",
    "OutputStep",
    "RaiseStep",
    "RefuseStep",
    "ReplyStep",
    "Step",
    "call",
    "calls",
    "expect_offered",
    "output",
    "raise_error",
    "refuse",
    "reply",
    "step_from_data",
    "steps_from_data",
]

Arguments = Mapping[str, Any] | str | Callable[..., Any] | None
UsageLike = Usage | Mapping[str, int] | None
ErrorKind = Literal["rate_limit", "server_error", "timeout", "context_length", "error"]

_FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallStep:
    """Call one tool, by exact name or by a glob resolved against the offered tools."""

    name: str
    """Exact tool name or glob (``customer_*_get_average_spend``)."""
    arguments: Arguments = None
    """A dict (sent as JSON), a raw string (sent as-is, even malformed) or ``None`` (``{}``)."""
    id: str | None = None
    """The call id; generated when ``None``."""
    usage: Usage | None = None
    """Token usage of the response (ignored inside ``calls(...)``: set it there)."""
    finish_reason: FinishReason | None = None
    """The response's finish reason; ``None`` means ``tool_calls``."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"call {self.name!r}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallsStep:
    """Several tool calls in one turn (parallel calls)."""

    calls: tuple[CallStep, ...]
    usage: Usage | None = None
    """Token usage of the response."""
    finish_reason: FinishReason | None = None
    """The response's finish reason; ``None`` means ``tool_calls``."""

    def describe(self) -> str:
        """Short text for error messages."""
        return "calls [" + ", ".join(repr(c.name) for c in self.calls) + "]"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplyStep:
    """Answer with text (ends the run)."""

    text: str
    usage: Usage | None = None
    """Token usage of the response."""
    finish_reason: FinishReason | None = None
    """``None`` means ``stop``; ``length`` plays a reply cut off at the token limit."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"reply {self.text[:40]!r}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class OutputStep:
    """Answer with a structured value, sent as JSON text (ends the run)."""

    value: Any
    usage: Usage | None = None
    """Token usage of the response."""
    finish_reason: FinishReason | None = None
    """``None`` means ``stop``."""

    def describe(self) -> str:
        """Short text for error messages."""
        return "output"

    def text(self) -> str:
        """The JSON text of the value."""
        from harness.tools import serialize_for_model

        return serialize_for_model(self.value) if not isinstance(self.value, str) else self.value


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExpectOffered:
    """Check what the next request offers (globs allowed); produces no response."""

    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    exactly: tuple[str, ...] | None = None

    def describe(self) -> str:
        """Short text for error messages."""
        parts = []
        if self.includes:
            parts.append(f"includes {list(self.includes)}")
        if self.excludes:
            parts.append(f"excludes {list(self.excludes)}")
        if self.exactly is not None:
            parts.append(f"exactly {list(self.exactly)}")
        return "expect offered " + ", ".join(parts)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RefuseStep:
    """Refuse to answer: the message has ``refusal`` text and no content (ends the run).

    Like OpenAI's refusals, the finish reason is ``stop``.
    """

    text: str
    usage: Usage | None = None
    """Token usage of the response."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"refuse {self.text[:40]!r}"


_ERROR_DEFAULTS: dict[str, tuple[type[ProviderError], int | None, str | None, str]] = {
    "rate_limit": (RateLimited, 429, "rate_limit_exceeded", "Rate limit reached for requests."),
    "server_error": (ProviderError, 500, "server_error", "The server had an error."),
    "timeout": (ProviderTimeout, None, "timeout", "Request timed out."),
    "context_length": (
        ContextLengthExceeded,
        400,
        "context_length_exceeded",
        "This model's maximum context length was exceeded; reduce the length of the messages.",
    ),
    "error": (ProviderError, None, None, "The provider returned an error."),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RaiseStep:
    """Fail the request with a provider error (the loop sees the model call raise)."""

    kind: ErrorKind
    """``rate_limit`` (429), ``server_error`` (5xx), ``timeout``, ``context_length`` or ``error``."""
    status: int | None = None
    """The HTTP status (``None`` for timeouts)."""
    retry_after: float | None = None
    """Seconds to wait before retrying (the ``retry-after`` header)."""
    code: str | None = None
    """The provider's error code (``rate_limit_exceeded``, ``context_length_exceeded``...)."""
    message: str | None = None
    """The error message; a realistic default when ``None``."""

    def describe(self) -> str:
        """Short text for error messages."""
        status = f" {self.status}" if self.status is not None else ""
        return f"raise {self.kind}{status}"

    def error(self) -> ProviderError:
        """The exception this step raises."""
        cls, _, _, default = _ERROR_DEFAULTS[self.kind]
        message = self.message or default
        if self.retry_after is not None and self.message is None:
            message += f" Please try again in {self.retry_after:g}s."
        return cls(message, status=self.status, retry_after=self.retry_after, code=self.code)


Step = (
    CallStep | CallsStep | ReplyStep | OutputStep | ExpectOffered | RefuseStep | RaiseStep
)


def _usage(value: UsageLike, where: str = "usage") -> Usage | None:
    """Read ``usage=``: a ``Usage`` or a mapping of token counts (total defaults to the sum)."""
    if value is None or isinstance(value, Usage):
        return value
    if not isinstance(value, Mapping):
        raise ScriptError(
            f"{where} must be a harness.Usage or a mapping like "
            f"{{'input_tokens': 10, 'output_tokens': 5}}, got {value!r}"
        )
    allowed = {"input_tokens", "output_tokens", "total_tokens"}
    unknown = set(value) - allowed
    bad = {k: v for k, v in value.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0}
    if unknown or bad:
        raise ScriptError(
            f"{where}: expected non-negative int token counts with keys {sorted(allowed)}, "
            f"got {dict(value)!r}"
        )
    inp, out = value.get("input_tokens", 0), value.get("output_tokens", 0)
    return Usage(input_tokens=inp, output_tokens=out, total_tokens=value.get("total_tokens", inp + out))


def _finish(value: Any, allowed: Sequence[str], where: str) -> FinishReason | None:
    if value is None:
        return None
    if value not in allowed:
        raise ScriptError(f"{where}: finish_reason must be one of {list(allowed)}, got {value!r}")
    return value  # type: ignore[no-any-return]


def call(
    name: str, arguments: Arguments = None, /, *, id: str | None = None, **kwargs: Any
) -> CallStep:
    """A step calling ``name`` (exact or glob) with ``arguments`` (or keyword arguments)."""
    if arguments is not None and kwargs:
        raise ScriptError("pass arguments as a dict or as keywords, not both")
    return CallStep(
        name=name, arguments=arguments if arguments is not None else (kwargs or None), id=id
    )


def calls(*steps: CallStep) -> CallsStep:
    """A step making several calls at once."""
    if not steps:
        raise ScriptError("calls() needs at least one call(...)")
    return CallsStep(calls=tuple(steps))


def reply(text: str) -> ReplyStep:
    """A step answering with ``text``."""
    return ReplyStep(text=text)


def output(value: Any) -> OutputStep:
    """A step answering with a structured value."""
    return OutputStep(value=value)


def expect_offered(
    includes: Sequence[str] = (), excludes: Sequence[str] = (), exactly: Sequence[str] | None = None
) -> ExpectOffered:
    """An assertion on the tools offered at the next request."""
    return ExpectOffered(
        includes=tuple(includes),
        excludes=tuple(excludes),
        exactly=tuple(exactly) if exactly is not None else None,
    )


_STEP_KEYS = ("call", "calls", "reply", "output", "expect_offered")


def _call_from_data(data: Mapping[str, Any], where: str) -> CallStep:
    unknown = set(data) - {"call", "args", "arguments", "id"}
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}; a call takes call, args, id")
    args = data.get("args", data.get("arguments"))
    if args is not None and not isinstance(args, (Mapping, str)):
        raise ScriptError(f"{where}: args must be a mapping or a JSON string, got {args!r}")
    return CallStep(name=str(data["call"]), arguments=args, id=data.get("id"))


def step_from_data(data: Any, index: int = 0) -> Step:
    """Read one step from plain data, e.g. ``{"call": "x", "args": {...}}``."""
    where = f"step {index + 1}"
    if not isinstance(data, Mapping):
        raise ScriptError(
            f"{where}: expected a mapping with one of {list(_STEP_KEYS)}, got {data!r}"
        )
    kinds = [k for k in _STEP_KEYS if k in data]
    if len(kinds) != 1:
        raise ScriptError(
            f"{where}: expected exactly one of {list(_STEP_KEYS)}, got keys {sorted(data)}"
        )
    kind = kinds[0]
    if kind == "call":
        return _call_from_data(data, where)
    if kind == "calls":
        items = data["calls"]
        if not isinstance(items, list) or not items:
            raise ScriptError(
                f"{where}: calls must be a non-empty list of {{call: ..., args: ...}}"
            )
        return CallsStep(
            calls=tuple(_call_from_data(i, f"{where} call {n + 1}") for n, i in enumerate(items))
        )
    if kind == "reply":
        return ReplyStep(text=str(data["reply"]))
    if kind == "output":
        value = data["output"]
        return OutputStep(value=value if isinstance(value, str) else json.loads(json.dumps(value)))
    spec = data["expect_offered"]
    if not isinstance(spec, Mapping):
        raise ScriptError(f"{where}: expect_offered takes includes/excludes/exactly lists")
    unknown = set(spec) - {"includes", "excludes", "exactly"}
    if unknown:
        raise ScriptError(f"{where}: expect_offered: unknown keys {sorted(unknown)}")
    return expect_offered(spec.get("includes", ()), spec.get("excludes", ()), spec.get("exactly"))


def steps_from_data(items: Sequence[Any]) -> list[Step]:
    """Read a list of steps."""
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise ScriptError(f"steps must be a list, got {items!r}")
    return [step_from_data(item, i) for i, item in enumerate(items)]
