"""The test functions in docs/pytest-plugin.md pass when run as a test module."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "pytest-plugin.md"


def test_the_reference_examples_pass_under_pytest(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)
    shutil.copytree(ROOT / "fixtures", pytester.path / "fixtures")
    shutil.copytree(ROOT / "scenarios" / "discovery", pytester.path / "scenarios" / "discovery")
    pytester.makepyfile(test_docs="\n\n".join(blocks))
    # --snapshot-update: syrupy writes the example's snapshot file on this first run
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-v", "-k", "not replays_a_named_cassette", "--snapshot-update"
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0
    assert outcomes["passed"] >= 9
    for name in (
        "test_where_settings_come_from",
        "test_every_discovery_scenario",
        "test_through_the_sdk",
        "test_inline_snapshot",
        "test_timeline_inline",
        "test_timeline_syrupy",
    ):
        assert f"::{name}" in result.stdout.str()


def test_every_option_and_ini_key_has_exactly_one_row() -> None:
    """The options table listed the filter ini keys twice, with different descriptions."""
    from harness.testing import _options as opts

    table = PAGE.read_text(encoding="utf-8").split("## Options and ini keys")[1].split("###")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]
    keys = [
        *(opt.dest for opt in opts.OPTIONS),
        *opts.FILTER_INIS.values(),
        opts.SCENARIO_PATHS_INI,
    ]
    for key in keys:
        holding = [row for row in rows if f"`{key}`" in row]
        assert len(holding) == 1, (key, holding)
