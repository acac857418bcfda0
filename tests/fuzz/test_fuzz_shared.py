"""What both kinds of fuzzing share: the profile in effect, scenario files, the watchdog."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml

from harness import UsageError
from harness.fuzz._profiles import PROFILE_ENV, choose_profile, profile_in_effect
from harness.fuzz._scenario_file import write_scenario_file
from harness.fuzz._watchdog import WatchdogTimeout, watchdog


def test_the_profile_named_wins_then_the_environment_then_dev(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert profile_in_effect(None) == "dev"
    monkeypatch.setenv(PROFILE_ENV, "nightly")
    assert profile_in_effect(None) == "nightly"
    assert profile_in_effect("ci") == "ci"
    assert choose_profile(None, ("dev", "ci", "nightly")) == "nightly"


def test_an_unknown_profile_names_the_variable_and_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PROFILE_ENV, "weekly")
    with pytest.raises(UsageError, match=r"profile \(or \$HARNESS_FUZZ_PROFILE\).*'dev', 'ci'"):
        choose_profile(None, ("dev", "ci"))


def test_a_scenario_file_keeps_its_key_order_and_writes_repeated_data_in_full(
    tmp_path: Path,
) -> None:
    repeated = {"call": "lookup", "args": {"id": 1}}
    data = {"name": "fuzz_x", "model": {"steps": [repeated, repeated]}, "expect": {}}
    path = write_scenario_file(data, tmp_path / "new" / "folder", "fuzz_x")
    assert path == tmp_path / "new" / "folder" / "fuzz_x.yaml"
    text = path.read_text(encoding="utf-8")
    assert "&id" not in text and "*id" not in text
    assert [line.split(":")[0] for line in text.splitlines() if not line[0].isspace()] == [
        "name",
        "model",
        "expect",
    ]
    assert yaml.safe_load(text) == data


def test_the_watchdog_stops_the_agent_s_code_again_and_again() -> None:
    def hang() -> None:
        threading.Event().wait()

    started = time.perf_counter()
    with watchdog(0.05):
        for _ in range(2):  # re-armed after the first
            with pytest.raises(WatchdogTimeout, match=r"did not return within 0\.05s"):
                hang()
    assert time.perf_counter() - started < 2
