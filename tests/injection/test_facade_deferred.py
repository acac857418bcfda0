"""``Facade(defer=True)``: the inner tools are declared deferred before the first request
and unfolding reveals them (a ``tool_reference`` on Anthropic, the tools array grows only
on Chat Completions, which has no deferral): the same trace in process and through the
fakes, and the tools array the provider sees never changes where deferral is native."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ScriptedModel, call, reply, run
from harness.injection import facade
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    fake_anthropic_client,
    fake_openai_client,
)
from harness.tools import llm_tool


@llm_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@llm_tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return "written"


WAYS: dict[str, Any] = {
    "in-process": lambda m: m,
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
}


def _run(way: str, defer: bool) -> Any:
    files = facade("files", "Work with files.", [read_file, write_file], defer=defer)
    script = ScriptedModel([call("files"), call("read_file", {"path": "a.txt"}), reply("ok")])
    return run(WAYS[way](script), "read a.txt", tools=[files])


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_deferred_facade_reveals_its_tools_without_editing_tools(way: str) -> None:
    result = _run(way, defer=True)
    baseline = _run("in-process", defer=True)
    assert result.output == "ok"
    assert result.trace.to_dict() == baseline.trace.to_dict()
    first, second = result.trace.iterations[:2]
    assert set(first.deferred) == {"read_file", "write_file", "files_context"}
    assert first.offered == ("files",)
    assert set(first.discovered) == {"read_file", "write_file", "files_context"}
    assert not first.injected  # revealed, not injected
    assert "read_file" in second.offered and not second.deferred


def test_without_defer_the_facade_still_edits_tools() -> None:
    first = _run("in-process", defer=False).trace.iterations[0]
    assert not first.deferred and set(first.injected) == {
        "files_context",
        "read_file",
        "write_file",
    }


def test_the_anthropic_tools_array_never_changes_with_a_deferred_facade() -> None:
    from harness.models import ScriptedModel as Scripted

    script = Scripted([call("files"), call("read_file", {"path": "a.txt"}), reply("ok")])
    files = facade("files", "Work with files.", [read_file, write_file], defer=True)
    run(AnthropicModel(fake_anthropic_client(script), "claude-test"), "go", tools=[files])
    arrays = {tuple(t.name for t in r.tools) for r in script.requests}
    assert len(arrays) == 1 and len(script.requests) == 3
