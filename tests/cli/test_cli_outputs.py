"""Outputs never destroy inputs, bad paths exit 2, ``--json`` stays JSON and terminals stay
safe (issue 34 section 3): ``compare``, ``cassette show|to-scenario``, ``run``, ``fuzz``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.cli._output import json_text

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "cassettes" / "recorded" / "entity_discovery.yaml"
FUZZ_TESTS = ROOT / "tests" / "fuzz" / "agent"  # planted_agents
runner = CliRunner()
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b\x85\u202e\ud800"
"""A window title, a clear-screen, a C1 CSI, a C1 newline, a bidi override, a lone
surrogate."""
RAW = ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "\ud800")

TOOLS = '''
from harness import llm_tool


@llm_tool
def shout(text: str) -> str:
    """Shout."""
    print("printed by the tool")
    return text.upper()


def loud_property(run):
    print("printed by the property")
'''


def comparison(folder: Path, *, name: str = "a") -> Path:
    """A one-variant comparison whose tool prints (``shouting:shout``)."""
    (folder / "shouting.py").write_text(TOOLS, encoding="utf-8")
    file = folder / "c.yaml"
    file.write_text(
        "name: tiny\nformat: openai-chat\nmodel: gpt-4o-mini\ntask:\n  prompt: Shout hi.\n"
        f"variants:\n  - name: {json.dumps(name)}\n    tools: ['shouting:shout']\n"
        "    model:\n      steps:\n        - {call: shout, args: {text: hi}}\n"
        "        - {reply: HI}\n",
        encoding="utf-8",
    )
    return file


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def assert_no_raw(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text[:300])


# -- outputs never destroy inputs --------------------------------------------------------


@pytest.mark.parametrize("target", ["comparison", "prices"])
def test_compare_refuses_to_write_its_page_onto_an_input(project: Path, target: str) -> None:
    file = comparison(project)
    prices = project / "prices.yaml"
    prices.write_text("models: {default: {input: 1}}\n", encoding="utf-8")
    onto = file if target == "comparison" else prices
    before = onto.read_bytes()
    result = runner.invoke(
        app, ["compare", str(file), "--prices", str(prices), "--html", str(onto)]
    )
    assert result.exit_code == 2, result.output
    assert "is one of the command's inputs" in result.output and "Traceback" not in result.output
    assert onto.read_bytes() == before


def test_to_scenario_refuses_to_overwrite_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_bytes(RECORDED.read_bytes())
    result = runner.invoke(app, ["cassette", "to-scenario", str(cassette), "-o", str(cassette)])
    assert result.exit_code == 2 and "is one of the command's inputs" in result.output
    assert cassette.read_bytes() == RECORDED.read_bytes()


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("missing/page.html", "the folder 'missing' does not exist"),
        (".", "is a folder"),
        ("shouting.py/page.html", "the folder 'shouting.py' is a file"),
    ],
)
def test_compare_html_into_a_bad_place_exits_2(project: Path, where: str, problem: str) -> None:
    result = runner.invoke(app, ["compare", str(comparison(project)), "--html", where])
    assert result.exit_code == 2, result.output
    assert problem in result.output and "Traceback" not in result.output


def test_fuzz_output_under_a_file_exits_2(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    for extra in (["--agent", "planted_agents:sound"], []):
        command = ["fuzz", "--path", str(FUZZ_TESTS), *extra, "-n", "1", "-o", str(afile / "sub")]
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert "which is a file" in result.output


# -- --json stays JSON -----------------------------------------------------------------------


@pytest.mark.parametrize("price", [".nan", ".inf", "1e999"])
def test_compare_refuses_prices_that_are_not_finite(project: Path, price: str) -> None:
    prices = project / "prices.json"
    prices.write_text(
        '{"models": {"default": {"input": ' + ("1e999" if price == "1e999" else "1") + "}}}"
    )
    if price != "1e999":
        prices = project / "prices.yaml"
        prices.write_text(f"models: {{default: {{input: 1, cached_input: {price}}}}}\n")
    result = runner.invoke(
        app, ["compare", str(comparison(project)), "--json", "--prices", str(prices)]
    )
    assert result.exit_code == 2 and "must be a finite number" in result.output, result.output


def test_print_in_user_code_does_not_corrupt_compare_json(project: Path) -> None:
    result = runner.invoke(app, ["compare", str(comparison(project)), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["variants"][0]["passed"] is True
    assert "printed by the tool" in result.stderr


def test_print_in_user_code_does_not_corrupt_run_json(project: Path) -> None:
    scenario = project / "s.yaml"
    (project / "shouting.py").write_text(TOOLS, encoding="utf-8")
    scenario.write_text(
        "name: shout\nprompt: Shout hi.\ntools: ['shouting:shout']\n"
        "model:\n  steps:\n    - {call: shout, args: {text: hi}}\n    - {reply: HI}\n"
        "expect:\n  output: HI\n  properties: ['shouting:loud_property']\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["run", "--json", str(scenario)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passed"] == 1
    assert "printed by the tool" in result.stderr and "printed by the property" in result.stderr


def test_print_in_user_code_does_not_corrupt_fuzz_json() -> None:
    result = runner.invoke(
        app,
        [
            "fuzz",
            "--agent",
            "planted_agents:printing",
            "--property",
            "planted_agents:printing_property",
            "--json",
            "-n",
            "5",
            "--seed",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["found"] is False
    assert "printed by" in result.stderr


# -- terminals -------------------------------------------------------------------------------


def test_compare_shows_escapes_in_names_instead_of_obeying_them(project: Path) -> None:
    file = comparison(project, name=f"a{HOSTILE}b")
    result = runner.invoke(app, ["compare", str(file), "--timeline"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "\\x1b]0;pwned\\x07" in result.output
    assert_no_raw(result.output)
    as_json = runner.invoke(app, ["compare", str(file), "--json"])
    assert json.loads(as_json.stdout)["variants"][0]["name"] == f"a{HOSTILE}b"
    assert_no_raw(as_json.stdout)


def _hostile_cassette(folder: Path) -> Path:
    text = RECORDED.read_text(encoding="utf-8")
    escaped = "".join(f"\\u{ord(c):04x}" for c in HOSTILE)  # JSON escapes in the body
    text = text.replace(
        '"function":{"name":"search_customer","arguments"',
        f'"function":{{"name":"search{escaped}","arguments"',
        1,
    )
    path = folder / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_cassette_show_prints_c1_bidi_and_surrogates_escaped(tmp_path: Path) -> None:
    path = _hostile_cassette(tmp_path)
    shown = runner.invoke(app, ["cassette", "show", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "search\\x1b]0;pwned" in shown.output and "\\ud800" in shown.output
    assert_no_raw(shown.output)
    as_json = runner.invoke(app, ["cassette", "show", "--json", str(path)])
    assert as_json.exit_code == 0, as_json.output
    assert_no_raw(as_json.stdout)
    assert f"search{HOSTILE}" in _strings(json.loads(as_json.stdout))  # the same text


def _strings(data: Any) -> set[str]:
    if isinstance(data, dict):
        return {s for value in data.values() for s in _strings(value)}
    if isinstance(data, list):
        return {s for value in data for s in _strings(value)}
    return {data} if isinstance(data, str) else set()


def test_run_prints_a_scenario_name_with_a_lone_surrogate(project: Path) -> None:
    scenario = project / "s.yaml"
    scenario.write_text(
        'name: "bad\\ud800\\x9bname"\nprompt: Hi.\nmodel:\n  steps:\n    - {reply: no}\n'
        "expect:\n  output: yes\n",
        encoding="utf-8",
    )
    console = runner.invoke(app, ["run", str(scenario)])
    assert console.exit_code == 1 and "bad\\ud800\\x9bname" in console.output, console.output
    as_json = runner.invoke(app, ["run", "--json", str(scenario)])
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["scenarios"][0]["name"] == "bad\ud800\x9bname"
    assert_no_raw(console.output + as_json.stdout)


def test_json_text_refuses_nan_and_escapes_what_terminals_obey() -> None:
    assert json_text({"a": f"x{HOSTILE}"}) == (
        '{"a": "x\\u001b]0;pwned\\u0007\\u001b[2J\\u009b\\u0085\\u202e\\ud800"}'
    )
    with pytest.raises(ValueError, match="Out of range float"):
        json_text({"cost": float("nan")})
    assert json.loads(json_text({"é": "ü"})) == {"é": "ü"}  # other text stays as it is
