"""Options, ini twins, markers and the precedence rule: CLI > marker > fixture > ini > default."""

from __future__ import annotations

import re

import pytest

SHOW_SETTINGS = """
import pytest

@pytest.mark.harness_cassette(record_mode="all")
def test_marked(harness_settings):
    print("SETTINGS", harness_settings.record_mode, harness_settings.sources["record_mode"])

def test_plain(harness_settings):
    print("SETTINGS", harness_settings.record_mode, harness_settings.sources["record_mode"])
"""

CONFTEST_FIXTURE = """
import pytest
from harness.testing import HarnessConfig

@pytest.fixture
def harness_config():
    return HarnessConfig(record_mode="new_episodes")
"""


def _settings(result: pytest.RunResult) -> list[str]:
    return re.findall(r"SETTINGS (\S+ \S+)", result.stdout.str())


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    # A marked test would open its cassette; give it an empty one so the run can start.
    pytester.makepyfile(test_prec=SHOW_SETTINGS)
    return pytester


def test_help_lists_every_option_in_one_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    assert "tool-loop harness:" in out
    for flag in (
        "--harness-record-mode",
        "--harness-cassette-dir",
        "--harness-network",
        "--harness-timeline",
        "--harness-update-snapshots",
    ):
        assert flag in out
    for ini in (
        "harness_record_mode",
        "harness_cassette_dir",
        "harness_network",
        "harness_timeline",
        "harness_update_snapshots",
        "harness_scenario_paths",
    ):
        assert ini in out


def test_markers_are_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.harness_cassette(name=None, record_mode=None, match_on=None, *",
            "@pytest.mark.harness_scenario(path, check=True)*",
        ]
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.harness_scenario("nothing-*.yaml")
        def test_x():
            pass
        """
    )
    strict = pytester.runpytest("--strict-markers", "-p", "no:cacheprovider")
    # Registered: the marker is accepted; the missing file is reported, not the marker.
    assert "not found in `markers` configuration option" not in strict.stdout.str()
    strict.stdout.fnmatch_lines(["*harness_scenario('nothing-*.yaml') matches no file*"])


def test_bad_choice_on_the_command_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--harness-network=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'sometimes'*"])


def test_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nharness_record_mode = sometimes\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*harness_record_mode = 'sometimes' is not valid; choose one of*none*once*"]
    )


def test_default_then_marker(project: pytest.Pytester) -> None:
    result = project.runpytest("-s", "-p", "no:cacheprovider", "--harness-cassette-dir=cass")
    # the marked test has no cassette yet; with record_mode=all it records an empty one
    assert _settings(result) == ["all marker", "none default"]
    result.assert_outcomes(passed=2)


def test_ini_beats_the_default(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_record_mode = once\n")
    result = project.runpytest("-s")
    assert _settings(result) == ["all marker", "once ini"]


def test_fixture_beats_ini_and_marker_beats_fixture(project: pytest.Pytester) -> None:
    project.makeconftest(CONFTEST_FIXTURE)
    project.makeini("[pytest]\nharness_record_mode = once\n")
    result = project.runpytest("-s")
    assert _settings(result) == ["all marker", "new_episodes fixture"]
    assert "SettingOverridden" not in result.stdout.str()


def test_cli_beats_everything_and_warns_about_the_marker(project: pytest.Pytester) -> None:
    project.makeconftest(CONFTEST_FIXTURE)
    project.makeini("[pytest]\nharness_record_mode = once\n")
    warn = ("-W", "always::harness.SettingOverridden")  # the inner run inherits "error"
    result = project.runpytest("-s", *warn, "--harness-record-mode=new_episodes")
    assert _settings(result) == ["new_episodes cli", "new_episodes cli"]
    result.stdout.fnmatch_lines(
        [
            "*SettingOverridden: --harness-record-mode=new_episodes overrides "
            "harness_cassette(record_mode='all') for this run*"
        ]
    )
    assert result.stdout.str().count("SettingOverridden:") == 1  # only the marked test
    same = project.runpytest("-s", *warn, "--harness-record-mode=all")
    assert "SettingOverridden" not in same.stdout.str()  # the CLI agrees with the marker
    # under filterwarnings = error (inherited here) the warning fails the test, unless ignored
    strict = project.runpytest("-s", "--harness-record-mode=new_episodes")
    strict.assert_outcomes(passed=1, errors=1)
    ignored = project.runpytest(
        "-s", "-W", "ignore::harness.SettingOverridden", "--harness-record-mode=new_episodes"
    )
    ignored.assert_outcomes(passed=2)


def test_cassette_dir_and_other_settings(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nharness_cassette_dir = recorded\nharness_update_snapshots = true\n")
    pytester.makepyfile(
        """
        def test_x(harness_settings, pytestconfig):
            assert harness_settings.cassette_dir == pytestconfig.rootpath / "recorded"
            assert harness_settings.sources["cassette_dir"] == "ini"
            assert harness_settings.network == "deny"
            assert harness_settings.timeline == "on-failure"
            assert harness_settings.update_snapshots is True
            assert harness_settings.match_on is None
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    absolute = pytester.path / "abs"
    pytester.makepyfile(
        f"""
        def test_x(harness_settings):
            assert str(harness_settings.cassette_dir) == {str(absolute)!r}
            assert harness_settings.sources["cassette_dir"] == "cli"
        """
    )
    pytester.runpytest(f"--harness-cassette-dir={absolute}").assert_outcomes(passed=1)


def test_bad_config_values_are_explained(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from harness import UsageError
        from harness.testing import HarnessConfig

        def test_config():
            with pytest.raises(UsageError, match="record_mode.* must be one of .*got 'always'"):
                HarnessConfig(record_mode="always")
            with pytest.raises(UsageError, match="network.* must be one of .*got 'open'"):
                HarnessConfig(network="open")
            with pytest.raises(UsageError, match="must be a list of names"):
                HarnessConfig(match_on="method")

        @pytest.mark.harness_cassette(record_mode="sometimes")
        def test_marker():
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*harness_cassette(record_mode=...) must be one of 'none', 'once'*got 'sometimes'*"]
    )
