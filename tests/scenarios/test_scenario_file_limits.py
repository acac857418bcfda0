"""Hostile scenario files: each is a ScenarioError (exit 2 from `harness run`), no side effects."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import ScenarioError
from harness._safe_yaml import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES
from harness.cli._app import app
from harness.scenarios import load_scenario, resolve_import

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

VALID = """
name: ok
prompt: hi
model:
  steps:
    - {reply: done}
"""


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _billion_laughs() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 10)}]")
    return "\n".join(lines) + "\n" + VALID


def _write(tmp_path: Path, content: str | bytes, name: str = "attack.yaml") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _refused(path: Path, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_scenario(path)
    for args in (["run", str(path)], ["run", "--list", str(path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert message.replace("\\", "") in result.output.replace("\n", "")


def test_billion_laughs_is_refused(tmp_path: Path) -> None:
    text = _billion_laughs()
    assert len(text) < 1024  # a 1 KB file that expands to a billion values
    _refused(_write(tmp_path, text), f"expands to more than {MAX_NODES} values")


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    text = "name: ok\nprompt: &p hi\ndescription: *p\nmodel: {steps: [{reply: *p}]}\n"
    spec = load_scenario(_write(tmp_path, text)).spec
    assert spec.model is not None
    assert (spec.description, spec.model.steps) == ("hi", [{"reply": "hi"}])


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    _refused(_write(tmp_path, "a: &a [*a]\n" + VALID), "alias that refers to itself")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, pytest.param(20_000, marks=pytest.mark.slow)])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    text = VALID + "deep: " + "[" * depth + "]" * depth + "\n"
    _refused(_write(tmp_path, text), f"nested more than {MAX_DEPTH} levels deep")


def test_nesting_at_the_limit_is_read(tmp_path: Path) -> None:
    text = VALID + "description: x\n" + "x: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    with pytest.raises(ScenarioError, match="x: Extra inputs are not permitted"):
        load_scenario(_write(tmp_path, text))  # parsed fine; only the unknown key is wrong


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    text = VALID + "description: " + "x" * MAX_FILE_BYTES + "\n"
    _refused(_write(tmp_path, text), f"larger than {MAX_FILE_BYTES} bytes")


def test_a_non_utf8_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID.encode() + b"description: caf\xe9\n")
    _refused(path, r"is not UTF-8 \(byte 0xe9 at offset")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("builtins:exit()", "the factory raised SystemExit"),
        ("builtins:quit()", "the factory raised SystemExit"),
        ("sys:exit()", "the factory raised SystemExit"),
        ("builtins:dict()", "expected a tool, a function or a list of tools"),
        ("json:loads()", "the factory raised TypeError"),
    ],
)
def test_a_factory_that_exits_or_raises_is_a_scenario_error(
    tmp_path: Path, entry: str, message: str
) -> None:
    path = _write(tmp_path, VALID + f"tools: ['{entry}']\n")
    scenario = load_scenario(path)
    with pytest.raises(ScenarioError, match=message):
        scenario.build_tools()
    good = _write(tmp_path, VALID.replace("name: ok", "name: good"), "good.yaml")
    result = runner.invoke(app, ["run", str(path), str(good)])
    assert result.exit_code == 2, result.output  # was 0 beside a failing scenario
    assert "PASS good" in result.output and "FAIL ok" in result.output


def test_a_model_factory_that_exits_is_a_scenario_error(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID.replace("model:", "model:\n  factory: sys:exit"))
    with pytest.raises(ScenarioError, match=r"model factory 'sys:exit': the factory raised"):
        load_scenario(path).build_model()
    assert runner.invoke(app, ["run", str(path)]).exit_code == 2


def test_a_module_that_exits_on_import_is_a_scenario_error(tmp_path: Path) -> None:
    (tmp_path / "exits_on_import.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"importing module 'exits_on_import'.*SystemExit"):
        resolve_import("exits_on_import:x", root=tmp_path)
    sys.modules.pop("exits_on_import", None)


def test_loading_and_listing_do_not_touch_sys_path(tmp_path: Path) -> None:
    folder = tmp_path / "project" / "scenarios"
    folder.mkdir(parents=True)
    path = _write(folder, VALID + "tools: ['helper_tools:tool']\n", "one.yaml")
    (tmp_path / "project" / "helper_tools.py").write_text(
        "def tool() -> str:\n    '''A tool.'''\n    return 'x'\n", encoding="utf-8"
    )
    before = list(sys.path)
    try:
        scenario = load_scenario(path)
        assert runner.invoke(app, ["run", "--list", str(path)]).exit_code == 0
        assert sys.path == before
        # resolving its import paths appends the project root (never first: no shadowing)
        assert [t.name for t in scenario.build_tools()] == ["tool"]
        assert sys.path[: len(before)] == before
        assert sys.path[len(before) :] == [str(tmp_path / "project")]
    finally:
        sys.path[:] = before
        sys.modules.pop("helper_tools", None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "{max_iterations: -1}",
            "options: invalid loop options: max_iterations must be an int >= 1",
        ),
        ("{tool_timeout: .inf}", "tool_timeout must be a number of seconds > 0 or None, finite"),
        (
            "{max_iteratons: 5}",
            "options: unknown loop option(s) 'max_iteratons' (did you mean 'max_iterations'?)",
        ),
    ],
)
def test_bad_options_are_a_broken_file_exit_2(tmp_path: Path, options: str, message: str) -> None:
    _refused(
        _write(tmp_path, VALID + f"options: {options}\n"),
        re.escape(message),
    )


@pytest.mark.parametrize(
    ("text", "key", "lines"),
    [
        ("name: a\nprompt: hi\nprompt: bye\nmodel: {steps: [{reply: x}]}\n", "prompt", (2, 3)),
        (VALID + "options:\n  max_iterations: 3\n  max_iterations: 30\n", "max_iterations", (8, 9)),
        (VALID + "expect: {output: done, output: other}\n", "output", (7, 7)),
    ],
)
def test_a_key_given_twice_is_refused_naming_the_key_and_lines(
    tmp_path: Path, text: str, key: str, lines: tuple[int, int]
) -> None:
    first, second = lines
    _refused(
        _write(tmp_path, text),
        f"gives the key '{key}' twice in one mapping \\(lines {first} and {second}\\)",
    )


def test_merge_keys_and_equal_values_under_different_keys_are_fine(tmp_path: Path) -> None:
    text = VALID + "expect: &e {output: done}\ntags: [a, a]\nx-extra: {<<: *e, output: done}\n"
    with pytest.raises(ScenarioError, match="x-extra"):  # an unknown field, not a duplicate
        load_scenario(_write(tmp_path, text))
