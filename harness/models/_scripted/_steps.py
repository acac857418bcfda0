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
from harness._names import did_you_mean, format_names
from harness._validation import choice_problem, is_int, is_number
from harness.loop import FinishReason, Usage
from harness.models._scripted._expect_choice import ExpectToolChoice

__all__ = [
    "CallStep",
    "CallsStep",
    "ErrorKind",
    "ExpectMessage",
    "ExpectOffered",
    "OutputStep",
    "RaiseStep",
    "RefuseStep",
    "ReplyStep",
    "SearchStep",
    "Step",
    "call",
    "calls",
    "expect_message",
    "expect_offered",
    "output",
    "raise_error",
    "refuse",
    "reply",
    "search",
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
    rank: int | None = None
    """When the glob matches several offered tools: call the ``rank``-th (1-based, in
    offered order) instead of refusing the ambiguous glob."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"call {self.name!r}" + (f" #{self.rank}" if self.rank is not None else "")

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
class SearchStep:
    """Search the deferred tools, the way the request offers a search.

    With a search the provider runs (``regex``, ``bm25``, ``hosted``) the search is part
    of the next step's response: the model searches, the provider reveals what it found,
    and the model goes on to the next step (a call of a found tool, say) in the same
    turn. With a client search tool the step is a call of that tool (its result reveals
    the tools). Without a search tool it is a script error.
    """

    query: str | Mapping[str, Any]
    """The query text, or the search's exact arguments (``{"pattern": ...}``)."""
    found: tuple[str, ...] | None = None
    """What a provider-run search finds (``None``: the deferred tools matching the query,
    by BM25 or the regex, as the provider would)."""
    id: str | None = None
    """The search's id (generated when ``None``)."""
    limit: int = 5
    """How many tools a computed search finds at most."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"search {self.query!r}"

    @property
    def text(self) -> str:
        """The query as text (the first string of mapping arguments)."""
        if isinstance(self.query, str):
            return self.query
        for value in self.query.values():
            if isinstance(value, str):
                return value
            if isinstance(value, list) and value and isinstance(value[0], str):
                return " ".join(v for v in value if isinstance(v, str))
        return ""


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExpectMessage:
    """Check that a message arrived since the model's previous turn (e.g. the follow-up of
    an async tool call); produces no response. Every given criterion must hold for one
    message."""

    contains: str | None = None
    """Text the message must contain."""
    tool: str | None = None
    """The message is the follow-up of an async call of this tool."""
    call_id: str | None = None
    """The message is the follow-up of the async call with this id."""
    role: str | None = None
    """The message's role (``user``, ``tool``, ``assistant``, ``system``)."""

    def describe(self) -> str:
        """Short text for error messages."""
        parts = []
        if self.tool is not None:
            parts.append(f"follow-up of tool {self.tool!r}")
        if self.call_id is not None:
            parts.append(f"follow-up of call {self.call_id!r}")
        if self.role is not None:
            parts.append(f"role {self.role!r}")
        if self.contains is not None:
            parts.append(f"containing {self.contains!r}")
        return "expect message " + ", ".join(parts)


Step = (
    CallStep
    | CallsStep
    | SearchStep
    | ReplyStep
    | OutputStep
    | ExpectOffered
    | ExpectMessage
    | ExpectToolChoice
    | RefuseStep
    | RaiseStep
)


def parse_usage(value: UsageLike, where: str = "usage") -> Usage | None:
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
    bad = {k: v for k, v in value.items() if not is_int(v, minimum=0)}
    if unknown or bad:
        raise ScriptError(
            f"{where}: expected non-negative int token counts with keys {sorted(allowed)}, "
            f"got {dict(value)!r}"
        )
    inp, out = value.get("input_tokens", 0), value.get("output_tokens", 0)
    return Usage(
        input_tokens=inp, output_tokens=out, total_tokens=value.get("total_tokens", inp + out)
    )


def parse_finish(value: Any, allowed: Sequence[str], where: str) -> FinishReason | None:
    if value is None:
        return None
    if value not in allowed:
        raise ScriptError(
            f"{where}: finish_reason must be one of {format_names(allowed)}, got {value!r}"
            + (did_you_mean(value, allowed) if isinstance(value, str) else "")
        )
    return value  # type: ignore[no-any-return]


