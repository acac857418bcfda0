"""Loading scenario files and building their tools, strategies and model."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness._errors import HarnessError, ScenarioError, UsageError
from harness._safe_yaml import read_yaml
from harness.formats.openai_chat import messages_from_dicts
from harness.injection import AllowedTools, EntityDiscovery, ToolChaining, ToolSearch
from harness.loop import InjectionStrategy, LoopOptions, Model
from harness.loop._options import options_from
from harness.messages import Message
from harness.models import ScriptedModel, steps_from_data, with_capabilities
from harness.models._capabilities import format_capabilities
from harness.scenarios._agent import Agent, build_agent
from harness.scenarios._mcp import McpParts, build_mcp
from harness.scenarios._properties import Property
from harness.scenarios._session_files import check_sessions
from harness.scenarios._spec import ScenarioSpec
from harness.tools import Tool, Toolset, as_tool

__all__ = [
    "STRATEGIES",
    "Scenario",
    "call_factory",
    "discover_scenarios",
    "load_scenario",
    "project_root",
    "register_strategy",
    "resolve_import",
]


def _tool_search(tools: Sequence[Any], **options: Any) -> InjectionStrategy:
    """``tool_search: {tools: [module:function, ...], search: bm25, native: auto}``."""
    if not isinstance(tools, (list, tuple)) or not tools:
        raise ScenarioError("tool_search: 'tools' is a list of import paths of the tools to defer")
    resolved = [
        resolve_import(t, where="tool_search: ") if isinstance(t, str) else t for t in tools
    ]
    return ToolSearch([t for r in resolved for t in _tools_from(r, "tool_search: ")], **options)


STRATEGIES: dict[str, Callable[..., InjectionStrategy]] = {
    "entity_discovery": EntityDiscovery,
    "chaining": ToolChaining,
    "tool_search": _tool_search,
    "allowed_tools": AllowedTools,
}
"""Strategies a scenario can name; add yours with ``register_strategy``."""


def standing_for(model: Model, format_name: str | None) -> Model:
    """``model`` declaring the native tools the adapter of ``format_name`` declares (its
    tool searches, allowed subsets and mid-conversation additions; ``model: capabilities:``
    in a scenario file), the rest of its capabilities its own; ``model`` itself when no
    format is named."""
    if format_name is None:
        return model
    native = format_capabilities(format_name)
    return with_capabilities(
        model,
        tool_search=native.tool_search,
        allowed_tools=native.allowed_tools,
        tool_additions=native.tool_additions,
    )


def register_strategy(name: str, factory: Callable[..., InjectionStrategy]) -> None:
    """Make ``name`` usable in a scenario's ``strategies`` list."""
    STRATEGIES[name] = factory


def resolve_import(
    path: str, *, where: str = "", root: Path | None = None, command: str = "harness run"
) -> Any:
    """Import ``module:attr`` (``module:attr()`` calls it with no arguments).

    ``root`` (a scenario's project folder) is appended to ``sys.path`` first when it is
    not there yet. Anything the import or the call raises, ``SystemExit`` included,
    becomes a ``ScenarioError``; an unimportable module's message names ``command
    --path FOLDER`` (the command the user ran).
    """
    call = path.endswith("()")
    target = path[:-2] if call else path
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ScenarioError(f"{where}{path!r} is not an import path; write 'package.module:name'")
    if root is not None and str(root) not in sys.path:
        sys.path.append(str(root))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ScenarioError(
            f"{where}cannot import module {module_name!r} for {path!r}: {exc}. "
            "Run from the folder that holds it (the project root), name that folder with "
            f"'{command} --path FOLDER', or install the package."
        ) from None
    except (Exception, SystemExit) as exc:
        raise ScenarioError(
            f"{where}importing module {module_name!r} for {path!r} raised {_describe(exc)}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ScenarioError(
                f"{where}module {module_name!r} has no attribute {attr!r}"
            ) from None
    if call:
        if not callable(obj):
            raise ScenarioError(f"{where}{target!r} is not callable, remove the '()'")
        obj = call_factory(obj, where=f"{where}{path!r}: ")
    return obj


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}): a factory must return a value, not exit the process"
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception whose __str__ raises
        return type(exc).__name__


def call_factory(factory: Callable[..., Any], *args: Any, where: str = "", **kwargs: Any) -> Any:
    """Call a scenario's factory; an exception or ``SystemExit`` becomes a ``ScenarioError``."""
    try:
        return factory(*args, **kwargs)
    except HarnessError:
        raise
    except (Exception, SystemExit) as exc:
        raise ScenarioError(f"{where}the factory raised {_describe(exc)}") from None


