"""Tool states: what the model could call on a request, and what a response discovered.

A request declares tools (``ModelRequest.tools``), but with provider-native dynamic tools
what the model may call is derived:

- **visible**: callable without a search: declared and not deferred, or revealed earlier
  in the conversation (a hosted search's result, a client search's result, a client's
  addition), in that order; search tools are listed apart;
- **added**: the visible tools a client's mid-conversation addition made callable
  (``SystemMessage.tools``) that ``tools`` does not declare callable;
- **deferred**: declared with ``defer_loading`` and not revealed yet;
- **search**: the tool-search tools (hosted or client);
- **namespaces**: each namespace and its member functions (plain names);
- **tool_choice**: the request's ``ToolChoice`` (with its allowed subset).

Per response, ``discovered`` names the tools its searches revealed (a hosted search in the
response, or a client search the loop answered) and ``searches`` counts them.

``ToolStateTracker`` computes the states of one conversation's requests incrementally (the
history only grows, so each request scans only the messages added since the last one);
``tool_states(request)`` is the one-shot form. The loop's trace, the wire trace and
``harness cassette show --json`` all use it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness.loop._model import ModelRequest, ModelResponse
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from harness.tools import Toolset
from harness.tools._definitions import ToolChoice, ToolDefinition

if TYPE_CHECKING:
    from harness.loop._strategy import ToolsetChange

__all__ = [
    "ResponseDiscovery",
    "ToolStateTracker",
    "ToolStates",
    "TurnToolStates",
    "close_states",
    "discovery_of",
    "revealed_by",
    "tool_states",
]

_NO_NAMESPACES: Mapping[str, tuple[str, ...]] = {}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolStates:
    """The tool states of one request (see the module's docstring for each state)."""

    visible: tuple[str, ...] = ()
    """Callable without a search, search tools apart (declared and not deferred, then
    revealed ones in the order they were revealed)."""
    deferred: tuple[str, ...] = ()
    """Declared with ``defer_loading`` and not revealed yet."""
    search: tuple[str, ...] = ()
    """Tool-search tools (hosted or client)."""
    namespaces: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: _NO_NAMESPACES
    )
    """Namespace -> its member functions (plain names), in declaration order."""
    tool_choice: ToolChoice | None = None
    """The request's tool choice, ``None`` when it left the provider's default."""
    added: tuple[str, ...] = ()
    """Visible tools a client's addition made callable that ``tools`` does not declare
    callable (undeclared, or declared deferred), in the order they were added."""

    @property
    def offered(self) -> tuple[str, ...]:
        """What the model may call on this request: ``visible`` then ``search`` (narrowed by
        nothing: an allowed subset is in ``tool_choice``)."""
        return self.visible + self.search if self.search else self.visible

    @property
    def allowed(self) -> tuple[str, ...] | None:
        """The allowed subset of ``tool_choice``, or ``None``."""
        return self.tool_choice.allowed if self.tool_choice is not None else None

    @property
    def is_plain(self) -> bool:
        """True when nothing is deferred, searched, namespaced, added or narrowed."""
        return (
            not self.deferred
            and not self.search
            and not self.namespaces
            and not self.added
            and (self.tool_choice is None or self.tool_choice.allowed is None)
        )

    def with_search(self, names: Iterable[str]) -> ToolStates:
        """These states with ``names`` (visible tools) counted as search tools: a
        recording's custom search tool, known by the ``tool_reference`` blocks its results
        hold (the wire marks nothing else)."""
        moved = [n for n in names if n in self.visible and n not in self.search]
        if not moved:
            return self
        return dataclasses.replace(
            self,
            visible=tuple(n for n in self.visible if n not in moved),
            search=(*self.search, *moved),
        )

    def to_data(self) -> dict[str, Any]:
        """``{"visible": [...], "deferred": [...], "search": [...], "namespaces": {...}}``
        (the ``tools`` object of ``harness cassette show --json``), with ``"added": [...]``
        when a client's addition made tools callable."""
        data: dict[str, Any] = {
            "visible": list(self.visible),
            "deferred": list(self.deferred),
            "search": list(self.search),
            "namespaces": {k: list(v) for k, v in self.namespaces.items()},
        }
        if self.added:
            data["added"] = list(self.added)
        return data


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ResponseDiscovery:
    """What the tool searches of one model turn revealed."""

    discovered: tuple[str, ...] = ()
    """Tools the turn's searches revealed (hosted, then client searches' results)."""
    searches: int = 0
    """How many searches the turn made (hosted searches and calls of client search tools)."""


