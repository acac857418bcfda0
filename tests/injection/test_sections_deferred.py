"""``SectionDisclosure(defer=True)``: the summarised sections' tools are declared deferred
before the first request and opening a section reveals them (native deferral): the same
trace in process and through the fakes, the tools the provider sees never change, and no
restart even for a model that cannot take new tools."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from harness import ScriptedModel, ToolsInjected, call, reply
from harness.injection import SectionDisclosure, Visibility, run_with_sections
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    fake_anthropic_client,
    fake_openai_client,
)

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.documents import static_model, support_template  # noqa: E402

SCRIPT = [
    call("read_section", {"key": "orders"}),
    call("lookup_order", {"order_id": "A1"}),
    call("refund_order", {"order_id": "A1"}),
    reply("Order A1 is refunded."),
]

WAYS: dict[str, Any] = {
    "in-process": lambda m: m,
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
}


def _run(way: str, defer: bool = True) -> Any:
    script = ScriptedModel(list(SCRIPT))
    sections = SectionDisclosure(support_template(), defer=defer)
    result = run_with_sections(WAYS[way](script), "Refund A1", sections=sections)
    return result, script


@pytest.mark.parametrize("way", sorted(WAYS))
def test_opening_a_deferred_section_reveals_its_tools_without_editing_tools(way: str) -> None:
    result, _ = _run(way)
    baseline, _ = _run("in-process")
    assert result.output == "Order A1 is refunded."
    assert result.trace.to_dict() == baseline.trace.to_dict()
    first, second = result.trace.iterations[:2]
    assert {"lookup_order", "refund_order"} <= set(first.deferred)
    assert first.offered == ("read_section", "search_faq")
    assert {"lookup_order", "refund_order"} <= set(first.discovered)
    assert {"lookup_order", "refund_order"} <= set(second.offered)
    assert "read_section" in second.offered  # stays: the tools never change
    set_up = result.trace.events_of(ToolsInjected)
    assert set_up and not any(e.after_call for e in set_up)  # type: ignore[attr-defined]
    assert not first.injected  # revealed, not injected
    assert result.state["harness.sections"].overrides == {"orders": Visibility.FULL}


def test_the_anthropic_tools_never_change_with_deferred_sections() -> None:
    _, script = _run("anthropic")
    arrays = {tuple(t.name for t in r.tools) for r in script.requests}
    assert len(arrays) == 1 and len(script.requests) == 4


def test_without_defer_the_section_still_injects() -> None:
    result, _ = _run("in-process", defer=False)
    assert not result.trace.iterations[0].deferred
    assert set(result.trace.iterations[0].injected) == {"lookup_order", "refund_order"}


def test_a_model_without_dynamic_tools_needs_no_restart_when_deferred() -> None:
    sections = SectionDisclosure(support_template(), defer=True)
    result = run_with_sections(static_model(list(SCRIPT)), "Refund A1", sections=sections)
    assert result.output == "Order A1 is refunded." and result.trace.restarts == 0
