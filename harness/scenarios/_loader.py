"""Loading scenario files and building their tools, strategies and model."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness._errors import HarnessError, ScenarioError
from harness.injection import EntityDiscovery, ToolChaining
from harness.loop import InjectionStrategy, LoopOptions, Model
from harness.messages import Message, messages_from_openai
from harness.models import ScriptedModel, steps_from_data
from harness.scenarios._spec import ScenarioSpec
from harness.tools import Tool, Toolset, as_tool

__all__ = [
    "STRATEGIES",
    "Scenario",
    "discover_scenarios",
    "load_scenario",
    "register_strategy",
    "resolve_import",
]

STRATEGIES: dict[str, Callable[..., InjectionStrategy]] = {
    "entity_discovery": EntityDiscovery,
    "chaining": ToolChaining,
}
"""Strategies a scenario can name; add yours with ``register_strategy``."""


def register_strategy(name: str, factory: Callable[..., InjectionStrategy]) -> None:
    """Make ``name`` usable in a scenario's ``strategies`` list."""
    STRATEGIES[name] = factory


def resolve_import(path: str, *, where: str = "") -> Any:
    """Import ``module:attr`` (``module:attr()`` calls it with no arguments)."""
    call = path.endswith("()")
    target = path[:-2] if call else path
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ScenarioError(f"{where}{path!r} is not an import path; write 'package.module:name'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ScenarioError(
            f"{where}cannot import module {module_name!r} for {path!r}: {exc}. "
            "Run from the project root or put the module on sys.path."
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
        obj = obj()
    return obj


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
                obj = resolve_import(entry, where=self._where())
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
        if not isinstance(kwargs, Mapping):
            raise ScenarioError(
                f"{self._where()}{what} {path!r}: the arguments must be a mapping, got {kwargs!r}"
            )
        factory = resolve_import(path, where=self._where())
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
            obj = resolve_import(name, where=self._where())
            if callable(obj) and not isinstance(obj, InjectionStrategy):
                obj = obj(**options)
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

    def build_options(self) -> LoopOptions:
        """Loop options from the spec."""
        try:
            return LoopOptions(**{**self.spec.options, "context": dict(self.spec.context)})
        except TypeError as exc:
            raise ScenarioError(f"{self._where()}bad options {self.spec.options}: {exc}") from None

    def build_model(self) -> Model:
        """A fresh model playing the scenario's script."""
        model_spec = self.spec.model
        try:
            steps = steps_from_data(model_spec.steps)
        except HarnessError as exc:
            raise ScenarioError(f"{self._where()}model steps: {exc}") from None
        if model_spec.factory:
            factory = resolve_import(model_spec.factory, where=self._where())
            model = factory(steps, model_spec.lenient)
            if not isinstance(model, Model):
                raise ScenarioError(f"{self._where()}model factory returned {model!r}, not a Model")
            return model
        return ScriptedModel(steps, lenient=model_spec.lenient, name=f"scripted:{self.name}")

    def build_prompt(self) -> str | list[Message]:
        """The prompt text or the starting history."""
        if self.spec.messages is not None:
            return messages_from_openai(self.spec.messages)
        if self.spec.prompt is None:
            raise ScenarioError(f"{self._where()}give either prompt or messages")
        return self.spec.prompt


def _project_root(path: Path) -> Path:
    """The folder above ``scenarios/`` (so ``fixtures.*`` imports work), else the file's folder."""
    for parent in path.resolve().parents:
        if parent.name == "scenarios":
            return parent.parent
    return path.resolve().parent


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario file {str(file)!r}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"scenario file {str(file)!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(
            f"scenario file {str(file)!r} must hold a mapping, got {type(data).__name__}"
        )
    data.setdefault("name", file.stem)
    try:
        spec = ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ScenarioError(f"scenario file {str(file)!r} is invalid: {problems}") from None
    root = str(_project_root(file))
    if root not in sys.path:
        sys.path.insert(0, root)
    return Scenario(spec=spec, path=file)


def discover_scenarios(paths: Iterable[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files as given, folders searched for *.yaml/*.yml)."""
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")))
        elif path.exists():
            found.append(path)
        else:
            raise ScenarioError(f"no such scenario file or folder: {str(path)!r}")
    return found
