"""Tool decorators: a delegating base, one-shot per loop, and artifact sinking.

A ``DelegatingTool`` is offered exactly like the tool it wraps and forwards each
call (with its ``CallContext``) to it; subclasses add behaviour in ``before`` (may
answer without running the inner tool) and ``after`` (sees the result). Wrappers
chain and ``unwrap()`` gives the inner tool back.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Collection
from typing import Any, TypeVar

from harness._errors import UsageError
from harness.tools._context import CallContext
from harness.tools._decorator import as_tool
from harness.tools._result import ToolResult
from harness.tools._sinks import ArtifactSink, artifacts_in
from harness.tools._tool import PreparedCall, Tool

__all__ = ["DelegatingTool", "OneShotTool", "SinkingTool", "one_shot", "sink_artifacts"]

W = TypeVar("W", bound="DelegatingTool")
_SHARED = (
    "name",
    "description",
    "parameters",
    "notes",
    "metadata",
    "args_schema",
    "presets",
    "context_objects",
)


@dataclasses.dataclass(frozen=True, eq=False)
class DelegatingTool(Tool):
    """A tool that delegates to ``inner``; override ``before``/``after`` to decorate it."""

    inner: Tool | None = dataclasses.field(default=None, repr=False)
    """The wrapped tool."""

    @classmethod
    def wrap(cls: type[W], tool: Tool | Callable[..., Any], **config: Any) -> W:
        """Wrap ``tool`` (a ``Tool`` or ``@llm_tool`` function); ``config`` sets wrapper fields."""
        inner = as_tool(tool)
        fields = {f.name: getattr(inner, f.name) for f in dataclasses.fields(Tool)}
        return cls(**fields, inner=inner, **config)

    def unwrap(self) -> Tool:
        """The wrapped tool."""
        if self.inner is None:
            raise UsageError(f"{type(self).__name__} {self.name!r} wraps nothing; use .wrap(tool)")
        return self.inner

    @property
    def layers(self) -> tuple[Tool, ...]:
        """This wrapper and every tool below it, outermost first."""
        out: list[Tool] = [self]
        tool: Tool = self.unwrap()
        while isinstance(tool, DelegatingTool):
            out.append(tool)
            tool = tool.unwrap()
        out.append(tool)
        return tuple(out)

    def innermost(self) -> Tool:
        """The undecorated tool at the bottom of the chain."""
        return self.layers[-1]

    # -- hooks --------------------------------------------------------------------------

    def before(self, context: CallContext) -> ToolResult | None:
        """Called before the inner tool runs; a result returned here is the call's answer."""
        return None

    def after(self, result: ToolResult, context: CallContext) -> ToolResult:
        """Called with the inner tool's result; return it or a changed copy."""
        return result

    def failed(self, exc: Exception, context: CallContext) -> None:
        """Called when the inner tool raised (the exception then propagates to the loop)."""

    # -- plumbing -----------------------------------------------------------------------

    def _copy(self, **changes: Any) -> Tool:
        shared = {k: v for k, v in changes.items() if k in _SHARED}
        inner = self.unwrap()._copy(**shared) if shared else self.unwrap()
        return dataclasses.replace(self, inner=inner, **changes)

    def with_presets(
        self, *, model_may_override: bool | Collection[str] | None = None, **presets: Any
    ) -> Tool:
        inner = self.unwrap().with_presets(model_may_override=model_may_override, **presets)
        fields = {name: getattr(inner, name) for name in _SHARED}
        return dataclasses.replace(self, inner=inner, **fields)

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        inner = self.unwrap()
        prepared = inner.prepare(arguments, context)
        if isinstance(prepared, ToolResult):
            return prepared
        if prepared.is_async:

            async def run_async() -> ToolResult:
                early = self.before(context)
                if early is not None:
                    return early
                try:
                    value = await prepared.run_async()
                except Exception as exc:
                    self.failed(exc, context)
                    raise
                return self.after(inner.to_result(value), context)

            return PreparedCall(self, run_async, (), {}, True, context)

        def run_sync() -> ToolResult:
            early = self.before(context)
            if early is not None:
                return early
            try:
                value = prepared.run_sync()
            except Exception as exc:
                self.failed(exc, context)
                raise
            return self.after(inner.to_result(value), context)

        return PreparedCall(self, run_sync, (), {}, False, context)


