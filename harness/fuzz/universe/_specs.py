"""Tool universes as plain data, and building real tools and strategies from them.

A universe is JSON-able data (pydantic models), so a generated one can be written
into a scenario file and rebuilt identically: ``universe_tools`` and
``universe_strategies`` are the factories a counterexample scenario names.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field

from harness._errors import UnreachableStateWarning
from harness.injection import (
    EntityDiscovery,
    Facade,
    InjectionStrategy,
    Playbook,
    PromptTemplate,
    Section,
    SectionDisclosure,
    StateMachine,
    ToolGroup,
    ToolGroups,
    called_all,
    tool_provider,
    unlock,
)
from harness.tools import CallContext, Tool, llm_tool

__all__ = [
    "FAULTS",
    "UNIVERSE_KINDS",
    "BuiltUniverse",
    "FacadeSpec",
    "Fault",
    "FuzzParamSpec",
    "FuzzProviderSpec",
    "FuzzToolSpec",
    "GroupSpec",
    "MachineSpec",
    "PlaybookSpec",
    "SectionSpec",
    "UniverseSpec",
    "UnlockSpec",
    "build_universe",
    "universe_strategies",
    "universe_tools",
]

UniverseKind = Literal[
    "tools", "providers", "facades", "playbook", "state_machine", "sections", "groups", "mixed"
]
UNIVERSE_KINDS: tuple[str, ...] = (
    "tools",
    "providers",
    "facades",
    "playbook",
    "state_machine",
    "sections",
    "groups",
    "mixed",
)
"""What ``tool_universes(kind=...)`` can generate."""

Fault = Literal["raise", "timeout", "huge", "unserializable", "context"]
FAULTS: tuple[str, ...] = ("raise", "timeout", "huge", "unserializable", "context")
"""Tool faults: raise an exception, outlast the timeout, return a huge or a
non-serialisable value, or read the (secret) call context."""

TIMEOUT = 0.01
"""``tool_timeout`` of fuzzed runs when some tool times out (the tool sleeps 5x longer)."""

HUGE_SIZE = 200_000
"""Characters a ``huge`` tool returns."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class FuzzParamSpec(BaseModel):
    """One argument of a generated tool."""

    model_config = _STRICT

    name: str
    type: Literal["string", "integer", "number", "boolean", "array", "enum"] = "string"
    required: bool = True
    choices: list[str] = Field(default_factory=list)
    """The values of an ``enum`` argument."""

    def schema_(self) -> dict[str, Any]:
        """The JSON schema of the argument."""
        if self.type == "enum":
            return {"type": "string", "enum": list(self.choices)}
        if self.type == "array":
            return {"type": "array", "items": {"type": "string"}}
        return {"type": self.type}