def revealed_by(message: Message) -> tuple[ToolDefinition, ...] | tuple[str, ...]:
    """The tools ``message`` makes callable: definitions (a client search's result, a
    client's addition) or names (a hosted search's finds)."""
    if isinstance(message, (ToolMessage, SystemMessage)):
        return message.tools
    if isinstance(message, AssistantMessage) and message.searches:
        return tuple(n for s in message.searches for n in s.found)
    return ()


def _name(item: ToolDefinition | str) -> str:
    return item if isinstance(item, str) else item.name


class ToolStateTracker:
    """Tool states of one conversation's requests, computed incrementally.

    Give it each request in order (``states(request)``); a request whose history does not
    extend the previous one (another conversation) starts over.
    """

    __slots__ = (
        "_added",
        "_definitions",
        "_epoch",
        "_last",
        "_plain",
        "_previous",
        "_revealed",
        "_scanned",
        "_static",
        "_tools",
    )

    def __init__(self) -> None:
        self._last: Message | None = None
        self._previous: ToolStates | None = None
        self._plain: bool | None = None
        self._epoch = 0
        self._scanned = 0
        self._revealed: dict[str, None] = {}
        self._added: dict[str, None] = {}
        """Names a client's addition (``SystemMessage.tools``) revealed, in order."""
        self._definitions: dict[str, ToolDefinition] = {}
        self._tools: Sequence[ToolDefinition] | None = None
        self._static: tuple[
            tuple[str, ...], tuple[str, ...], tuple[str, ...], Mapping[str, tuple[str, ...]]
        ] = ((), (), (), _NO_NAMESPACES)

    @property
    def revealed(self) -> tuple[str, ...]:
        """Names revealed so far in the conversation, in order."""
        return tuple(self._revealed)

    def added_definition(self, name: str) -> ToolDefinition | None:
        """The definition a revealing message carried for ``name`` (``None`` if none)."""
        return self._definitions.get(name)

    def _scan(self, messages: Sequence[Message]) -> None:
        """Read the messages added since the last request (all of them for a history that
        does not extend the last one: its last scanned message differs). Per request this
        is a few attribute reads: the loop's history is read through its list directly."""
        items = getattr(messages, "_items", None)  # a HistoryView: its list, no __getitem__
        seq: Sequence[Message] = items if isinstance(items, list) else messages
        end = len(messages)
        count = self._scanned
        if count and (end < count or not _same(seq[count - 1], self._last)):
            count = 0
            self._revealed = {}
            self._added = {}
            self._definitions = {}
            self._epoch += 1
        for index in range(count, end):
            message = seq[index]
            kind = type(message)
            if kind is ToolMessage or kind is SystemMessage:
                found: tuple[ToolDefinition, ...] | tuple[str, ...] = message.tools  # type: ignore[union-attr]
            elif kind is AssistantMessage and message.searches:  # type: ignore[union-attr]
                found = revealed_by(message)
            else:
                continue
            added = kind is SystemMessage
            for item in found:
                name = _name(item)
                if name not in self._revealed:
                    self._revealed[name] = None
                    self._epoch += 1
                if added and name not in self._added:
                    self._added[name] = None
                    self._epoch += 1
                if not isinstance(item, str):
                    self._definitions.setdefault(name, item)
        self._scanned = end
        self._last = seq[end - 1] if end else None

    def _split(self, tools: Sequence[ToolDefinition]) -> None:
        if tools is self._tools:
            return
        self._tools = tools
        self._previous = None
        self._static = _split(tools)

    def states(self, request: ModelRequest) -> ToolStates:
        """The tool states of ``request`` (the next request of the conversation)."""
        epoch = self._epoch
        self._scan(request.messages)
        tools = request.tools
        choice = request.settings.tool_choice
        previous = self._previous
        if (
            previous is not None
            and tools is self._tools
            and epoch == self._epoch
            and choice is previous.tool_choice
        ):
            return previous  # nothing changed since the last request: the same states
        self._split(tools)
        plain, deferred, search, namespaces = self._static
        if not self._revealed:
            states = ToolStates(
                visible=plain,
                deferred=deferred,
                search=search,
                namespaces=namespaces,
                tool_choice=choice,
            )
        else:
            states = self._with_revealed(plain, deferred, search, namespaces, choice)
        self._previous = states
        return states

    def native_states(self, request: ModelRequest) -> ToolStates | None:
        """``states(request)``, or ``None`` when they are plain (nothing deferred, searched,
        namespaced or narrowed): what the loop records, cheaply for plain requests."""
        previous = self._previous
        states = self.states(request)
        if states is previous and self._plain is not None:
            return None if self._plain else states
        self._plain = states.is_plain
        return None if self._plain else states

    def _with_revealed(
        self,
        plain: tuple[str, ...],
        deferred: tuple[str, ...],
        search: tuple[str, ...],
        namespaces: Mapping[str, tuple[str, ...]],
        choice: ToolChoice | None,
    ) -> ToolStates:
        declared = set(plain)
        shown = set(plain)
        hidden = set(search)
        visible = list(plain)
        for name in self._revealed:
            if name not in shown and name not in hidden:
                shown.add(name)
                visible.append(name)
        return ToolStates(
            visible=tuple(visible),
            deferred=tuple(n for n in deferred if n not in shown),
            search=search,
            namespaces=namespaces,
            tool_choice=choice,
            added=tuple(n for n in self._added if n not in declared and n not in hidden),
        )


