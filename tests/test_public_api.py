"""The public API is exactly what ``__all__`` says, and every name in it exists."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "harness",
    "harness.tools",
    "harness.loop",
    "harness.injection",
    "harness.models",
    "harness.scenarios",
    "harness.fuzz",
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
