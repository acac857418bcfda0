"""The spans of a source as trees: parents, children, and the nearest ancestor of a kind.

Span ids are unique within a trace, so a span is known by ``(trace_id, span_id)``. A
parent id that no span of the source has makes its span a root (a trace exported in
parts); a span listed twice, or parent ids that lead back to the span, are a
``TraceFileError`` naming the span. Every walk is iterative and each span is visited a
bounded number of times, so a hostile file costs time linear in its spans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.traces._spans import Span

__all__ = ["SpanTree"]

Key = tuple[str, str]


class SpanTree:
    """The spans of one source, linked to their parents and children."""

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = list(spans)
        self._by_key: dict[Key, Span] = {}
        for span in self.spans:
            key = (span.trace_id, span.span_id)
            if key in self._by_key:
                raise span.error(
                    "the file holds this span twice (the same trace id and span id); a trace "
                    "file concatenated twice? Keep one copy"
                )
            self._by_key[key] = span
        self.children: dict[Key, list[Span]] = {}
        for span in self.spans:
            parent = self.parent(span)
            if parent is not None:
                self.children.setdefault((parent.trace_id, parent.span_id), []).append(span)
        self._check_cycles()

    def parent(self, span: Span) -> Span | None:
        """The span's parent, when the source holds it."""
        if span.parent_id is None:
            return None
        return self._by_key.get((span.trace_id, span.parent_id))

    def kids(self, span: Span) -> list[Span]:
        """The span's children, in source order."""
        return self.children.get((span.trace_id, span.span_id), [])

    def _check_cycles(self) -> None:
        done: set[Key] = set()
        for span in self.spans:
            path: list[Key] = []
            on_path: set[Key] = set()
            current: Span | None = span
            while current is not None:
                key = (current.trace_id, current.span_id)
                if key in done:
                    break
                if key in on_path:
                    raise current.error(
                        "its parent ids form a cycle (a span is its own ancestor: "
                        + " -> ".join(k[1] for k in path[path.index(key) :])
                        + f" -> {key[1]}); the file is damaged"
                    )
                path.append(key)
                on_path.add(key)
                current = self.parent(current)
            done.update(path)

    def nearest_all(self, matches: Callable[[Span], bool]) -> dict[Key, Span | None]:
        """For every span, its closest proper ancestor that ``matches`` (``None``: none),
        computed for all spans at once in time linear in the spans."""
        found: dict[Key, Span | None] = {}
        for span in self.spans:
            path: list[Span] = []
            current: Span | None = span
            answer: Span | None = None
            while current is not None:
                key = (current.trace_id, current.span_id)
                if key in found:
                    answer = found[key]
                    break
                path.append(current)
                current = self.parent(current)
            # walk back down: each span's answer is its parent's match, else the parent's answer
            for item in reversed(path):
                parent = self.parent(item)
                if parent is not None and matches(parent):
                    answer = parent
                elif parent is None:
                    answer = None
                found[(item.trace_id, item.span_id)] = answer
        return found

    def ancestors(self, span: Span) -> list[Span]:
        """The span's ancestors, nearest first."""
        out = []
        current = self.parent(span)
        while current is not None:
            out.append(current)
            current = self.parent(current)
        return out