CALL_FINISH_REASONS = ("tool_calls", "stop", "length")
TEXT_FINISH_REASONS = ("stop", "length", "content_filter")


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
        usage=parse_usage(usage),
        finish_reason=parse_finish(finish_reason, CALL_FINISH_REASONS, f"call({name!r})"),
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
        usage=parse_usage(usage),
        finish_reason=parse_finish(finish_reason, CALL_FINISH_REASONS, "calls()"),
    )


def search(
    query: str | Mapping[str, Any],
    *,
    found: Sequence[str] | None = None,
    id: str | None = None,
    limit: int = 5,
) -> SearchStep:
    """A step searching the deferred tools for ``query`` (see ``SearchStep``)."""
    if not isinstance(query, (str, Mapping)) or not query:
        raise ScriptError(f"search(): the query is a text or the search's arguments, got {query!r}")
    if isinstance(found, str):
        raise ScriptError(f"search(found=...) takes a list of tool names, got {found!r}")
    if not is_int(limit) or limit < 1:
        raise ScriptError(f"search(limit=...) must be a positive integer, got {limit!r}")
    return SearchStep(
        query=query if isinstance(query, str) else dict(query),
        found=tuple(found) if found is not None else None,
        id=id,
        limit=limit,
    )


def reply(
    text: str, *, usage: UsageLike = None, finish_reason: FinishReason | None = None
) -> ReplyStep:
    """A step answering with ``text``; ``finish_reason="length"`` plays a cut-off answer."""
    return ReplyStep(
        text=text,
        usage=parse_usage(usage),
        finish_reason=parse_finish(finish_reason, TEXT_FINISH_REASONS, "reply"),
    )


def output(
    value: Any, *, usage: UsageLike = None, finish_reason: FinishReason | None = None
) -> OutputStep:
    """A step answering with a structured value."""
    return OutputStep(
        value=value,
        usage=parse_usage(usage),
        finish_reason=parse_finish(finish_reason, TEXT_FINISH_REASONS, "output"),
    )


def refuse(
    text: str = "I'm sorry, I can't help with that.", *, usage: UsageLike = None
) -> RefuseStep:
    """A step refusing: ``AssistantMessage.refusal`` is set, content is ``None``."""
    return RefuseStep(text=text, usage=parse_usage(usage))


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
    if kind is not None and (problem := choice_problem(kind, ErrorKind, name="kind")):
        problems.append(problem)
    if status is not None and not (is_int(status) and 400 <= status <= 599):
        problems.append(f"status must be an HTTP error status (400-599), got {status!r}")
    if retry_after is not None and not (is_number(retry_after) and retry_after >= 0):
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


_ROLES = ("user", "tool", "assistant", "system")


def expect_message(
    contains: str | None = None,
    /,
    *,
    tool: str | None = None,
    call_id: str | None = None,
    role: str | None = None,
) -> ExpectMessage:
    """An assertion that a message arrived since the model's previous turn.

    ``tool`` / ``call_id`` ask for the follow-up of an async call (``ToolResult.started``)
    of that tool / with that original call id; ``contains`` for text in the message;
    ``role`` for its role. At least one criterion is required. A failure names the
    messages that arrived instead.
    """
    problems = []
    for label, value in (("contains", contains), ("tool", tool), ("call_id", call_id)):
        if value is not None and (not isinstance(value, str) or not value):
            problems.append(f"{label} must be a non-empty string, got {value!r}")
    if role is not None and role not in _ROLES:
        problems.append(
            f"role must be one of {format_names(_ROLES)}, got {role!r}"
            + (did_you_mean(role, _ROLES) if isinstance(role, str) else "")
        )
    if contains is None and tool is None and call_id is None and role is None:
        problems.append(
            "give at least one of contains, tool=, call_id= or role= (every turn brings "
            "some message, so an empty check would always pass)"
        )
    if problems:
        raise ScriptError("expect_message(): " + "; ".join(problems))
    return ExpectMessage(contains=contains, tool=tool, call_id=call_id, role=role)
