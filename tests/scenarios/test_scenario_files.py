"""Loading scenario files: validation, import paths, strategies, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import EntityDiscovery, ScenarioError, ScriptedModel, ToolChoice
from harness.scenarios import (
    STRATEGIES,
    discover_scenarios,
    load_scenario,
    register_strategy,
    resolve_import,
    run_scenario,
)

SEED = """
name: tiny
prompt: hi
tools: [fixtures.customers:search_customer]
strategies: [entity_discovery]
model:
  steps:
    - {call: search_customer, args: {name: John Smith}}
    - {reply: done}
expect:
  output: done
  timeline:
    - offered: 1
      calls: [search_customer]
      injected: [customer_c123_*, customer_c123_*, customer_c123_*]
    - {answer: done}
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _project_root_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))


def test_a_valid_scenario_builds_fresh_parts(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SEED))
    assert scenario.name == "tiny"
    assert [t.name for t in scenario.build_tools()] == ["search_customer"]
    strategies = scenario.build_strategies()
    assert len(strategies) == 1 and isinstance(strategies[0], EntityDiscovery)
    assert scenario.build_strategies()[0] is not strategies[0]
    model = scenario.build_model()
    assert isinstance(model, ScriptedModel) and model is not scenario.build_model()
    assert run_scenario(scenario).passed


def test_name_defaults_to_the_file_stem(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SEED.replace("name: tiny\n", ""), "stem.yaml"))
    assert scenario.name == "stem"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "must hold a mapping"),
        ("name: x\nprompt: hi\n", "model"),
        ("name: x\nprompt: hi\nmodel: {steps: []}\nbogus: 1\n", "bogus"),
        ("name: x\nprompt: [unclosed\n", "not valid YAML"),
    ],
)
def test_invalid_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=r"invalid|mapping|YAML") as info:
        load_scenario(write(tmp_path, text))
    assert message in str(info.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "nope.yaml")
    with pytest.raises(ScenarioError, match="no such scenario"):
        discover_scenarios([tmp_path / "missing"])


def test_discover_finds_yaml_files_sorted(tmp_path: Path) -> None:
    write(tmp_path, SEED, "b.yaml")
    write(tmp_path, SEED, "a.yml")
    (tmp_path / "scenarios" / "notes.txt").write_text("x")
    found = discover_scenarios([tmp_path / "scenarios"])
    assert [p.name for p in found] == ["a.yml", "b.yaml"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_colon", "not an import path"),
        ("nonexistent_module_xyz:thing", "cannot import module"),
        ("fixtures.customers:nothing_here", "has no attribute"),
        ("fixtures.customers:_SEED()", "not callable"),
    ],
)
def test_bad_import_paths(path: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        resolve_import(path)


def test_factory_import_paths_are_called() -> None:
    assert resolve_import("fixtures.customers:fresh_customers()")["c-123"].name == "John Smith"


def test_unknown_strategy_lists_known_ones(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SEED.replace("[entity_discovery]", "[nope]")))
    with pytest.raises(ScenarioError, match=r"unknown strategy 'nope'.*entity_discovery"):
        scenario.build_strategies()


def test_strategy_options_and_bad_options(tmp_path: Path) -> None:
    text = SEED.replace("[entity_discovery]", "[{entity_discovery: {max_depth: 1}}]")
    (strategy,) = load_scenario(write(tmp_path, text)).build_strategies()
    assert isinstance(strategy, EntityDiscovery) and strategy.max_depth == 1
    text = SEED.replace("[entity_discovery]", "[{entity_discovery: {wings: 2}}]")
    with pytest.raises(ScenarioError, match="bad options"):
        load_scenario(write(tmp_path, text)).build_strategies()


def test_registered_strategies_are_usable(tmp_path: Path) -> None:
    register_strategy("custom_discovery", lambda: EntityDiscovery(hint=True))
    try:
        text = SEED.replace("[entity_discovery]", "[custom_discovery]")
        (strategy,) = load_scenario(write(tmp_path, text)).build_strategies()
        assert isinstance(strategy, EntityDiscovery) and strategy.hint
    finally:
        del STRATEGIES["custom_discovery"]


def test_bad_steps_are_scenario_errors(tmp_path: Path) -> None:
    text = SEED.replace("- {reply: done}", "- {dance: yes}")
    with pytest.raises(ScenarioError, match="model steps"):
        load_scenario(write(tmp_path, text)).build_model()


def test_messages_instead_of_prompt(tmp_path: Path) -> None:
    text = SEED.replace(
        "prompt: hi", "messages: [{role: system, content: s}, {role: user, content: u}]"
    )
    scenario = load_scenario(write(tmp_path, text))
    prompt = scenario.build_prompt()
    assert not isinstance(prompt, str)
    assert [m.role for m in prompt] == ["system", "user"]
    assert run_scenario(scenario).passed


def test_neither_prompt_nor_messages(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SEED.replace("prompt: hi\n", "")))
    with pytest.raises(ScenarioError, match="prompt or messages"):
        scenario.build_prompt()


def test_bad_loop_options(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"options: unknown loop option\(s\) 'warp'"):
        load_scenario(write(tmp_path, SEED + "options: {warp: 9}\n"))


@pytest.mark.parametrize(
    ("written", "neutral", "choice"),
    [
        ("{allowed: [search_customer], mode: required}", None, None),
        ("search_customer", None, None),
        (
            "{type: allowed_tools, mode: auto, tools: [{type: function, name: search_customer}]}",
            {"allowed": ["search_customer"], "mode": "auto"},
            ToolChoice.allowed_tools(["search_customer"]),
        ),
        (
            "{type: function, function: {name: search_customer}}",
            "search_customer",
            ToolChoice.tool("search_customer"),
        ),
        ("{type: any}", "required", ToolChoice.required()),
    ],
)
def test_a_provider_tool_choice_dict_in_options_still_reads_and_warns(
    tmp_path: Path, written: str, neutral: object, choice: ToolChoice | None
) -> None:
    path = write(tmp_path, SEED + f"options: {{tool_choice: {written}}}\n")
    if neutral is None:  # the neutral spelling: no warning (filterwarnings = error)
        assert load_scenario(path).build_options().tool_choice is not None
        return
    with pytest.warns(DeprecationWarning, match=r"removed in 0\.3\.0: write tool_choice: "):
        scenario = load_scenario(path)
    assert scenario.spec.options["tool_choice"] == neutral
    assert scenario.build_options().tool_choice == choice


def test_a_tool_choice_dict_no_format_knows_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"options: .*tool_choice .*not a choice the harness"):
        load_scenario(write(tmp_path, SEED + "options: {tool_choice: {type: sometimes}}\n"))
