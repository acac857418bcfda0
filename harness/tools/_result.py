"""Tool results: what the model reads, what the user sees, and the Python value kept."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pydantic_core
from pydantic import BaseModel

from harness._errors import UsageError
from harness._validation import seconds_problem
from harness.tools._definitions import ToolDefinition

__all__ = ["STARTED_TEXT", "ToolResult", "serialize_for_model", "unserializable_result"]

STARTED_TEXT = "Task started; the result will be reported back when it is ready."
"""What the model reads for ``ToolResult.started()`` without a text."""


def _fallback(value: Any) -> Any:
    """JSON stand-in for objects pydantic cannot serialise: public attributes or ``str``."""
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        public = {k: v for k, v in attrs.items() if not k.startswith("_")}
        endless = _iterator_in(public)
        if endless is not None:
            raise ValueError(f"a {endless} is an iterator, which may never end")
        return public
    return str(value)


def clean_text(text: str) -> str:
    """``text`` safe to encode as UTF-8: lone surrogates (e.g. from ``"\\ud800"`` in JSON)
    become U+FFFD, and a surrogate pair written as two code points becomes its character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _text(value: Any, field: str) -> str:
    """``value`` if it is a ``str`` (``ToolResult.content``/``user_content``), else
    ``UsageError``."""
    if isinstance(value, str):
        return value
    raise UsageError(
        f"ToolResult({field}=...) must be a str (the text the model reads), got "
        f"{type(value).__name__}; use ToolResult.ok(value) to send a value as JSON"
    )


_PLAIN = frozenset({int, float, bool, dict, list, tuple})
"""Exact types that are never pydantic models (no ``isinstance`` walk for them)."""


_SCALARS = frozenset({str, int, float, bool, type(None)})


_SEQUENCES = frozenset({list, tuple, set, frozenset})


def _iterator_in(value: Any) -> str | None:
    """The type name of an iterator in ``value`` or its plain containers, models and
    dataclasses, else ``None``.

    pydantic serialises an iterator by exhausting it: ``itertools.count()`` grows the
    buffer until the allocation fails and the process aborts. Iterative (any depth),
    each container visited once (a reference cycle ends). Measured on the shared
    2-core machine: about +1.5 µs on a small dict and +10 ms on 10,000 small dicts
    (where pydantic itself takes 8-10 ms); strings, the common result, skip it.
    """
    if type(value) in _SCALARS:
        return None
    stack = [value]
    seen: set[int] = set()
    pop, push, visit = stack.pop, stack.extend, seen.add
    while stack:
        node = pop()
        kind = type(node)
        if kind in _SCALARS or id(node) in seen:
            continue
        visit(id(node))
        if kind is dict:
            push(node.values())
        elif kind in _SEQUENCES:
            push(node)
        elif isinstance(node, Iterator):
            return kind.__name__
        elif isinstance(node, BaseModel):
            push(node.__dict__.values())
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            push(getattr(node, field.name) for field in dataclasses.fields(node))
    return None


