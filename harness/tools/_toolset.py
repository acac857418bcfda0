"""An ordered toolset with O(1) lookup and cached tool definitions."""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar

from harness._errors import DuplicateToolName, UsageError
from harness.tools._decorator import as_tool
from harness.tools._definitions import ToolDefinition
from harness.tools._inject import ContextObjects
from harness.tools._tool import Tool

__all__ = ["Toolset"]


DEFERRED_COMPANIONS = "deferred_companions"
"""Tool metadata: deferred tools declared with this one when a toolset is built from a
list (the inner tools of ``facade(..., defer=True)``, which unfolding reveals)."""


class Toolset:
    """Tools by name, in insertion order.

    ``names`` and ``definitions()`` are cached and rebuilt only after a change, so
    offering 10,000 tools on every request costs nothing extra per request.
    Copies share the tools until one of them changes (copy on write).

    Safe to share between threads (seed 002's concurrent registry): changes and cache
    rebuilds hold the toolset's lock, and every read that walks the tools (iteration,
    ``names``, ``definitions()``, ``copy()``) walks a snapshot taken under it, so a
    reader sees the toolset before or after a change, never half-way.
    """

    __slots__ = (
        "_context",
        "_definitions",
        "_lock",
        "_names",
        "_shared",
        "_tools",
        "_values",
        "version",
    )

    _TEMPLATES: ClassVar[list[tuple[tuple[Any, ...], Toolset]]] = []
    _TEMPLATES_LOCK: ClassVar[threading.Lock] = threading.Lock()
    _MAX_TEMPLATES: ClassVar[int] = 8

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, context: Iterable[object] = ()
    ) -> None:
        self._context: ContextObjects | None = (
            ContextObjects(context, source="toolset") if context else None
        )
        self._lock = threading.Lock()
        self._tools: dict[str, Tool] = {}
        self._shared = False
        self._values: tuple[Tool, ...] | None = None
        self._names: tuple[str, ...] | None = None
        self._definitions: tuple[ToolDefinition, ...] | None = None
        self.version = 0
        """Incremented on every change; equal versions mean equal contents."""
        companions: list[Tool] = []
        for tool in tools:
            added = self.add(tool)
            companions.extend(added.metadata.get(DEFERRED_COMPANIONS, ()))
        for companion in companions:  # a deferred facade's inner tools, declared deferred
            if companion.name not in self._tools:
                self.add(companion)

    @classmethod
    def of(cls, tools: Iterable[Tool | Callable[..., Any]]) -> Toolset:
        """A new toolset of ``tools``, like ``Toolset(tools)``, built once per tool list.

        The same tools again (the same ``Tool`` objects and functions, in the same
        order: every run of a test or a fuzz campaign) reuse the tools, names and
        definitions built the first time, so a run's start costs the same with 10
        tools or 10,000. Only lists of ``Tool``s and plain functions are remembered
        (a bound method would keep its instance alive); a few lists at a time.
        """
        items = tuple(tools)
        with cls._TEMPLATES_LOCK:
            for key, template in cls._TEMPLATES:
                if len(key) == len(items) and key == items:
                    return template.copy()
        toolset = cls(items)
        if all(isinstance(item, (Tool, types.FunctionType)) for item in items):
            toolset.definitions()  # built once here, shared by every copy
            _ = toolset.names
            toolset._snapshot()
            with cls._TEMPLATES_LOCK:
                cls._TEMPLATES.insert(0, (items, toolset))
                del cls._TEMPLATES[cls._MAX_TEMPLATES :]
            return toolset.copy()
        return toolset

    @property
    def context_objects(self) -> ContextObjects | None:
        """Typed context objects registered on the toolset (``None`` when there are none);
        its tools' injected parameters get them unless the call or the run has one."""
        return self._context

    def provide(self, *objects: object) -> None:
        """Register typed context objects on the toolset (an object of a class already
        registered here replaces it); see docs/context-injection.md."""
        with self._lock:
            current = self._context or ContextObjects((), source="toolset")
            self._context = current.merged(objects)

    def _own(self) -> None:
        """Before a change (under the lock): stop sharing the tools with copies."""
        if self._shared:
            self._tools = dict(self._tools)
            self._shared = False

    def _changed(self) -> None:
        """After a change (under the lock): drop the caches."""
        self._values = None
        self._names = None
        self._definitions = None
        self.version += 1

    def add(self, tool: Tool | Callable[..., Any]) -> Tool:
        """Add a tool; a different tool with the same name raises ``DuplicateToolName``."""
        tool = as_tool(tool)
        with self._lock:
            existing = self._tools.get(tool.name)
            if existing is not None:
                if existing is tool:
                    return tool
                raise DuplicateToolName(tool.name)
            self._own()
            self._tools[tool.name] = tool
            self._changed()
        return tool

    def remove(self, name: str) -> Tool:
        """Remove and return the tool called ``name``."""
        with self._lock:
            tool = self._pop(name)
        if tool is None:
            raise UsageError(
                f"cannot remove {name!r}: no such tool in the toolset; tools: {list(self.names)}"
            )
        return tool

    def discard(self, name: str) -> Tool | None:
        """Remove the tool called ``name`` if present."""
        with self._lock:
            return self._pop(name)

    def _pop(self, name: str) -> Tool | None:
        if name not in self._tools:
            return None
        self._own()
        tool = self._tools.pop(name)
        self._changed()
        return tool

    def replace(self, tool: Tool) -> Tool | None:
        """Put ``tool`` in place of the tool with its name (or add it); return the old one."""
        with self._lock:
            old = self._tools.get(tool.name)
            if old is not tool:
                self._own()
                self._tools[tool.name] = tool
                self._changed()
        return old

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no tool {name!r}; tools: {list(self._tools)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._snapshot())

    def __len__(self) -> int:
        return len(self._tools)

    def _snapshot(self) -> tuple[Tool, ...]:
        """The tools in order (cached until the next change)."""
        values = self._values
        if values is None:
            with self._lock:
                if self._values is None:
                    self._values = tuple(self._tools.values())
                values = self._values
        return values

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in order (cached until the next change)."""
        names = self._names
        if names is None:
            with self._lock:
                if self._names is None:
                    self._names = tuple(self._tools)
                names = self._names
        return names

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The OpenAI ``tools`` list (cached until the next change)."""
        definitions = self._definitions
        if definitions is None:
            with self._lock:
                if self._definitions is None:
                    self._definitions = tuple(
                        tool.offered_definition for tool in self._tools.values()
                    )
                definitions = self._definitions
        return definitions

    def view(self) -> Mapping[str, Tool]:
        """A read-only live mapping of the tools by name (no copy)."""
        return _ToolsView(self)

    def copy(self) -> Toolset:
        """An independent toolset with the same tools (shared until either changes)."""
        clone = Toolset()
        with self._lock:
            clone._context = self._context  # immutable: shared
            clone._tools = self._tools
            clone._shared = self._shared = True
            # caches are immutable tuples: share them until a change
            clone._values = self._values
            clone._names = self._names
            clone._definitions = self._definitions
        return clone

    def __repr__(self) -> str:
        return f"Toolset({len(self)} tools: {list(self.names[:10])})"


class _ToolsView(Mapping[str, Tool]):
    """A read-only live mapping over a toolset's tools (it follows copy on write)."""

    __slots__ = ("_toolset",)

    def __init__(self, toolset: Toolset) -> None:
        self._toolset = toolset

    def __getitem__(self, name: str) -> Tool:
        return self._toolset._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._toolset._tools

    def __iter__(self) -> Iterator[str]:
        return iter(self._toolset.names)

    def __len__(self) -> int:
        return len(self._toolset._tools)

    def __repr__(self) -> str:
        return f"<tools view: {list(self._toolset.names[:10])}>"
