"""A prompt made of sections, each shown in full or as a summary (progressive disclosure).

A summarised section renders its summary plus a fixed suffix telling the model to
call ``read_section``; its content, its descendants and the tools attached to them
stay hidden until then. Rendering is pure: visibility overrides are passed in.
"""

from __future__ import annotations

import dataclasses
import enum
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from harness._errors import UsageError
from harness.tools import Tool, as_tool

__all__ = ["SUMMARY_SEPARATOR", "SUMMARY_SUFFIX", "PromptTemplate", "Section", "Visibility"]

SUMMARY_SUFFIX = (
    '[This section is summarized. To view full content, call `read_section` with key "{key}".]'
)
"""Appended to every summarised section; it never says whether tools are attached."""

SUMMARY_SEPARATOR = "\n---\n"
"""Between a section's summary and ``SUMMARY_SUFFIX``: a newline, ``---``, a newline."""


class Visibility(str, enum.Enum):
    """How a section is rendered."""

    SUMMARY = "summary"
    FULL = "full"


Overrides = Mapping[str, "Visibility | str"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Section:
    """One section: a markdown template, a summary, a visibility, tools, children."""

    key: str
    """Unique key, the argument of ``read_section``."""
    template: str
    """Markdown content; ``$name`` placeholders are filled from the template's values."""
    title: str | None = None
    """Heading text (defaults to the key)."""
    summary: str = ""
    """Shown instead of the content while the section is summarised."""
    visibility: Visibility | str = Visibility.FULL
    """The initial visibility (``"summary"``/``"full"`` are accepted and converted)."""
    tools: Sequence[Tool | Callable[..., Any]] = ()
    """Tools offered while the section is shown in full (``Tool``s or ``@llm_tool``
    functions; stored as ``Tool``s, see ``tool_objects``)."""
    children: tuple[Section, ...] = ()
    """Sub-sections (hidden while this section is summarised)."""

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.key, str) or not self.key.strip():
            problems.append(f"key must be a non-empty string, got {self.key!r}")
        try:
            visibility = Visibility(self.visibility)
        except ValueError:
            problems.append(f"visibility must be 'summary' or 'full', got {self.visibility!r}")
            visibility = Visibility.FULL
        if visibility is Visibility.SUMMARY and not self.summary.strip():
            problems.append("a summarised section needs a summary text (summary=...)")
        children = tuple(self.children)
        if not all(isinstance(c, Section) for c in children):
            problems.append(f"children must be Section objects, got {children!r}")
        if problems:
            raise UsageError(f"invalid section {self.key!r}: " + "; ".join(problems))
        object.__setattr__(self, "visibility", visibility)
        object.__setattr__(self, "tools", tuple(as_tool(t) for t in self.tools))
        object.__setattr__(self, "children", children)

    @property
    def tool_objects(self) -> tuple[Tool, ...]:
        """The section's tools as ``Tool`` objects."""
        return cast("tuple[Tool, ...]", self.tools)

    def walk(self, depth: int = 1) -> Iterator[tuple[Section, int]]:
        """This section and its descendants, depth first, with their depth."""
        yield self, depth
        for child in self.children:
            yield from child.walk(depth + 1)


