"""pytest-recording's names as aliases: ``vcr`` marker, ``vcr_config``, ``--record-mode``,
``--disable-recording``; the cassette path fixture; and the clash when pytest-recording
itself is installed."""

from __future__ import annotations

import re

import pytest

ALIASES = """
import pytest

@pytest.fixture
def vcr_config():
    return {"record_mode": "once", "cassette_library_dir": "recorded"}

@pytest.mark.vcr(record_mode="new_episodes")
def test_vcr_marker(harness_settings, harness_cassette, harness_cassette_path, pytestconfig):
    print("SETTINGS", harness_settings.record_mode, harness_settings.sources["record_mode"])
    print("PATH", harness_cassette_path.relative_to(pytestconfig.rootpath).as_posix())
    print("CASSETTE", harness_cassette is not None)

def test_plain(harness_settings):
    print("SETTINGS", harness_settings.record_mode, harness_settings.sources["record_mode"])

@pytest.mark.vcr(recordmode="once")
def test_typo():
    pass
"""


WARN = ("-p", "no:cacheprovider", "-W", "always::harness.SettingOverridden")
"""Inner runs inherit this suite's ``filterwarnings = error``: show the warning instead."""


def _lines(result: pytest.RunResult, tag: str) -> list[str]:
    return re.findall(rf"{tag} (.+)$", result.stdout.str(), flags=re.M)


def test_vcr_marker_and_vcr_config_are_aliases(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_alias=ALIASES)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    # marker (vcr) beats fixture (vcr_config); vcr_config's cassette_library_dir is the dir
    assert _lines(result, "SETTINGS") == ["new_episodes marker", "once fixture"]
    assert _lines(result, "PATH") == ["recorded/test_alias/test_vcr_marker.yaml"]
    assert _lines(result, "CASSETTE") == ["True"]
    result.stdout.fnmatch_lines(
        ["*vcr() got an unknown argument 'recordmode' (did you mean 'record_mode'?)*"]
    )


def test_record_mode_and_disable_recording_flags(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_alias=ALIASES)
    rewrite = pytester.runpytest("-s", *WARN, "--record-mode=rewrite")
    assert _lines(rewrite, "SETTINGS") == ["rewrite cli", "rewrite cli"]
    rewrite.stdout.fnmatch_lines(
        ["*--harness-record-mode=rewrite overrides vcr(record_mode='new_episodes')*"]
    )
    pytester.makepyfile(
        test_alias="""
        import pytest

        @pytest.mark.vcr
        def test_no_cassette_needed(harness_cassette):
            assert harness_cassette is None
        """
    )
    # replay mode with a missing cassette would fail at setup; --disable-recording opens none
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(errors=1)
    disabled = pytester.runpytest("-p", "no:cacheprovider", "--disable-recording")
    disabled.assert_outcomes(passed=1)
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--record-mode" in help_text and "--disable-recording" in help_text


def test_the_cassette_path_is_its_own_overridable_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def harness_cassette_path(request):
            # pytest-recording's layout: next to the test module
            return request.path.parent / "cassettes" / request.path.stem / "custom.yaml"
        """
    )
    pytester.makepyfile(
        test_path="""
        import pytest

        @pytest.mark.harness_cassette(record_mode="once")
        def test_x(harness_cassette, harness_cassette_path):
            assert harness_cassette._path == str(harness_cassette_path)
            assert harness_cassette_path.name == "custom.yaml"
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


FILTERS = """
import pytest

@pytest.fixture
def vcr_config():
    return {"filter_headers": ["x-token"], "filter_query_parameters": ["key"]}

@pytest.mark.harness_cassette(record_mode="once", filter_post_data_parameters=["password"])
def test_x(harness_cassette):
    pass
"""

FAKE_OPEN = """
import contextlib
import harness.testing

CALLS = []
_ORIGINAL = harness.testing.__dict__.get("open_cassette")

@contextlib.contextmanager
def fake_open(path, *, record_mode, match_on=None, matchers=None, scrubbers=(),
              filter_headers=(), filter_query_parameters=(), filter_post_data_parameters=(),
              secrets=(), unused="warn"):
    print("FILTERS", filter_headers, filter_query_parameters, filter_post_data_parameters)
    yield "cassette"

def pytest_configure(config):
    harness.testing.open_cassette = fake_open

def pytest_unconfigure(config):
    if _ORIGINAL is None:
        del harness.testing.open_cassette
    else:
        harness.testing.open_cassette = _ORIGINAL
"""


def test_declared_filters_reach_the_cassette_opening_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_filters=FILTERS)
    pytester.makeconftest(FAKE_OPEN)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert _lines(result, "FILTERS") == ["('x-token',) ('key',) ('password',)"]


FAKE_PYTEST_RECORDING = """
import pytest

def pytest_addoption(parser):
    parser.addoption("--record-mode", dest="record_mode", default="none",
                     choices=["once", "new_episodes", "none", "all", "rewrite"])
    parser.addoption("--disable-recording", action="store_true", dest="disable_recording")

def pytest_configure(config):
    config.addinivalue_line("markers", "vcr: pytest-recording's marker")

@pytest.fixture
def vcr_config():
    return {"decode_compressed_response": True}
"""


def test_with_pytest_recording_installed_its_names_stay_its_own(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(pytest_recording=FAKE_PYTEST_RECORDING)
    pytester.syspathinsert()
    pytester.makepyfile(
        test_clash="""
        import pytest

        @pytest.mark.vcr(record_mode="once", anything="vcrpy takes")
        def test_x(harness_settings, vcr_config, pytestconfig):
            # the vcr marker, vcr_config and --record-mode are pytest-recording's
            assert vcr_config == {"decode_compressed_response": True}
            assert pytestconfig.getoption("record_mode") == "all"
            print("SETTINGS", harness_settings.record_mode, harness_settings.sources["record_mode"])
        """
    )
    result = pytester.runpytest("-s", "-p", "pytest_recording", "--record-mode=all")
    result.assert_outcomes(passed=1)
    assert _lines(result, "SETTINGS") == ["none default"]
    result.stdout.fnmatch_lines(["harness: pytest-recording is active, so --record-mode*"])
    harness_flag = pytester.runpytest(
        "-s", "-p", "pytest_recording", "--record-mode=all", "--harness-record-mode=once"
    )
    assert _lines(harness_flag, "SETTINGS") == ["once cli"]
