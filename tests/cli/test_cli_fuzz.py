"""``harness fuzz``: summary, counterexample and replay command, bad parameters, Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _planted_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "fuzz" / "universe"))


def test_a_clean_campaign_prints_the_summary(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "fuzz",
            "-u",
            "facades",
            "-n",
            "15",
            "--seed",
            "2",
            "--database",
            str(tmp_path / "db"),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    for label in ("examples", "distinct timelines", "injections per run", "invariant violations"):
        assert label in result.output
    assert "no invariant violated" in result.output and "per worker" in result.output
    assert not (tmp_path / "out").exists()


def test_a_failure_is_written_and_the_replay_command_works(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "fuzz",
            "-u",
            "tools",
            "-s",
            "planted:offered_before_injected",
            "-n",
            "20",
            "--max-tools",
            "3",
            "--max-turns",
            "3",
            "--no-database",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "FAIL [toolset_explained]" in result.output
    (written,) = out.glob("fuzz_*.yaml")
    assert f"replay: harness run {written}" in result.output.replace("\n", "")
    replay = runner.invoke(app, ["run", str(written)])
    assert replay.exit_code == 1 and "invariants violated" in replay.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-depth", "0"], "max_depth must be an int >= 1, got 0"),
        (["--max-tools", "-5"], "max_tools must be an int >= 1, got -5"),
        (["-u", "galaxy"], "universe kind must be one of"),
        (["-s", "nope"], "unknown strategy 'nope'"),
        (["-s", "planted:broken_factory"], "raised RuntimeError when built"),
        (["--faults", "raise,melt"], "unknown 'melt'"),
        (["--profile", "weekly"], "must be one of 'dev', 'ci', 'nightly'"),
    ],
)
def test_bad_parameters_exit_2_before_the_campaign(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["fuzz", *args])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "examples" not in result.output  # no campaign ran


def test_ctrl_c_prints_the_summary_and_keeps_counterexamples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANTED_INTERRUPT_AFTER", "12")
    import planted

    monkeypatch.setattr(planted._Interrupt, "calls", 0)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "fuzz",
            "-u",
            "tools",
            "-s",
            "planted:interrupting",
            "-n",
            "500",
            "--no-database",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output and "examples" in result.output
    assert list(out.glob("fuzz_*.yaml"))
    assert "replay: harness run" in result.output


def test_the_profile_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_FUZZ_PROFILE", "weekly")
    result = runner.invoke(app, ["fuzz"])
    assert result.exit_code == 2 and "HARNESS_FUZZ_PROFILE" in result.output


def test_the_profile_and_the_database_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_FUZZ_PROFILE", "ci")
    monkeypatch.setenv("HARNESS_FUZZ_DATABASE", str(tmp_path / "db"))
    args = ["fuzz", "-u", "tools", "-n", "20", "--max-tools", "3", "--max-turns", "3"]
    planted = [*args, "-s", "planted:offered_before_injected", "-o", str(tmp_path / "out")]
    result = runner.invoke(app, planted)
    assert result.exit_code == 1, result.output
    assert "profile=ci" in result.output
    # hypothesis saved the failing example where the environment said
    assert any(p.is_file() for p in (tmp_path / "db").rglob("*"))
    result = runner.invoke(app, [*args, "--profile", "dev", "--no-database"])
    assert result.exit_code == 0, result.output
    assert "profile=dev" in result.output
    result = runner.invoke(app, [*args, "--profile", "weekly"])
    assert result.exit_code != 0
    assert "must be one of 'dev', 'ci', 'nightly'" in result.output
