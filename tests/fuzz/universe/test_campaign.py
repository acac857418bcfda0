"""Campaigns: parameters checked up front, workers merged, Ctrl-C keeps what was found, Ray."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import settings

from harness import UsageError
from harness.fuzz import (
    HYPOTHESIS_PROFILES,
    PROFILE_ENV,
    PROFILE_PREFIX,
    CampaignConfig,
    load_profile,
    load_strategy,
    run_campaign,
)

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"kind": "galaxy"}, "universe kind must be one of"),
        ({"examples": 0}, "examples must be an int >= 1, got 0"),
        ({"max_tools": -3}, "max_tools must be an int >= 1, got -3"),
        ({"max_depth": 0}, "max_depth must be an int >= 1, got 0"),
        ({"workers": 0}, "workers must be an int >= 1"),
        ({"profile": "weekly"}, "profile .* must be one of 'dev', 'ci', 'nightly'"),
        ({"faults": ("melt",)}, "faults: unknown 'melt'"),
        ({"strategy": "no_such_strategy"}, "unknown strategy 'no_such_strategy'; known: "),
        ({"strategy": "planted:missing"}, "module 'planted' has no attribute 'missing'"),
        ({"strategy": "planted:broken_factory"}, "raised RuntimeError when built: cannot connect"),
        ({"ray": " "}, "ray must be 'local' or a cluster address"),
    ],
)
def test_bad_parameters_fail_before_the_campaign(changes: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        run_campaign(CampaignConfig(**changes))  # type: ignore[arg-type]


def test_a_factory_is_refused_with_workers() -> None:
    with pytest.raises(UsageError, match="runs in this process only"):
        run_campaign(CampaignConfig(workers=2), strategies=lambda: [])


def test_profiles_come_from_the_option_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert CampaignConfig().profile_name() == "dev"
    monkeypatch.setenv(PROFILE_ENV, "nightly")
    assert CampaignConfig().example_count() == HYPOTHESIS_PROFILES["nightly"].max_examples
    assert CampaignConfig(profile="ci").example_count() == HYPOTHESIS_PROFILES["ci"].max_examples
    assert HYPOTHESIS_PROFILES["ci"].derandomize


def test_the_profiles_are_registered_with_hypothesis(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, profile in HYPOTHESIS_PROFILES.items():
        registered = settings.get_profile(PROFILE_PREFIX + name)
        assert registered.max_examples == profile.max_examples
    assert settings.get_profile("harness-ci").derandomize
    assert CampaignConfig(profile="nightly").hypothesis_settings().max_examples == 10_000
    previous = settings.get_current_profile_name()
    try:
        assert load_profile("ci") == "harness-ci"
        assert settings.default is not None
        assert settings.default.max_examples == HYPOTHESIS_PROFILES["ci"].max_examples
        monkeypatch.setenv(PROFILE_ENV, "nightly")
        assert load_profile() == "harness-nightly"
        assert settings.default is not None
        assert settings.default.max_examples == 10_000
        with pytest.raises(UsageError, match=r"profile .* must be one of"):
            load_profile("weekly")
    finally:
        settings.load_profile(previous)


def test_registered_strategies_are_built_fresh() -> None:
    factory = load_strategy("entity_discovery")
    first, second = factory(), factory()
    assert first[0] is not second[0]
    with pytest.raises(UsageError, match="not InjectionStrategy instances"):
        load_strategy("harness.fuzz:FAULTS")()


def test_a_campaign_reports_what_it_saw(tmp_path: Path) -> None:
    progress: list[int] = []
    config = CampaignConfig(
        kind="providers", examples=20, seed=3, database=":memory:", output=str(tmp_path / "o")
    )
    report = run_campaign(config, progress=progress.append)
    assert report.examples == sum(progress) == 20
    assert len(report.timelines) > 1 and report.injections_per_run > 0
    assert sum(report.errors.values()) == 20 and not report.failed
    assert report.per_second > 0 and report.per_worker_second > 0
    again = run_campaign(config)
    assert again.timelines == report.timelines  # same seed, same scenarios


def test_a_campaign_collects_garbage_less_often_and_restores_the_threshold(
    tmp_path: Path,
) -> None:
    import gc

    from harness.loop import InjectionStrategy

    seen: list[int] = []

    def factory() -> list[InjectionStrategy]:
        seen.append(gc.get_threshold()[0])
        return []

    before = gc.get_threshold()
    config = CampaignConfig(kind="tools", examples=3, database=None, output=str(tmp_path))
    run_campaign(config, strategies=factory)
    # the first build is run_campaign checking the factory, before the campaign starts
    assert len(seen) > 1 and min(seen[1:]) >= 10_000
    assert gc.get_threshold() == before


def test_failures_are_saved_in_the_example_database(tmp_path: Path) -> None:
    database = tmp_path / "db"
    config = CampaignConfig(
        kind="tools",
        strategy="planted:offered_before_injected",
        examples=30,
        max_tools=3,
        max_turns=3,
        database=str(database),
        output=str(tmp_path / "out"),
    )
    first = run_campaign(config)
    assert first.failed
    assert any(p.is_file() for p in database.rglob("*"))
    replayed = run_campaign(config)  # the saved failure is replayed first
    assert replayed.failed and replayed.counterexamples == first.counterexamples


def test_workers_split_seed_ranges_and_merge(tmp_path: Path) -> None:
    config = CampaignConfig(
        kind="tools",
        strategy="planted:offered_before_injected",
        examples=8,
        max_tools=2,
        max_turns=2,
        workers=2,
        profile="ci",
        output=str(tmp_path),
    )
    report = run_campaign(config)
    assert report.workers == 2 and report.tasks == 2
    assert report.examples >= 4  # shrinking runs count too
    # each task shrank its own failure; equal shrunk scenarios share one file
    assert report.violations["toolset_explained"] >= 2
    assert report.counterexamples and all(Path(p).is_file() for p in report.counterexamples)
    assert report.busy > 0 and report.per_worker_second > 0
    # merged per worker process and per universe size
    assert sum(n for n, _ in report.by_worker.values()) == report.examples
    assert 1 <= len(report.by_worker) <= 2 and all(r > 0 for r in report.worker_rates().values())
    assert sum(report.sizes.values()) == report.examples


def test_ctrl_c_keeps_the_summary_and_the_counterexamples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANTED_INTERRUPT_AFTER", "12")
    import planted

    monkeypatch.setattr(planted._Interrupt, "calls", 0)
    config = CampaignConfig(
        kind="tools", strategy="planted:interrupting", examples=200, output=str(tmp_path)
    )
    report = run_campaign(config)
    assert report.interrupted
    assert 0 < report.examples < 200
    assert report.counterexamples and Path(report.counterexamples[0]).is_file()


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray is not installed (pip install 'tool-loop-harness[ray]')",
)
def test_a_small_campaign_on_a_local_ray_instance(tmp_path: Path) -> None:
    config = CampaignConfig(
        kind="tools",
        strategy="planted:offered_before_injected",
        examples=10,
        max_tools=2,
        max_turns=2,
        workers=2,
        ray="local",
        profile="ci",
        output=str(tmp_path),
    )
    report = run_campaign(config)
    assert report.tasks == 2 and report.examples >= 10
    assert report.counterexamples and report.violations["toolset_explained"] >= 2
    assert all(Path(p).is_file() for p in report.counterexamples)
