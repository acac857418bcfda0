"""The harness pytest plugin (registered through the ``pytest11`` entry point).

This module holds the hooks that configure the session, collect scenario files and
run a test; its parts live in ``harness._plugin``:

- fixtures, imported here so that they register with this module: the settings in
  force and the network guard (``_settings``), the cassette (``_cassette``), what a test
  runs with (``_fixtures``); pytest-recording's ``vcr_config`` (``_vcr_alias``) is
  registered in ``pytest_configure``, only when pytest-recording is not active;
- the reporting, one ``HarnessReporter`` (``_reporter``) registered in
  ``pytest_configure``: timelines, summary lines, JUnit properties, the HTML page,
  coverage, assertion messages;
- option names (``_options``), hookspecs (``_hookspecs``), what hooks and fixtures read
  off a test (``_marks``) and the per-test record of runs and checks (``_sink``).

Every pytest run in the environment loads the plugin, so at load time it imports
almost nothing (pytest, ``harness._plugin`` and what every test run imports anyway for
its settings); the loop, the ``openai`` SDK, vcrpy and friends are imported inside the
hooks and fixtures that need them.

Precedence of settings, the most specific first: command line > the test's marker >
the ``harness_config`` fixture > ini file > built-in default (``harness.testing._config``).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness._errors import UsageError
from harness._plugin import _hookspecs, _vcr_alias
from harness._plugin._cassette import (
    _harness_cassette_guard as _harness_cassette_guard,
    harness_cassette as harness_cassette,
    harness_cassette_path as harness_cassette_path,
)
from harness._plugin._fixtures import (
    harness_async_openai as harness_async_openai,
    harness_mcp as harness_mcp,
    harness_model as harness_model,
    harness_openai as harness_openai,
    harness_runner as harness_runner,
    harness_scenario as harness_scenario,
    harness_scripted as harness_scripted,
    harness_server as harness_server,
    harness_session as harness_session,
    harness_snapshot as harness_snapshot,
)
from harness._plugin._marks import ALIASES, CASSETTE, SCENARIO_FAILURE
from harness._plugin._reporter import REPORTER_NAME, HarnessReporter
from harness._plugin._settings import (
    _harness_network as _harness_network,
    harness_config as harness_config,
    harness_settings as harness_settings,
    pytest_runtest_setup as pytest_runtest_setup,
    pytest_runtest_teardown as pytest_runtest_teardown,
)
from harness.testing import _options as _opts

# The fixtures (and the network guard's two hooks) live in modules of their own and are
# registered as part of this module, by the names above: listed in ``pytest_plugins``,
# each module would cost an entry-point scan at every pytest start, and registered in
# ``pytest_configure``, their autouse fixtures would set up after those of plugins
# loaded later, outside the network guard.


# -- configuration ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _opts.add_options(parser, aliases=not _opts.pytest_recording_active(pluginmanager))


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(_hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    aliases = not _opts.pytest_recording_active(config.pluginmanager)
    config.stash[ALIASES] = aliases
    for line in _opts.MARKERS:
        config.addinivalue_line("markers", line)
    if aliases:
        config.addinivalue_line("markers", _opts.VCR_MARKER)
        config.pluginmanager.register(_vcr_alias, "harness-vcr-alias")
    for opt in _opts.OPTIONS:
        if not opt.is_flag:
            _opts.cli_or_ini(config, opt)  # a bad ini value fails the session at once
    config.pluginmanager.register(HarnessReporter(config), REPORTER_NAME)
    otel = _opts.cli_or_ini(config, _opts.OTEL)
    if otel:
        from harness._plugin._otel import OTEL_PLUGIN, OtelExport

        config.pluginmanager.register(OtelExport(config, otel), OTEL_PLUGIN)


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.stash.get(ALIASES, True):
        return None
    return (
        "harness: pytest-recording is active, so --record-mode, --disable-recording, the vcr "
        "marker and vcr_config are its own; harness cassettes follow harness_cassette, "
        "harness_config and --harness-record-mode"
    )


# -- running a test --------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    failure = item.stash.get(SCENARIO_FAILURE, None)
    if failure is not None:
        pytest.fail(failure, pytrace=False)  # the marked scenario failed: the test fails
    try:
        return (yield)
    except Exception as exc:
        # a request the cassette cannot answer: the harness's explanation (closest recorded
        # request and diff, or the end of the cassette), not the SDK's "Connection error"
        found = item.stash.get(CASSETTE, None)
        if found is None:
            raise
        from harness.testing._vcr import translate_error

        error = translate_error(exc, match_on=found[1])
        if error is None:
            raise
        raise error.with_traceback(exc.__traceback__) from None  # one report: the harness's


# -- collection: scenario files and the harness_scenario marker ------------------------


def pytest_collect_file(file_path: Any, parent: pytest.Collector) -> pytest.Collector | None:
    patterns = parent.config.getini(_opts.SCENARIO_PATHS_INI)
    if not patterns or file_path.suffix not in (".yaml", ".yml"):
        return None
    from harness.testing._items import ScenarioFile, matches_patterns

    if not matches_patterns(file_path, parent.config.rootpath, patterns):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("harness_scenario")
    if marker is None:
        return
    if not marker.args:
        raise UsageError("harness_scenario needs a path: @pytest.mark.harness_scenario('x.yaml')")
    from harness.testing._items import scenario_paths

    bases = [metafunc.definition.path.parent, metafunc.config.rootpath]
    paths = [p for pattern in marker.args for p in scenario_paths(str(pattern), bases)]
    if "harness_scenario" not in metafunc.fixturenames:
        metafunc.fixturenames.append("harness_scenario")
    metafunc.parametrize(
        "harness_scenario", paths, indirect=True, ids=[p.stem for p in paths], scope="function"
    )
