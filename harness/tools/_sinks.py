"""Artifact sinks: where the objects a tool produced are collected (with filters and transforms).

An artifact is a Python object a tool returned: the result's value, or each item
of a returned list or tuple (``None`` is never an artifact).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from harness._errors import UsageError
from harness.tools._context import CallContext

__all__ = ["ArtifactSink", "CompositeSink", "ListSink", "StateSink", "artifacts_in"]

Transform = Callable[[Any], Any]


def artifacts_in(value: Any) -> list[Any]:
    """The artifacts in a tool's return value: the value, or the items of a list/tuple."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [item for item in value if item is not None]
    return [value]


class ArtifactSink:
    """Base of sinks: ``types`` filters artifacts (empty: all), ``transform`` maps them.

    Subclasses implement ``put``.
    """

    def __init__(self, *, types: Sequence[type] = (), transform: Transform | None = None) -> None:
        types = tuple(types)
        bad = [t for t in types if not isinstance(t, type)]
        if bad:
            raise UsageError(f"{type(self).__name__}: types must be classes, got {bad!r}")
        if transform is not None and not callable(transform):
            raise UsageError(
                f"{type(self).__name__}: transform must be a function, got {transform!r}"
            )
        self.types = types
        self.transform = transform

    def accepts(self, artifact: Any) -> bool:
        """True when ``artifact`` passes the type filter."""
        return not self.types or isinstance(artifact, self.types)

    def offer(self, artifact: Any, context: CallContext) -> bool:
        """Filter, transform and ``put`` one artifact; True when it was taken."""
        if not self.accepts(artifact):
            return False
        self.put(self.transform(artifact) if self.transform else artifact, context)
        return True

    def put(self, artifact: Any, context: CallContext) -> None:
        """Store one (filtered, transformed) artifact."""
        raise NotImplementedError


class ListSink(ArtifactSink):
    """Appends artifacts to ``items`` (thread-safe)."""

    def __init__(self, *, types: Sequence[type] = (), transform: Transform | None = None) -> None:
        super().__init__(types=types, transform=transform)
        self.items: list[Any] = []
        """The collected artifacts, in arrival order."""
        self._lock = threading.Lock()

    def put(self, artifact: Any, context: CallContext) -> None:
        with self._lock:
            self.items.append(artifact)

    def __repr__(self) -> str:
        return f"ListSink({len(self.items)} items)"


class CompositeSink(ArtifactSink):
    """Offers each artifact (after its own filter and transform) to every inner sink."""

    def __init__(
        self,
        sinks: Iterable[ArtifactSink],
        *,
        types: Sequence[type] = (),
        transform: Transform | None = None,
    ) -> None:
        super().__init__(types=types, transform=transform)
        self.sinks = tuple(sinks)
        bad = [s for s in self.sinks if not isinstance(s, ArtifactSink)]
        if bad or not self.sinks:
            raise UsageError(
                f"CompositeSink needs one or more ArtifactSink objects, got {list(self.sinks)!r}"
            )

    def put(self, artifact: Any, context: CallContext) -> None:
        for sink in self.sinks:
            sink.offer(artifact, context)


class StateSink(ArtifactSink):
    """Appends artifacts to the list ``context.state[key]`` (the run's shared state)."""

    def __init__(
        self,
        key: str = "artifacts",
        *,
        types: Sequence[type] = (),
        transform: Transform | None = None,
    ) -> None:
        super().__init__(types=types, transform=transform)
        if not isinstance(key, str) or not key:
            raise UsageError(f"StateSink key must be a non-empty text, got {key!r}")
        self.key = key
        self._lock = threading.Lock()

    def put(self, artifact: Any, context: CallContext) -> None:
        with self._lock:
            bucket = context.state.setdefault(self.key, [])
            if not isinstance(bucket, list):
                raise UsageError(
                    f"StateSink: state[{self.key!r}] holds a {type(bucket).__name__}, not a "
                    "list; use another key"
                )
            bucket.append(artifact)
