"""Unfolding facades: one tool that, when called, is replaced by the tools it stands for.

Calling a facade declares its own toolset change (``ToolResult.change``), so the
default strategy chain applies it with no strategy configured. The change puts a
*guide* tool under the facade's name (calling it again lists what is available),
adds the inner tools and a ``<name>_context`` tool carrying the description, the
child list and the usage notes, and is recorded in the trace as strategy
``unfolding``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness._errors import FacadeError, UsageError
from harness.injection._delivery import Delivery, Via
from harness.loop import Event, InjectionContext, StrategyWarning, ToolsetChange
from harness.tools import Tool, ToolResult, Toolset, as_tool, tool_methods, tools_of
from harness.tools._names import MAX_NAME_LENGTH, is_valid_name, make_name, validate_name
from harness.tools._toolset import DEFERRED_COMPANIONS as DEFERRED_MEMBERS

__all__ = ["ALL_CATEGORIES", "STRATEGY", "Facade", "facade", "is_facade"]

STRATEGY = "unfolding"
"""The strategy name facade changes carry in the trace."""
ALL_CATEGORIES = "all"
"""The category that reveals every inner tool."""


class _Exclusive:
    """Key of the per-run record of the exclusive facade that unfolded (``claim``: its
    name and the names of the facades nested in it, the only ones that may still unfold).
    Per run, never in the shared ``state``, so a reused state dict does not carry it."""


_EXCLUSIVE = _Exclusive()

ToolLike = Tool | Callable[..., Any]
Selector = Callable[..., Any]
_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


def is_facade(tool: Tool) -> bool:
    """True when ``tool`` is an unfolding facade (not yet unfolded)."""
    return "facade" in tool.metadata and not tool.metadata.get("facade_guide", False)


def _context_name(name: str) -> str:
    candidate = f"{name}_context"
    if len(candidate) <= MAX_NAME_LENGTH and is_valid_name(candidate):
        return candidate
    return make_name(name, "context")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Spec:
    """What a built facade needs at call time."""

    name: str
    description: str
    notes: tuple[str, ...]
    category_param: str
    exclusive: bool
    defer: bool = False
    """Native deferral: the inner tools are declared deferred from the first request and
    unfolding reveals them (no edit of the ``tools`` array, the prompt cache survives)."""
    delivery: Delivery = dataclasses.field(default_factory=Delivery)
    """How unfolding delivers the inner tools (an addition keeps the facade as it is)."""

    @property
    def context_name(self) -> str:
        return _context_name(self.name)


def _category(tool: Tool) -> str | None:
    value = tool.metadata.get("category")
    return None if value is None else str(value)


def _listing(tools: Sequence[Tool]) -> str:
    return "\n".join(
        f"- {t.name}: {t.description.splitlines()[0] if t.description else ''}" for t in tools
    )


def _context_text(spec: _Spec, children: Sequence[Tool]) -> str:
    lines = [f"{spec.name}: {spec.description}", "", "Tools:"]
    for tool in children:
        category = _category(tool)
        label = f"{tool.name} [{category}]" if category else tool.name
        summary = tool.description.splitlines()[0] if tool.description else ""
        lines.append(f"- {label}: {summary}")
    if spec.notes:
        lines += ["", "Usage notes:", *(f"- {note}" for note in spec.notes)]
    return "\n".join(lines)


def _context_tool(spec: _Spec, children: Sequence[Tool]) -> Tool:
    text = _context_text(spec, children)
    return Tool.from_schema(
        spec.context_name,
        text,
        dict(_EMPTY_SCHEMA),
        lambda arguments: text,
        metadata={"facade_context": spec.name},
    )


def _category_schema(spec: _Spec, choices: Sequence[str], *, required: bool) -> dict[str, Any]:
    prop = {
        "type": "string",
        "enum": list(choices),
        "description": f"Which tools to unfold: one of {', '.join(choices)}.",
    }
    schema: dict[str, Any] = {"type": "object", "properties": {spec.category_param: prop}}
    if required:
        schema["required"] = [spec.category_param]
    return schema


def _lenient(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` accepting any category: the handler reports bad categories itself."""
    props: dict[str, Any] = {key: {} for key in schema.get("properties", {})}
    return {"type": "object", "properties": props}


