"""Properties of what the loop shows: bounded unknown-tool messages, valid generated names,
encodable result text, cyclic values serialised."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from harness.loop._unknown import CLOSEST, LIST_ALL, closest_names, unknown_tool_message
from harness.tools import ToolResult, make_name, readable_part, serialize_for_model

NAMES = st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True)


@given(st.text(max_size=300))
def test_readable_part_is_a_stable_non_empty_word(text: str) -> None:
    part = readable_part(text)
    assert re.fullmatch(r"[A-Za-z0-9_]+", part)
    assert readable_part(text) == part
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", make_name("customer", part, "get_total"))


@settings(max_examples=50)
@given(st.text(max_size=500), st.lists(NAMES, max_size=200, unique=True))
def test_unknown_tool_messages_are_bounded(name: str, offered: list[str]) -> None:
    message = unknown_tool_message(name, offered)
    if len(offered) > LIST_ALL:
        assert len(message) <= 300 + 200 * 4 + CLOSEST * 70  # never the whole list
        assert len(closest_names(name, offered)) <= CLOSEST
    else:
        assert all(n in message for n in offered)


@given(st.text())
def test_tool_result_text_is_always_encodable(text: str) -> None:
    result = ToolResult(content=text, user_content=text)
    result.content.encode("utf-8")
    assert result.user_content is not None
    result.user_content.encode("utf-8")


@st.composite
def cyclic_graphs(draw: st.DrawFn) -> object:
    """Dicts and lists with random back-references to earlier containers."""
    nodes: list[dict[str, object] | list[object]] = []
    for _ in range(draw(st.integers(1, 8))):
        node: dict[str, object] | list[object] = draw(st.sampled_from([{}, []])).copy()
        nodes.append(node)
    for node in nodes:
        for _ in range(draw(st.integers(0, 3))):
            target = draw(st.sampled_from([*nodes, 1, "x", None]))
            if isinstance(node, dict):
                node[f"k{len(node)}"] = target
            else:
                node.append(target)
    return nodes[0]


@given(cyclic_graphs())
def test_any_cyclic_graph_serialises(value: object) -> None:
    text = serialize_for_model(value)
    assert isinstance(text, str) and text
