"""Secrets through fuzz reports (issue 34 section 1): a discovered tool's name derived from a
preset key, and a property's message quoting the key or a context value, reach no surface
of ``fuzz_agent`` (``--json``, the console, the counterexample file) nor of ``harness run``
replaying the counterexample (timeline, ``--json``)."""

from __future__ import annotations

import json
from pathlib import Path

import planted_agents
import yaml
from typer.testing import CliRunner

from harness._secrets import secret_forms
from harness.cli._app import app
from harness.fuzz import fuzz_agent
from harness.tools import readable_part

KEY, TENANT = planted_agents.ACCOUNT_KEY, planted_agents.TENANT


def assert_hidden(*texts: str) -> None:
    """No form of the key (as text shows it, or as a name part keeps it) and not the
    tenant is in ``texts``."""
    forms = {f for f in secret_forms(KEY) if len(f) >= 8} | {readable_part(KEY).lower(), TENANT}
    for text in texts:
        found = [f for f in forms if f in text.lower() or f in text]
        assert not found, f"{found[0]!r} leaked into {text[:400]!r}"


def test_a_fuzz_report_and_its_counterexample_show_no_key_in_names_or_messages(
    tmp_path: Path,
) -> None:
    report = fuzz_agent(
        "planted_agents:keyed_accounts",
        ["planted_agents:no_account_closed"],
        output=tmp_path,
        max_examples=200,
        seed=3,
    )
    assert report.found and report.finding is not None
    assert report.finding.name == "planted_agents:no_account_closed"
    message = report.finding.message
    assert "acct_hidden_1_close" in message and "[hidden]" in message
    assert report.counterexample is not None
    written = Path(report.counterexample).read_text(encoding="utf-8")
    assert "acct_hidden_1_close" in (report.counterexample_text or "")
    assert_hidden(
        json.dumps(report.to_json()),
        report.explain(),
        written,
        yaml.safe_load(written)["description"],
    )
    # replayed by `harness run`: the console's timeline and problem, and --json
    console = CliRunner().invoke(app, ["run", report.counterexample])
    assert console.exit_code == 1 and "+acct_hidden_1_close" in console.output, console.output
    as_json = CliRunner().invoke(app, ["run", "--json", report.counterexample])
    entry = json.loads(as_json.stdout)["scenarios"][0]
    assert "no_account_closed" in entry["error"] and "[hidden]" in entry["error"]
    assert_hidden(console.output, as_json.stdout)
