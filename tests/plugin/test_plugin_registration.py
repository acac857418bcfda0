"""How the plugin's parts reach pytest: fixtures and the network guard's hooks as part of
the plugin module, the reporter registered in ``pytest_configure``."""

from __future__ import annotations

import pytest

from harness import pytest_plugin
from harness._plugin import _cassette, _fixtures, _settings
from harness._plugin._reporter import REPORTER_NAME, HarnessReporter


@pytest.mark.parametrize("module", [_settings, _cassette, _fixtures], ids=lambda m: m.__name__)
def test_every_fixture_and_hook_of_a_part_is_registered_with_the_plugin(module: object) -> None:
    """A fixture or hook defined in a part but not imported by the plugin module would
    silently not exist."""
    defined = [
        name
        for name, value in vars(module).items()
        if (name.startswith("pytest_") and callable(value))
        or type(value).__name__ == "FixtureFunctionDefinition"
    ]
    assert defined
    missing = [n for n in defined if getattr(pytest_plugin, n, None) is not getattr(module, n)]
    assert missing == []


def test_harness_autouse_fixtures_set_up_before_later_plugins_ones(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered with the plugin module (not when the session is configured): the network
    guard and the cassette are active while a plugin loaded after the harness sets up its
    autouse fixtures."""
    pytester.makepyfile(
        later_plugin="""
        import pytest

        @pytest.fixture(autouse=True)
        def later_autouse():
            yield
        """,
        test_x="def test_x():\n    pass\n",
    )
    pytester.syspathinsert()
    monkeypatch.setenv("PYTEST_PLUGINS", "later_plugin")  # loaded after the entry points
    result = pytester.runpytest("--setup-plan", "-p", "no:cacheprovider")
    setups = [line.split()[2] for line in result.outlines if line.strip().startswith("SETUP    F")]
    assert setups.index("_harness_network") < setups.index("_harness_cassette_guard")
    assert setups.index("_harness_cassette_guard") < setups.index("later_autouse")


def test_one_reporter_per_session(pytestconfig: pytest.Config) -> None:
    reporter = pytestconfig.pluginmanager.get_plugin(REPORTER_NAME)
    assert isinstance(reporter, HarnessReporter)
    names = [
        name
        for name, plugin in pytestconfig.pluginmanager.list_name_plugin()
        if isinstance(plugin, HarnessReporter)
    ]
    assert names == [REPORTER_NAME]
