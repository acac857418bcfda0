"""``harness compare``: the table, the ``--json`` contract, prices, the page, exit codes;
comparison files stay out of ``harness run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import ScenarioError
from harness.cli._app import app
from harness.scenarios import discover_scenarios, load_comparison, load_scenario

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "scenarios" / "compare"
PRICES = ROOT / "docs" / "examples" / "prices.yaml"
runner = CliRunner()

VARIANT_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "passed": bool,
    "requests": int,
    "calls": int,
    "tool_definition_tokens": int,
    "input_tokens": int,
    "cached_input_tokens": int,
    "cache_breaks": list,
    "cost": (float, type(None)),
}


@pytest.mark.parametrize("file", sorted(COMPARE.glob("*.yaml")), ids=lambda p: p.name)
def test_every_catalog_comparison_passes_and_keeps_the_json_contract(file: Path) -> None:
    result = runner.invoke(app, ["compare", str(file), "--json", "--prices", str(PRICES)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"scenario", "variants"} and data["scenario"] == file.stem
    assert data["variants"]
    for variant in data["variants"]:
        assert set(variant) == set(VARIANT_KEYS)
        for key, kind in VARIANT_KEYS.items():
            assert isinstance(variant[key], kind), (key, variant[key])
        assert variant["passed"] is True and isinstance(variant["cost"], float)
        for cache_break in variant["cache_breaks"]:
            assert set(cache_break) == {"request", "cause", "by"}
            assert isinstance(cache_break["request"], int)
            assert isinstance(cache_break["by"], (str, type(None)))


def test_the_large_catalog_shows_each_design_s_price() -> None:
    result = runner.invoke(
        app, ["compare", str(COMPARE / "large_catalog.yaml"), "--json", "--prices", str(PRICES)]
    )
    variants = {v["name"]: v for v in json.loads(result.output)["variants"]}
    assert set(variants) == {"eager", "facade", "addition", "search", "allowed", "native"}
    assert variants["eager"]["cache_breaks"] == variants["allowed"]["cache_breaks"] == []
    assert [b["cause"] for b in variants["facade"]["cache_breaks"]] == ["tools-changed"] * 2
    assert {b["by"] for b in variants["search"]["cache_breaks"]} == {"search"}
    eager, search = variants["eager"], variants["search"]
    assert eager["tool_definition_tokens"] > 50 * search["tool_definition_tokens"]
    assert eager["cost"] > search["cost"]
    assert len(load_comparison(COMPARE / "large_catalog.yaml").variants) == 6


def test_an_addition_keeps_the_cache_that_the_same_facade_editing_tools_breaks() -> None:
    """The addition variant unfolds the same facade, its tools delivered by an
    ``additional_tools`` item: ``tools`` never changes, so no request breaks the cache."""
    result = runner.invoke(
        app, ["compare", str(COMPARE / "large_catalog.yaml"), "--json", "--prices", str(PRICES)]
    )
    assert result.exit_code == 0, result.output
    variants = {v["name"]: v for v in json.loads(result.output)["variants"]}
    addition, facade = variants["addition"], variants["facade"]
    assert addition["passed"] is True and addition["calls"] == facade["calls"] == 4
    assert addition["cache_breaks"] == []
    assert [b["cause"] for b in facade["cache_breaks"]] == ["tools-changed"] * 2
    assert addition["cached_input_tokens"] > facade["cached_input_tokens"]
    assert addition["tool_definition_tokens"] < facade["tool_definition_tokens"]
    assert addition["cost"] < facade["cost"]


def test_native_deferral_keeps_the_cache_that_editing_tools_breaks() -> None:
    """The native variant defers the catalog behind the provider's tool search: what the
    search finds is appended to the conversation, ``tools`` never changes."""
    result = runner.invoke(
        app, ["compare", str(COMPARE / "large_catalog.yaml"), "--json", "--prices", str(PRICES)]
    )
    assert result.exit_code == 0, result.output
    variants = {v["name"]: v for v in json.loads(result.output)["variants"]}
    native = variants["native"]
    assert native["passed"] is True and native["calls"] == 2
    assert native["cache_breaks"] == []
    for edits_tools in ("facade", "search"):  # the two that inject by editing tools
        assert len(variants[edits_tools]["cache_breaks"]) == 2
        assert len(native["cache_breaks"]) < len(variants[edits_tools]["cache_breaks"])
    assert native["requests"] < variants["search"]["requests"]  # search and call in one turn
    assert native["tool_definition_tokens"] < variants["search"]["tool_definition_tokens"]
    assert native["cached_input_tokens"] > 0
    assert native["cost"] < variants["eager"]["cost"]


def test_the_table_lists_variants_and_what_did_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    result = runner.invoke(
        app,
        ["compare", str(COMPARE / "large_catalog.yaml"), "--html", str(page)],
        env={"COLUMNS": "160"},
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("large_catalog: openai-responses, gpt-5, tokens by ")
    names = ["eager", "facade", "addition", "search", "allowed", "native"]
    assert [line.split()[0] for line in lines[2:8]] == names
    for row in (lines[4].split(), lines[7].split()):  # addition and native
        assert row[1] == "yes" and "none" in row  # passed, no cache break
    assert "not run:" not in result.output
    assert page.read_text(encoding="utf-8").count('<svg class="chart"') == 6


def test_a_pipe_gets_whole_lines_with_every_cause_and_who_caused_it(tmp_path: Path) -> None:
    """Not a terminal (a pipe, a CI log, 80 columns): the table keeps its own width, so the
    causes are never cut (``#3 tools-ch… (unfoldi…``); the page's summary names who
    caused each break too."""
    page = tmp_path / "page.html"
    result = runner.invoke(
        app,
        ["compare", str(COMPARE / "file_tools.yaml"), "--html", str(page)],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    assert "#2 tools-changed (unfolding), #4 tools-changed (unfolding)" in result.output
    assert "…" not in result.output
    assert len(result.output.splitlines()) == 6  # title, header, three variants, "wrote"
    summary = page.read_text(encoding="utf-8").split('<table class="summary">')[1]
    summary = summary.split("</table>")[0]
    assert "#2 tools-changed (unfolding), #4 tools-changed (unfolding)" in summary


TINY = """
name: tiny
format: openai-chat
model: gpt-4o-mini
task:
  prompt: Say hi.
variants:
  - name: plain
    model: {steps: [{reply: Hi.}]}
  - name: twice
    model: {steps: [{reply: Hi.}]}
"""


def test_a_run_too_short_to_cache_says_why_nothing_was_cached(tmp_path: Path) -> None:
    file = tmp_path / "tiny.yaml"
    file.write_text(TINY, encoding="utf-8")
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["compare", str(file), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert result.output.count("0 (0%)*") == 2
    assert (
        "* nothing can be cached: every request is shorter than the 1,024 tokens the "
        "provider caches at the least (plain, twice)"
    ) in result.output
    assert "every request under the 1,024-token minimum" in page.read_text(encoding="utf-8")
    long = runner.invoke(app, ["compare", str(COMPARE / "file_tools.yaml")])
    assert "*" not in long.output  # requests long enough: no hint


def test_a_pending_variant_is_listed_as_not_run(tmp_path: Path) -> None:
    text = (COMPARE / "file_tools.yaml").read_text(encoding="utf-8")
    pending = tmp_path / "pending.yaml"
    pending.write_text(
        text + "  - name: later\n    pending: needs a feature not built yet\n", encoding="utf-8"
    )
    result = runner.invoke(app, ["compare", str(pending)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "not run: later (needs a feature not built yet)" in result.output


def test_timelines_mark_the_cache_breaks() -> None:
    result = runner.invoke(
        app,
        ["compare", str(COMPARE / "support_sections.yaml"), "--timeline"],
        env={"COLUMNS": "160"},
    )
    assert result.exit_code == 0, result.output
    assert "[cache break: restart by sections: orders]" in result.output
    assert "[cache break: tools-changed by sections]" in result.output
    assert result.output.count("[cache break:") == 2  # eager never breaks


def test_a_variant_that_misses_the_goal_exits_1(tmp_path: Path) -> None:
    text = (COMPARE / "file_tools.yaml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        text.replace("- reply: The todo list now says to buy bread.", "- reply: No."),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["compare", str(broken)], env={"COLUMNS": "160"})
    assert result.exit_code == 1
    assert "expected output 'The todo list now says to buy bread.'" in result.output


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\nvariants: []\n", "has no variants"),
        ("name: x\nvariants:\n  - {tools: []}\n", "variant 1 needs a 'name'"),
        (
            "name: x\nvariants:\n  - {name: a, model: {steps: []}}\n"
            "  - {name: a, model: {steps: []}}\n",
            "two variants are named 'a'",
        ),
        ("name: x\nformat: bedrock\nvariants:\n  - {name: a}\n", "format"),
        ("name: x\nvariants:\n  - {name: a, modle: {}}\n", "variant 'a' is invalid"),
    ],
)
def test_a_broken_comparison_exits_2_naming_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    file = tmp_path / "c.yaml"
    file.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["compare", str(file)])
    assert result.exit_code == 2
    assert problem in " ".join(result.output.split())


def test_a_broken_price_table_exits_2(tmp_path: Path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text("models: {m: {input: free}}\n")
    result = runner.invoke(
        app, ["compare", str(COMPARE / "file_tools.yaml"), "--prices", str(prices)]
    )
    assert result.exit_code == 2 and "m.input must be a finite number" in result.output


def test_comparisons_are_not_scenarios() -> None:
    found = discover_scenarios([ROOT / "scenarios"])
    assert found and not any(p.parent.name == "compare" for p in found)
    with pytest.raises(ScenarioError, match="harness compare"):
        load_scenario(COMPARE / "file_tools.yaml")


def test_gemini_declared_tools_keep_the_implicit_cache_that_unfolding_breaks() -> None:
    """On Gemini an allowed subset is ``allowedFunctionNames``: the declarations stay, so
    the implicitly cached prefix does; unfolding a facade changes them and breaks it."""
    file = COMPARE / "file_tools_gemini.yaml"
    result = runner.invoke(app, ["compare", str(file), "--json", "--prices", str(PRICES)])
    assert result.exit_code == 0, result.output
    variants = {v["name"]: v for v in json.loads(result.output)["variants"]}
    assert load_comparison(file).spec.format == "gemini-generate"
    assert variants["allowed"]["cache_breaks"] == variants["eager"]["cache_breaks"] == []
    assert [b["cause"] for b in variants["facade"]["cache_breaks"]] == ["tools-changed"] * 2
    assert variants["allowed"]["cached_input_tokens"] > 0
