"""Script steps for the scripted model, and reading them from plain data (YAML)."""

from __future__ import annotations

import dataclasses
import functools
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
    "ErrorKind",
    "ExpectOffered",
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

    @functools.cached_property
    def arguments_json(self) -> str | None:
        """The JSON text of mapping arguments, encoded once (``None`` for other kinds)."""
        if isinstance(self.arguments, Mapping):
            return json.dumps(self.arguments)
        return None


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
    """``rate_limit`` (429), ``server_error`` (5xx), ``timeout``, ``context_length``, ``error``."""
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


Step = CallStep | CallsStep | ReplyStep | OutputStep | ExpectOffered | RefuseStep | RaiseStep


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
    return Usage(
        input_tokens=inp, output_tokens=out, total_tokens=value.get("total_tokens", inp + out)
    )


def _finish(value: Any, allowed: Sequence[str], where: str) -> FinishReason | None:
    if value is None:
        return None
    if value not in allowed:
        raise ScriptError(f"{where}: finish_reason must be one of {list(allowed)}, got {value!r}")
    return value  # type: ignore[no-any-return]


_CALL_FINISH = ("tool_calls", "stop", "length")
_TEXT_FINISH = ("stop", "length", "content_filter")


def call(
    name: str,
    arguments: Arguments = None,
    /,
    *,
    id: str | None = None,
    usage: UsageLike = None,
    finish_reason: FinishReason | None = None,
    **kwargs: Any,
) -> CallStep:
    """A step calling ``name`` (exact or glob) with ``arguments`` (or keyword arguments).

    ``arguments`` may be a dict, a raw JSON string (sent as-is, even malformed) or a
    callable of the ``ModelRequest`` (offered tools, history) returning either. Tool
    arguments named ``id``, ``usage`` or ``finish_reason`` must go in the dict form.
    """
    if not isinstance(name, str) or not name:
        raise ScriptError(f"call(): the first argument is a tool name or glob, got {name!r}")
    if arguments is not None and kwargs:
        raise ScriptError("pass arguments as a dict or as keywords, not both")
    return CallStep(
        name=name,
        arguments=arguments if arguments is not None else (kwargs or None),
        id=id,
        usage=_usage(usage),
        finish_reason=_finish(finish_reason, _CALL_FINISH, f"call({name!r})"),
    )


def calls(
    *steps: CallStep, usage: UsageLike = None, finish_reason: FinishReason | None = None
) -> CallsStep:
    """A step making several calls at once."""
    if not steps:
        raise ScriptError("calls() needs at least one call(...)")
    inner = [s.name for s in steps if s.usage is not None or s.finish_reason is not None]
    if inner:
        raise ScriptError(
            f"calls(): usage/finish_reason set on inner call(s) {inner}; "
            "set them on calls(..., usage=..., finish_reason=...) instead"
        )
    return CallsStep(
        calls=tuple(steps),
        usage=_usage(usage),
        finish_reason=_finish(finish_reason, _CALL_FINISH, "calls()"),
    )


def reply(
    text: str, *, usage: UsageLike = None, finish_reason: FinishReason | None = None
) -> ReplyStep:
    """A step answering with ``text``; ``finish_reason="length"`` plays a cut-off answer."""
    return ReplyStep(
        text=text, usage=_usage(usage), finish_reason=_finish(finish_reason, _TEXT_FINISH, "reply")
    )


def output(
    value: Any, *, usage: UsageLike = None, finish_reason: FinishReason | None = None
) -> OutputStep:
    """A step answering with a structured value."""
    return OutputStep(
        value=value,
        usage=_usage(usage),
        finish_reason=_finish(finish_reason, _TEXT_FINISH, "output"),
    )


def refuse(
    text: str = "I'm sorry, I can't help with that.", *, usage: UsageLike = None
) -> RefuseStep:
    """A step refusing: ``AssistantMessage.refusal`` is set, content is ``None``."""
    return RefuseStep(text=text, usage=_usage(usage))


