"""Every event type is a small immutable value: frozen, slotted, keyword-only.

Events are kept in every trace and compared across runs (determinism, restart
equivalence): a mutable or dict-backed event, or one built positionally (fields
silently swapped when a field is added), would break that quietly.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys

import pytest

from harness.loop import Event

PACKAGES = ("harness", "harness.loop", "harness.injection", "harness.mcp", "harness.tools")


def _all_events() -> list[type[Event]]:
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            getattr(module, attribute)  # resolve the lazy tables: every event class is defined
    found: list[type[Event]] = []
    todo = list(Event.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _defined(cls: type) -> bool:
    """The class its module defines (``slots=True`` leaves a replaced class behind)."""
    return getattr(sys.modules[cls.__module__], cls.__qualname__, None) is cls


EVENTS = [e for e in _all_events() if e.__module__.startswith("harness.") and _defined(e)]


def test_the_event_types_of_the_strategies_are_found() -> None:
    names = {e.__name__ for e in EVENTS}
    assert {"StateTransition", "RunRestarted", "ToolsInjected"} <= names


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.__name__)
def test_an_event_type_is_frozen_slotted_and_keyword_only(event: type[Event]) -> None:
    params = event.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen, f"{event.__name__} must be frozen"
    assert "__slots__" in event.__dict__, f"{event.__name__} must use slots=True"
    fields = dataclasses.fields(event)  # type: ignore[arg-type]
    positional = [f.name for f in fields if not f.kw_only]
    assert not positional, f"{event.__name__}: fields {positional} must be keyword-only"