class PromptTemplate:
    """Sections rendered to one markdown prompt, given visibility overrides."""

    def __init__(
        self,
        sections: Sequence[Section],
        *,
        header: str = "",
        values: Mapping[str, Any] | None = None,
    ) -> None:
        self.sections = tuple(sections)
        self.header = header
        self.values = dict(values or {})
        self._parent: dict[str, str | None] = {}
        self._by_key: dict[str, Section] = {}
        duplicates = []
        for top in self.sections:
            if not isinstance(top, Section):
                raise UsageError(f"PromptTemplate takes Section objects, got {top!r}")
            for section, _ in top.walk():
                if section.key in self._by_key:
                    duplicates.append(section.key)
                self._by_key[section.key] = section
                for child in section.children:
                    self._parent[child.key] = section.key
            self._parent.setdefault(top.key, None)
        if duplicates:
            raise UsageError(
                f"section keys must be unique, got duplicates {sorted(set(duplicates))}; "
                "rename the sections"
            )

    # -- lookups --------------------------------------------------------------------------

    @property
    def keys(self) -> tuple[str, ...]:
        """Every section key, depth first."""
        return tuple(self._by_key)

    def section(self, key: str) -> Section:
        """The section called ``key`` (``KeyError`` listing valid keys otherwise)."""
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyError(f"no section {key!r}; keys: {list(self._by_key)}") from None

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def visibility(self, key: str, overrides: Overrides | None = None) -> Visibility:
        """The effective visibility of ``key`` (an override wins over the initial one)."""
        override = (overrides or {}).get(key)
        return Visibility(override if override is not None else self.section(key).visibility)

    def hidden_by(self, key: str, overrides: Overrides | None = None) -> str | None:
        """The outermost summarised ancestor hiding ``key``, or ``None`` when it is shown."""
        hider = None
        parent = self._parent.get(key)
        while parent is not None:
            if self.visibility(parent, overrides) is Visibility.SUMMARY:
                hider = parent
            parent = self._parent.get(parent)
        return hider

    def is_open(self, key: str, overrides: Overrides | None = None) -> bool:
        """True when ``key`` is rendered in full (shown, and not summarised)."""
        return (
            self.visibility(key, overrides) is Visibility.FULL
            and self.hidden_by(key, overrides) is None
        )

    def summarized(self, overrides: Overrides | None = None) -> list[str]:
        """Keys rendered as summaries (so ``read_section`` can open them)."""
        return [
            k
            for k in self._by_key
            if self.visibility(k, overrides) is Visibility.SUMMARY
            and self.hidden_by(k, overrides) is None
        ]

    def open_tools(self, overrides: Overrides | None = None) -> list[tuple[str, Tool]]:
        """``(section key, tool)`` for every open section, in template order."""
        return [(k, t) for k in self._by_key if self.is_open(k, overrides) for t in self._tools(k)]

    def tools_opened_by(self, key: str, overrides: Overrides | None = None) -> list[Tool]:
        """Tools that open when ``key`` goes from summary to full: its own and those of
        its descendants shown in full (a summarised descendant keeps its tools hidden)."""
        after = {**(overrides or {}), key: Visibility.FULL}
        opened = [s for s, _ in self.section(key).walk() if self.is_open(s.key, after)]
        return [t for section in opened for t in section.tool_objects]

    def _tools(self, key: str) -> tuple[Tool, ...]:
        return self._by_key[key].tool_objects

    # -- rendering ------------------------------------------------------------------------

    def _fill(self, text: str) -> str:
        return string.Template(text).safe_substitute(self.values)

    def render_section(self, key: str, overrides: Overrides | None = None) -> str:
        """``key`` rendered with the given overrides (its heading included)."""
        depth = next(d for top in self.sections for s, d in top.walk() if s.key == key)
        return "\n\n".join(self._render(self.section(key), depth, overrides or {}))

    def render(self, overrides: Overrides | None = None) -> str:
        """The whole prompt with the given overrides."""
        parts = [self._fill(self.header)] if self.header else []
        for top in self.sections:
            parts.extend(self._render(top, 1, overrides or {}))
        return "\n\n".join(parts)

    def _render(self, section: Section, depth: int, overrides: Overrides) -> list[str]:
        heading = f"{'#' * min(depth, 6)} {section.title or section.key}"
        if self.visibility(section.key, overrides) is Visibility.SUMMARY:
            suffix = SUMMARY_SUFFIX.format(key=section.key)
            return [heading, f"{self._fill(section.summary).strip()}{SUMMARY_SEPARATOR}{suffix}"]
        parts = [heading]
        body = self._fill(section.template).strip()
        if body:
            parts.append(body)
        for child in section.children:
            parts.extend(self._render(child, depth + 1, overrides))
        return parts
