"""``harness trace show|to-scenario`` errors, and ``--otel`` on ``harness run``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.traces import otel_conversations

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_a_broken_file_is_exit_two_naming_the_problem(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": 7}]}]}]}')
    for command in (["trace", "show", str(broken)], ["trace", "show", "--json", str(broken)]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2
        assert "spans[0]: traceId should be a hex string, got None" in result.output
    result = runner.invoke(app, ["trace", "to-scenario", str(broken), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2
    result = runner.invoke(app, ["trace", "to-scenario", str(broken), "-o", str(tmp_path)])
    assert "is a folder" in result.output


def test_without_the_otel_extra_a_file_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "runs.otlp.jsonl"
    scenario = ROOT / "scenarios" / "discovery" / "seed_average_spend.yaml"
    assert runner.invoke(app, ["run", str(scenario), "--otel", str(out), "-q"]).exit_code == 0
    with_msgspec = runner.invoke(app, ["trace", "show", "--json", str(out)])
    monkeypatch.setitem(sys.modules, "msgspec", None)
    monkeypatch.delitem(sys.modules, "harness.traces._decode", raising=False)
    without = runner.invoke(app, ["trace", "show", "--json", str(out)])
    assert without.exit_code == 0, without.output
    assert without.output == with_msgspec.output
    assert '"conversations"' in without.output


def test_run_writes_every_scenario_as_otlp_json(tmp_path: Path) -> None:
    out = tmp_path / "runs.otlp.jsonl"
    scenario = ROOT / "scenarios" / "discovery" / "seed_average_spend.yaml"
    result = runner.invoke(app, ["run", str(scenario), "--otel", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "wrote 1 run(s)" in result.output
    (conversation,) = otel_conversations(out)
    assert conversation.root is not None
    assert conversation.root.get("harness.scenario") == "seed_average_spend"
    assert conversation.root.get("harness.run") == "scenario"
    assert conversation.trace().injected[0].startswith("customer_c123")
    shown = json.loads(runner.invoke(app, ["trace", "show", "--json", str(out)]).output)
    assert shown["conversations"][0]["requests"][0]["tools"]["visible"] == ["search_customer"]
