"""The sans-IO loop core: it consumes model responses and tool results and says what's next.

Drivers (``run``/``arun``) do the I/O::

    core = LoopCore(...)
    while not core.finished:  # core.phase tells where it is: see harness/loop/_phases.py
        if core.phase is Phase.AWAITING_COMPLETIONS:  # the model answered, async tools run
            core.completions.wait()
            core.settle_completions()
            continue
        response = model.request(core.begin_iteration())
        pending = core.receive_response(response)
        if pending:
            core.receive_results([execute(p) for p in pending])
    result = core.result()
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import threading
import types
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar

from harness._errors import (
    HarnessError,
    LoopSignal,
    MaxIterationsExceeded,
    OutputValidationError,
    ToolNotFound,
    UsageError,
)
from harness._frozen import maker
from harness.loop._channels import model_content, user_text
from harness.loop._completions import CompletionQueue, follow_up_text
from harness.loop._control import is_return_direct
from harness.loop._events import (
    CompletionDelivered,
    CompletionLost,
    CompletionQueued,
    CompletionsAwaited,
    Event,
    IterationStarted,
    LimitReached,
    ModelResponded,
    Observer,
    RunFinished,
    StrategyWarning,
    ToolCalled,
    ToolFailed,
    ToolsInjected,
    ToolsRemoved,
    UserNotified,
)
from harness.loop._model import (
    HistoryView,
    ModelCapabilities,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    Usage,
)
from harness.loop._options import LoopOptions
from harness.loop._output import OutputParser
from harness.loop._phases import ALLOWED, Call, Phase, refusal
from harness.loop._result import RunResult
from harness.loop._strategy import (
    InjectionContext,
    InjectionStrategy,
    ToolsetChange,
    consult,
    hook_strategies,
    result_filter,
)
from harness.loop._telemetry import logger, record_metric
from harness.loop._trace import (
    CallRecord,
    ChangeRecord,
    CompletionRecord,
    IterationRecord,
    Trace,
)
from harness.loop._unknown import not_run_result, unknown_tool_message
from harness.loop._usage import add_usage
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.tools import CallContext, ContextObjects, PreparedCall, Tool, ToolResult, Toolset

__all__ = ["LoopCore", "PendingCall"]

_log = logger.getChild("loop")

_LOST = {
    "deadline": "it did not report back before its deadline at the end of the run",
    "run_ended": "the run ended before it reported back (pending_completions='lost')",
    "return_direct": "a return_direct tool ended the run before the model could read it",
    "max_iterations": "it arrived after the last turn allowed (max_iterations={max_iterations})",
    "run_failed": "the run ended with an error before the model could read it",
    "not_async": (
        "the tool reported back, but the call returned a finished result, not "
        "ToolResult.started(...); the completion is dropped"
    ),
}
"""Why a completion was lost, for ``CompletionLost.message``."""

_tool_message: Callable[[dict[str, Any]], ToolMessage] = (
    ToolMessage.__pydantic_validator__.validate_python
)
"""``ToolMessage(**fields)`` without ``BaseModel.__init__``'s wrapper (validated the same)."""
_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclasses.dataclass(slots=True)
class PendingCall:
    """A tool call the driver must execute (``prepared``) or that is already settled."""

    call: ToolCall
    tool: Tool | None
    prepared: PreparedCall | None = None
    immediate: ToolResult | None = None


@dataclasses.dataclass(slots=True)
class _OpenIteration:
    """The iteration being built; closed into an ``IterationRecord``."""

    index: int
    offered: tuple[str, ...]
    changes: list[ChangeRecord]
    calls: list[CallRecord] = dataclasses.field(default_factory=list)
    answer: str | None = None
    finish_reason: str | None = None


_name_of = operator.attrgetter("name")
_new_open_iteration = maker(_OpenIteration)
_PendingCall = maker(PendingCall)
# the records, events and requests of every turn, built without ``type.__call__``
_CallRecord = maker(CallRecord)
_IterationRecord = maker(IterationRecord)
_IterationStarted = maker(IterationStarted)
_ModelRequest = maker(ModelRequest)
_ModelResponded = maker(ModelResponded)
_ToolCalled = maker(ToolCalled)
_InjectionContext = maker(InjectionContext)


