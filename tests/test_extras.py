"""Optional dependencies: clear errors naming the extra; no pytest plugins in the requirements."""

from __future__ import annotations

import random
import re
import sys
from importlib import metadata
from typing import Any

import pytest
from packaging.requirements import Requirement

from harness import _extras
from harness.models._personas._values import SchemaValues


def test_require_returns_the_module() -> None:
    import json

    assert _extras.require("json", "anything") is json


def test_a_missing_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_extras.EXTRAS, "no_such_module_xyz", "fuzz")
    with pytest.raises(ImportError, match=re.escape("pip install 'tool-loop-harness[fuzz]'")):
        _extras.require("no_such_module_xyz.sub", "fuzzing")


def test_other_missing_modules_are_not_disguised() -> None:
    with pytest.raises(ModuleNotFoundError) as info:
        _extras.require("no_such_module_abc", "x")
    assert "tool-loop-harness[" not in str(info.value)


def test_personas_without_faker_ask_for_the_personas_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "faker", None)
    values = SchemaValues()
    with pytest.raises(ImportError, match=r"persona models .*\[personas\]"):
        values._fake(random.Random(1))


def _required_closure(root: str) -> set[str]:
    """Installed distributions that installing ``root`` without extras brings."""
    seen: set[str] = set()
    queue = [root]
    while queue:
        name = re.sub(r"[-_.]+", "-", queue.pop()).lower()
        if name in seen:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # pragma: no cover - an uninstalled requirement
            continue
        seen.add(name)
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(requirement.name)
    return seen


def test_required_dependencies_register_no_pytest_plugins() -> None:
    """Installing the harness must not add heavy plugins to every pytest start.

    Transitively: ``openai`` is an extra because it requires anyio, which registers one.
    """
    brought = _required_closure("tool-loop-harness") - {"tool-loop-harness"}
    assert {"hypothesis", "faker", "openai", "httpx2", "anyio"}.isdisjoint(brought)
    assert {"pydantic", "vcrpy", "typer"} <= brought
    for name in brought:
        plugins = [
            ep.name for ep in metadata.distribution(name).entry_points if ep.group == "pytest11"
        ]
        assert plugins == [], f"{name} registers pytest plugins {plugins}"
    requires = metadata.requires("tool-loop-harness") or []
    extras = [r for r in requires if "extra ==" in r]
    assert any(r.startswith("hypothesis") and "fuzz" in r for r in extras)
    assert any(r.lower().startswith("faker") and "personas" in r for r in extras)
    assert any(r.startswith("openai") and '"openai"' in r for r in extras)
    dev = next(r for r in extras if r.startswith("tool-loop-harness") and '"dev"' in r)
    assert "openai" in Requirement(dev).extras


def _hide(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make ``import module`` fail as if the distribution were not installed."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)


def _anthropic() -> object:
    from harness.models._anthropic._model import import_anthropic

    return import_anthropic()


def _mcp() -> object:
    from harness.mcp._server import require_mcp

    require_mcp()
    return None


def _syrupy() -> object:
    import importlib

    sys.modules.pop("harness.testing._syrupy", None)
    return importlib.import_module("harness.testing._syrupy")


def _ray() -> object:
    from harness.fuzz._ray import import_ray

    return import_ray()


@pytest.mark.parametrize(
    ("module", "use", "extra", "error"),
    [
        ("anthropic", _anthropic, "anthropic", ImportError),
        ("mcp", _mcp, "mcp", ImportError),
        ("syrupy", _syrupy, "snapshots", ImportError),
        ("ray", _ray, "ray", Exception),  # a UsageError for the CLI's --ray
    ],
)
def test_every_optional_feature_names_its_extra_one_way(
    monkeypatch: pytest.MonkeyPatch, module: str, use: Any, extra: str, error: type[Exception]
) -> None:
    _hide(monkeypatch, module)
    monkeypatch.delitem(sys.modules, "harness.testing._syrupy", raising=False)
    with pytest.raises(error) as info:
        use()
    assert f"needs {module!r}, which is not installed" in str(info.value)
    assert f"pip install 'tool-loop-harness[{extra}]'" in str(info.value)


def test_only_the_extras_module_spells_the_install_command() -> None:
    """One helper says "install the extra" (``harness._extras.require``); docstrings may
    mention the command, code may not write its own message."""
    import ast
    from pathlib import Path

    package = Path(_extras.__file__).parent
    spelled = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "_extras.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "tool-loop-harness[" in node.value
                and id(node) not in docstrings
            ):
                spelled.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert spelled == []
