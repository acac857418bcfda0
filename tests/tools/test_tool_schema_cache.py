"""Signatures of one definition share their argument schema; anything that differs does not."""

from __future__ import annotations

from typing import Annotated

from harness import Tool
from harness.tools import build_args_schema


def _make(doc: str, default: int = 1):  # type: ignore[no-untyped-def]
    def lookup(city: Annotated[str, "The city"], days: int = default) -> str:
        return city

    lookup.__doc__ = doc
    return lookup


def test_closures_of_one_def_share_the_schema() -> None:
    first, second = _make("Weather."), _make("Weather.")
    assert first is not second
    assert build_args_schema(first) is build_args_schema(second)


def test_a_different_docstring_or_default_gives_its_own_schema() -> None:
    weather, forecast = _make("Weather."), _make("Forecast.")
    assert build_args_schema(weather).description == "Weather."
    assert build_args_schema(forecast).description == "Forecast."
    three = build_args_schema(_make("Weather.", default=3))
    assert three.json_schema["properties"]["days"]["default"] == 3
    assert build_args_schema(weather).json_schema["properties"]["days"]["default"] == 1


def test_bound_methods_share_their_schema_and_still_call_their_own_instance() -> None:
    class Account:
        def __init__(self, owner: str) -> None:
            self.owner = owner

        def greet(self, greeting: str) -> str:
            """Greet the owner."""
            return f"{greeting}, {self.owner}"

    ann, bob = Account("ann"), Account("bob")
    assert build_args_schema(ann.greet) is build_args_schema(bob.greet)
    tools = [Tool.from_function(a.greet) for a in (ann, bob)]
    assert [t.handler("hi") for t in tools] == ["hi, ann", "hi, bob"]


def test_presets_are_part_of_the_key() -> None:
    func = _make("Weather.")
    plain = build_args_schema(func)
    preset = build_args_schema(func, presets=["days"])
    assert "days" in plain.json_schema["properties"]
    assert "days" not in preset.json_schema["properties"]