def _protocol(
    call: Call,
    check: Callable[..., str | None] | None = None,
) -> Callable[[Callable[Concatenate[LoopCore, _P], _R]], Callable[Concatenate[LoopCore, _P], _R]]:
    """Guard a protocol call: refuse it unless the phase allows it; fail the run on any error.

    ``check(core, *args)`` returns why the arguments are refused (or None); a refused
    call changes nothing.
    """

    # the phases allowing ``call``, read from the table once: the guard compares by
    # identity (``in`` on a tuple of members) instead of hashing the phase on every call
    phases = tuple(phase for phase, calls in ALLOWED.items() if call in calls)

    def decorate(
        method: Callable[Concatenate[LoopCore, _P], _R],
    ) -> Callable[Concatenate[LoopCore, _P], _R]:
        @functools.wraps(method)
        def guarded(self: LoopCore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            if self._phase not in phases:
                raise UsageError(refusal(call, self._phase, self._why()))
            problem = check(self, *args, **kwargs) if check is not None else None
            if problem is not None:
                raise UsageError(problem)
            try:
                return method(self, *args, **kwargs)
            except BaseException as exc:
                self._enter_failed(exc)
                raise

        return guarded

    return decorate


class LoopCore:
    """All loop logic, no I/O. One instance per run."""

    def __init__(
        self,
        *,
        messages: Sequence[Message],
        toolset: Toolset,
        strategy: InjectionStrategy,
        options: LoopOptions,
        observers: Sequence[Observer] = (),
        state: dict[str, Any] | None = None,
        run_id: str | None = None,
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        self.messages: list[Message] = list(messages)
        self.toolset = toolset
        self.strategy = strategy
        self.options = options
        self.observers = tuple(observers)
        self.state: dict[str, Any] = state if state is not None else {}
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.capabilities = capabilities or ModelCapabilities()
        """What the model supports; strategies read it from ``InjectionContext.capabilities``."""
        self.trace = Trace(initial_tools=toolset.names)
        self._user_lock = threading.RLock()
        """Guards the user channel: progress chunks arrive from tool threads."""
        self.completions = CompletionQueue()
        """Async calls and their completions (thread-safe); a driver waits on it in phase
        ``AWAITING_COMPLETIONS`` (``wait()`` / ``wait_async()``)."""
        self.context = CallContext(
            options.context,
            state=self.state,
            run_id=self.run_id,
            loop_id=self.run_id,
            objects=(
                ContextObjects(options.context_objects, source="run")
                if options.context_objects
                else None
            ),
            progress=self._progress,
            completions=self.completions,
        )
        self._phase = Phase.READY
        self.error: BaseException | None = None
        """The error that ended the run (``phase`` is ``FAILED``), if one did."""
        self.output: Any = None
        self.usage = Usage()
        self.iteration = 0
        self.injected: list[str] = []
        self.user_outputs: list[str] = []
        """``user_content`` of non-silent results, in order (``RunResult.user_outputs``)."""
        self.called: dict[str, int] = {}
        self._strategy_state: dict[int, dict[str, Any]] = {}
        self._seen_ids: set[str] = set()
        self._output_attempts = 0
        self._output = (
            OutputParser(options.output_type) if options.output_type is not None else None
        )
        self._settings = ModelSettings(
            tool_choice=options.tool_choice,
            parallel_tool_calls=None,
            output_schema=self._output.schema if self._output else None,
            output_name=self._output.name if self._output else None,
            extra=dict(options.model_settings),
        )
        self._pending: list[PendingCall] = []
        # chains flattened once, no-op hooks dropped: one direct call per strategy per event
        self._turn_hooks = hook_strategies(strategy, "before_turn")
        self._result_hooks = hook_strategies(strategy, "on_tool_result")
        # each hook's own test that a result gives it nothing to do (None: always ask)
        self._result_filters = tuple((s, result_filter(s)) for s in self._result_hooks)
        self._filtered = any(f is not None for _, f in self._result_filters)
        self._open: _OpenIteration | None = None
        self._pre_changes: list[ChangeRecord] = []
        self._queued: list[Any] = []  # completions noticed, delivered on the next request
        self._answer_text: str | None = None  # the answer given while completions ran

    # -- the phase --------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the run is; ``harness.loop.Phase`` lists the calls each phase allows."""
        return self._phase

    @property
    def finished(self) -> bool:
        """True once the model gave its final answer (``phase`` is ``FINISHED``)."""
        return self._phase is Phase.FINISHED

    def _why(self) -> str:
        """Why the core is in its phase, for a refusal."""
        if self._phase is Phase.AWAITING_RESPONSE:
            return f"iteration {self.iteration} sent its request"
        if self._phase is Phase.AWAITING_RESULTS:
            return f"{len(self._pending)} tool call(s) of iteration {self.iteration} are pending"
        if self._phase is Phase.AWAITING_COMPLETIONS:
            return "the model answered while async tool calls are running"
        if self._phase is Phase.FAILED and self.error is not None:
            return f"it ended with {type(self.error).__name__}: {self.error}"
        return ""

    def _enter_failed(self, exc: BaseException) -> None:
        """Move to ``FAILED`` keeping ``exc`` (the first error wins), and close the trace."""
        if self._phase is Phase.FAILED:
            return
        self._phase = Phase.FAILED
        self.error = exc
        self._pending = []
        self.abort(exc)

    # -- events and records -----------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Record ``event`` in the trace and deliver it to observers."""
        self.trace.events.append(event)
        for observer in self.observers:
            observer(event)

    def _close_iteration(self) -> None:
        open_ = self._open
        if open_ is None:
            return
        self.trace.iterations.append(
            _IterationRecord(
                index=open_.index,
                offered=open_.offered,
                calls=tuple(open_.calls),
                changes=tuple(open_.changes),
                answer=open_.answer,
                finish_reason=open_.finish_reason,
            )
        )
        self._open = None

    def _context(
        self,
        *,
        call: ToolCall | None = None,
        tool: Tool | None = None,
        result: ToolResult | None = None,
    ) -> InjectionContext:
        return _InjectionContext(
            history=HistoryView(self.messages),
            offered=self.toolset.names,
            tools=self.toolset.view(),
            iteration=self.iteration,
            state=self.state,
            call=call,
            tool=tool,
            result=result,
            called=types.MappingProxyType(dict(self.called)),
            strategy_state=self._strategy_state,
            capabilities=self.capabilities,
            run_id=self.run_id,
            usage=self.trace.usage,
        )

    def _listening(self, result: ToolResult) -> tuple[InjectionStrategy, ...]:
        """The result hooks that may change something for ``result`` (the others would
        return ``None``: no context is built for them)."""
        if not self._filtered:
            return self._result_hooks
        listening = []
        for strategy, nothing_for in self._result_filters:
            if nothing_for is None or not nothing_for(result):
                listening.append(strategy)
        return tuple(listening)

    def _ask_strategy(
        self,
        hook: str,
        context: InjectionContext,
        strategies: tuple[InjectionStrategy, ...] | None = None,
    ) -> list[ToolsetChange]:
        if strategies is None:
            strategies = self._result_hooks if hook == "on_tool_result" else self._turn_hooks
        if len(strategies) == 1:
            return consult(strategies[0], hook, context)
        return [change for s in strategies for change in consult(s, hook, context)]

    def apply_change(self, change: ToolsetChange, call: ToolCall | None = None) -> None:
        """Apply a toolset change, record it in the trace and emit its events."""
        removed = tuple(name for name in change.remove if self.toolset.discard(name) is not None)
        for tool in change.replace:
            self.toolset.replace(tool)
        added = []
        for tool in change.add:
            self.toolset.add(tool)
            added.append(tool.name)
        after = call.name if call else None
        for event in change.events:
            self.emit(event)
        initial = self._open is None and not self.trace.iterations  # before request 1
        if removed or added or change.replace:
            record = ChangeRecord(
                initial=initial,
                strategy=change.strategy,
                reason=change.reason,
                added=tuple(added),
                removed=removed,
                replaced=tuple(t.name for t in change.replace),
                after_call=after,
                after_call_id=call.id if call else None,
            )
            if self._open is not None:
                self._open.changes.append(record)
            else:
                self._pre_changes.append(record)
        if removed:
            self.emit(
                ToolsRemoved(
                    iteration=self.iteration,
                    tool_names=removed,
                    strategy=change.strategy,
                    reason=change.reason,
                    after_call=after,
                )
            )
        if added:
            if not initial:
                self.injected.extend(added)
                record_metric("tools_injected", len(added), strategy=change.strategy)
            _log.info(
                "run %s iteration %d: %s %s %s (%s)",
                self.run_id,
                self.iteration,
                change.strategy,
                "set up" if initial else "injected",
                ", ".join(added),
                change.reason,
            )
            self.emit(
                ToolsInjected(
                    iteration=self.iteration,
                    tool_names=tuple(added),
                    strategy=change.strategy,
                    reason=change.reason,
                    after_call=after,
                    section_key=change.section_key,
                )
            )

    # -- the protocol -----------------------------------------------------------------

    @_protocol("begin_iteration")
    def begin_iteration(self) -> ModelRequest:
        """Start an iteration: run before-turn hooks and build the model request."""
        self._close_iteration()
        if self.iteration >= self.options.max_iterations:
            message = f"max_iterations={self.options.max_iterations} reached without an answer"
            self.emit(
                LimitReached(
                    iteration=self.iteration,
                    limit="max_iterations",
                    value=self.options.max_iterations,
                    message=message,
                )
            )
            self._fail(MaxIterationsExceeded(self.options.max_iterations))
        self.iteration += 1
        self._pre_changes = []
        if self.completions.active:
            self._deliver_completions()
        if self._turn_hooks:
            try:
                for change in self._ask_strategy("before_turn", self._context()):
                    self.apply_change(change)
            except HarnessError as exc:
                self._fail(exc)
        offered = self.toolset.names
        self._open = _new_open_iteration(
            index=self.iteration, offered=offered, changes=self._pre_changes
        )
        self._phase = Phase.AWAITING_RESPONSE
        self.emit(_IterationStarted(iteration=self.iteration, offered=offered))
        return _ModelRequest(
            messages=HistoryView(self.messages),
            tools=self.toolset.definitions(),
            tool_names=offered,
            settings=self._settings,
            iteration=self.iteration,
        )

    @_protocol("receive_response")
    def receive_response(self, response: ModelResponse) -> list[PendingCall]:
        """Take the model's answer; return the calls to execute (empty when none)."""
        open_ = self._open or self._require_open()
        message = self._unique_ids(response.message)
        self.messages.append(message)
        if (
            response.usage.total_tokens
            or response.usage.input_tokens
            or response.usage.output_tokens
        ):
            self.usage = self.usage + response.usage
            add_usage(self.trace.usage, response.model_name, response.usage)
        open_.answer = message.content
        open_.finish_reason = response.finish_reason
        tool_calls = message.tool_calls  # read once: pydantic attribute reads are not cheap
        self.emit(
            _ModelResponded(
                iteration=self.iteration,
                tool_calls=tuple(map(_name_of, tool_calls)),
                finish_reason=response.finish_reason,
            )
        )
        try:
            if not tool_calls:
                self._phase = Phase.READY  # an answer to retry; _done() makes it FINISHED
                self._finish_answer(message)
                return []
            pending = list(map(self._pend, tool_calls))
        except HarnessError as exc:
            if message.tool_calls:  # keep the history well formed: every call gets a result
                self._answer_not_run(message.tool_calls, exc)
            self._fail(exc)
        self._pending = pending
        self._phase = Phase.AWAITING_RESULTS
        return list(pending)

    @_protocol("receive_results", check=lambda core, results: core._check_results(results))
    def receive_results(self, results: Sequence[tuple[ToolResult, int]]) -> None:
        """Take ``(result, attempts)`` for each pending call, in call order.

        Every call is recorded and answered in the history even when a strategy
        raises; the first strategy error is raised after that. Results of the wrong
        length are refused without changing anything.
        """
        with self._user_lock:  # the calls' emitters close here (see _progress)
            pending, self._pending = self._pending, []
        self._phase = Phase.READY
        open_ = self._open or self._require_open()
        error: HarnessError | None = None
        signal: LoopSignal | None = None
        direct: tuple[ToolCall, ToolResult] | None = None
        for item, (result, attempts) in zip(pending, results, strict=True):
            call = item.call
            call_id, name = call.id, call.name  # read once: pydantic reads are not cheap
            if signal is None and isinstance(result.exception, LoopSignal):
                signal = result.exception
            if direct is None and not result.is_error and is_return_direct(item.tool):
                direct = (call, result)
            self._emit_call(call, result)
            if result.child_traces:  # a handoff: the nested runs hang from this call
                self.trace.children.extend(result.child_traces)
                self._account_children(result.child_traces)
            notes = []
            listening = self._listening(result) if error is None and self._result_hooks else ()
            if listening:
                try:
                    context = self._context(call=call, tool=item.tool, result=result)
                    for change in self._ask_strategy("on_tool_result", context, listening):
                        self.apply_change(change, call)
                        if change.result_note:
                            notes.append(change.result_note)
                except HarnessError as exc:
                    error = exc
            content = model_content(result, name)
            if notes:
                content = "\n\n".join((content, *notes))
            for_user = user_text(result) if result.error_kind != "signal" else None
            if for_user is not None:
                self._notify_user(call.id, call.name, for_user)
            is_async = result.is_async and not result.is_error
            open_.calls.append(
                _CallRecord(
                    id=call_id,
                    name=name,
                    arguments=call.arguments,
                    content=content,
                    is_error=result.is_error,
                    error_kind=result.error_kind,
                    value=result.value,
                    exception=result.exception,
                    attempts=attempts,
                    user_content=result.user_content,
                    silent=result.silent,
                    children=result.child_traces,
                    is_async=is_async,
                )
            )
            self.messages.append(
                _tool_message(
                    {
                        "tool_call_id": call_id,
                        "content": content,
                        "name": name,
                        "is_error": result.is_error,
                    }
                )
            )
            if is_async:
                self.completions.register(call.id, call.name, result, self.iteration)
                _log.info(
                    "run %s iteration %d: %s (call %s) started async work",
                    self.run_id,
                    self.iteration,
                    call.name,
                    call.id,
                )
            elif self.completions.active:
                self._record_lost([self.completions.not_async(call.id)])
        if self.completions.active:
            self._notice_arrivals()
        if signal is not None:  # a tool's control flow: the run ends with it
            self._fail(signal)
        if error is not None:
            self._fail(error)
        if direct is not None:
            self._return_direct(*direct)

    def _progress(self, call_id: str, name: str, text: str) -> None:
        """An ``Emitter``'s chunk: to the user channel now, while its call is pending."""
        with self._user_lock:
            if not any(p.call.id == call_id for p in self._pending):
                raise UsageError(
                    f"the Emitter of call {call_id!r} (tool {name!r}) was used after the call "
                    "returned (or the run ended); progress can only be sent while the call "
                    "runs: send a final message in the result's user_content instead"
                )
            self._notify_user(call_id, name, text, progress=True)

    def _notify_user(self, call_id: str, name: str, text: str, *, progress: bool = False) -> None:
        """Send ``text`` to the user channel: ``RunResult.user_outputs`` and a
        ``UserNotified`` event, in the same order (progress chunks come from tool threads)."""
        with self._user_lock:
            self.user_outputs.append(text)
            self.emit(
                UserNotified(
                    iteration=self.iteration,
                    call_id=call_id,
                    name=name,
                    content=text,
                    progress=progress,
                )
            )

    def _account_children(self, children: Sequence[Any]) -> None:
        """Add the nested runs' usage to this run's (see harness/loop/_usage.py)."""
        for child in children:
            for model, usage in getattr(child, "usage", {}).items():
                add_usage(self.trace.usage, model, usage)
                self.usage = self.usage + usage

    def _return_direct(self, call: ToolCall, result: ToolResult) -> None:
        """End the run with a ``return_direct`` tool's result (see harness/loop/_control.py)."""
        text = result.content
        if self._output is None:
            self.output = text
        else:
            value, problem = self._output.parse(text)
            if problem is not None:
                raise OutputValidationError(
                    f"the result of return_direct tool {call.name!r} (call {call.id!r}) did not "
                    f"match the output type, and no model turn is left to fix it: {problem}; "
                    "return JSON matching the output type from the tool, or unmark it"
                )
            self.output = value
        if self.completions.active:  # no model turn is left to read them
            self._queued = []
            self._record_lost(self.completions.close("return_direct"))
        self._phase = Phase.FINISHED
        self.emit(RunFinished(iteration=self.iteration, output=text, return_direct=call.name))

    def _check_results(self, results: Sequence[tuple[ToolResult, int]]) -> str | None:
        if len(results) == len(self._pending):
            return None
        return (
            f"expected {len(self._pending)} tool results (one per pending call, in call "
            f"order), got {len(results)}"
        )

    def _emit_call(self, call: ToolCall, result: ToolResult) -> None:
        if not result.is_error:
            name = call.name  # read once: pydantic attribute reads are not cheap
            self.called[name] = self.called.get(name, 0) + 1
            self.emit(
                _ToolCalled(
                    iteration=self.iteration,
                    call_id=call.id,
                    name=name,
                    arguments=call.arguments,
                    silent=result.silent,
                )
            )
        else:
            self.emit(
                ToolFailed(
                    iteration=self.iteration,
                    call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    error_kind=result.error_kind or "error",
                    message=result.content,
                )
            )

    def _answer_not_run(self, calls: Sequence[ToolCall], exc: HarnessError) -> None:
        """Answer ``calls`` with error results saying the run ended before they ran."""
        open_ = self._require_open()
        for call in calls:
            result = not_run_result(call, exc)
            open_.calls.append(
                CallRecord(
                    id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    content=result.content,
                    is_error=True,
                    error_kind=result.error_kind,
                    attempts=0,
                )
            )
            self.messages.append(
                ToolMessage(tool_call_id=call.id, content=result.content, name=call.name)
            )

    def _fail(self, exc: HarnessError) -> NoReturn:
        """End the run with ``exc``, attaching the trace and history to it."""
        self._enter_failed(exc)
        raise exc

    @_protocol("result")
    def result(self) -> RunResult:
        """The run's result once ``finished``."""
        self._close_iteration()
        return RunResult(
            output=self.output,
            messages=self.messages,
            iterations=self.iteration,
            tools_injected=list(self.injected),
            trace=self.trace,
            usage=self.usage,
            state=self.state,
            user_outputs=list(self.user_outputs),
        )

    def abort(self, exc: BaseException) -> None:
        """End the run with ``exc`` (unless it finished): close the trace, attach it to ``exc``.

        Drivers call it for errors raised outside the core (the model's request,
        a tool runner); the core calls it for its own.
        """
        if self._phase is not Phase.FINISHED and self._phase is not Phase.FAILED:
            self._phase = Phase.FAILED
            self.error = exc
            self._pending = []
        if self.completions.active:
            self._lose_on_failure()
        self._close_iteration()
        if isinstance(exc, HarnessError):
            exc.attach_run(self.trace, self.messages, self.state)
        else:
            try:
                exc.harness_trace = self.trace  # type: ignore[attr-defined]
                exc.harness_messages = list(self.messages)  # type: ignore[attr-defined]
                exc.harness_state = self.state  # type: ignore[attr-defined]
            except AttributeError:
                # An exception refusing attribute assignment (a frozen dataclass
                # exception, a custom __setattr__): the run still fails with it.
                pass

    # -- helpers ----------------------------------------------------------------------

    def _require_open(self) -> _OpenIteration:
        if self._open is None:
            raise HarnessError("call begin_iteration() before giving the core a response")
        return self._open

    def _unique_ids(self, message: AssistantMessage) -> AssistantMessage:
        tool_calls = message.tool_calls
        if not tool_calls:
            return message
        seen = self._seen_ids
        fixed: list[ToolCall] | None = None
        for index, call in enumerate(tool_calls):
            call_id = call.id
            new_id = call_id or f"call_{self.iteration}_{index}"
            if new_id in seen:
                base, n = new_id, 2
                while f"{base}_dup{n}" in seen:
                    n += 1
                new_id = f"{base}_dup{n}"
                self.emit(
                    StrategyWarning(
                        iteration=self.iteration,
                        strategy="loop",
                        message=(
                            f"the model reused tool call id {call.id!r} (tool {call.name!r}); "
                            f"renamed it to {new_id!r} so every call gets exactly one result"
                        ),
                    )
                )
            if new_id != call_id:
                if fixed is None:
                    fixed = list(tool_calls[:index])
                fixed.append(call.model_copy(update={"id": new_id}))
            elif fixed is not None:
                fixed.append(call)
            seen.add(new_id)
        if fixed is None:
            return message
        return message.model_copy(update={"tool_calls": tuple(fixed)})

    def _pend(self, call: ToolCall) -> PendingCall:
        name = call.name  # read once: pydantic attribute reads are not cheap
        tool = self.toolset.get(name)
        if tool is None:
            if self.options.unknown_tool == "raise":
                raise ToolNotFound(call.name, self.toolset.names)
            return PendingCall(
                call=call,
                tool=None,
                immediate=ToolResult.error(
                    unknown_tool_message(call.name, self.toolset.names), kind="unknown_tool"
                ),
            )
        values = self.options.call_context(call) if self.options.call_context else None
        hook = self.options.call_context_objects
        objects = hook(call) if hook is not None else None
        context = self.context.for_call(
            tool_name=call.name,
            tool_call_id=call.id,
            iteration=self.iteration,
            values=values,
            objects=ContextObjects(objects, source="call") if objects else None,
            toolset_objects=self.toolset.context_objects,
        )
        prepared = tool.prepare(call.arguments, context)
        if isinstance(prepared, ToolResult):
            return PendingCall(call=call, tool=tool, immediate=prepared)
        return _PendingCall(call=call, tool=tool, prepared=prepared)

    def _finish_answer(self, message: AssistantMessage) -> None:
        text = message.content
        if self._output is None:
            self.output = text if text is not None else (message.refusal or "")
            self._done(text)
            return
        value, problem = self._output.parse(text)
        if problem is None:
            self.output = value
            self._done(text)
            return
        self._output_attempts += 1
        if self._output_attempts > self.options.output_retries:
            raise OutputValidationError(
                f"the final answer did not match the output type after "
                f"{self.options.output_retries} retries: {problem}"
            )
        self.messages.append(UserMessage(content=self._output.correction(problem)))

    def _done(self, text: str | None) -> None:
        if self.completions.active and self._completions_outstanding(text):
            return
        self._phase = Phase.FINISHED
        self.emit(RunFinished(iteration=self.iteration, output=text))

    # -- async completions (see harness/loop/_completions.py) --------------------------

    @_protocol("settle_completions")
    def settle_completions(self) -> None:
        """After the driver waited on ``completions``: queue what arrived, record calls
        past their deadline as lost, then go on as after the model's answer: a further
        turn delivers what arrived (``ready``), or the run finishes, or (calls still
        within their deadline) the core keeps awaiting."""
        self._record_lost(self.completions.lose("deadline", expired_only=True))
        self._done(self._answer_text)

    def _completions_outstanding(self, text: str | None) -> bool:
        """The model answered: wait for running async calls, lose them, or deliver what
        arrived with a further turn (True: the run goes on; False: it may finish)."""
        pending = self.completions.pending()  # first: nothing pending means no new arrival
        self._notice_arrivals()
        if pending and self.options.pending_completions == "lost":
            self._record_lost(self.completions.lose("run_ended"))
            self._notice_arrivals()  # those that arrived meanwhile are not lost
            pending = []
        if pending:
            waiting, longest = self.completions.start_wait(self.options.completion_deadline)
            if waiting:
                self._answer_text = text
                self._phase = Phase.AWAITING_COMPLETIONS
                self.emit(
                    CompletionsAwaited(
                        iteration=self.iteration,
                        call_ids=tuple(e.call_id for e in waiting),
                        deadline=longest,
                    )
                )
                return True
            self._notice_arrivals()
        if self._queued:
            if self.iteration < self.options.max_iterations:
                self._phase = Phase.READY  # a further turn delivers them
                return True
            queued, self._queued = self._queued, []
            self.completions.lose_entries(queued, "max_iterations")
            self._record_lost(queued)
        self._record_lost(self.completions.close("run_ended"))
        return False

    def _notice_arrivals(self) -> None:
        """Queue the completions that arrived since last time (``CompletionQueued``)."""
        for entry in self.completions.take_arrived():
            self._queued.append(entry)
            assert entry.result is not None
            self.emit(
                CompletionQueued(
                    iteration=self.iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    is_error=entry.result.is_error,
                )
            )

    def _deliver_completions(self) -> None:
        """Add each queued completion to the history as a follow-up message attributed to
        its tool and call id, and tell the user unless it is silent."""
        self._notice_arrivals()
        queued, self._queued = self._queued, []
        for entry in queued:
            result = entry.result
            content = model_content(result, entry.name)
            self.messages.append(
                UserMessage(
                    content=follow_up_text(
                        entry.name, entry.call_id, content, is_error=result.is_error
                    )
                )
            )
            self.completions.delivered(entry)
            self.trace.children.extend(result.child_traces)
            self.trace.completions.append(
                self._completion_record(entry, "delivered", result, content=content)
            )
            _log.info(
                "run %s iteration %d: async call %s of %s delivered",
                self.run_id,
                self.iteration,
                entry.call_id,
                entry.name,
            )
            self.emit(
                CompletionDelivered(
                    iteration=self.iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    started_iteration=entry.started_iteration,
                )
            )
            for_user = user_text(result)
            if for_user is not None:
                self._notify_user(entry.call_id, entry.name, for_user)

    def _completion_record(
        self,
        entry: Any,
        status: str,
        result: ToolResult | None,
        *,
        content: str | None = None,
        reason: str | None = None,
    ) -> CompletionRecord:
        """The trace's record of how ``entry`` (an async call) ended; ``result`` is what it
        reported back (``None`` when it never did)."""
        reported: dict[str, Any] = (
            {}
            if result is None
            else {
                "is_error": result.is_error,
                "error_kind": result.error_kind,
                "value": result.value,
                "exception": result.exception,
                "user_content": result.user_content,
                "silent": result.silent,
            }
        )
        return CompletionRecord(
            call_id=entry.call_id,
            name=entry.name,
            started_iteration=entry.started_iteration,
            status=status,
            iteration=self.iteration,
            content=content,
            reason=reason,
            **reported,
        )

    def _record_lost(self, entries: Sequence[Any]) -> None:
        """Record lost completions in the trace and emit ``CompletionLost``."""
        for entry in entries:
            if entry is None:
                continue
            result = entry.result
            reason = entry.reason or "run_ended"
            message = f"async call {entry.call_id!r} of tool {entry.name!r}: " + _LOST.get(
                reason, reason
            ).format(max_iterations=self.options.max_iterations)
            _log.warning("run %s: %s", self.run_id, message)
            self.trace.completions.append(
                self._completion_record(entry, "lost", result, reason=reason)
            )
            self.emit(
                CompletionLost(
                    iteration=self.iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    reason=reason,
                    message=message,
                )
            )

    def _lose_on_failure(self) -> None:
        """The run failed: every open async call is lost (``run_failed``). An observer
        raising here must not hide the run's own error, so its error is dropped."""
        self._queued = []
        lost = self.completions.close("run_failed")
        try:
            self._record_lost(lost)
        except Exception:  # the run's own error is the one raised
            _log.exception(
                "run %s: an observer failed while recording lost completions", self.run_id
            )
