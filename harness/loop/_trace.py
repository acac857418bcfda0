"""The trace: per iteration, what was offered, called, returned and changed, and why."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any, Literal, get_args

from harness._errors import UsageError
from harness._secrets import scrub_text
from harness.loop._events import Event
from harness.loop._model import Usage
from harness.loop._tool_states import ToolStates
from harness.tools._definitions import ToolChoice

__all__ = [
    "VIAS",
    "CallRecord",
    "ChangeRecord",
    "CompletionRecord",
    "IterationRecord",
    "Trace",
    "TurnRecord",
]


Via = Literal["edit", "addition", "deferred+search", "allowed"]
"""How an injected tool reached the model: the ``tools`` array edited, a client's
mid-conversation addition, a deferred tool a search (or a tool result) revealed, a tool
newly let through an allowed subset of ``tool_choice`` (see ``IterationRecord.injections``)."""
VIAS: tuple[str, ...] = get_args(Via)


def parse_arguments(arguments: str) -> dict[str, Any] | None:
    """A call's raw ``arguments`` as a dict, or ``None`` when they are not a JSON object."""
    if not arguments or arguments.isspace():
        return {}
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """One tool call and its result."""

    id: str
    """The call id."""
    name: str
    """The tool name the model used."""
    arguments: str
    """The raw arguments the model sent."""
    content: str
    """What the model was told."""
    is_error: bool = False
    """True when the call produced an error result."""
    error_kind: str | None = None
    """Why it failed, when it did."""
    value: Any = dataclasses.field(default=None, repr=False, compare=False)
    """The tool's Python return value."""
    exception: BaseException | None = dataclasses.field(default=None, repr=False, compare=False)
    """The exception the tool raised, if any."""
    attempts: int = 1
    """How many times the tool ran (retries included)."""
    user_content: str | None = None
    """What the result said to the user (``ToolResult.user_content``), if anything."""
    silent: bool = False
    """The result was background work: its ``user_content`` was not delivered."""
    children: tuple[Any, ...] = dataclasses.field(default=(), repr=False, compare=False)
    """Traces of the nested runs this call made (a handoff to an agent or subagent tool);
    the same objects are in ``Trace.children``, in call order."""

    @property
    def args(self) -> dict[str, Any] | None:
        """The arguments as the tool read them: a dict (``{}`` for blank arguments, as
        ``Tool.prepare`` reads them), or ``None`` when they are not a JSON object
        (malformed, a list, nested too deeply). ``arguments`` keeps the raw text."""
        return parse_arguments(self.arguments)

    @property
    def is_handoff(self) -> bool:
        """True when the call handed work to a nested run (it has child traces)."""
        return bool(self.children)

    is_async: bool = False
    """The call started background work (``ToolResult.started``); its result follows as a
    ``CompletionRecord`` with the same id in ``Trace.completions``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (without the Python value and exception); ``user_content``,
        ``silent`` and ``is_async`` appear only when set, so traces without them keep
        their shape."""
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "content": self.content,
            "is_error": self.is_error,
            "error_kind": self.error_kind,
            "attempts": self.attempts,
        }
        if self.user_content is not None:
            data["user_content"] = self.user_content
        if self.silent:
            data["silent"] = True
        if self.is_async:
            data["is_async"] = True
        return data


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompletionRecord:
    """How an async call (``ToolResult.started``) ended: delivered as a follow-up, or lost."""

    call_id: str
    """The id of the call that started the work."""
    name: str
    """The tool that started it."""
    started_iteration: int
    """The iteration of that call (0 when the call never became async: ``not_async``)."""
    status: str
    """``delivered`` or ``lost``."""
    iteration: int
    """The iteration whose request carried the follow-up, or when it was recorded lost."""
    content: str | None = None
    """What the model read in the follow-up (``None`` when lost)."""
    is_error: bool = False
    """The background work failed."""
    error_kind: str | None = None
    value: Any = dataclasses.field(default=None, repr=False, compare=False)
    """The completion's Python value (kept for lost results too, when one arrived)."""
    exception: BaseException | None = dataclasses.field(default=None, repr=False, compare=False)
    user_content: str | None = None
    """What the result said to the user (delivered unless silent or lost)."""
    silent: bool = False
    reason: str | None = None
    """Why it was lost (see ``CompletionLost``); ``None`` when delivered."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (without the Python value and exception)."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "started_iteration": self.started_iteration,
            "status": self.status,
            "iteration": self.iteration,
            "content": self.content,
            "is_error": self.is_error,
            "error_kind": self.error_kind,
            "user_content": self.user_content,
            "silent": self.silent,
            "reason": self.reason,
        }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChangeRecord:
    """One toolset change and its cause."""

    strategy: str
    """The strategy that asked for it."""
    reason: str
    """Why, in words."""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    after_call: str | None = None
    """Name of the tool whose result caused the change (``None`` for turn hooks)."""
    after_call_id: str | None = None
    """Id of that call."""
    initial: bool = False
    """Made before the run's first model request (a playbook's first tools, a state
    machine's initial state, the first groups or sections): it sets up the toolset the
    model first sees, so it is not an injection (``IterationRecord.injected`` and
    ``Trace.injected`` leave it out; ``Trace.offered_at_start`` includes it)."""
    via: Literal["edit", "addition"] = "edit"
    """How ``added`` reached the model: ``edit`` (declared in ``tools``) or ``addition``
    (a system message the client wrote: ``tools`` and the earlier prefix unchanged)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``via`` only when it is not ``edit``: other traces keep
        their shape)."""
        data: dict[str, Any] = {
            "strategy": self.strategy,
            "reason": self.reason,
            "added": list(self.added),
            "removed": list(self.removed),
            "replaced": list(self.replaced),
            "after_call": self.after_call,
            "after_call_id": self.after_call_id,
            "initial": self.initial,
        }
        if self.via != "edit":
            data["via"] = self.via
        return data


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IterationRecord:
    """One model request and everything that followed it."""

    index: int
    """1-based iteration number."""
    offered: tuple[str, ...]
    """Exact tool names offered on the request."""
    calls: tuple[CallRecord, ...] = ()
    """Tool calls of this turn, in call order."""
    changes: tuple[ChangeRecord, ...] = ()
    """Toolset changes made during this iteration (before-turn hooks first)."""
    answer: str | None = None
    """The model's text, if any."""
    finish_reason: str | None = None
    """The model's finish reason (``None`` if the turn did not complete)."""
    turn: int = 1
    """The user turn of a ``Session`` this request belongs to (1-based)."""
    tool_choice: ToolChoice | None = None
    """The request's tool choice (a strategy's, or ``LoopOptions.tool_choice``; ``None``:
    the provider's default)."""
    continued: bool = False
    """The model answered with text and the continuation policy kept the turn going
    (a ReAct thought, a text before the required tool): not the turn's answer."""
    tools: ToolStates | None = None
    """The request's tool states (visible, deferred, search, namespaces, tool choice); when
    anything is deferred, searched or namespaced, ``offered`` is ``tools.offered``."""
    discovered: tuple[str, ...] = ()
    """Tools this turn's searches revealed (a hosted search, or a client search's result)."""
    searches: int = 0
    """How many tool searches this turn made."""

    @property
    def deferred(self) -> tuple[str, ...]:
        """Tools declared deferred and not revealed yet on this request."""
        return self.tools.deferred if self.tools is not None else ()

    @property
    def allowed(self) -> tuple[str, ...] | None:
        """The allowed subset of this request's tool choice (``None``: no subset)."""
        return self.tools.allowed if self.tools is not None else None

    @property
    def injected(self) -> tuple[str, ...]:
        """Names added during this iteration (not the set-up: ``ChangeRecord.initial``)."""
        return tuple(n for c in self.changes if not c.initial for n in c.added)

    @property
    def removed(self) -> tuple[str, ...]:
        """Names removed during this iteration (not the initial set-up)."""
        return tuple(n for c in self.changes if not c.initial for n in c.removed)

    @property
    def set_up(self) -> tuple[str, ...]:
        """Names the initial set-up added before the run's first request (iteration 1 only)."""
        return tuple(n for c in self.changes if c.initial for n in c.added)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form; ``turn``, ``tool_choice`` and ``continued`` appear only when
        they differ from their defaults, and ``tools``, ``tool_choice``, ``discovered`` and
        ``searches`` for requests with native tool states (other traces keep their shape)."""
        data: dict[str, Any] = {
            "index": self.index,
            "offered": list(self.offered),
            "calls": [c.to_dict() for c in self.calls],
            "changes": [c.to_dict() for c in self.changes],
            "answer": self.answer,
            "finish_reason": self.finish_reason,
        }
        if self.turn != 1:
            data["turn"] = self.turn
        if self.tool_choice is not None:
            data["tool_choice"] = self.tool_choice.to_data()
        if self.continued:
            data["continued"] = True
        tools = self.tools
        if (tools is not None and not tools.is_plain) or self.discovered or self.searches:
            if tools is not None:
                data["tools"] = tools.to_data()
                choice = tools.tool_choice
                data["tool_choice"] = choice.to_data() if choice is not None else None
            data["discovered"] = list(self.discovered)
            data["searches"] = self.searches
        return data


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """One user turn of a session: its requests, in order."""

    index: int
    """1-based turn number."""
    iterations: tuple[IterationRecord, ...]
    """The turn's requests (their ``index`` counts the session's requests)."""

    @property
    def answer(self) -> str | None:
        """The text that ended the turn (its last request's answer)."""
        return self.iterations[-1].answer if self.iterations else None

    @property
    def calls(self) -> list[CallRecord]:
        """The turn's tool calls, in order."""
        return [c for it in self.iterations for c in it.calls]


@dataclasses.dataclass(kw_only=True)
class Trace:
    """The record of a run. Iteration records are frozen; the trace grows as the run goes."""

    iterations: list[IterationRecord] = dataclasses.field(default_factory=list)
    """One record per model request."""
    events: list[Event] = dataclasses.field(default_factory=list)
    """Every event delivered during the run, in order."""
    initial_tools: tuple[str, ...] = ()
    """The tools offered when the run started."""
    restarts: int = 0
    """How many times the run was restarted (providers without dynamic tools)."""
    children: list[Trace] = dataclasses.field(default_factory=list)
    """Traces of nested runs (agentic tools)."""
    usage: dict[str, Usage] = dataclasses.field(default_factory=dict)
    """Token usage per model name, nested runs included (see harness/loop/_usage.py);
    ``RunResult.usage`` is its sum."""
    completions: list[CompletionRecord] = dataclasses.field(default_factory=list)
    """How each async call ended (delivered or lost), in the order it was settled."""

    def __iter__(self) -> Iterator[IterationRecord]:
        return iter(self.iterations)

    def __len__(self) -> int:
        return len(self.iterations)

    @property
    def calls(self) -> list[CallRecord]:
        """All tool calls in order."""
        return [c for it in self.iterations for c in it.calls]

    @property
    def changes(self) -> list[ChangeRecord]:
        """All toolset changes in order."""
        return [c for it in self.iterations for c in it.changes]

    @property
    def injected(self) -> list[str]:
        """All injected tool names in order (the initial set-up is not an injection)."""
        return [n for it in self.iterations for n in it.injected]

    @property
    def offered_at_start(self) -> tuple[str, ...]:
        """The tools offered on the first model request: the toolset the run started with
        plus the strategies' initial set-up (``initial_tools`` before it)."""
        return self.iterations[0].offered if self.iterations else self.initial_tools

    def events_of(self, kind: type[Event]) -> list[Event]:
        """Events of one type."""
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def turns(self) -> list[TurnRecord]:
        """The user turns (a plain run has one), each with its requests."""
        turns: dict[int, list[IterationRecord]] = {}
        for it in self.iterations:
            turns.setdefault(it.turn, []).append(it)
        return [TurnRecord(index=n, iterations=tuple(its)) for n, its in turns.items()]

    def turn(self, number: int) -> Trace:
        """The part of this trace that belongs to user turn ``number`` (1-based): its
        iterations and their events, so every assertion can read one turn."""
        iterations = [it for it in self.iterations if it.turn == number]
        if not iterations:
            known = sorted({it.turn for it in self.iterations})
            raise UsageError(f"the trace has no user turn {number!r}; its turns: {known}")
        first, last = iterations[0].index, iterations[-1].index
        return Trace(
            iterations=iterations,
            events=[e for e in self.events if first <= e.iteration <= last],
            initial_tools=iterations[0].offered,
            restarts=self.restarts,
            children=self.children,
            usage=self.usage,
            completions=[c for c in self.completions if first <= c.iteration <= last],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form of the whole trace (known secrets scrubbed from every string)."""
        scrubbed: dict[str, Any] = _scrubbed(
            {
                "initial_tools": list(self.initial_tools),
                "restarts": self.restarts,
                "iterations": [it.to_dict() for it in self.iterations],
                "events": [_event_dict(e) for e in self.events],
                "children": [c.to_dict() for c in self.children],
            }
        )
        if self.completions:  # only runs with async tools: other traces keep their shape
            scrubbed["completions"] = _scrubbed([c.to_dict() for c in self.completions])
        return scrubbed


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrubbed(v) for v in value)
    return value


_VOLATILE = frozenset({"timestamp"})
"""Event fields left out of ``Trace.to_dict()``: they differ between equal runs."""


def _event_dict(event: Event) -> dict[str, Any]:
    data = event.to_dict()
    return {
        k: list(v) if isinstance(v, tuple) else v for k, v in data.items() if k not in _VOLATILE
    }
