"""Imports point downward through the layers of DESIGN.md (lazy imports included).

Run as a script (``python tests/test_layers.py --graph``) it prints the package import
graph's upward arrows and its cycles (see ``import_graph``); the tests below pin both.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "harness"

LAYERS: dict[str, int] = {
    "harness._errors": 0,
    "harness._lazy": 0,
    "harness._version": 0,
    "harness._validation": 0,
    "harness._names": 0,  # how a message names things (lists, did-you-mean): stdlib only
    "harness._secrets": 0,  # known secret values and scrubbing, used by every layer
    "harness._credentials": 0,  # what a credential is called and looks like (one rule)
    "harness._extras": 0,
    "harness._check_sink": 0,  # stdlib-only record of checks: assertions and cost report into it
    "harness._frozen": 0,  # a faster __init__ for hot frozen dataclasses
    "harness._deprecation": 0,  # renamed public names: one warning, one removal version
    "harness._deprecated_choices": 0,  # provider tool_choice dicts, read until 0.3.0
    "harness._safe_yaml": 0,  # YAML written by others, read within bounds (scenarios, prices)
    "harness.messages": 0,
    "harness.tools": 0,
    "harness.loop": 1,
    "harness.formats": 2,  # the wire formats: both sides of each provider's shape
    "harness.injection": 2,
    "harness.mcp": 2,  # MCP servers as tool sources, strategies and facades (injection layer)
    "harness.models": 3,
    "harness.scenarios": 4,
    "harness.cassettes": 4,
    "harness.assertions": 4,
    "harness.cost": 4,  # the cache model: pure functions of the requests (and recordings)
    "harness.traces": 4,  # OpenTelemetry spans in and out (beside cassettes: a third source)
    "harness.testing": 5,
    "harness._plugin": 5,  # the plugin's pieces: options, hooks, fixtures, reporter (light)
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


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of the non-harness modules ``path`` imports (lazily too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found - {"harness"}


HOMES = {"vcr": "harness.testing"}
"""Libraries glued in by one package only: vcrpy's serializer, persister, matchers and
errors are ``harness.testing``'s; ``harness.cassettes`` reads and matches files without it."""


@pytest.mark.parametrize(("library", "home"), sorted(HOMES.items()))
def test_a_library_is_imported_by_its_home_only(library: str, home: str) -> None:
    outside = [
        module_name(path)
        for path in SOURCES
        if library in third_party_imports(path)
        and not (module_name(path) + ".").startswith(home + ".")
    ]
    assert outside == [], f"{library} is {home}'s to import"


def test_every_module_has_a_layer() -> None:
    for path in SOURCES:
        layer_of(module_name(path))  # raises ValueError if no prefix matches


def test_the_architecture_page_names_every_package() -> None:
    """docs/architecture.md lists every package and private top-level module of ``LAYERS``."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = {name for name in LAYERS if name.count(".") <= 1}  # not harness._plugin._x
    missing = sorted(name for name in listed if f"`{name}`" not in page)
    assert missing == []


# -- the import graph: upward arrows and cycles ---------------------------------------------
#
# Nodes are packages: ``harness.x`` (the first two parts of a module's name, so
# ``harness.formats.openai_chat._request`` is ``harness.formats``, ``harness.messages`` is
# itself), each at the layer ``LAYERS`` gives that name. An arrow P -> Q means some module
# of P imports some module of Q (lazy and type-checking imports included, as above). An
# arrow is *upward* when Q's layer is above P's: the per-file entries of ``LAYERS`` do not
# count here, so a module filed under a lower layer than its package shows up as an arrow.
# A *cycle* is a strongly connected component of more than one node: packages that import
# each other, directly or through others. The same counts over modules (every file its own
# node) are printed too, but not pinned: other work adds and splits modules all the time.


def package_of(module: str) -> str:
    """``harness.x`` for any module below it (``harness`` for the package itself)."""
    return ".".join(module.split(".")[:2])


def import_graph(*, by: str = "package") -> dict[str, set[str]]:
    """Who imports whom: ``by="package"`` (``harness.x``) or ``by="module"`` (each file)."""
    node = package_of if by == "package" else (lambda m: m)
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        source = node(module_name(path))
        targets = graph.setdefault(source, set())
        targets.update(node(t) for t in imported_modules(path) if node(t) != source)
    return graph


def package_layer(module: str) -> int:
    """The layer of the package ``module`` belongs to (per-file entries left out)."""
    return layer_of(package_of(module))[1]


def upward_arrows(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    """The arrows of a graph whose target's package is on a higher layer than the
    source's package, sorted."""
    return sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if package_layer(target) > package_layer(source)
    )


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted, largest first
    (two nodes are in one component when each reaches the other)."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in graph.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        reach[start] = seen
    components: list[list[str]] = []
    placed: set[str] = set()
    for node in sorted(graph):
        if node in placed or node not in reach[node]:
            continue
        component = sorted(n for n in reach[node] if node in reach.get(n, ()))
        placed.update(component)
        components.append(component)
    return sorted(components, key=lambda c: (-len(c), c))


PACKAGE_CYCLES = 0
"""How many cycles the package graph has (see ``cycles``); change it on purpose."""


def test_no_package_imports_a_higher_layer() -> None:
    assert upward_arrows(import_graph()) == []


def test_the_package_graph_has_the_pinned_number_of_cycles() -> None:
    found = cycles(import_graph())
    assert len(found) == PACKAGE_CYCLES, found


def test_the_counters_see_a_planted_arrow_and_cycle() -> None:
    graph = {"harness.tools": {"harness.loop"}, "harness.loop": {"harness.tools"}}
    assert upward_arrows(graph) == [("harness.tools", "harness.loop")]
    assert cycles(graph) == [["harness.loop", "harness.tools"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def print_graph() -> None:
    """The counts, then each upward arrow and cycle, for packages and then modules."""
    packages, modules = import_graph(), import_graph(by="module")
    arrows, package_cycles, module_cycles = (
        upward_arrows(packages),
        cycles(packages),
        cycles(modules),
    )
    print(f"packages: {len(packages)}, upward arrows: {len(arrows)}, cycles: {len(package_cycles)}")
    for source, target in arrows:
        print(
            f"  up    {source} (layer {package_layer(source)}) -> "
            f"{target} (layer {package_layer(target)})"
        )
    for component in package_cycles:
        print(f"  cycle {' <-> '.join(component)}")
    sizes = ", ".join(str(len(c)) for c in module_cycles)
    print(
        f"modules: {len(modules)}, upward arrows: {len(upward_arrows(modules))}, "
        f"cycles: {len(module_cycles)} (sizes: {sizes or 'none'})"
    )
    for component in module_cycles:
        print(f"  cycle {' <-> '.join(component)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--graph"]:
        sys.exit("usage: python tests/test_layers.py --graph")
    print_graph()
