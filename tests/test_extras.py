"""Optional dependencies: clear errors naming the extra; no pytest plugins in the requirements."""

from __future__ import annotations

import random
import re
import sys
from importlib import metadata

import pytest

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


def test_required_dependencies_register_no_pytest_plugins() -> None:
    """Installing the harness must not add heavy plugins to every pytest start.

    (``anyio`` registers one too, but ``openai`` requires it anyway.)
    """
    requires = metadata.requires("tool-loop-harness") or []
    required = [r for r in requires if "extra ==" not in r]
    names = {re.split(r"[<>=!~; \[]", r, maxsplit=1)[0].lower() for r in required}
    assert {"hypothesis", "hypothesis-jsonschema", "faker"}.isdisjoint(names)
    for name in names:
        try:
            entry_points = metadata.distribution(name).entry_points
        except metadata.PackageNotFoundError:  # pragma: no cover - an uninstalled requirement
            continue
        plugins = [ep.name for ep in entry_points if ep.group == "pytest11"]
        assert plugins == [], f"{name} registers pytest plugins {plugins}"
    extras = [r for r in requires if "extra ==" in r]
    assert any(r.startswith("hypothesis") and "fuzz" in r for r in extras)
    assert any(r.lower().startswith("faker") and "personas" in r for r in extras)
