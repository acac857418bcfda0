"""A neutral request and the body the adapter sends for it are the same prompt to the cache
model: the incremental path (each message encoded once) equals reading the body."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.cost import EstimateTokenizer
from harness.cost._analysis import Interner
from harness.cost._record import RecordedRun
from harness.cost._sources import BodyPrompts, NeutralPrompts, format_module
from harness.loop import ModelRequest
from tests.formats.format_strategies import FORMATS, requests

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _shape(prompt: object) -> list[tuple[str, str, bool]]:
    blocks = prompt.blocks  # type: ignore[attr-defined]
    marks = set(prompt.breakpoints)  # type: ignore[attr-defined]
    return [(b.section, b.text, i in marks) for i, b in enumerate(blocks)]


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(data=st.data())
def test_the_neutral_path_reads_like_the_body_sent(name: str, data: st.DataObject) -> None:
    request: ModelRequest = data.draw(requests(name))
    interner = Interner(EstimateTokenizer())
    (neutral,) = NeutralPrompts(name, interner).prompts([RecordedRun(requests=(request,))])
    body = json.loads(json.dumps(format_module(name).request_body(request, model="m-1")))
    recorded = BodyPrompts(name, interner).prompt(body)
    assert _shape(neutral) == _shape(recorded)
    assert neutral.blocks == recorded.blocks  # interned: the same objects
    assert neutral.tool_count == recorded.tool_count


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(data=st.data())
def test_a_growing_history_is_encoded_like_a_fresh_one(name: str, data: st.DataObject) -> None:
    """The run state reuses earlier messages' blocks: the prompt of request k is the same
    whether requests 1..k-1 were seen before it or not."""
    request: ModelRequest = data.draw(requests(name))
    messages = list(request.messages)
    cut = data.draw(st.integers(1, len(messages)))
    first = ModelRequest(
        messages=messages[:cut],
        tools=request.tools,
        tool_names=request.tool_names,
        settings=request.settings,
        iteration=1,
    )
    second = ModelRequest(
        messages=messages,
        tools=request.tools,
        tool_names=request.tool_names,
        settings=request.settings,
        iteration=2,
    )
    interner = Interner(EstimateTokenizer())
    both = NeutralPrompts(name, interner).prompts([RecordedRun(requests=(first, second))])
    alone = NeutralPrompts(name, interner).prompts([RecordedRun(requests=(second,))])
    assert both[1].blocks == alone[0].blocks
