"""Scenario files collected as test items (opt-in through ``harness_scenario_paths``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "scenarios" / "discovery"

BROKEN = """
name: broken_timeline
prompt: hi
tools: [fixtures.customers:search_customer]
strategies: [entity_discovery]
model:
  steps:
    - call: search_customer
      args: {name: John Smith}
    - reply: done
expect:
  timeline:
    - {calls: [search_customer], injected: [order_*]}
    - {answer: true}
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(ROOT / "fixtures", pytester.path / "fixtures")
    target = pytester.path / "scenarios" / "catalog"
    target.mkdir(parents=True)
    for name in ("seed_average_spend.yaml", "search_two_customers.yaml"):
        shutil.copy(CATALOG / name, target / name)
    (pytester.path / "scenarios" / "broken.yaml").write_text(BROKEN)
    (pytester.path / "scenarios" / "notes.txt").write_text("not a scenario")
    return pytester


def test_not_collected_without_the_ini_key(project: pytest.Pytester) -> None:
    result = project.runpytest("scenarios")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_collected_and_run_with_their_timelines(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_scenario_paths =\n    scenarios/*.yaml\n")
    result = project.runpytest("scenarios", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "scenarios/catalog/seed_average_spend.yaml::seed_average_spend PASSED" in out
    assert "scenarios/broken.yaml::broken_timeline FAILED" in out
    assert (
        "scenario 'broken_timeline' failed: first divergence at iteration 1: "
        "expected injected=['order_*']"
    ) in out
    assert "<- expected: injected=['order_*']" in out
    summary = out.split("harness timelines")[1]
    assert "scenarios/broken.yaml::broken_timeline" in summary


def test_patterns_select_files(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_scenario_paths = scenarios/catalog/seed_*.yaml\n")
    result = project.runpytest("scenarios", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_bad_scenario_file_is_a_collection_error(project: pytest.Pytester) -> None:
    (project.path / "scenarios" / "bad.yml").write_text("name: [unclosed\n")
    project.makeini("[pytest]\nharness_scenario_paths = scenarios/bad.yml\n")
    result = project.runpytest("scenarios", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "is not valid YAML" in result.stdout.str()


def test_scenario_items_deny_the_network(project: pytest.Pytester) -> None:
    # The tool fails (an error result the timeline forbids) unless the connect is refused
    # by the guard before anything is sent.
    # a top-level module with a unique name: the outer test process already imported the
    # repository's own ``fixtures`` package, which inline pytester runs share
    (project.path / "harness_netty_probe.py").write_text(
        "import socket\n"
        "from harness import llm_tool\n\n"
        "@llm_tool\n"
        "def fetch() -> str:\n"
        '    "Fetch."\n'
        "    try:\n"
        "        socket.create_connection(('10.255.255.1', 80), timeout=0.1).close()\n"
        "    except OSError as exc:\n"
        "        if type(exc).__name__ == 'NetworkRefused':\n"
        "            return 'refused'\n"
        "    raise RuntimeError('the guard did not refuse the connection')\n"
    )
    (project.path / "scenarios" / "net.yaml").write_text(
        "name: net\nprompt: hi\ntools: [harness_netty_probe:fetch]\n"
        "model: {steps: [{call: fetch}, {reply: done}]}\n"
        "expect: {timeline: [{calls: [fetch], errors: []}, {answer: true}]}\n"
    )
    project.makeini("[pytest]\nharness_scenario_paths = scenarios/net.yaml\n")
    result = project.runpytest("scenarios", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_matches_patterns_helper(tmp_path: Path) -> None:
    from harness.testing._items import matches_patterns

    file = tmp_path / "a" / "b.yaml"
    assert matches_patterns(file, tmp_path, ["a/*.yaml"])
    assert not matches_patterns(file, tmp_path, ["  ", "b/*.yaml"])
    assert not matches_patterns(tmp_path / "a" / "b.txt", tmp_path, ["*"])
    assert not matches_patterns(Path("/elsewhere/b.yaml"), tmp_path, ["*"])


def test_scenario_that_cannot_build_its_model(project: pytest.Pytester) -> None:
    (project.path / "scenarios" / "nomodel.yaml").write_text(
        "name: nomodel\nprompt: hi\nmodel: {steps: [{reply: x}], factory: 'no_such_mod:f'}\n"
    )
    project.makeini("[pytest]\nharness_scenario_paths = scenarios/nomodel.yaml\n")
    result = project.runpytest("scenarios", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "scenario 'nomodel': ScenarioError: scenario 'nomodel'" in result.stdout.str()
    assert "cannot import module 'no_such_mod'" in result.stdout.str()
