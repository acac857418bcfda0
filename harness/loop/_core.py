"""The sans-IO loop core: it consumes model responses and tool results and says what's next.

Drivers (``run``/``arun``) do the I/O::

    core = LoopCore(...)
    while not core.finished:  # core.phase tells where it is: see harness/loop/_phases.py
        if core.phase is LoopPhase.AWAITING_COMPLETIONS:  # the model answered, async tools run
            core.completions.wait()
            core.settle_completions()
            continue
        response = model.request(core.begin_iteration())
        pending = core.receive_response(response)
        if pending:
            core.receive_results([execute(p) for p in pending])
    result = core.result()

Like h11's connection, the core holds its state machine (``PhaseMachine``,
harness/loop/_phases.py): one ``LoopPhase`` at a time; each protocol call is checked
against ``ALLOWED`` by one guard (``_protocol``) and ends with one move through
``TRANSITIONS``. Any exception out of a call, and a driver's ``abort``, take the one path
to ``failed``. A text answer is judged in one place (``_after_answer``). What the core
keeps is split by job: the trace (``TraceBuilder``), async calls (``CompletionLedger``),
the user channel (``UserChannel``), the user turns (``TurnControl``), the calls to run
(harness/loop/_calls.py), and the measured speed-ups of the hot path
(harness/loop/_fast.py).
"""

from __future__ import annotations

import functools
import types
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from harness._errors import (
    HarnessError,
    LoopSignal,
    MaxIterationsExceeded,
    UsageError,
)
from harness.loop import _changes, _fast as fast
from harness.loop._calls import PendingCall, prepare, result_event, unique_ids
from harness.loop._channels import UserChannel, model_content, user_text
from harness.loop._completions import CompletionQueue
from harness.loop._control import is_return_direct
from harness.loop._events import (
    Event,
    LimitReached,
    Observer,
    RunFinished,
)
from harness.loop._ledger import CompletionLedger
from harness.loop._model import (
    HistoryView,
    ModelCapabilities,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    Usage,
)
from harness.loop._options import LoopOptions
from harness.loop._output import RunOutput
from harness.loop._phases import ALLOWED, Call, LoopPhase, PhaseMachine, Trigger
from harness.loop._result import RunResult
from harness.loop._strategy import (
    InjectionContext,
    InjectionStrategy,
    ToolsetChange,
    consult,
    hook_strategies,
)
from harness.loop._telemetry import logger
from harness.loop._tool_states import revealed_definitions
from harness.loop._trace_builder import TraceBuilder
from harness.loop._turns import TurnControl
from harness.loop._unknown import not_run_result
from harness.loop._writes import HistoryWrites
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.tools import CallContext, ContextObjects, Tool, ToolResult, Toolset
from harness.tools._definitions import ToolChoice
from harness.tools._patterns import validation_seconds

__all__ = ["LoopCore", "PendingCall"]

