"""Capability overrides and the static-tools provider simulation."""

from __future__ import annotations

import asyncio

import pytest
from wire_helpers import KINDS, TOOLS, Canned, model_request

from harness import (
    EntityDiscovery,
    StaticToolsChanged,
    UsageError,
    llm_tool,
    run,
    tool_provider,
)
from harness.loop import ModelCapabilities
from harness.messages import UserMessage
from harness.models import (
    CapabilitiesOverride,
    ScriptedModel,
    StaticToolsModel,
    call,
    reply,
    with_capabilities,
)


def test_with_capabilities_changes_only_what_is_asked() -> None:
    inner = Canned(KINDS["text"])
    model = with_capabilities(inner, streaming=True, parallel_tool_calls=False)
    assert isinstance(model, CapabilitiesOverride)
    assert model.capabilities == ModelCapabilities(streaming=True, parallel_tool_calls=False)
    assert model.name == inner.name
    assert model.request(model_request()) == KINDS["text"]
    assert "CapabilitiesOverride(" in repr(model)
    with pytest.raises(UsageError, match=r"unknown capabilities \['dynamic'\]; valid names"):
        with_capabilities(inner, dynamic=False)
    with pytest.raises(UsageError, match="expected a harness Model"):
        CapabilitiesOverride("nope", ModelCapabilities())  # type: ignore[arg-type]


def test_static_tools_model_declares_no_dynamic_tools() -> None:
    model = StaticToolsModel(Canned(KINDS["text"]))
    assert model.capabilities.supports_dynamic_tools is False
    assert repr(model).startswith("StaticToolsModel(")


def test_a_changed_tool_list_within_a_session_is_rejected() -> None:
    model = StaticToolsModel(Canned(KINDS["tool_call"], KINDS["text"], repeat=True))
    first = model_request(tools=TOOLS[:1])
    model.request(first)
    grown = model_request(
        [*first.messages, KINDS["tool_call"].message],  # the same conversation, one turn on
        tools=TOOLS,
        iteration=2,
    )
    with pytest.raises(StaticToolsChanged) as info:
        model.request(grown)
    error = info.value
    assert error.status == 400 and error.code == "static_tools_changed" and not error.retryable
    assert "added=['get_time']" in str(error) and "removed=[]" in str(error)
    assert "supports_dynamic_tools" in str(error)


def test_a_restarted_conversation_is_a_new_session() -> None:
    model = StaticToolsModel(Canned(KINDS["text"], repeat=True))
    model.request(model_request(tools=TOOLS[:1]))
    restarted = model_request([UserMessage(content="again, with more tools")], tools=TOOLS)
    model.request(restarted)  # the history does not extend the previous one: new session
    assert model.sessions == 2
    model.end_run(completed=True)
    asyncio.run(model.arequest(model_request(tools=TOOLS[:1])))
    assert model.sessions == 3


@tool_provider(prefix="box")
class Box:
    """Something that exposes a tool once found."""

    id = "b1"

    @llm_tool
    def open(self) -> str:
        """Open the box."""
        return "opened"


def find_box() -> Box:
    """Find the box."""
    return Box()


def test_a_run_whose_toolset_grows_fails_on_a_static_provider() -> None:
    model = StaticToolsModel(ScriptedModel([call("find_box"), call("box_b1_open"), reply("ok")]))
    with pytest.raises(StaticToolsChanged) as info:
        run(model, "go", tools=[find_box], strategies=[EntityDiscovery()])
    assert info.value.trace is not None
    assert [it.offered for it in info.value.trace] == [("find_box",), ("find_box", "box_b1_open")]
    same = StaticToolsModel(ScriptedModel([call("find_box"), reply("done")]))
    assert run(same, "go", tools=[find_box]).output == "done"