def already_loaded(tool_name: str, advice: str | None = None) -> str:
    """What a one-shot tool answers when called again in the same loop: seed 003's
    ``ALREADY LOADED`` text naming the tool, then ``advice`` when there is one."""
    head = (
        f"ALREADY LOADED. The body of {tool_name!r} was returned earlier in this turn "
        "\N{EM DASH} read it from your conversation history above. Do not call this tool again."
    )
    return f"{head} {advice}" if advice else head


@dataclasses.dataclass(frozen=True, eq=False)
class OneShotTool(DelegatingTool):
    """Runs once per loop: later calls in the same loop answer "ALREADY LOADED ...".

    The loop is ``CallContext.loop_id`` (set by the loop, or a ``loop_id`` context
    value); a call with no loop id passes through, every time. A call that fails does
    not count. A repeated call's result is ``already_loaded(name, advice)``.
    """

    advice: str | None = None
    """Said after the ``ALREADY LOADED`` text (what to do instead); ``None``: nothing."""
    _loops: set[str] = dataclasses.field(default_factory=set, init=False, repr=False)
    _lock: threading.Lock = dataclasses.field(
        default_factory=threading.Lock, init=False, repr=False
    )

    def before(self, context: CallContext) -> ToolResult | None:
        loop = context.loop_id
        if not loop:
            return None
        with self._lock:
            if loop not in self._loops:
                self._loops.add(loop)  # claimed now, so parallel calls run it only once
                return None
        return ToolResult(content=already_loaded(self.name, self.advice), value=None)

    def after(self, result: ToolResult, context: CallContext) -> ToolResult:
        if result.is_error and context.loop_id:
            with self._lock:
                self._loops.discard(context.loop_id)
        return result

    def failed(self, exc: Exception, context: CallContext) -> None:
        if context.loop_id:
            with self._lock:
                self._loops.discard(context.loop_id)  # a retry may run it again

    def loaded_in(self, loop_id: str) -> bool:
        """True when the tool already ran in ``loop_id``."""
        return loop_id in self._loops


@dataclasses.dataclass(frozen=True, eq=False)
class SinkingTool(DelegatingTool):
    """Sends the artifacts of each successful result to ``sink``."""

    sink: ArtifactSink | None = dataclasses.field(default=None, repr=False)
    """Where artifacts go (a ``ListSink``, ``CompositeSink``, ``StateSink``, ...)."""

    def after(self, result: ToolResult, context: CallContext) -> ToolResult:
        if result.is_error or self.sink is None:
            return result
        for artifact in artifacts_in(result.value):
            self.sink.offer(artifact, context)
        return result


def one_shot(tool: Tool | Callable[..., Any], *, advice: str | None = None) -> OneShotTool:
    """``tool`` made one-shot per loop (see ``OneShotTool``)."""
    if advice is None:
        return OneShotTool.wrap(tool)
    if not isinstance(advice, str) or not advice.strip():
        raise UsageError(
            f"one_shot advice must be a non-empty text (said to a repeated call after "
            f"'ALREADY LOADED ...'), got {advice!r}"
        )
    return OneShotTool.wrap(tool, advice=advice)


def sink_artifacts(tool: Tool | Callable[..., Any], sink: ArtifactSink) -> SinkingTool:
    """``tool`` whose results' artifacts go to ``sink`` (see ``SinkingTool``)."""
    if not isinstance(sink, ArtifactSink):
        raise UsageError(
            f"sink must be an ArtifactSink (ListSink, CompositeSink, StateSink, ...), got {sink!r}"
        )
    return SinkingTool.wrap(tool, sink=sink)
