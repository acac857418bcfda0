"""Imports point downward through the layers of DESIGN.md (lazy imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "harness"

LAYERS: dict[str, int] = {
    "harness._errors": 0,
    "harness._lazy": 0,
    "harness._version": 0,
    "harness._validation": 0,
    "harness._secrets": 0,  # known secret values and scrubbing, used by every layer
    "harness._credentials": 0,  # what a credential is called and looks like (one rule)
    "harness._extras": 0,
    "harness._frozen": 0,  # a faster __init__ for hot frozen dataclasses
    "harness._deprecation": 0,  # renamed public names: one warning, one removal version
    "harness.messages": 0,
    "harness.tools": 0,
    "harness.formats._definitions": 0,  # the neutral ToolDefinition / ToolChoice
    "harness.loop": 1,
    "harness.formats": 2,  # the wire formats: both sides of each provider's shape
    "harness.injection": 2,
    "harness.mcp": 2,  # MCP servers as tool sources, strategies and facades (injection layer)
    "harness.models": 3,
    "harness.scenarios": 4,
    "harness.cassettes": 4,
    "harness.assertions": 4,
    "harness.cost": 4,  # the cache model: pure functions of the requests (and recordings)
    "harness.testing": 5,
    "harness._plugin": 4,  # stdlib-only pieces of the plugin, loaded at pytest start-up
    "harness._plugin._options": 4,  # stdlib-only option names, read by harness.testing too
    "harness._plugin._hookspecs": 5,
    "harness._plugin._vcr_alias": 6,  # a fixture module the plugin registers
    "harness._plugin._sink": 4,  # stdlib-only record of checks, shared by assertions and plugin
    "harness._plugin._settings": 5,  # fixture modules and the reporter the plugin registers:
    "harness._plugin._cassette": 5,  # light at load time, they import harness.testing lazily
    "harness._plugin._fixtures": 5,
    "harness._plugin._reporter": 5,
    "harness.fuzz": 5,  # generators and campaigns over scenarios and the models
    "harness.cli": 6,
    "harness.pytest_plugin": 6,
    "harness": 7,  # the package __init__ re-exports everything
}


def layer_of(module: str) -> tuple[str, int]:
    """The layer a dotted module name belongs to (longest matching prefix)."""
    best = max(
        (name for name in LAYERS if module == name or module.startswith(name + ".")), key=len
    )
    return best, LAYERS[best]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str) -> bool:
    base = PACKAGE.parent.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {
                f"{node.module}.{alias.name}"
                for alias in node.names
                if is_module(f"{node.module}.{alias.name}")
            }  # from package import _submodule
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(node.module)
    return {m for m in found if m == "harness" or m.startswith("harness.")}


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_imports_point_downward(path: Path) -> None:
    name = module_name(path)
    own_group, own_layer = layer_of(name)
    upward = []
    for target in imported_modules(path):
        group, layer = layer_of(target)
        if layer > own_layer and group != own_group:
            upward.append(f"{target} (layer {layer})")
    assert upward == [], f"{name} (layer {own_layer}) imports upward: {upward}"


def test_every_module_has_a_layer() -> None:
    for path in SOURCES:
        layer_of(module_name(path))  # raises ValueError if no prefix matches


def test_the_architecture_page_names_every_package() -> None:
    """docs/architecture.md lists every package and private top-level module of ``LAYERS``."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = {name for name in LAYERS if name.count(".") <= 1}  # not harness._plugin._x
    missing = sorted(name for name in listed if f"`{name}`" not in page)
    assert missing == []
