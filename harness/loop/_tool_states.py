"""Tool states: what the model could call on a request, and what a response discovered.

A request declares tools (``ModelRequest.tools``), but with provider-native dynamic tools
what the model may call is derived:

- **visible**: callable without a search: declared and not deferred, or revealed earlier
  in the conversation (a hosted search's result, a client search's result, a client's
  addition), in that order; search tools are listed apart;
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
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness.formats._definitions import ToolChoice, ToolDefinition
from harness.loop._model import ModelRequest, ModelResponse
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from harness.tools import Toolset

if TYPE_CHECKING:
    from harness.loop._strategy import ToolsetChange

__all__ = [
    "ResponseDiscovery",
    "ToolStateTracker",
    "ToolStates",
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
        """True when nothing is deferred, searched, namespaced or narrowed."""
        return (
            not self.deferred
            and not self.search
            and not self.namespaces
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
        (the ``tools`` object of ``harness cassette show --json``)."""
        return {
            "visible": list(self.visible),
            "deferred": list(self.deferred),
            "search": list(self.search),
            "namespaces": {k: list(v) for k, v in self.namespaces.items()},
        }


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

    __slots__ = ("_definitions", "_last", "_revealed", "_scanned", "_static", "_tools")

    def __init__(self) -> None:
        self._last: Message | None = None
        self._scanned = 0
        self._revealed: dict[str, None] = {}
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
        does not extend the last one: its last scanned message differs)."""
        count = self._scanned
        if count and (len(messages) < count or not _same(messages[count - 1], self._last)):
            count = 0
            self._revealed = {}
            self._definitions = {}
        for index in range(count, len(messages)):
            for item in revealed_by(messages[index]):
                name = _name(item)
                self._revealed.setdefault(name, None)
                if not isinstance(item, str):
                    self._definitions.setdefault(name, item)
        self._scanned = len(messages)
        self._last = messages[-1] if messages else None

    def _split(self, tools: Sequence[ToolDefinition]) -> None:
        if tools is self._tools:
            return
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
        self._tools = tools
        self._static = (
            tuple(plain),
            tuple(deferred),
            tuple(search),
            {k: tuple(v) for k, v in namespaces.items()} if namespaces else _NO_NAMESPACES,
        )

    def states(self, request: ModelRequest) -> ToolStates:
        """The tool states of ``request`` (the next request of the conversation)."""
        self._scan(request.messages)
        self._split(request.tools)
        plain, deferred, search, namespaces = self._static
        choice = request.settings.tool_choice
        if not self._revealed:
            return ToolStates(
                visible=plain,
                deferred=deferred,
                search=search,
                namespaces=namespaces,
                tool_choice=choice,
            )
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
        not message.searches and (states is None or (not states.search and not states.deferred))
    ):
        return states, _NOTHING
    results = [m for m in history[start:] if isinstance(m, ToolMessage) and m.tools]
    return states, discovery_of(message, results, states.search if states is not None else ())


def revealed_definitions(toolset: Toolset, change: ToolsetChange) -> tuple[ToolDefinition, ...]:
    """The definitions of the tools a ``ToolsetChange`` reveals (``change.reveal``: names
    of tools in ``toolset``; names it does not hold are skipped)."""
    view = toolset.view()
    return tuple(view[name].definition() for name in change.reveal if name in view)
