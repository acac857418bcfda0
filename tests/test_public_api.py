"""The public API is exactly what ``__all__`` says, and every name in it exists."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
from pathlib import Path

import pytest

from harness._lazy import exported_names

PACKAGES = [
    "harness",
    "harness.tools",
    "harness.loop",
    "harness.injection",
    "harness.mcp",
    "harness.models",
    "harness.scenarios",
    "harness.assertions",
    "harness.testing",
    "harness.cassettes",
    "harness.cost",
    "harness.fuzz",
    "harness.formats",
    "harness.formats.openai_chat",
    "harness.formats.openai_responses",
    "harness.formats.anthropic_messages",
    "harness.formats.bedrock_converse",
    "harness.formats.gemini_generate",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_exist_and_are_unique(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_attribute_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, type(importlib))  # submodules
        and getattr(value, "__module__", name).startswith("harness")
    }
    assert public - set(module.__all__) == set()


def test_top_level_reexports_core_names() -> None:
    import harness

    for name in ("run", "arun", "llm_tool", "tool_provider", "ScriptedModel", "EntityDiscovery"):
        assert name in harness.__all__


PINNED = Path(__file__).with_name("public_api.json")
LAZY_PACKAGES = [
    "harness",
    "harness.testing",
    "harness.cassettes",
    "harness.models",
    "harness.mcp",
    "harness.fuzz",
    "harness.formats",
    "harness.traces",
]


@pytest.mark.parametrize("name", sorted(json.loads(PINNED.read_text(encoding="utf-8"))))
def test_public_names_are_pinned(name: str) -> None:
    """Moving modules around never changes what users import (update the JSON on purpose)."""
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[name]
    assert sorted(importlib.import_module(name).__all__) == pinned


def _init_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_each_public_name_is_declared_once(name: str) -> None:
    """The type-checking imports are the lazy package's only export list: no table, no
    literal ``__all__`` beside them (``harness._lazy`` derives both)."""
    tree = ast.parse(_init_file(name).read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            names = [t.id for t in ast.walk(target) if isinstance(t, ast.Name)]
            assert "_LAZY" not in names
            if "__all__" in names and isinstance(node.value, (ast.List, ast.Tuple)):
                listed = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
                assert listed in ([], ["__version__"]), "a literal __all__ lists names again"
    table = exported_names(_init_file(name))
    assert table, f"{name} declares no public name"
    assert set(importlib.import_module(name).__all__) - {"__version__"} == set(table)


def test_the_export_list_holds_only_plain_re_exports(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("import typing\nif typing.TYPE_CHECKING:\n    from a import b\n")
    with pytest.raises(TypeError, match="write `b as b`"):
        exported_names(init)
    init.write_text("if TYPE_CHECKING:\n    import a\n")
    with pytest.raises(TypeError, match="only absolute"):
        exported_names(init)
    init.write_text("if TYPE_CHECKING:\n    from a import b as b\n    from c import b as b\n")
    with pytest.raises(TypeError, match="exported twice"):
        exported_names(init)


def _definition(value: object) -> object:
    if hasattr(value, "__qualname__"):
        return (getattr(value, "__module__", None), value.__qualname__)
    return value


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_lazy_name_is_its_modules_object(name: str) -> None:
    module = importlib.import_module(name)
    for public, where in exported_names(_init_file(name)).items():
        # the same definition (an in-process pytester run may have re-imported the module)
        exported, defined = getattr(module, public), getattr(importlib.import_module(where), public)
        assert _definition(exported) == _definition(defined)


WIRE_FORMATS = {
    f"harness.formats.{m}"
    for m in (
        "openai_chat",
        "openai_responses",
        "anthropic_messages",
        "bedrock_converse",
        "gemini_generate",
    )
}
WIRE_FORMAT_NAMES = set.intersection(
    *(set(importlib.import_module(m).__all__) for m in WIRE_FORMATS)
)
"""The one naming scheme: what every format module defines for its own format
(``harness.formats.WireFormat``; ``tests/formats/test_format_naming.py``)."""


def test_a_name_means_one_thing_in_every_package() -> None:
    """``Decision``, ``ToolSpec``, ``ProviderSpec``, ``called`` and ``CassetteError`` once
    named different things in different packages; a name exported twice is one object."""
    meanings: dict[str, set[object]] = {}
    for name in PACKAGES:
        module = importlib.import_module(name)
        for public in module.__all__:
            value = getattr(module, public)
            if name in WIRE_FORMATS and (
                public in WIRE_FORMAT_NAMES
                or getattr(value, "__module__", "").startswith(name)
                or not hasattr(value, "__qualname__")  # a format's own table (STOP_REASONS)
            ):
                continue  # one naming scheme: each format's own request_body, accumulate, ...
            key = _definition(value) if hasattr(value, "__qualname__") else id(value)
            meanings.setdefault(public, set()).add(key)
    clashes = {n: m for n, m in meanings.items() if len(m) > 1}
    assert clashes == {}


def _public_exception_classes() -> dict[type, str]:
    """Every public exception and warning class -> the most public package exporting it."""
    found: dict[type, str] = {}
    for name in PACKAGES:  # most public first
        module = importlib.import_module(name)
        for public in module.__all__:
            value = getattr(module, public)
            if isinstance(value, type) and issubclass(value, BaseException):
                found.setdefault(value, name)
    return found


def test_public_exceptions_and_warnings_report_their_public_module() -> None:
    """Tracebacks say ``harness.ScriptError``, not ``harness._errors.ScriptError``."""
    found = _public_exception_classes()
    assert len(found) >= 40
    wrong = {
        cls.__qualname__: (cls.__module__, package)
        for cls, package in found.items()
        if cls.__module__ != package
    }
    assert wrong == {}
    for cls, package in found.items():  # and the name resolves there (pickle, repr, docs)
        assert getattr(importlib.import_module(package), cls.__qualname__) is cls


def test_a_traceback_shows_the_public_path() -> None:
    import traceback

    from harness import ScriptError
    from harness.cassettes import CassetteMismatch

    for error, shown in (
        (ScriptError("x"), "harness.ScriptError: x"),
        (
            CassetteMismatch("y"),
            "harness.cassettes.CassetteMismatch: y",
        ),
    ):
        assert traceback.format_exception_only(type(error), error)[-1].strip() == shown


ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _table_of_exports() -> dict[str, str]:
    """docs/architecture.md's table of public names: package -> its ``names`` cell."""
    rows = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`harness"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_the_architecture_page_counts_the_public_names() -> None:
    """The page's table of packages says how many names each exports: it stays true."""
    import inspect
    import re

    import harness

    pinned: dict[str, list[str]] = json.loads(PINNED.read_text(encoding="utf-8"))
    table = _table_of_exports()
    assert sorted(table) == sorted(pinned), "docs/architecture.md: one row per public package"
    top = set(pinned["harness"])
    for package, cell in table.items():
        count = re.match(r"(\d+)", cell)
        assert count and int(count.group(1)) == len(pinned[package]), (package, cell)
        shared = len(set(pinned[package]) & top) if package != "harness" else 0
        also = re.search(r"(\d+) also in `harness`", cell)
        assert (int(also.group(1)) if also else 0) == shared, (package, cell)
    kinds = {"classes": 0, "errors and warnings": 0, "functions": 0}
    for name in pinned["harness"]:
        value = getattr(harness, name)
        if inspect.isclass(value):
            kinds["errors and warnings" if issubclass(value, BaseException) else "classes"] += 1
        elif callable(value):
            kinds["functions"] += 1
    for kind, number in kinds.items():
        assert f"{number} {kind}" in table["harness"], (kind, number, table["harness"])
    distinct = len(set().union(*map(set, pinned.values())))
    listings = sum(map(len, pinned.values()))
    page = " ".join(ARCHITECTURE.read_text(encoding="utf-8").split())
    assert f"({distinct} distinct names; {listings} listings" in page