def _tools_from(obj: Any, where: str) -> list[Tool]:
    if isinstance(obj, Toolset):
        return list(obj)
    if isinstance(obj, (list, tuple)):
        return [as_tool(t) for t in obj]
    if isinstance(obj, Tool) or callable(obj):
        return [as_tool(obj)]
    raise ScenarioError(f"{where}expected a tool, a function or a list of tools, got {obj!r}")


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A loaded scenario: its spec plus where it came from. Build parts fresh per run."""

    spec: ScenarioSpec
    path: Path | None = None

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self.spec.name

    @property
    def root(self) -> Path | None:
        """The folder its import paths are resolved from (see ``project_root``)."""
        return project_root(self.path) if self.path is not None else None

    def _where(self) -> str:
        return (
            f"scenario {self.spec.name!r} ({self.path}): "
            if self.path
            else f"scenario {self.spec.name!r}: "
        )

    def build_tools(self) -> list[Tool]:
        """The scenario's tools (factories are called again on each build)."""
        tools: list[Tool] = []
        for entry in self.spec.tools:
            if isinstance(entry, Mapping):
                obj = self._call_factory(entry, "tool")
            else:
                obj = resolve_import(entry, where=self._where(), root=self.root)
            tools.extend(_tools_from(obj, self._where()))
        return tools

    def _call_factory(self, entry: Mapping[str, Any], what: str) -> Any:
        """``{"module:factory": {kwargs}}``: import the factory and call it with the kwargs."""
        if len(entry) != 1:
            raise ScenarioError(
                f"{self._where()}a {what} entry must be {{'module:factory': {{kwargs}}}}, "
                f"got {dict(entry)!r}"
            )
        ((path, kwargs),) = entry.items()
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(kwargs, Mapping):
            raise ScenarioError(
                f"{self._where()}{what} {path!r}: the arguments must be a mapping, got {kwargs!r}"
            )
        factory = resolve_import(str(path), where=self._where(), root=self.root)
        if not callable(factory):
            raise ScenarioError(f"{self._where()}{what} factory {path!r} is not callable")
        try:
            return factory(**kwargs)
        except (TypeError, ValueError, HarnessError) as exc:
            raise ScenarioError(
                f"{self._where()}{what} factory {path!r} refused {dict(kwargs)}: {exc}"
            ) from None

    def build_strategies(self) -> list[InjectionStrategy]:
        """The scenario's strategies, freshly constructed."""
        out: list[InjectionStrategy] = []
        for entry in self.spec.strategies:
            if isinstance(entry, Mapping):
                if len(entry) != 1:
                    raise ScenarioError(
                        f"{self._where()}a strategy entry must be {{name: {{options}}}}, "
                        f"got {entry!r}"
                    )
                ((name, opts),) = entry.items()
                out.extend(self._strategy(name, opts or {}))
            else:
                out.extend(self._strategy(entry, {}))
        return out

    def _strategy(self, name: str, options: Mapping[str, Any]) -> Iterable[InjectionStrategy]:
        if ":" in name:
            obj = resolve_import(name, where=self._where(), root=self.root)
            if callable(obj) and not isinstance(obj, InjectionStrategy):
                obj = call_factory(obj, where=f"{self._where()}strategy {name!r}: ", **options)
            items = obj if isinstance(obj, (list, tuple)) else [obj]
            for item in items:
                if not isinstance(item, InjectionStrategy):
                    raise ScenarioError(f"{self._where()}{name!r} gave {item!r}, not a strategy")
            return list(items)
        factory = STRATEGIES.get(name)
        if factory is None:
            raise ScenarioError(
                f"{self._where()}unknown strategy {name!r}; known: {sorted(STRATEGIES)} "
                "(or give an import path 'module:factory')"
            )
        try:
            return [factory(**options)]
        except TypeError as exc:
            raise ScenarioError(
                f"{self._where()}strategy {name!r}: bad options {dict(options)}: {exc}"
            ) from None

    def build_mcp(self) -> McpParts:
        """Fresh MCP servers (not connected yet), their facades, groups and strategies."""
        if not self.spec.mcp_servers:
            return McpParts()
        return build_mcp(self.spec.mcp_servers, self._where())

    def build_context_objects(self) -> list[object]:
        """The run's typed context objects (factories are called again on each build)."""
        objects: list[object] = []
        for entry in self.spec.context_objects:
            if isinstance(entry, Mapping):
                obj = self._call_factory(entry, "context object")
            else:
                obj = resolve_import(entry, where=self._where(), root=self.root)
            objects.extend(obj if isinstance(obj, (list, tuple)) else [obj])
        return objects

    def build_options(self) -> LoopOptions:
        """Loop options from the spec."""
        extra: dict[str, Any] = {"context": dict(self.spec.context)}
        if self.spec.context_objects:
            extra["context_objects"] = self.build_context_objects()
        try:
            return LoopOptions(**{**self.spec.options, **extra})
        except TypeError as exc:
            raise ScenarioError(f"{self._where()}bad options {self.spec.options}: {exc}") from None
        except UsageError as exc:
            what = "context_objects" if "context_objects" in str(exc) else "options"
            raise ScenarioError(f"{self._where()}bad {what}: {exc}") from None

    def build_model(self) -> Model:
        """A fresh model playing the scenario's script."""
        model_spec = self.spec.model
        if model_spec is None:
            raise ScenarioError(f"{self._where()}give the scripted model: model: {{steps: [...]}}")
        try:
            steps = steps_from_data(model_spec.steps)
        except HarnessError as exc:
            raise ScenarioError(f"{self._where()}model steps: {exc}") from None
        if model_spec.factory:
            factory = resolve_import(model_spec.factory, where=self._where(), root=self.root)
            if not callable(factory):
                raise ScenarioError(
                    f"{self._where()}model factory {model_spec.factory!r} is not callable"
                )
            model = call_factory(
                factory,
                steps,
                model_spec.lenient,
                where=f"{self._where()}model factory {model_spec.factory!r}: ",
            )
            if not isinstance(model, Model):
                raise ScenarioError(f"{self._where()}model factory returned {model!r}, not a Model")
        else:
            model = ScriptedModel(steps, lenient=model_spec.lenient, name=f"scripted:{self.name}")
        return standing_for(model, model_spec.capabilities)

    def build_prompt(self) -> str | list[Message]:
        """The prompt text or the starting history."""
        if self.spec.messages is not None:
            return messages_from_dicts(self.spec.messages)
        if self.spec.prompt is None:
            raise ScenarioError(f"{self._where()}give either prompt or messages")
        return self.spec.prompt

    def build_agent(self) -> Agent | None:
        """A fresh agent from the ``agent`` factory (``None`` without one)."""
        if self.spec.agent is None:
            return None
        factory = resolve_import(self.spec.agent, where=self._where(), root=self.root)
        try:
            return build_agent(factory, name=self.spec.agent)
        except UsageError as exc:
            raise ScenarioError(f"{self._where()}{exc}") from None

    def build_properties(self) -> list[Property]:
        """The ``expect.properties`` functions."""
        found: list[Property] = []
        for path in self.spec.expect.properties:
            prop = resolve_import(path, where=self._where(), root=self.root)
            if not callable(prop):
                raise ScenarioError(f"{self._where()}property {path!r} is not callable")
            found.append(prop)
        return found


