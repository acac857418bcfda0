"""A property: the trace of a generated multi-turn session equals the trace of the same
turns replayed from its own recording (the real ``openai`` SDK against the loopback wire
fake, recorded by vcrpy, replayed by ``CassetteModel`` under the semantic matcher)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import openai
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import ReAct, Session, ToolChoiceSchedule
from harness.cassettes import CassetteModel
from harness.loop import Model, Trace
from harness.models import OpenAIChatModel, ScriptedModel, WireServer, call, calls, reply
from harness.testing import open_cassette
from harness.tools import Tool

NAMES = ("lookup", "convert", "notify")


def _tools() -> list[Tool]:
    return [
        Tool.from_schema(
            name,
            f"tool {name}",
            {"type": "object", "properties": {"n": {"type": "integer"}}},
            lambda args, name=name: f"{name}:{args.get('n', 0)}",
        )
        for name in NAMES
    ]


turn_plan = st.tuples(
    st.lists(  # model turns with calls: each one or two calls (tool index, argument)
        st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9)), min_size=1, max_size=2),
        max_size=2,
    ),
    st.text("abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool),
)
sessions = st.tuples(st.lists(turn_plan, min_size=1, max_size=3), st.booleans())


def _steps(turns: list[Any], react: bool) -> list[Any]:
    steps: list[Any] = []
    for number, (model_turns, answer) in enumerate(turns):
        if react:
            steps.append(reply(f"Thought {number}"))
        for made in model_turns:
            made_calls = [call(NAMES[i], {"n": n}) for i, n in made]
            steps.append(made_calls[0] if len(made_calls) == 1 else calls(*made_calls))
        steps.append(reply(answer))
    return steps


def _session(model: Model, react: bool) -> Session:
    if not react:
        return Session(model, tools=_tools())
    return Session(
        model,
        tools=_tools(),
        strategies=[ToolChoiceSchedule(["none", "auto"])],
        continuation=ReAct(),
    )


def _shape(trace: Trace) -> list[Any]:
    return [
        (
            it.turn,
            it.offered,
            tuple((c.name, c.arguments, c.content, c.is_error) for c in it.calls),
            it.answer,
            it.tool_choice,
            it.continued,
        )
        for it in trace
    ]


def _run(model: Model, turns: list[Any], react: bool) -> Trace:
    with _session(model, react) as session:
        for number in range(len(turns)):
            session.send(f"turn {number + 1}")
    return session.trace


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(sessions)
def test_a_session_replays_from_its_own_recording(plan: tuple[list[Any], bool]) -> None:
    turns, react = plan
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.yaml"
        with (
            WireServer(ScriptedModel(_steps(turns, react))) as server,
            open_cassette(path, record_mode="all", unused="ignore"),
            openai.OpenAI(base_url=server.url, api_key="sk-test", max_retries=0) as client,
        ):
            recorded = _run(OpenAIChatModel(client, "gpt-test"), turns, react)
        replay = CassetteModel(path)
        replayed = _run(replay, turns, react)
    assert _shape(replayed) == _shape(recorded)
    assert [t.index for t in replayed.turns] == list(range(1, len(turns) + 1))
    assert replay.position == len(recorded.iterations)  # every recorded request was made