def _schema_tool(
    name: str,
    description: str,
    schema: Mapping[str, Any],
    handler: Callable[[dict[str, Any]], ToolResult],
    metadata: Mapping[str, Any],
) -> Tool:
    tool = Tool.from_schema(name, description, _lenient(schema), handler, metadata=metadata)
    return dataclasses.replace(tool, parameters=dict(schema))


class _Unfolder:
    """Builds the results (and deferred changes) of a facade and its guide."""

    def __init__(self, spec: _Spec, children: Sequence[Tool]) -> None:
        self.spec = spec
        self.children = tuple(children)
        self.categories: tuple[str, ...] = tuple(
            dict.fromkeys(c for c in map(_category, children) if c is not None)
        )
        self.context_tool = _context_tool(spec, children)

    # -- categories -------------------------------------------------------------------

    @property
    def choices(self) -> tuple[str, ...]:
        return (*self.categories, ALL_CATEGORIES)

    def in_category(self, category: str) -> list[Tool]:
        return [
            t
            for t in self.children
            if category == ALL_CATEGORIES or _category(t) in (None, category)
        ]

    def bad_category(self, got: Any) -> ToolResult | None:
        if isinstance(got, str) and got in self.choices:
            return None
        problem = (
            f"the {self.spec.category_param!r} argument is missing"
            if got is None
            else f"unknown {self.spec.category_param} {got!r}"
        )
        return ToolResult.error(
            f"Facade {self.spec.name!r}: {problem}; valid "
            f"categories: {', '.join(self.choices)}. Call {self.spec.name!r} again with one "
            "of them.",
            kind="invalid_arguments",
        )

    # -- tools --------------------------------------------------------------------------

    def deferred_members(self) -> tuple[Tool, ...]:
        """The tools unfolding may reveal, deferred (nested facades' ones included)."""
        nested = (t for c in self.children for t in c.metadata.get(DEFERRED_MEMBERS, ()))
        return tuple(t.deferred() for t in (*self.children, self.context_tool, *nested))

    def facade_tool(self) -> Tool:
        spec = self.spec
        metadata: dict[str, Any] = {"facade": spec.name, "facade_tree": self.tree()}
        if spec.defer:
            metadata[DEFERRED_MEMBERS] = self.deferred_members()
        if not self.categories:
            names = ", ".join(t.name for t in self.children)
            return Tool.from_schema(
                spec.name,
                spec.description,
                dict(_EMPTY_SCHEMA),
                lambda arguments: self.unfold(list(self.children), first=True),
                metadata=metadata,
            ).with_note(f"Call it to make these tools available: {names}.")

        def handler(arguments: dict[str, Any]) -> ToolResult:
            category = arguments.get(spec.category_param)
            problem = self.bad_category(category)
            if problem is not None:
                return problem
            chosen = str(category)
            return self.unfold(self.in_category(chosen), first=True, category=chosen)

        return _schema_tool(
            spec.name,
            spec.description,
            _category_schema(spec, self.choices, required=True),
            handler,
            metadata,
        )

    def tree(self) -> tuple[str, ...]:
        """This facade's name and the names of every facade nested in it."""
        nested = (n for c in self.children for n in c.metadata.get("facade_tree", ()))
        return (self.spec.name, *nested)

    def guide_tool(self, revealed: Sequence[Tool]) -> Tool:
        spec = self.spec
        metadata = {"facade": spec.name, "facade_guide": True}
        description = (
            f"{spec.description} (Already unfolded: call it to list the tools it made available.)"
        )

        def listing() -> ToolResult:
            return ToolResult(
                content=f"{spec.name!r} is already unfolded. Available tools:\n"
                + _listing(revealed)
                + f"\nCall {spec.context_name!r} for usage notes.",
                value=[t.name for t in revealed],
            )

        if not self.categories:
            return Tool.from_schema(
                spec.name, description, dict(_EMPTY_SCHEMA), lambda a: listing(), metadata=metadata
            )

        def handler(arguments: dict[str, Any]) -> ToolResult:
            category = arguments.get(spec.category_param)
            if category is None:
                return listing()
            problem = self.bad_category(category)
            if problem is not None:
                return problem
            shown = {t.name for t in revealed}
            more = [t for t in self.in_category(category) if t.name not in shown]
            if not more:
                return listing()
            return self.unfold([*revealed, *more], first=False, category=category, new=more)

        return _schema_tool(
            spec.name,
            description,
            _category_schema(spec, self.choices, required=False),
            handler,
            metadata,
        )

    # -- unfolding ----------------------------------------------------------------------

    def unfold(
        self,
        revealed: Sequence[Tool],
        *,
        first: bool,
        category: str | None = None,
        new: Sequence[Tool] | None = None,
    ) -> ToolResult:
        """The facade's result: a message, and the change putting ``revealed`` on offer."""
        spec = self.spec
        adding = list(revealed if new is None else new)
        guide = self.guide_tool(revealed)
        extra = [self.context_tool] if first else []
        names = [t.name for t in adding]
        what = f" (category {category!r})" if category is not None else ""
        message = (
            f"Unfolded {spec.name!r}{what}: now available: {', '.join(names) or '(none)'}. "
            f"Call {spec.context_name!r} for how to use them."
        )
        if spec.exclusive:
            message += " Every other tool is hidden for the rest of the run."

        def change(context: InjectionContext) -> ToolsetChange:
            return self._change(context, guide, [*extra, *adding], what)

        return ToolResult(content=message, value=names, change=change)

    def _change(
        self, context: InjectionContext, guide: Tool, adding: Sequence[Tool], what: str
    ) -> ToolsetChange:
        spec = self.spec
        record = context.state_for(_EXCLUSIVE)
        claim: tuple[str, ...] | None = record.get("claim")
        if claim is not None and spec.name not in claim:
            return self._overruled(context, claim[0])
        if spec.exclusive:
            record["claim"] = self.tree()
        offered = context.tools
        add: list[Tool] = []
        reveal: list[str] = []
        skipped: list[str] = []
        for tool in adding:
            existing = offered.get(tool.name)
            if existing is tool:
                continue
            if existing is not None and existing.defer_loading and spec.defer:
                reveal.append(tool.name)  # declared deferred up front: revealed, not added
                continue
            if existing is not None:
                skipped.append(tool.name)
                continue
            add.append(tool)
        events: list[Event] = []
        note = None
        if skipped:
            warning = (
                f"facade {spec.name!r}: did not add {skipped}: other tools with these names are "
                "already offered"
            )
            events.append(
                StrategyWarning(iteration=context.iteration, strategy=STRATEGY, message=warning)
            )
            note = f"[Not added, the names are taken by other tools: {', '.join(skipped)}]"
        remove: tuple[str, ...] = ()
        kept = {spec.name, spec.context_name, *(t.name for t in adding)}
        if spec.exclusive:
            remove = tuple(n for n in context.offered if n not in kept)
        addition = spec.delivery.uses_addition(context)
        caller = context.call.name if context.call else spec.name
        reason = f"{caller} was called: unfolded {spec.name!r}{what} into " + (
            ", ".join([*(t.name for t in add), *reveal]) or "nothing new"
        )
        if remove:
            reason += f"; exclusive: hid {', '.join(remove)}"
        return ToolsetChange(
            add=tuple(add),
            remove=remove,
            # deferral and additions keep the tools array as it is: no guide
            replace=() if spec.defer or addition else (guide,),
            reveal=tuple(reveal),
            reason=reason,
            strategy=STRATEGY,
            events=tuple(events),
            result_note=note,
            via="addition" if addition and (add or reveal) else "edit",
        )

    def _overruled(self, context: InjectionContext, winner: str) -> ToolsetChange:
        """An exclusive facade unfolded earlier in the run (or this turn): this one stays
        folded, whatever the order of the calls, and the model is told so."""
        spec = self.spec
        text = (
            f"facade {spec.name!r} was not unfolded: the exclusive facade {winner!r} unfolded "
            "earlier and hides every other tool for the rest of the run"
        )
        return ToolsetChange(
            reason=text,
            strategy=STRATEGY,
            events=(StrategyWarning(iteration=context.iteration, strategy=STRATEGY, message=text),),
            result_note=f"[Not unfolded after all: the exclusive facade {winner!r} hides every "
            f"other tool for the rest of the run; use the tools of {winner!r}.]",
        )


