"""A marked test's vcrpy cassette: where it lives and how it is opened.

The autouse ``_harness_cassette_guard`` activates the cassette of every test with a
cassette marker, for the whole test; ``harness_cassette`` opens it with the resolved
settings and the matchers and scrubbers of the ``pytest_harness_cassette_*`` hooks.

Registered as part of ``harness.pytest_plugin``, which imports its fixtures. Loaded at
pytest start-up, so vcrpy and the cassette code are imported only when a test opens a
cassette.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness import testing
from harness._errors import CassetteError
from harness._plugin._marks import CASSETTE, cassette_markers

if TYPE_CHECKING:
    from harness.testing import Settings

__all__ = ["harness_cassette", "harness_cassette_path"]


@pytest.fixture(autouse=True)
def _harness_cassette_guard(request: pytest.FixtureRequest, _harness_network: None) -> None:
    """Activate a marked test's cassette for the whole test (one job: the cassette)."""
    if cassette_markers(request.node):
        request.getfixturevalue("harness_cassette")


@pytest.fixture
def harness_cassette_path(request: pytest.FixtureRequest, harness_settings: Settings) -> Path:
    """Where the test's cassette lives: ``<cassette dir>/<test module>/<name>.yaml``, the
    name from the marker's ``name`` (or first argument), else the test's name. Override it
    to use another layout (e.g. pytest-recording's, next to the test module)."""
    name = None
    for mark in cassette_markers(request.node):
        name = mark.kwargs.get("name") or (mark.args[0] if mark.args else None) or name
    return testing.cassette_path(
        harness_settings.cassette_dir, request.node.path, name or request.node.name
    )


def _hook_matchers(config: pytest.Config) -> dict[str, Any]:
    """The ``pytest_harness_cassette_matchers`` of every plugin, merged (later ones win)."""
    matchers: dict[str, Any] = {}
    for mapping in config.hook.pytest_harness_cassette_matchers(config=config):
        matchers.update(mapping or {})
    return matchers


def _hook_scrubbers(config: pytest.Config) -> list[Any]:
    """The ``pytest_harness_cassette_scrubbers`` of every plugin, in plugin order."""
    groups = config.hook.pytest_harness_cassette_scrubbers(config=config)
    return [scrubber for group in groups for scrubber in group or ()]


@pytest.fixture
def harness_cassette(
    request: pytest.FixtureRequest, harness_settings: Settings, harness_cassette_path: Path
) -> Iterator[Any]:
    """The test's vcrpy cassette (at ``harness_cassette_path``), active for the test;
    record mode, matchers and filters follow the settings. ``None`` under
    ``--disable-recording``."""
    if harness_settings.disable_recording:
        yield None
        return
    harness_config = request.getfixturevalue("harness_config")
    marker_kwargs: dict[str, Any] = {}
    for mark in cassette_markers(request.node):  # weakest first: vcr, then harness_cassette
        marker_kwargs.update(mark.kwargs)
    match_on = harness_settings.match_on
    if marker_kwargs.get("match") is not None:
        match_on = (str(marker_kwargs["match"]),)  # a preset: semantic, strict, path-only
    opened = testing.open_cassette(
        harness_cassette_path,
        record_mode=harness_settings.record_mode,
        match_on=match_on,
        matchers=_hook_matchers(request.config),
        scrubbers=_hook_scrubbers(request.config),
        secrets=getattr(harness_config, "secrets", ()),
        unused=str(marker_kwargs.get("unused") or "warn"),
        **harness_settings.cassette_filters,  # the most specific layer's names
    )
    with contextlib.ExitStack() as stack:
        problem: str | None = None
        try:
            cassette = stack.enter_context(opened)
        except CassetteError as exc:  # missing in replay mode, unreadable: the advice alone,
            problem = str(exc)  # not the plugin's frames above it (nor a chained copy)
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        from harness.testing._vcr import expand_match_on

        request.node.stash[CASSETTE] = (cassette, expand_match_on(match_on))
        yield cassette