def raise_error(
    kind: ErrorKind | None = None,
    /,
    *,
    status: int | None = None,
    retry_after: float | None = None,
    code: str | None = None,
    message: str | None = None,
) -> RaiseStep:
    """A step whose request raises a ``ProviderError`` (or ``RateLimited``, ...).

    Give a ``kind`` (``rate_limit``, ``server_error``, ``timeout``, ``context_length``)
    or just a ``status`` (429 means ``rate_limit``, 5xx ``server_error``); the other
    fields default to what the provider sends for that kind.
    """
    problems = []
    if kind is not None and kind not in _ERROR_DEFAULTS:
        problems.append(f"kind must be one of {list(_ERROR_DEFAULTS)}, got {kind!r}")
    if status is not None and (
        not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599
    ):
        problems.append(f"status must be an HTTP error status (400-599), got {status!r}")
    if retry_after is not None and (
        not isinstance(retry_after, (int, float))
        or isinstance(retry_after, bool)
        or retry_after < 0
    ):
        problems.append(f"retry_after must be a number of seconds >= 0, got {retry_after!r}")
    if kind is None and status is None:
        problems.append("give a kind (e.g. 'rate_limit') or a status (e.g. status=429)")
    if kind == "timeout" and status is not None:
        problems.append(f"a timeout has no HTTP status, got status={status!r}")
    if problems:
        raise ScriptError("raise_error(): " + "; ".join(problems))
    if kind is None:
        assert status is not None
        kind = "rate_limit" if status == 429 else "server_error" if status >= 500 else "error"
    _, default_status, default_code, _ = _ERROR_DEFAULTS[kind]
    return RaiseStep(
        kind=kind,
        status=status if status is not None else default_status,
        retry_after=float(retry_after) if retry_after is not None else None,
        code=code if code is not None else default_code,
        message=message,
    )


def expect_offered(
    includes: Sequence[str] = (), excludes: Sequence[str] = (), exactly: Sequence[str] | None = None
) -> ExpectOffered:
    """An assertion on the tools offered at the next request."""
    for label, value in (("includes", includes), ("excludes", excludes), ("exactly", exactly)):
        if isinstance(value, (str, bytes)) or not (value is None or isinstance(value, Sequence)):
            raise ScriptError(
                f"expect_offered: {label} must be a list of tool names or globs, got {value!r}; "
                f"write {label}=[{value!r}] for one name"
            )
    return ExpectOffered(
        includes=tuple(includes),
        excludes=tuple(excludes),
        exactly=tuple(exactly) if exactly is not None else None,
    )


_STEP_KEYS = ("call", "calls", "reply", "output", "expect_offered", "refuse", "raise")
_EXTRA_KEYS: dict[str, frozenset[str]] = {
    "call": frozenset({"args", "arguments", "id", "usage", "finish_reason"}),
    "calls": frozenset({"usage", "finish_reason"}),
    "reply": frozenset({"usage", "finish_reason"}),
    "output": frozenset({"usage", "finish_reason"}),
    "refuse": frozenset({"usage"}),
    "raise": frozenset(),
    "expect_offered": frozenset(),
}


def _call_from_data(data: Any, where: str, *, inner: bool = False) -> CallStep:
    allowed = {"call", "args", "arguments", "id"} | (set() if inner else {"usage", "finish_reason"})
    if not isinstance(data, Mapping) or "call" not in data:
        raise ScriptError(
            f"{where}: expected a mapping like {{call: name, args: {{...}}}}, got {data!r}"
        )
    unknown = set(data) - allowed
    if unknown:
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)}; a call takes {sorted(allowed)}"
        )
    if not isinstance(data["call"], str) or not data["call"]:
        raise ScriptError(f"{where}: call must be a tool name or glob, got {data['call']!r}")
    args = data.get("args", data.get("arguments"))
    if args is not None and not isinstance(args, (Mapping, str)):
        raise ScriptError(f"{where}: args must be a mapping or a JSON string, got {args!r}")
    return CallStep(
        name=str(data["call"]),
        arguments=args,
        id=data.get("id"),
        usage=_usage(data.get("usage"), f"{where}: usage"),
        finish_reason=_finish(data.get("finish_reason"), _CALL_FINISH, where),
    )


