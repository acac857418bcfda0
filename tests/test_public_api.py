"""The public API is exactly what ``__all__`` says, and every name in it exists."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
from pathlib import Path

import pytest

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
LAZY_PACKAGES = ["harness", "harness.testing", "harness.cassettes", "harness.formats"]


@pytest.mark.parametrize("name", sorted(json.loads(PINNED.read_text(encoding="utf-8"))))
def test_public_names_are_pinned(name: str) -> None:
    """Moving modules around never changes what users import (update the JSON on purpose)."""
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[name]
    assert sorted(importlib.import_module(name).__all__) == pinned


def _lazy_table_and_type_checking_imports(name: str) -> tuple[dict[str, str], dict[str, str]]:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    checked: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_LAZY":
            table = ast.literal_eval(node.value)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                for alias in stmt.names:
                    assert alias.asname == alias.name, (
                        f"write `{alias.name} as {alias.name}` so type checkers re-export it"
                    )
                    checked[alias.name] = stmt.module
    return table, checked


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_type_checking_imports_match_the_lazy_table(name: str) -> None:
    table, checked = _lazy_table_and_type_checking_imports(name)
    assert table, f"{name} has no _LAZY table"
    assert checked == table


def _definition(value: object) -> object:
    if hasattr(value, "__qualname__"):
        return (getattr(value, "__module__", None), value.__qualname__)
    return value


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_all_is_derived_from_the_lazy_table(name: str) -> None:
    module = importlib.import_module(name)
    table, _ = _lazy_table_and_type_checking_imports(name)
    assert set(module.__all__) - {"__version__"} == set(table)
    for public, where in table.items():
        # the same definition (an in-process pytester run may have re-imported the module)
        exported, defined = getattr(module, public), getattr(importlib.import_module(where), public)
        assert _definition(exported) == _definition(defined)