_log = logger.getChild("loop")

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _protocol(
    call: Call,
    check: Callable[..., str | None] | None = None,
) -> Callable[[Callable[Concatenate[LoopCore, _P], _R]], Callable[Concatenate[LoopCore, _P], _R]]:
    """Guard a protocol call: refuse it unless the phase allows it; fail the run on any error.

    ``check(core, *args)`` returns why the arguments are refused (or None); a refused
    call changes nothing.
    """

    phases = tuple(phase for phase, calls in ALLOWED.items() if call in calls)

    def decorate(
        method: Callable[Concatenate[LoopCore, _P], _R],
    ) -> Callable[Concatenate[LoopCore, _P], _R]:
        @functools.wraps(method)
        def guarded(self: LoopCore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            if self._phases.phase not in phases:
                raise self._phases.refusal(
                    call, iteration=self.iteration, pending=len(self._pending)
                )
            problem = check(self, *args, **kwargs) if check is not None else None
            if problem is not None:
                raise UsageError(problem)
            try:
                return method(self, *args, **kwargs)
            except BaseException as exc:
                self.abort(exc)
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
        self._record = TraceBuilder(toolset.names, self.messages)
        self.trace = self._record.trace
        self._user = UserChannel(self.emit)
        self.user_outputs: list[str] = self._user.outputs
        """``user_content`` of non-silent results, in order (``RunResult.user_outputs``)."""
        self.completions = CompletionQueue()
        """Async calls and their completions (thread-safe); a driver waits on it in phase
        ``AWAITING_COMPLETIONS`` (``wait()`` / ``wait_async()``)."""
        self._ledger = CompletionLedger(
            self.completions,
            history=self.messages,
            trace=self._record,
            emit=self.emit,
            notify=self._notify_user,
            options=options,
            run_id=self.run_id,
        )
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
            progress=self._user.progress,
            completions=self.completions,
        )
        self._phases = PhaseMachine()
        self.output: Any = None
        self.usage = Usage()
        self.iteration = 0
        self.injected: list[str] = []
        self.called: dict[str, int] = {}
        self._strategy_state: dict[int, dict[str, Any]] = {}
        self._seen_ids: set[str] = set()
        self._output = RunOutput(options.output_type, options.output_retries)
        self._settings = ModelSettings(
            tool_choice=ToolChoice.of(options.tool_choice),
            parallel_tool_calls=None,
            output_schema=self._output.schema,
            output_name=self._output.name,
            extra=dict(options.model_settings),
        )
        self._pending: list[PendingCall] = []
        self._turn_hooks = hook_strategies(strategy, "before_turn")
        self._result_hooks = fast.ResultHooks(strategy)
        self._answer_text: str | None = None  # kept while async calls run (settle_completions)
        self._turns = TurnControl(options, strategy)
        self.writes = HistoryWrites(self.messages, toolset)
        """Messages and tool additions the strategies queued for the next request, and the
        tools an addition made callable without declaring them (harness/loop/_writes.py)."""

    # -- the phase --------------------------------------------------------------------

    @property
    def phase(self) -> LoopPhase:
        """Where the run is; ``harness.loop.LoopPhase`` lists the calls each phase allows."""
        return self._phases.phase

    @property
    def error(self) -> BaseException | None:
        """The error that ended the run (``phase`` is ``FAILED``), if one did."""
        return self._phases.error

    @property
    def turn(self) -> int:
        """The current user turn (1-based; ``begin_turn`` starts the next one)."""
        return self._turns.turn

    @property
    def finished(self) -> bool:
        """True once the model gave its final answer (``phase`` is ``FINISHED``)."""
        return self._phases.phase is LoopPhase.FINISHED

    # -- the protocol -----------------------------------------------------------------

    @_protocol("begin_iteration")
    def begin_iteration(self) -> ModelRequest:
        """Start an iteration: run before-turn hooks and build the model request."""
        self._record.close()
        limit = self.options.max_iterations
        if self.iteration - self._turns.start >= limit:  # counted per user turn
            message = f"max_iterations={limit} reached without an answer"
            self.emit(
                LimitReached(
                    iteration=self.iteration, limit="max_iterations", value=limit, message=message
                )
            )
            raise MaxIterationsExceeded(limit)
        self.iteration += 1
        if self.completions.active:
            self._ledger.deliver(self.iteration)
        if self._turn_hooks:
            for change in self._ask(self._turn_hooks, "before_turn", self._context()):
                self.apply_change(change)
        if self.writes.pending and self.writes.flush(self.messages):
            self._record.tool_states.noticed()
        offered = self.toolset.names
        turns = self._turns
        settings = (  # a strategy's choice, if one decides
            turns.settings(self._settings, self._context) if turns.choosers else self._settings
        )
        self._record.open(self.iteration, offered, turns.turn, settings.tool_choice)
        self.emit(fast.IterationStarted(iteration=self.iteration, offered=offered))
        self._phases.move("requested")
        request = fast.ModelRequest(
            messages=HistoryView(self.messages),
            tools=self.writes.declared(self.toolset),
            tool_names=offered,
            settings=settings,
            iteration=self.iteration,
        )
        self._record.tool_states.request(request)
        return request

    @_protocol("receive_response")
    def receive_response(self, response: ModelResponse) -> list[PendingCall]:
        """Take the model's answer; return the calls to execute (empty when none)."""
        message, warnings = unique_ids(response.message, self._seen_ids, self.iteration)
        for warning in warnings:
            self.emit(warning)
        self.messages.append(message)
        self._add_usage(response.usage, response.model_name)
        record = self._record
        record.answer(message.content, response.finish_reason)
        if record.tool_states.states is not None:  # a request using native tools
            record.tool_states.response(message)
        tool_calls = message.tool_calls
        self.emit(
            fast.ModelResponded(
                iteration=self.iteration,
                tool_calls=tuple([call.name for call in tool_calls]),
                finish_reason=response.finish_reason,
            )
        )
        if not tool_calls:
            self._phases.move(self._after_answer(message))
            return []
        try:
            with validation_seconds(self.options.tool_timeout):  # each call's argument checks
                pending = [
                    prepare(call, self.toolset, self.options, self.context, self.iteration)
                    for call in tool_calls
                ]
        except HarnessError as exc:  # keep the history well formed: every call gets a result
            self._answer_not_run(tool_calls, exc)
            raise
        self._pending = pending
        self._user.running(pending, self.iteration)
        self._phases.move("tool_calls")
        return list(pending)

    @_protocol("receive_results", check=lambda core, results: core._results_problem(results))
    def receive_results(self, results: Sequence[tuple[ToolResult, int]]) -> None:
        """Take ``(result, attempts)`` for each pending call, in call order.

        Every call is recorded and answered in the history even when a strategy
        raises; the first strategy error is raised after that. Results of the wrong
        length are refused without changing anything.
        """
        pending, self._pending = self._pending, []
        self._user.stopped()  # the calls' emitters close here
        error: HarnessError | None = None
        signal: LoopSignal | None = None
        direct: tuple[ToolCall, ToolResult] | None = None
        for item, (result, attempts) in zip(pending, results, strict=True):
            if signal is None and isinstance(result.exception, LoopSignal):
                signal = result.exception
            if direct is None and not result.is_error and is_return_direct(item.tool):
                direct = (item.call, result)
            problem = self._take_result(item, result, attempts, consult=error is None)
            error = error or problem
        if self.completions.active:
            self._ledger.notice(self.iteration)
        if signal is not None:  # a tool's control flow: the run ends with it
            raise signal
        if error is not None:
            raise error
        if direct is None:
            if self._turns.policy is not None:  # its user message after results, if any
                self._turns.after_results(self)
            self._phases.move("results")
        else:
            self._return_direct(*direct)
            self._phases.move("return_direct")

    @_protocol("settle_completions")
    def settle_completions(self) -> None:
        """After the driver waited on ``completions``: record calls past their deadline as
        lost, then go on as after the model's answer: a further turn delivers what arrived
        (``ready``), or the run finishes, or (calls still within their deadline) the core
        keeps awaiting."""
        self._ledger.lose_expired(self.iteration)
        self._phases.move(self._after_answer(None))

    @_protocol("result")
    def result(self) -> RunResult:
        """The result of the run (of the current user turn, for a session) once ``finished``."""
        self._record.close()
        turns = self._turns
        return RunResult(
            output=self.output,
            messages=self.messages,
            iterations=turns.iteration(self.iteration),
            tools_injected=self.injected[turns.injected_start :],
            trace=self.trace,
            usage=self.usage - turns.usage_start,
            state=self.state,
            user_outputs=list(self.user_outputs),
            turn=turns.turn,
        )

    @_protocol("begin_turn")
    def begin_turn(self, messages: Sequence[Message]) -> None:
        """Start a session's next user turn after the last one finished: ``messages`` (the
        user's) join the same history, toolset, strategy state and blackboard."""
        self._record.close()
        self.messages.extend(messages)
        self._turns.next_turn(self)
        self._ledger.turn_start = self.iteration  # max_iterations counts each turn
        for strategy in self._turns.resetting:  # strategies that start each turn afresh
            self._strategy_state.pop(id(strategy), None)
        self.output = None
        self._output = RunOutput(self.options.output_type, self.options.output_retries)
        self._phases.move("user_turn")

    def abort(self, exc: BaseException) -> None:
        """End the run with ``exc`` (unless it finished): close the trace, attach it to ``exc``.

        The one path to ``failed``: the guard calls it for any error out of a protocol
        call, drivers for errors raised outside the core (the model's request, a tool
        runner). The first error is the one kept in ``error``.
        """
        if self._phases.fail(exc):
            if self._pending:  # interrupted mid-call (Ctrl-C): every call is answered
                self._answer_not_run([p.call for p in self._pending], exc)
            self._pending = []
            self._user.stopped()
        if self.completions.active:
            self._ledger.fail(self.iteration)
        self._record.close()
        _attach_run(exc, self.trace, self.messages, self.state)

    # -- events, strategies and changes -----------------------------------------------

    def emit(self, event: Event) -> None:
        """Record ``event`` in the trace and deliver it to observers."""
        self.trace.events.append(event)
        for observer in self.observers:
            observer(event)

    def _context(
        self,
        *,
        call: ToolCall | None = None,
        tool: Tool | None = None,
        result: ToolResult | None = None,
    ) -> InjectionContext:
        return fast.InjectionContext(
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
            turn=self._turns.turn,
            turn_iteration=self.iteration - self._turns.start,
        )

    @staticmethod
    def _ask(
        strategies: Sequence[InjectionStrategy], hook: str, context: InjectionContext
    ) -> list[ToolsetChange]:
        return [change for s in strategies for change in consult(s, hook, context)]

    def apply_change(self, change: ToolsetChange, call: ToolCall | None = None) -> None:
        """Apply a toolset change, record it in the trace and emit its events."""
        _changes.apply_change(self, self._record, change, call)

    # -- answers ----------------------------------------------------------------------

    def _after_answer(self, answer: AssistantMessage | None) -> Trigger:
        """The one decision after a text answer, its questions in order:

        1. ``output_type``: an answer that does not match is sent back with a correction
           (``answer_retried``);
        2. the continuation policy: an answer it does not take as the turn's ends nothing
           (``answer_continued``, after its user message if it has one);
        3. async calls (the ledger): still running within their deadline, the run waits
           (``completions_running``); arrived, a further turn delivers them
           (``completions_arrived``);
        4. otherwise the answer stands (``answer``).

        ``settle_completions`` asks again from 3 (``answer`` is None: the one kept).
        """
        if answer is not None:
            output, correction = self._output.from_answer(answer)
            if correction is not None:
                self.messages.append(UserMessage(content=correction))
                return "answer_retried"
            nudge = self._turns.continuation(self, answer)
            if nudge is not None:
                self._record.continued()
                if nudge:
                    self.messages.append(UserMessage(content=nudge))
                return "answer_continued"
            self.output = output
            self._answer_text = answer.content
        if self.completions.active:
            outstanding = self._ledger.outstanding(self.iteration)
            if outstanding == "running":
                return "completions_running"
            if outstanding == "arrived":
                return "completions_arrived"
        self.emit(RunFinished(iteration=self.iteration, output=self._answer_text))
        return "answer"

    def _return_direct(self, call: ToolCall, result: ToolResult) -> None:
        """End the run with a ``return_direct`` tool's result (see harness/loop/_control.py)."""
        self.output = self._output.from_tool(call, result.content)
        if self.completions.active:  # no model turn is left to read them
            self._ledger.close("return_direct", self.iteration)
        self.emit(
            RunFinished(iteration=self.iteration, output=result.content, return_direct=call.name)
        )

    # -- calls and results --------------------------------------------------------------

    def _results_problem(self, results: Sequence[tuple[ToolResult, int]]) -> str | None:
        if len(results) == len(self._pending):
            return None
        return (
            f"expected {len(self._pending)} tool results (one per pending call, in call "
            f"order), got {len(results)}"
        )

    def _take_result(
        self, item: PendingCall, result: ToolResult, attempts: int, *, consult: bool
    ) -> HarnessError | None:
        """Record one call's result, let the strategies react (``consult``: none failed
        yet), and answer the call in the history. A strategy's error is returned: every
        call is answered before the run fails with it."""
        call = item.call
        call_id, name = call.id, call.name
        if not result.is_error:
            self.called[name] = self.called.get(name, 0) + 1
        self.emit(result_event(call, result, self.iteration))
        if result.child_traces:  # a handoff: the nested runs hang from this call
            self._adopt(result.child_traces)
        error: HarnessError | None = None
        notes = []
        reveals = result.reveals
        listening = self._result_hooks.for_result(result) if consult else ()
        if listening:
            try:
                context = self._context(call=call, tool=item.tool, result=result)
                for change in self._ask(listening, "on_tool_result", context):
                    self.apply_change(change, call)
                    if change.result_note:
                        notes.append(change.result_note)
                    if change.reveal and change.via == "edit":  # the result carries them
                        reveals = (*reveals, *revealed_definitions(self.toolset, change))
            except HarnessError as exc:
                error = exc
        content = model_content(result, name)
        if notes:
            content = "\n\n".join((content, *notes))
        for_user = user_text(result) if result.error_kind != "signal" else None
        if for_user is not None:
            self._notify_user(call_id, name, for_user)
        is_async = result.is_async and not result.is_error
        self._record.call(call, result, content=content, attempts=attempts, is_async=is_async)
        fields: dict[str, Any] = {
            "tool_call_id": call_id,
            "content": content,
            "name": name,
            "is_error": result.is_error,
        }
        if reveals:  # a client-side tool search, or a strategy revealing deferred tools
            fields["tools"] = reveals
            self._record.tool_states.noticed()
        self.messages.append(fast.tool_message(fields))
        if is_async:
            self._ledger.started(call, result, self.iteration)
        elif self.completions.active:
            self._ledger.finished(call_id, self.iteration)
        return error

    def _answer_not_run(self, calls: Sequence[ToolCall], exc: BaseException) -> None:
        """Answer ``calls`` with error results saying the run ended before they ran."""
        for call in calls:
            result = not_run_result(call, exc)
            self._record.not_run(call, result)
            self.messages.append(
                ToolMessage(tool_call_id=call.id, content=result.content, name=call.name)
            )

    def _adopt(self, children: Sequence[Any]) -> None:
        """Nested runs of a call: their traces hang from this one, their usage adds to it
        (see harness/loop/_usage.py)."""
        self._record.children(children)
        for child in children:
            for model, usage in getattr(child, "usage", {}).items():
                self._record.usage(model, usage)
                self.usage = self.usage + usage

    def _add_usage(self, usage: Usage, model: str | None) -> None:
        if usage.total_tokens or usage.input_tokens or usage.output_tokens:
            self.usage = self.usage + usage
            self._record.usage(model, usage)

    def _notify_user(self, call_id: str, name: str, text: str) -> None:
        self._user.send(self.iteration, call_id, name, text)


def _attach_run(
    exc: BaseException, trace: Any, messages: Sequence[Message], state: dict[str, Any]
) -> None:
    """Attach the run's trace, history and shared state to the error that ended it."""
    if isinstance(exc, HarnessError):
        exc.attach_run(trace, messages, state)
        return
    try:
        exc.harness_trace = trace  # type: ignore[attr-defined]
        exc.harness_messages = list(messages)  # type: ignore[attr-defined]
        exc.harness_state = state  # type: ignore[attr-defined]
    except AttributeError:
        # An exception refusing attribute assignment (a frozen dataclass
        # exception, a custom __setattr__): the run still fails with it.
        pass