def _raise_from_data(spec: Any, where: str) -> RaiseStep:
    if isinstance(spec, str):
        spec = {"kind": spec}
    elif isinstance(spec, int) and not isinstance(spec, bool):
        spec = {"status": spec}
    if not isinstance(spec, Mapping):
        raise ScriptError(
            f"{where}: raise takes a kind ('rate_limit', 'server_error', 'timeout', "
            f"'context_length'), a status (429) or a mapping, got {spec!r}"
        )
    allowed = {"kind", "status", "retry_after", "code", "message"}
    unknown = set(spec) - allowed
    if unknown:
        raise ScriptError(f"{where}: raise: unknown keys {sorted(unknown)}; use {sorted(allowed)}")
    try:
        return raise_error(
            spec.get("kind"),
            status=spec.get("status"),
            retry_after=spec.get("retry_after"),
            code=spec.get("code"),
            message=spec.get("message"),
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def step_from_data(data: Any, index: int = 0) -> Step:
    """Read one step from plain data, e.g. ``{"call": "x", "args": {...}}``.

    Response steps (``call``, ``calls``, ``reply``, ``output``, ``refuse``) take
    ``usage: {input_tokens: .., output_tokens: ..}``; all but ``refuse`` take
    ``finish_reason``. ``raise`` takes a kind, a status or a mapping.
    """
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
    unknown = set(data) - {kind} - _EXTRA_KEYS[kind]
    if unknown:
        allowed = sorted(_EXTRA_KEYS[kind]) or "no other keys"
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)} for {kind!r}; allowed: {allowed}"
        )
    usage = _usage(data.get("usage"), f"{where}: usage")
    finish = data.get("finish_reason")
    if kind == "calls":
        items = data["calls"]
        if not isinstance(items, list) or not items:
            raise ScriptError(
                f"{where}: calls must be a non-empty list of {{call: ..., args: ...}}"
            )
        return CallsStep(
            calls=tuple(
                _call_from_data(i, f"{where} call {n + 1}", inner=True) for n, i in enumerate(items)
            ),
            usage=usage,
            finish_reason=_finish(finish, _CALL_FINISH, where),
        )
    if kind == "reply":
        return ReplyStep(
            text=str(data["reply"]), usage=usage, finish_reason=_finish(finish, _TEXT_FINISH, where)
        )
    if kind == "output":
        value = data["output"]
        return OutputStep(
            value=value if isinstance(value, str) else json.loads(json.dumps(value)),
            usage=usage,
            finish_reason=_finish(finish, _TEXT_FINISH, where),
        )
    if kind == "refuse":
        return RefuseStep(text=str(data["refuse"]), usage=usage)
    if kind == "raise":
        return _raise_from_data(data["raise"], where)
    spec = data["expect_offered"]
    if not isinstance(spec, Mapping):
        raise ScriptError(f"{where}: expect_offered takes includes/excludes/exactly lists")
    unknown = set(spec) - {"includes", "excludes", "exactly"}
    if unknown:
        raise ScriptError(f"{where}: expect_offered: unknown keys {sorted(unknown)}")
    try:
        return expect_offered(
            spec.get("includes", ()), spec.get("excludes", ()), spec.get("exactly")
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def steps_from_data(items: Sequence[Any]) -> list[Step]:
    """Read a list of steps."""
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise ScriptError(f"steps must be a list, got {items!r}")
    return [step_from_data(item, i) for i, item in enumerate(items)]