def project_root(path: Path) -> Path:
    """The folder above ``scenarios/`` (so ``fixtures.*`` imports work), else the file's folder."""
    for parent in path.resolve().parents:
        if parent.name == "scenarios":
            return parent.parent
    return path.resolve().parent


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file (no imports, no change to ``sys.path``).

    The file must be UTF-8, at most ``MAX_FILE_BYTES`` long, nested at most
    ``MAX_DEPTH`` levels, and expand to at most ``MAX_NODES`` values once YAML aliases
    are followed; anything else is a ``ScenarioError``.
    """
    file = Path(path)
    data = read_yaml(file, what="scenario file")
    if not isinstance(data, dict):
        raise ScenarioError(
            f"scenario file {str(file)!r} must hold a mapping, got {type(data).__name__}"
        )
    data.setdefault("name", file.stem)
    if "variants" in data:
        raise ScenarioError(
            f"{str(file)!r} is a comparison file (it has 'variants'): run it with "
            "'harness compare FILE'"
        )
    try:
        spec = ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ScenarioError(f"scenario file {str(file)!r} is invalid: {problems}") from None
    _check_options(spec.options, f"scenario file {str(file)!r}")
    check_sessions(spec, f"scenario file {str(file)!r}")
    return Scenario(spec=spec, path=file)


def _check_options(options: Mapping[str, Any], where: str) -> None:
    """``options:`` must make valid ``LoopOptions`` (checked at load: a bad value is a
    broken file, exit 2, not a failed run)."""
    try:
        options_from({k: v for k, v in options.items() if k not in ("context", "context_objects")})
    except UsageError as exc:
        raise ScenarioError(f"{where}: options: {exc}") from None


def _is_comparison(path: Path) -> bool:
    from harness.scenarios._compare import is_comparison

    return is_comparison(path)


def discover_scenarios(paths: Iterable[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files as given, folders searched for *.yaml/*.yml;
    comparison files, run with ``harness compare``, are left out)."""
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():  # comparison files (``harness compare``) are not scenarios
            found.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.suffix in (".yaml", ".yml") and not _is_comparison(p)
                )
            )
        elif path.exists():
            found.append(path)
        else:
            raise ScenarioError(f"no such scenario file or folder: {str(path)!r}")
    return found