_Static = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], Mapping[str, tuple[str, ...]]]
_SPLITS: dict[int, tuple[Sequence[ToolDefinition], _Static]] = {}
"""The tool lists split last (least recently used first), by identity: a toolset's
definitions tuple is shared by every run of the same tool list (``Toolset.of``), so
10,000 tools are read once, not once per run, even with other runs in between
(``benchmarks/loop_overhead.py``, the ``many`` case). The list is kept with its split,
so its id is not reused while it is cached."""
_SPLITS_KEPT = 16
_SPLITS_LOCK = threading.Lock()


def _split(tools: Sequence[ToolDefinition]) -> _Static:
    """``(plain, deferred, search, namespaces)`` names of a request's tools."""
    key = id(tools)
    with _SPLITS_LOCK:
        hit = _SPLITS.pop(key, None)
        if hit is not None and hit[0] is tools:
            _SPLITS[key] = hit  # the most recently used again
            return hit[1]
    static = _split_now(tools)
    with _SPLITS_LOCK:
        _SPLITS[key] = (tools, static)
        while len(_SPLITS) > _SPLITS_KEPT:
            del _SPLITS[next(iter(_SPLITS))]
    return static


def has_native_tools(tools: Sequence[ToolDefinition]) -> bool:
    """True when ``tools`` has a deferred, search or namespaced tool (cached by identity)."""
    _, deferred, search, namespaces = _split(tools)
    return bool(deferred or search or namespaces)


def _split_now(tools: Sequence[ToolDefinition]) -> _Static:
    plain: list[str] = []
    deferred: list[str] = []
    search: list[str] = []
    namespaces: dict[str, list[str]] = {}
    for tool in tools:
        if tool.search is not None:
            search.append(tool.name)
            continue
        (deferred if tool.defer_loading else plain).append(tool.name)
        if tool.namespace is not None:
            namespaces.setdefault(tool.namespace, []).append(tool.name)
    return (
        tuple(plain),
        tuple(deferred),
        tuple(search),
        {k: tuple(v) for k, v in namespaces.items()} if namespaces else _NO_NAMESPACES,
    )


def _same(a: Message, b: Message | None) -> bool:
    return a is b or a == b


def tool_states(request: ModelRequest) -> ToolStates:
    """The tool states of one request (its whole history scanned)."""
    return ToolStateTracker().states(request)


