"""How the plugin's parts reach pytest: fixture modules through ``pytest_plugins``, the
reporter registered in ``pytest_configure``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness import pytest_plugin
from harness._plugin._reporter import REPORTER_NAME, HarnessReporter


def test_the_fixture_modules_are_left_to_pytest_to_import() -> None:
    """Imported before pytest marks them, they could not be assertion-rewritten (pytest
    warns, and ``filterwarnings = error`` fails the session in an editable install)."""
    code = (
        "import sys, harness.pytest_plugin as p\n"
        "print(sorted(m for m in p.pytest_plugins if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
    assert len(pytest_plugin.pytest_plugins) == 3


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
