"""Fixtures: scripted factory, runner, openai clients on the in-process fake, scenario marker."""

from __future__ import annotations

from pathlib import Path

import pytest

SCENARIO = (Path(__file__).resolve().parents[2] / "scenarios" / "discovery").as_posix()


def test_scripted_runner_and_openai_fake(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import pytest
        from harness import call, reply, llm_tool
        from harness.assertions import called_exactly, has_iterations
        from harness.models import OpenAIChatModel

        @llm_tool
        def add(a: int, b: int) -> int:
            "Add two numbers."
            return a + b

        @pytest.fixture
        def harness_model(harness_scripted):
            return harness_scripted([call("add", {"a": 1, "b": 2}), reply("3")])

        def test_runner_records(harness_runner, harness_scripted):
            model = harness_scripted([call("add", {"a": 2, "b": 2}), reply("4")])
            result = harness_runner.run(model, "2+2?", tools=[add])
            assert result.output == "4"
            assert harness_runner.last is result.trace
            assert len(harness_runner) == 1 and list(harness_runner) == [result.trace]
            assert repr(harness_runner) == "<HarnessRunner 1 trace(s)>"
            assert result.trace == called_exactly("add")

        def test_loop_through_the_sdk(harness_openai, harness_runner):
            model = OpenAIChatModel(harness_openai, "gpt-test")
            result = harness_runner.run(model, "1+2?", tools=[add])
            assert result.output == "3"
            assert result.trace == has_iterations(2)

        def test_async_client(harness_async_openai):
            async def ask():
                response = await harness_async_openai.chat.completions.create(
                    model="gpt-test", messages=[{"role": "user", "content": "hi"}],
                    tools=[{"type": "function", "function": {"name": "add", "parameters": {
                        "type": "object", "properties": {}}}}],
                )
                return response.choices[0].message.tool_calls[0].function.name
            assert asyncio.run(ask()) == "add"

        async def _arun(runner, model):
            return await runner.arun(model, "2+2?", tools=[add])

        def test_arun_and_errors_are_recorded(harness_runner, harness_scripted):
            result = asyncio.run(_arun(harness_runner, harness_scripted([reply("4")])))
            assert result.output == "4"
            bad = harness_scripted([call("nope")], lenient=True)
            with pytest.raises(Exception):
                harness_runner.run(bad, "x", tools=[add], unknown_tool="raise")
            with pytest.raises(Exception):
                asyncio.run(_arun(harness_runner, harness_scripted([call("nope")], lenient=True)))
            # both failed runs are kept: ToolNotFound at once; script exhausted after an error
            assert len(harness_runner.traces) == 3
            assert [len(t.iterations) for t in harness_runner.traces[1:]] == [1, 2]
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_runner_last_without_runs_and_missing_model(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from harness import UsageError

        def test_last(harness_runner):
            with pytest.raises(UsageError, match="has not run anything yet"):
                harness_runner.last

        def test_no_model(harness_openai):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*harness_openai serves the harness_model fixture: override*"])


def test_scenario_marker_runs_each_matching_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        import pytest
        from harness.assertions import injected

        @pytest.mark.harness_scenario("{SCENARIO}/seed_*.yaml")
        def test_seed(harness_scenario):
            assert harness_scenario.passed
            assert harness_scenario.trace == injected("customer_c123_*")

        @pytest.mark.harness_scenario("{SCENARIO}/s*.yaml")
        def test_without_fixture():
            pass

        @pytest.mark.harness_scenario("{SCENARIO}/seed_average_spend.yaml")
        def test_model_from_marker(harness_model):
            assert harness_model.name == "scripted:seed_average_spend"
        """
    )
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "*test_seed?seed_average_spend? PASSED*",
            "*test_without_fixture?search_two_customers? PASSED*",
            "*test_without_fixture?seed_average_spend? PASSED*",
            "*test_without_fixture?shopping_cart? PASSED*",
        ]
    )


def test_scenario_marker_failure_and_check_false(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        broken="""
        name: broken
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
        """,
    )
    pytester.syspathinsert(Path(SCENARIO).parents[1])
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.harness_scenario("broken.yaml")
        def test_checked(harness_scenario):
            pass

        @pytest.mark.harness_scenario("broken.yaml", check=False)
        def test_unchecked(harness_scenario):
            assert not harness_scenario.passed
            assert harness_scenario.divergence.iteration == 1

        def test_fixture_without_marker(harness_scenario):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert (
        "scenario 'broken' failed: first divergence at iteration 1: expected injected=['order_*']"
        in out
    )
    assert "<- expected: injected=['order_*']" in out
    assert "needs @pytest.mark.harness_scenario('path.yaml')" in out
    pytester.makepyfile(
        test_nopath="""
        import pytest

        @pytest.mark.harness_scenario()
        def test_marker_without_path():
            pass
        """
    )
    nopath = pytester.runpytest("test_nopath.py")
    nopath.assert_outcomes(errors=1)
    nopath.stdout.fnmatch_lines(["*harness_scenario needs a path*"])
