"""The settings in force for a test, and the network guard that reads them.

``harness_config`` and ``harness_settings`` resolve the precedence rule (command line >
marker > ``harness_config`` fixture > ini > default); the autouse ``_harness_network``
fixture refuses real network per the result, and the ``pytest_runtest_setup`` and
``pytest_runtest_teardown`` wrappers guard the fixture phases too, with the settings
known before fixtures run.

Registered as part of ``harness.pytest_plugin``, which imports its fixtures and hooks.
Loaded at pytest start-up, so besides pytest and ``harness._plugin`` it imports only what
every test run imports anyway for its settings (the exception tree and the lazy
``harness.testing`` package); the rest is imported inside the fixture that needs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness import testing
from harness._errors import SettingOverridden
from harness._plugin._marks import ALIASES, cassette_markers, uses_harness
from harness.testing import _options as opts

if TYPE_CHECKING:
    from harness.testing import HarnessConfig, Settings

__all__ = [
    "harness_config",
    "harness_settings",
    "network_guard",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
]

_HOW_TO_ALLOW = (
    "Replay a cassette (@pytest.mark.harness_cassette) or use the in-process fake "
    "(the harness_openai fixture); to allow real traffic pass --harness-network=allow "
    "(ini: harness_network = allow, or HarnessConfig(network='allow') from a conftest "
    "harness_config fixture)."
)
_HOW_TO_RECORD = (
    "This test has a cassette marker and its cassette holds no recorded answer for this "
    "request, so it is recording: record real traffic with --harness-network=allow "
    "--harness-record-mode=once (or rewrite), or record against a loopback server "
    "(harness serve, a local model server) named by OPENAI_BASE_URL; to replay only, run "
    "with --harness-record-mode=none and check the cassette holds this request."
)


def _allow_hosts(config: pytest.Config) -> list[str]:
    value = opts.cli_or_ini(config, opts.ALLOW_HOSTS) or ""
    return [h.strip() for h in str(value).replace("\n", ",").split(",") if h.strip()]


@contextlib.contextmanager
def network_guard(item: pytest.Item, network: str) -> Iterator[None]:
    """Refuse real network for ``item`` under ``network`` (``deny`` covers only tests that
    use the harness, ``deny-all`` every test); the refusal's advice fits the test: record
    its cassette, or replay, fake or allow."""
    if network == "deny-all" or (network == "deny" and uses_harness(item)):
        advice = _HOW_TO_RECORD if cassette_markers(item) else _HOW_TO_ALLOW
        with testing.deny_network(item.nodeid, advice, allow_hosts=_allow_hosts(item.config)):
            yield
        return
    yield


def _phase_network(item: pytest.Item) -> str:
    """The network mode known before fixtures run: command line or ini, else the
    ``harness_config`` fixture when it is the built-in one or takes no arguments."""
    network = opts.cli_or_ini(item.config, opts.NETWORK)
    if network is not None:
        return str(network)
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.get("harness_config") if info is not None else None
    if defs:
        fixturedef = defs[-1]
        builtin = getattr(fixturedef.func, "__module__", "") == __name__
        if not builtin and not fixturedef.argnames:
            try:
                return getattr(fixturedef.func(), "network", None) or "deny"
            except Exception:
                return "deny"
    return "deny"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Guard fixture setup too, session- and module-scoped fixtures included."""
    with network_guard(item, _phase_network(item)):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    with network_guard(item, _phase_network(item)):
        return (yield)


@pytest.fixture(autouse=True)
def _harness_network(request: pytest.FixtureRequest) -> Iterator[None]:
    """Refuse real network per the resolved ``network`` setting (one job: the guard)."""
    network = opts.cli_value(request.config, opts.NETWORK)
    if network is None:  # only then the per-test layers can matter
        network = request.getfixturevalue("harness_settings").network
    with network_guard(request.node, network):
        yield


@pytest.fixture
def harness_config() -> HarnessConfig:
    """Defaults for harness fixtures; override it in a ``conftest.py`` (returns a
    ``harness.testing.HarnessConfig``). The command line and the test's marker win."""
    return testing.HarnessConfig()


@pytest.fixture
def harness_settings(request: pytest.FixtureRequest, harness_config: HarnessConfig) -> Settings:
    """The settings in force for this test, after the precedence rule
    (CLI > marker > fixture > ini > default)."""
    from harness.testing._config import check_marker_kwargs

    markers = cassette_markers(request.node)
    kwargs: dict[str, Any] = {}
    for mark in markers:  # weakest first: harness_cassette's arguments beat vcr's
        check_marker_kwargs(mark.name, mark.args, mark.kwargs)
        kwargs.update({k: v for k, v in mark.kwargs.items() if v is not None})
    aliases = request.config.stash.get(ALIASES, True)
    settings = testing.resolve_settings(
        request.config,
        harness_config,
        kwargs or None,
        vcr_config=request.getfixturevalue("vcr_config") if aliases else None,
        marker="/".join(m.name for m in markers) or "harness_cassette",
    )
    for sentence in settings.overridden:
        request.node.warn(SettingOverridden(sentence))
    return settings