def serialize_for_model(value: Any) -> str:
    """Text for the model: strings pass through unchanged, anything else becomes JSON.

    An iterator (a generator, ``itertools.count()``, a ``map``), also inside plain
    containers, is refused with ``ValueError``: it may never end; return a list.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    endless = None if type(value) in _SCALARS else _iterator_in(value)
    if endless is not None:
        raise ValueError(
            f"a {endless} is an iterator, which may never end; return a list of its items"
        )
    try:
        if type(value) not in _PLAIN and isinstance(value, BaseModel):
            return value.model_dump_json(fallback=_fallback)  # e.g. a provider in a field
        return pydantic_core.to_json(value, fallback=_fallback).decode()
    except ValueError as exc:
        if "Circular reference" not in str(exc):
            raise
    # a back-reference (order.customer.orders[0] is order): serialise a tree in which an
    # object met again on its own path becomes a short marker
    return pydantic_core.to_json(_acyclic(value, set()), fallback=str).decode()


_MAX_TREE_DEPTH = 200


def _reference(value: Any) -> str:
    ident = getattr(value, "id", None)
    shown = (
        f" id={ident!r}" if isinstance(ident, (str, int)) and not isinstance(ident, bool) else ""
    )
    return f"<{type(value).__name__}{shown} (reference)>"


def _acyclic(value: Any, path: set[int]) -> Any:
    """``value`` as plain JSON data; an object already on the path becomes a marker."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Iterator):
        raise ValueError(f"a {type(value).__name__} is an iterator, which may never end")
    if id(value) in path or len(path) >= _MAX_TREE_DEPTH:
        return _reference(value)
    path.add(id(value))
    try:
        if isinstance(value, dict):
            return {str(k): _acyclic(v, path) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [_acyclic(v, path) for v in value]
        if isinstance(value, BaseModel):
            fields = type(value).model_fields
            return {name: _acyclic(getattr(value, name), path) for name in fields}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {
                f.name: _acyclic(getattr(value, f.name), path) for f in dataclasses.fields(value)
            }
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, dict):
            return {k: _acyclic(v, path) for k, v in attrs.items() if not k.startswith("_")}
        return pydantic_core.to_jsonable_python(value, fallback=str)  # dates, UUIDs, enums
    finally:
        path.discard(id(value))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call.

    A tool may return a ``ToolResult`` itself to set the flags; any other return
    value becomes ``ToolResult.ok(value)``.
    """

    content: str
    """Text the model reads in the tool message."""
    value: Any = None
    """The original Python return value, handed to injection strategies."""
    user_content: str | None = None
    """Optional text meant for the user rather than the model."""
    silent: bool = False
    """Background work: ``user_content`` is not delivered to the user (no ``UserNotified``)."""
    is_error: bool = False
    """True when the call failed; ``content`` explains the failure to the model."""
    error_kind: str | None = None
    """Why it failed: ``invalid_arguments``, ``exception``, ``timeout``, ``unknown_tool``, ..."""
    exception: BaseException | None = None
    """The exception raised by the tool, kept for the trace (never shown to the model)."""
    change: Any = None
    """A toolset change the tool declares itself (``harness.loop.ToolsetChange``, or a function
    ``(InjectionContext) -> ToolsetChange | None`` computed when applied), e.g. a facade."""
    child_traces: tuple[Any, ...] = ()
    """Traces of nested runs this call made (agentic tools); the loop appends them to
    ``Trace.children``."""
    is_async: bool = False
    """The call started background work and will report back later through its
    completion callback (``CallContext.completion``); build it with ``ToolResult.started``."""
    completion_deadline: float | None = None
    """For an async result: seconds the loop waits for the completion once the run would
    end; ``None`` uses the run's ``completion_deadline`` (the call's own setting wins)."""
    reveals: tuple[ToolDefinition, ...] = ()
    """Deferred tools this result makes callable (a client-side tool search): the tool
    message carries them (``ToolMessage.tools``), sent as Anthropic ``tool_reference``
    blocks or an OpenAI ``tool_search_output``."""

    def __post_init__(self) -> None:
        content = self.content
        # a lone surrogate would make the next request fail to encode (UnicodeEncodeError)
        if type(content) is not str or not content.isascii():
            object.__setattr__(self, "content", clean_text(_text(content, "content")))
        if self.user_content is not None or self.completion_deadline is not None:
            self._check_rest()

    def _check_rest(self) -> None:
        """The rarer fields: ``user_content`` text, a finite ``completion_deadline``."""
        user_content = self.user_content
        if user_content is not None and (
            type(user_content) is not str or not user_content.isascii()
        ):
            object.__setattr__(
                self, "user_content", clean_text(_text(user_content, "user_content"))
            )
        if self.completion_deadline is not None:
            problem = seconds_problem(self.completion_deadline, name="completion_deadline")
            if problem is not None:
                raise UsageError(f"ToolResult: {problem}")

    @classmethod
    def ok(cls, value: Any, *, user_content: str | None = None, silent: bool = False) -> ToolResult:
        """A successful result whose model content is ``value`` serialised."""
        return cls(
            content=serialize_for_model(value),
            value=value,
            user_content=user_content,
            silent=silent,
        )

    @classmethod
    def plain(cls, text: str) -> ToolResult:
        """For the model only: ``text`` as is, nothing for the user."""
        return cls(content=text, value=text)

    @classmethod
    def user(cls, text: str) -> ToolResult:
        """The same ``text`` for the model and the user (a ``UserNotified`` event)."""
        return cls(content=text, value=text, user_content=text)

    @classmethod
    def background(cls, text: str, *, user_content: str | None = None) -> ToolResult:
        """Silent background work: the model reads ``text``; nothing reaches the user,
        even ``user_content`` (kept in the trace)."""
        return cls(content=text, value=text, user_content=user_content, silent=True)

    @classmethod
    def started(
        cls,
        text: str = STARTED_TEXT,
        *,
        user_content: str | None = None,
        silent: bool = False,
        completion_deadline: float | None = None,
    ) -> ToolResult:
        """An async result: background work started, the result follows later.

        The model reads ``text`` now; the tool reports the real result through
        ``CallContext.completion`` (from a thread or an asyncio task), and the loop
        delivers it at the next turn as a follow-up naming the tool and this call's id.
        ``completion_deadline`` (seconds, > 0 or ``0`` for "do not wait") overrides the
        run's ``completion_deadline`` for this call.
        """
        deadline = completion_deadline
        problem = seconds_problem(deadline, name="completion_deadline", optional=True)
        if problem is not None:
            raise UsageError(f"ToolResult.started(): {problem} (None: the run's setting)")
        return cls(
            content=text,
            value=text,
            user_content=user_content,
            silent=silent,
            is_async=True,
            completion_deadline=None if deadline is None else float(deadline),
        )

    @property
    def for_llm(self) -> str:
        """What the model reads (``content``)."""
        return self.content

    @property
    def for_user(self) -> str | None:
        """What the user is told (``user_content``), unless the result is silent."""
        return None if self.silent else self.user_content

    @classmethod
    def error(
        cls, message: str, *, kind: str = "error", exception: BaseException | None = None
    ) -> ToolResult:
        """A failed result with ``message`` for the model."""
        return cls(content=message, is_error=True, error_kind=kind, exception=exception)

    def with_content(self, content: str) -> ToolResult:
        """A copy with different model content."""
        return dataclasses.replace(self, content=content)


def unserializable_result(
    tool_name: str, value: Any, exc: Exception, *, verb: str = "returned"
) -> ToolResult:
    """The error result (kind ``unserializable``) for a ``value`` the tool ``verb`` that
    cannot become JSON (an iterator, undecodable bytes...); ``value`` is kept."""
    return ToolResult(
        content=(
            f"Tool {tool_name!r} {verb} a {type(value).__name__} that cannot be serialised "
            f"to JSON ({type(exc).__name__}: {exc})."
        ),
        value=value,
        is_error=True,
        error_kind="unserializable",
        exception=exc,
    )
