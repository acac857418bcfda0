"""The precedence rule and marker checks, unit-tested on a stand-in pytest config."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness import UsageError
from harness.testing import HarnessConfig, _options as opts, open_cassette, resolve_settings
from harness.testing._config import check_marker_kwargs


class Config:
    """What ``resolve_settings`` reads of a ``pytest.Config``."""

    def __init__(self, cli: dict[str, Any] | None = None, ini: dict[str, Any] | None = None):
        self.option = types.SimpleNamespace(**{f"harness_{k}": v for k, v in (cli or {}).items()})
        self.ini = {f"harness_{k}": v for k, v in (ini or {}).items()}
        self.rootpath = Path("/project")

    def getini(self, name: str) -> Any:
        return self.ini.get(name, [] if name in opts.FILTER_INIS.values() else None)


def test_each_layer_beats_the_ones_below() -> None:
    layers = {
        "cli": Config(cli={"record_mode": "all"}, ini={"record_mode": "once"}),
        "marker": Config(ini={"record_mode": "once"}),
    }
    fixture = HarnessConfig(record_mode="new_episodes")
    marker = {"record_mode": "rewrite"}
    cli = resolve_settings(layers["cli"], fixture, marker)
    assert (cli.record_mode, cli.sources["record_mode"]) == ("all", "cli")
    assert cli.overridden == (
        "--harness-record-mode=all overrides harness_cassette(record_mode='rewrite') for this run",
    )
    marked = resolve_settings(layers["marker"], fixture, marker)
    assert (marked.record_mode, marked.sources["record_mode"]) == ("rewrite", "marker")
    assert marked.overridden == ()
    fixed = resolve_settings(layers["marker"], fixture, None)
    assert (fixed.record_mode, fixed.sources["record_mode"]) == ("new_episodes", "fixture")
    ini = resolve_settings(layers["marker"], None, None)
    assert (ini.record_mode, ini.sources["record_mode"]) == ("once", "ini")
    default = resolve_settings(Config(), None, None)
    assert (default.record_mode, default.sources["record_mode"]) == ("none", "default")
    assert default.cassette_dir == Path("/project/cassettes")
    assert default.disable_recording is False and default.filter_headers == ()


def test_vcr_config_is_the_fixture_layer_and_harness_config_wins_within_it() -> None:
    vcr_config = {
        "record_mode": "once",
        "filter_headers": ["x-token"],
        "filter_query_parameters": ["key"],
        "cassette_library_dir": "recorded",
        "match_on": ["method", "path"],
    }
    settings = resolve_settings(
        Config(ini={"filter_post_data_parameters": ["password"]}),
        HarnessConfig(record_mode="all"),
        None,
        vcr_config=vcr_config,
    )
    assert settings.record_mode == "all"  # HarnessConfig beats vcr_config in the same layer
    assert settings.cassette_dir == Path("/project/recorded")
    assert settings.match_on == ("method", "path")
    assert settings.cassette_filters == {
        "filter_headers": ("x-token",),
        "filter_query_parameters": ("key",),
        "filter_post_data_parameters": ("password",),
    }
    assert settings.sources["filter_headers"] == "fixture"
    assert settings.sources["filter_post_data_parameters"] == "ini"
    marked = resolve_settings(
        Config(), None, {"filter_headers": ["x-other"]}, vcr_config=vcr_config
    )
    assert marked.filter_headers == ("x-other",)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"recordmode": "once"}, "'recordmode' is not supported by the harness (did you mean "),
        ({"before_record_request": print}, "it understands 'record_mode'"),
        ({"record_mode": "sometimes"}, "must be one of 'none'"),
        ({"filter_headers": "authorization"}, "must be a list of names"),
    ],
)
def test_vcr_config_mistakes_are_explained(given: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        resolve_settings(Config(), None, None, vcr_config=given)


def test_unknown_marker_arguments_are_refused_with_a_suggestion() -> None:
    with pytest.raises(
        UsageError, match=r"unknown argument 'recordmode' \(did you mean 'record_mode'"
    ):
        check_marker_kwargs("harness_cassette", (), {"recordmode": "once"})
    with pytest.raises(UsageError, match=r"filter_header.*did you mean 'filter_headers'"):
        check_marker_kwargs("vcr", (), {"filter_header": ["x"]})
    with pytest.raises(UsageError, match="extra cassettes are not supported"):
        check_marker_kwargs("vcr", ("other.yaml",), {})
    with pytest.raises(UsageError, match="at most one positional"):
        check_marker_kwargs("harness_cassette", ("a", "b"), {})
    with pytest.raises(UsageError, match=r"record_mode=\.\.\.\) must be one of"):
        check_marker_kwargs("harness_cassette", (), {"record_mode": "always"})
    check_marker_kwargs("harness_cassette", ("name",), {"record_mode": "rewrite"})


def test_harness_config_checks_the_filter_lists() -> None:
    with pytest.raises(
        UsageError,
        match=r"filter_headers='x'\) must be a list of names, e.g. filter_headers=\['x'\]",
    ):
        HarnessConfig(filter_headers="x")
    with pytest.raises(UsageError, match="must be a list of names"):
        HarnessConfig(filter_query_parameters=[1])  # type: ignore[list-item]
    assert HarnessConfig(filter_headers=["x"]).filter_headers == ["x"]


def _record(path: Path, answer: str, mode: str) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"answer": answer})

    with (
        open_cassette(path, record_mode=mode),
        httpx2.Client(transport=httpx2.MockTransport(handler)) as client,
    ):
        client.get("https://api.example.invalid/v1/ask")


def test_rewrite_records_the_cassette_from_scratch(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    _record(path, "first", "once")
    _record(path, "second", "new_episodes")  # replayed: the request matches
    assert "first" in path.read_text() and "second" not in path.read_text()
    _record(path, "second", "rewrite")
    text = path.read_text()
    assert "second" in text and "first" not in text
    assert text.count("uri:") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["case.yaml"]


class PluginManager:
    def __init__(self, blocked: set[str]) -> None:
        self.blocked = blocked

    def is_blocked(self, name: str) -> bool:
        return name in self.blocked


def test_pytest_recording_counts_as_active_only_when_installed_and_not_blocked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    found = {"pytest_recording": object()}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: found.get(name))
    assert opts.pytest_recording_active(PluginManager(set())) is True
    assert opts.pytest_recording_active(PluginManager({"recording"})) is False  # -p no:recording
    found.clear()
    assert opts.pytest_recording_active(PluginManager(set())) is False
    assert opts.RECORDING_ALIASES == ("--record-mode", "--disable-recording")
