"""What the plugin's hooks and fixtures read off a test, and what they leave on it.

A test's cassette markers and whether it uses the harness decide the network guard's
scope and advice; the stash keys carry a fixture's result to the hook that acts on it
(a failed scenario, the active cassette). Stdlib and pytest only: loaded at start-up.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = [
    "ALIASES",
    "CASSETTE",
    "SCENARIO_FAILURE",
    "cassette_markers",
    "uses_harness",
]

ALIASES = pytest.StashKey[bool]()
"""On the config: whether the harness handles pytest-recording's names (it is not installed)."""
CASSETTE = pytest.StashKey[tuple[Any, tuple[str, ...]]]()
"""On the test: its active cassette and vcrpy ``match_on``, for explaining an unmatched request."""
SCENARIO_FAILURE = pytest.StashKey[str]()
"""On the test: why its ``harness_scenario`` file failed (the test fails with it)."""

_SETTINGS_FIXTURES = frozenset({"harness_config", "harness_settings", "harness_cassette_path"})
"""Fixtures that only read settings: asking for them does not make a test a harness test."""


def cassette_markers(item: pytest.Item) -> list[pytest.Mark]:
    """The test's cassette markers, weakest first: ``vcr`` (when ours), ``harness_cassette``."""
    aliases = item.config.stash.get(ALIASES, True)
    names = ("vcr", "harness_cassette") if aliases else ("harness_cassette",)
    return [m for m in (item.get_closest_marker(n) for n in names) if m is not None]


def uses_harness(item: pytest.Item) -> bool:
    """Whether the test replays a cassette, runs a scenario file or asks for a harness fixture."""
    if cassette_markers(item) or item.get_closest_marker("harness_scenario"):
        return True
    names = getattr(item, "fixturenames", ())
    return any(n.startswith("harness_") and n not in _SETTINGS_FIXTURES for n in names)