class FuzzToolSpec(BaseModel):
    """A generated tool: name, description, arguments and an optional fault."""

    model_config = _STRICT

    name: str
    description: str = ""
    params: list[FuzzParamSpec] = Field(default_factory=list)
    fault: Fault | None = None
    category: str | None = None
    """Facade category (inner tools of a facade)."""

    def parameters(self) -> dict[str, Any]:
        """The tool's JSON schema."""
        return {
            "type": "object",
            "properties": {p.name: p.schema_() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def build(self) -> Tool:
        """A real ``Tool`` (schema-validated, with the fault in its handler).

        Tools are immutable and their handlers keep no state, so equal specs share one
        (hypothesis's mutations, shrinking and the determinism reruns repeat specs).
        """
        params = tuple((p.name, p.type, p.required, tuple(p.choices)) for p in self.params)
        key = (self.name, self.description, params, self.fault, self.category)
        tool = _TOOLS.get(key)
        if tool is None:
            tool = _TOOLS[key] = self._build(params)
            _bound(_TOOLS)
        return tool

    def _build(self, params: tuple[Any, ...]) -> Tool:
        # What Tool.from_schema builds, without re-checking the schema against the
        # metaschema (milliseconds per tool): generated schemas are valid by construction,
        # which tests check with jsonschema.
        found = _VALIDATED.get(params)
        if found is None:
            parameters = self.parameters()
            found = _VALIDATED[params] = (parameters, Draft202012Validator(parameters))
            _bound(_VALIDATED)
        parameters, validator = found
        return Tool(
            name=self.name,
            description=self.description or f"Generated tool {self.name}.",
            parameters=parameters,
            handler=_handler(self.name, self.fault),
            metadata={"category": self.category} if self.category else {},
            takes_context=self.fault == "context",
            validator=validator,
        )


_TOOLS: dict[tuple[Any, ...], Tool] = {}
"""Built tools by their spec's content."""

_VALIDATED: dict[tuple[Any, ...], tuple[dict[str, Any], Draft202012Validator]] = {}
"""Schema and validator per argument list: building a validator costs more than the
rest of a tool, schemas and validators are immutable, and many tools share arguments."""

_CACHE_SIZE = 8192


def _bound(cache: dict[Any, Any]) -> None:
    """Keep a cache bounded: past ``_CACHE_SIZE`` entries it starts over."""
    if len(cache) > _CACHE_SIZE:
        cache.clear()


class _Unserializable:
    """A value no serialiser can turn into JSON."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unserializable>"


def _handler(name: str, fault: Fault | None) -> Callable[..., Any]:
    if fault == "context":

        def with_context(args: Mapping[str, Any], context: CallContext) -> str:
            secret = str(context.get("api_key", ""))
            return f"{name}: authorised with a {len(secret)}-character key"

        return with_context

    def handler(args: Mapping[str, Any]) -> Any:
        if fault == "raise":
            raise RuntimeError(f"{name} failed on purpose")
        if fault == "timeout":
            time.sleep(TIMEOUT * 5)
        if fault == "huge":
            return "x" * HUGE_SIZE
        if fault == "unserializable":
            return {"value": _Unserializable()}
        return {"tool": name, "arguments": sorted(args)}

    return handler


class FuzzProviderSpec(BaseModel):
    """Entity discovery: ``find_tool`` returns ``fan_out`` objects with ``methods``.

    A ``child`` level nests: each object's ``children`` method returns objects of it.
    """

    model_config = _STRICT

    prefix: str
    find_tool: str
    methods: list[str]
    fan_out: int = 1
    child: FuzzProviderSpec | None = None

    def depth(self) -> int:
        """Nesting depth (1 for a flat provider)."""
        return 1 + (self.child.depth() if self.child else 0)


class FacadeSpec(BaseModel):
    """An unfolding facade: inner tools (with categories), nested facades, exclusivity."""

    model_config = _STRICT

    name: str
    description: str = ""
    inner: list[FuzzToolSpec] = Field(default_factory=list)
    nested: list[FacadeSpec] = Field(default_factory=list)
    exclusive: bool = False

    def tool(self) -> Tool:
        """The facade tool (its ``Facade``'s; equal specs share one).

        A facade tool is immutable and keeps its unfolding state in the run's
        ``InjectionContext``, so runs can share it.
        """
        key = self.model_dump_json()
        tool = _FACADES.get(key)
        if tool is None:
            tool = _FACADES[key] = self.facade().tool()
            _bound(_FACADES)
        return tool

    def facade(self) -> Facade:
        """The ``Facade`` (nested ones included)."""
        members: list[Any] = [t.build() for t in self.inner]
        members += [n.facade() for n in self.nested]
        return Facade(
            self.name,
            self.description or f"Facade {self.name}.",
            members,
            exclusive=self.exclusive,
        )


_FACADES: dict[str, Tool] = {}
"""Built facade tools by their spec's JSON."""


class UnlockSpec(BaseModel):
    """A playbook tool unlocked once every tool of ``requires`` was called."""

    model_config = _STRICT

    tool: FuzzToolSpec
    requires: list[str]


class PlaybookSpec(BaseModel):
    """A playbook: tools always offered and a DAG of unlocks."""

    model_config = _STRICT

    always: list[FuzzToolSpec]
    unlocks: list[UnlockSpec] = Field(default_factory=list)
    mode: Literal["gated", "hidden"] = "gated"


class MachineSpec(BaseModel):
    """A state machine: tools per state, transitions by tool name, global tools."""

    model_config = _STRICT

    states: list[str]
    initial: int = 0
    tools: dict[str, list[FuzzToolSpec]]
    transitions: dict[str, str] = Field(default_factory=dict)
    global_tools: list[FuzzToolSpec] = Field(default_factory=list)


class SectionSpec(BaseModel):
    """A prompt section with tools and children, summarised or in full."""

    model_config = _STRICT

    key: str
    text: str
    summary: str = "A summarised section."
    summarized: bool = True
    tools: list[FuzzToolSpec] = Field(default_factory=list)
    children: list[SectionSpec] = Field(default_factory=list)

    def section(self) -> Section:
        """The ``Section``."""
        return Section(
            key=self.key,
            template=self.text,
            summary=self.summary,
            visibility="summary" if self.summarized else "full",
            tools=tuple(t.build() for t in self.tools),
            children=tuple(c.section() for c in self.children),
        )


class GroupSpec(BaseModel):
    """A tool group the model activates by calling its activation tool."""

    model_config = _STRICT

    name: str
    tools: list[FuzzToolSpec]
    description: str = "A group of tools."


class UniverseSpec(BaseModel):
    """A whole generated tool universe (every part optional)."""

    model_config = _STRICT

    kind: UniverseKind = "tools"
    tools: list[FuzzToolSpec] = Field(default_factory=list)
    providers: list[FuzzProviderSpec] = Field(default_factory=list)
    facades: list[FacadeSpec] = Field(default_factory=list)
    playbook: PlaybookSpec | None = None
    machine: MachineSpec | None = None
    sections: list[SectionSpec] = Field(default_factory=list)
    groups: list[GroupSpec] = Field(default_factory=list)

    def size(self) -> int:
        """How many tools the universe defines (injectable ones included).

        Every tool definition counts, and each provider level adds its methods and its
        search (or ``children``) tool; facade tools themselves do not count.
        """
        levels = 0
        for provider in self.providers:
            level: FuzzProviderSpec | None = provider
            while level is not None:
                levels += len(level.methods) + 1
                level = level.child
        return len(self.tool_definitions()) + levels

    def tool_definitions(self) -> list[FuzzToolSpec]:
        """Every generated tool definition, wherever it sits (order not significant)."""
        found = list(self.tools)
        facades = list(self.facades)
        while facades:
            facade = facades.pop()
            found += facade.inner
            facades += facade.nested
        if self.playbook is not None:
            found += self.playbook.always
            found += [u.tool for u in self.playbook.unlocks]
        if self.machine is not None:
            for state_tools in self.machine.tools.values():
                found += state_tools
            found += self.machine.global_tools
        sections = list(self.sections)
        while sections:
            section = sections.pop()
            found += section.tools
            sections += section.children
        for group in self.groups:
            found += group.tools
        return found

    def faults(self) -> set[str]:
        """The faults its tools have."""
        return {t.fault for t in self.tool_definitions() if t.fault is not None}


@dataclasses.dataclass(frozen=True)
class BuiltUniverse:
    """Real tools and strategies built from a ``UniverseSpec``."""

    tools: list[Tool]
    """Offered from the first request."""
    strategies: list[InjectionStrategy]
    """Strategies the universe needs (discovery, playbook, machine, sections, groups)."""

    @property
    def sections(self) -> bool:
        """Whether the run must go through ``run_with_sections``."""
        return any(isinstance(s, SectionDisclosure) for s in self.strategies)


_CLASSES: dict[str, type] = {}
"""Provider classes by their spec's JSON: building one derives schemas (slow), and the
classes hold no state, so runs of one universe share them."""


def _provider_class(spec: FuzzProviderSpec) -> type:
    key = spec.model_dump_json()
    cls = _CLASSES.get(key)
    if cls is None:
        if len(_CLASSES) > 4096:
            _CLASSES.clear()
        cls = _CLASSES[key] = _new_provider_class(spec)
    return cls


def _new_provider_class(spec: FuzzProviderSpec) -> type:
    child_cls = _provider_class(spec.child) if spec.child else None
    namespace: dict[str, Any] = {}

    def init(self: Any, id: str) -> None:
        self.id = id

    namespace["__init__"] = init
    for method in spec.methods:
        namespace[method] = _method(method)
    if child_cls is not None:
        fan_out = spec.fan_out

        def children(self: Any) -> list[Any]:
            return [child_cls(f"{self.id}x{i}") for i in range(fan_out)]

        namespace["children"] = llm_tool(description="The nested objects.")(children)
    cls: type = type(f"Generated_{spec.prefix}", (), namespace)
    tool_provider(cls, prefix=spec.prefix)  # marks the class in place
    return cls


def _method(name: str) -> Any:
    # One def for every generated method, named by llm_tool(name=...): the argument
    # schema is derived once per definition and shared, instead of once per name.
    def method(self: Any) -> str:
        return f"{name} of {self.id}"

    description = f"The {name.replace('_', ' ')} of this object."
    return llm_tool(name=name, description=description)(method)


def _find_tool(spec: FuzzProviderSpec) -> Tool:
    cls = _provider_class(spec)
    fan_out = spec.fan_out

    def find(args: Mapping[str, Any]) -> list[Any]:
        return [cls(f"{spec.prefix[:1]}{i}") for i in range(fan_out)]

    parameters, validator = _NO_ARGUMENTS
    return Tool(
        name=spec.find_tool,
        description=f"Find {spec.prefix} objects.",
        parameters=parameters,
        handler=find,
        validator=validator,
    )


_NO_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_NO_ARGUMENTS = (_NO_SCHEMA, Draft202012Validator(_NO_SCHEMA))
"""The schema and validator of every search tool (it takes no arguments)."""


def build_universe(spec: UniverseSpec) -> BuiltUniverse:
    """Fresh tools and strategies for one run of ``spec``."""
    tools = [t.build() for t in spec.tools]
    strategies: list[InjectionStrategy] = []
    if spec.providers:
        tools += [_find_tool(p) for p in spec.providers]
        depth = max(p.depth() for p in spec.providers)
        strategies.append(EntityDiscovery(max_depth=depth))
    tools += [f.tool() for f in spec.facades]
    if spec.playbook is not None:
        book = spec.playbook
        strategies.append(
            Playbook(
                always=[t.build() for t in book.always],
                unlocks=[
                    unlock(u.tool.build(), when=called_all(*u.requires)) for u in book.unlocks
                ],
                mode=book.mode,
            )
        )
    if spec.machine is not None:
        strategies.append(_machine(spec.machine))
    if spec.groups:
        strategies.append(
            ToolGroups(
                [
                    ToolGroup(
                        name=g.name,
                        tools=tuple(t.build() for t in g.tools),
                        description=g.description,
                    )
                    for g in spec.groups
                ]
            )
        )
    if spec.sections:
        strategies.append(SectionDisclosure(PromptTemplate([s.section() for s in spec.sections])))
    return BuiltUniverse(tools=tools, strategies=strategies)


def _machine(spec: MachineSpec) -> StateMachine:
    states = _states(tuple(spec.states))
    by_name = {s.value: s for s in states}
    with warnings.catch_warnings():  # generated machines may leave states unreachable
        warnings.simplefilter("ignore", UnreachableStateWarning)
        return StateMachine(
            states,
            initial=by_name[spec.states[spec.initial]],
            tools={by_name[k]: [t.build() for t in v] for k, v in spec.tools.items()},
            transitions={tool: by_name[state] for tool, state in spec.transitions.items()},
            global_tools=[t.build() for t in spec.global_tools],
            name="generated",
            announce=False,
        )


@functools.lru_cache(maxsize=256)
def _states(names: tuple[str, ...]) -> type[enum.Enum]:
    """The enum of a machine's states (members are stateless, so machines share it)."""
    made: type[enum.Enum] = enum.Enum(  # type: ignore[misc]
        "GeneratedState", {name.upper(): name for name in names}
    )
    return made


def _spec(universe: UniverseSpec | Mapping[str, Any]) -> UniverseSpec:
    return universe if isinstance(universe, UniverseSpec) else UniverseSpec.model_validate(universe)


def universe_tools(universe: UniverseSpec | Mapping[str, Any]) -> list[Tool]:
    """Scenario-file factory: the starting tools of ``universe`` (a spec or its data)."""
    return build_universe(_spec(universe)).tools


def universe_strategies(universe: UniverseSpec | Mapping[str, Any]) -> list[InjectionStrategy]:
    """Scenario-file factory: the strategies of ``universe`` (a spec or its data)."""
    return build_universe(_spec(universe)).strategies