def discovery_of(
    response: ModelResponse | AssistantMessage | None,
    results: Iterable[ToolMessage] = (),
    search_tools: Iterable[str] = (),
) -> ResponseDiscovery:
    """What one model turn's searches revealed: the hosted searches in the response, and
    the results (``ToolMessage.tools``) of its calls; ``search_tools`` are the client
    search tools, whose calls count as searches."""
    message = response.message if isinstance(response, ModelResponse) else response
    found: dict[str, None] = {}
    searches = 0
    if message is not None:
        for search in message.searches:
            if search.tool:
                searches += 1
            for name in search.found:
                found.setdefault(name, None)
        client = frozenset(search_tools)
        if client:
            searches += sum(1 for call in message.tool_calls if call.name in client)
    for result in results:
        for definition in result.tools:
            found.setdefault(definition.name, None)
    return ResponseDiscovery(discovered=tuple(found), searches=searches)


_NOTHING = ResponseDiscovery()


def close_states(
    states: ToolStates | None,
    message: AssistantMessage | None,
    history: Sequence[Message],
    start: int,
) -> tuple[ToolStates | None, ResponseDiscovery]:
    """The states to record for a closing iteration and what its turn discovered: the
    hosted searches of its answer ``message`` and the results after ``start`` in
    ``history`` (the loop core's hook; nothing is scanned for a plain request)."""
    if message is None or (
        (states is None or (not states.search and not states.deferred)) and not message.searches
    ):
        return states, _NOTHING
    results = [m for m in history[start:] if isinstance(m, ToolMessage) and m.tools]
    return states, discovery_of(message, results, states.search if states is not None else ())


def revealed_definitions(toolset: Toolset, change: ToolsetChange) -> tuple[ToolDefinition, ...]:
    """The definitions of the tools a ``ToolsetChange`` reveals (``change.reveal``: names
    of tools in ``toolset``; names it does not hold are skipped)."""
    view = toolset.view()
    return tuple(view[name].definition() for name in change.reveal if name in view)


class TurnToolStates:
    """The tool states the loop records per iteration (``TraceBuilder`` holds one).

    A run that never uses native tools computes nothing: states are computed for a
    request only once it declares a deferred, search or namespaced tool, narrows the tool
    choice, or the history holds a search or a reveal (``noticed``).
    """

    __slots__ = (
        "_history",
        "_message",
        "_native",
        "_native_tools",
        "_start",
        "_tools",
        "_tracker",
        "states",
    )

    def __init__(self, history: Sequence[Message]) -> None:
        self._history = history
        """The run's history (the core's list, which only grows)."""
        self._tracker = ToolStateTracker()
        self._native = any(map(revealed_by, history))
        self.states: ToolStates | None = None
        """The open request's states; ``None``: a plain request, recorded as such (its
        answer needs no reading: a search needs a search tool, which is native)."""
        self._message: AssistantMessage | None = None
        self._start = 0
        self._tools: Sequence[ToolDefinition] | None = None
        self._native_tools = False
        """Whether ``_tools`` (the last request's, by identity) has a native tool."""

    def request(self, request: ModelRequest) -> None:
        """The open iteration sent ``request`` (its history ends where its turn starts)."""
        tools = request.tools
        if tools is not self._tools:  # a toolset change (or the first request)
            self._tools = tools
            self._native_tools = has_native_tools(tools)
        if self._native or self._native_tools or request.settings.tool_choice is not None:
            self._message = None
            self._start = len(self._history)
            self.states = self._tracker.native_states(request)
        else:
            self.states = None

    def response(self, message: AssistantMessage) -> None:
        """The model answered the open iteration (one with ``states``) with ``message``."""
        self._message = message
        if message.searches:
            self._native = True

    def noticed(self) -> None:
        """A tool result revealed tools: every later request computes its states."""
        self._native = True

    def close(self) -> tuple[ToolStates | None, ResponseDiscovery]:
        """The closing iteration's states (it has ``states``: a plain one is recorded
        plain without asking) and what its turn discovered; resets for the next one."""
        states, message = self.states, self._message
        self.states = self._message = None
        return close_states(states, message, self._history, self._start)