def _selected_tools(spec: _Spec, produced: Any) -> list[Tool]:
    """The selector's return value as tools, or a ``FacadeError`` saying what is wrong."""
    where = f"the selector of facade {spec.name!r}"
    if isinstance(produced, Toolset):
        items: list[Any] = list(produced)
    elif isinstance(produced, (list, tuple)):
        items = list(produced)
    elif produced is not None and not callable(produced) and tool_methods(type(produced)):
        items = list(tools_of(produced, flat=True))
    else:
        raise FacadeError(
            f"{where} returned {produced!r}; return a list of tools (Tool objects or "
            "@llm_tool functions) or an object with @llm_tool methods"
        )
    try:
        tools = [as_tool(item) for item in items]
    except UsageError as exc:
        raise FacadeError(f"{where} returned something that is not a tool: {exc}") from None
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise FacadeError(
            f"{where} returned duplicate tool names {duplicates} (got {names}); nothing was "
            "added and the facade is still offered. Give every tool its own name"
        )
    clash = sorted({spec.name, spec.context_name}.intersection(names))
    if clash:
        raise FacadeError(
            f"{where} returned tools named {clash}, which the facade uses itself; nothing "
            "was added. Rename those tools"
        )
    return tools


class Facade:
    """An unfolding facade under construction; ``tool()`` builds the tool to offer.

    Args:
        name: the facade's tool name.
        description: what its tools are for (the model reads it to decide to unfold).
        tools: inner tools: ``Tool``s, ``@llm_tool`` functions, or nested ``Facade``s.
        notes: usage notes for the inner tools, shown once in the ``<name>_context`` tool.
        category_param: name of the category parameter (used when inner tools have a
            ``category``; tools without one belong to every category and to ``all``).
        selector: instead of ``tools``, a function receiving the facade's arguments (its
            signature is the facade's schema) and returning the inner tools, e.g. tools
            created on the spot that share state or captured configuration.
        exclusive: when unfolded, hide every other tool for the rest of the run.
        defer: native deferral: the inner tools are declared deferred (``defer_loading``)
            from the first request (a toolset built from a list holding the facade
            declares them too) and unfolding
            reveals them, so the ``tools`` array never changes; the facade stays as it is
            (no guide replaces it). Needs a provider with deferred loading, or a client
            search tool for Chat Completions (``docs/native-tools.md``).
        via: how unfolding delivers the inner tools: ``edit`` (declared in ``tools``, the
            facade replaced by its guide) or ``addition`` (the provider's mid-conversation
            addition: ``tools`` and the facade stay as they are; an edit where the model
            has none), or a ``Delivery`` (``Delivery("addition", native="always")``
            refuses the fallback).
    """

    def __init__(
        self,
        name: str,
        description: str,
        tools: Iterable[ToolLike | Facade] = (),
        *,
        notes: Sequence[str] = (),
        category_param: str = "category",
        selector: Selector | None = None,
        exclusive: bool = False,
        defer: bool = False,
        via: Via | Delivery = "edit",
    ) -> None:
        validate_name(name)
        problems = []
        if not isinstance(description, str) or not description.strip():
            problems.append(f"description must be a non-empty text, got {description!r}")
        if not (isinstance(category_param, str) and category_param.isidentifier()):
            problems.append(
                f"category_param must be a parameter name like 'category', got {category_param!r}"
            )
        if isinstance(notes, str):
            problems.append(f"notes must be a list of texts, got the text {notes!r}")
        if selector is not None and not callable(selector):
            problems.append(f"selector must be a function, got {selector!r}")
        if problems:
            raise UsageError(f"Facade {name!r}: " + "; ".join(problems))
        self.spec = _Spec(
            name=name,
            description=description,
            notes=tuple(notes),
            category_param=category_param,
            exclusive=exclusive,
            defer=defer,
            delivery=Delivery.of(via, name=f"Facade {name!r} via"),
        )
        if defer and selector is not None:
            raise UsageError(
                f"Facade {name!r}: defer=True declares the inner tools up front, which a "
                "selector makes only when called; give tools=[...]"
            )
        self.selector = selector
        self.children: list[Tool | Facade] = []
        self.add(*tools)

    @property
    def name(self) -> str:
        """The facade's tool name."""
        return self.spec.name

    def add(self, *items: ToolLike | Facade) -> Facade:
        """Add inner tools or nested facades; a nesting cycle raises ``FacadeError``."""
        if items and self.selector is not None:
            raise UsageError(
                f"Facade {self.name!r} has a selector, which makes its tools; do not also give "
                "tools"
            )
        for item in items:
            if isinstance(item, Facade):
                path = item._path_to(self, [self.name])
                if path is not None:
                    raise FacadeError(
                        f"cycle in nested facades: {' -> '.join(path)}; a facade cannot "
                        "contain itself"
                    )
                self.children.append(item)
            else:
                self.children.append(as_tool(item))
        return self

    def _path_to(self, target: Facade, path: list[str]) -> list[str] | None:
        path = [*path, self.name]
        if self is target:
            return path
        for child in self.children:
            if isinstance(child, Facade):
                found = child._path_to(target, path)
                if found is not None:
                    return found
        return None

    def tool(self) -> Tool:
        """The facade tool to offer (nested facades are built too)."""
        return self._build([])

    def _build(self, stack: list[str]) -> Tool:
        if self.selector is not None:
            return self._selector_tool()
        stack = [*stack, self.name]
        children = [c._build(stack) if isinstance(c, Facade) else c for c in self.children]
        if not children:
            raise UsageError(
                f"Facade {self.name!r} has no inner tools; pass tools=[...] or a selector"
            )
        for child in children:
            tree = child.metadata.get("facade_tree", ())
            if self.name in tree:
                raise FacadeError(
                    f"cycle in nested facades: {' -> '.join([*stack, child.name])} contains a "
                    f"facade named {self.name!r} again; rename one of them"
                )
        names = [c.name for c in children]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        reserved = sorted({self.name, self.spec.context_name}.intersection(names))
        if duplicates or reserved:
            raise FacadeError(
                f"Facade {self.name!r}: inner tool names must be unique and differ from "
                f"{self.name!r} and {self.spec.context_name!r}; got duplicates {duplicates} "
                f"and reserved names {reserved}"
            )
        return _Unfolder(self.spec, children).facade_tool()

    def _selector_tool(self) -> Tool:
        spec = self.spec
        selector = self.selector
        assert selector is not None
        base = Tool.from_function(selector, name=spec.name, description=spec.description)

        def handler(**kwargs: Any) -> ToolResult:
            try:
                produced = selector(**kwargs)
            except Exception as exc:
                raise FacadeError(
                    f"the selector of facade {spec.name!r} raised {type(exc).__name__}: {exc}; "
                    f"no tools were added and {spec.name!r} is still offered: call it again "
                    "with other arguments"
                ) from exc
            tools = _selected_tools(spec, produced)
            return _Unfolder(spec, tools).unfold(tools, first=True)

        metadata = {"facade": spec.name, "facade_tree": (spec.name,), "facade_selector": True}
        return dataclasses.replace(base, handler=handler, metadata=metadata)


def facade(
    name: str,
    description: str,
    tools: Iterable[ToolLike | Facade] = (),
    *,
    notes: Sequence[str] = (),
    category_param: str = "category",
    selector: Selector | None = None,
    exclusive: bool = False,
    defer: bool = False,
    via: Via | Delivery = "edit",
) -> Tool:
    """An unfolding facade tool (see ``Facade`` for the arguments)."""
    return Facade(
        name,
        description,
        tools,
        notes=notes,
        category_param=category_param,
        selector=selector,
        exclusive=exclusive,
        defer=defer,
        via=via,
    ).tool()
