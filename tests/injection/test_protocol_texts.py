"""Exact protocol texts and fields: events, errors, metrics and logs (issue 14 section 5)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from harness import (
    InvalidToolProvider,
    ProviderDiscovered,
    ScriptedModel,
    ToolsInjected,
    VisibilityExpansionRequired,
    call,
    llm_tool,
    reply,
    run,
)
from harness.injection import (
    ALREADY_EXPANDED,
    SUMMARY_SEPARATOR,
    SUMMARY_SUFFIX,
    EntityDiscovery,
    run_with_sections,
    tool_provider,
)
from harness.loop import METRICS, configure_metrics, record_metric
from harness.tools import Tool

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.documents import static_model, support_sections, support_template  # noqa: E402

REFUND = [
    call("read_section", {"key": "orders"}),
    call("lookup_order", {"order_id": "A1"}),
    reply("ok"),
]


# -- read_section texts ---------------------------------------------------------------------


def test_the_summary_suffix_follows_a_dashed_line() -> None:
    assert SUMMARY_SEPARATOR == "\n---\n"
    text = support_template().render()
    expected = (
        "How to look up and refund orders.\n---\n[This section is summarized. To view full "
        'content, call `read_section` with key "orders".]'
    )
    assert expected in text
    assert SUMMARY_SUFFIX.format(key="orders") in expected


def test_already_expanded_says_so_and_adds_no_tools() -> None:
    model = ScriptedModel([call("read_section", {"key": "faq"}), reply("x")])
    result = run_with_sections(model, "go", sections=support_template())
    (read,) = result.trace.calls
    assert ALREADY_EXPANDED == "Section is already expanded."
    assert read.content.startswith("Section is already expanded.\n\n# FAQ")
    assert [c for c in result.trace.changes if c.after_call == "read_section"] == []


def test_visibility_expansion_required_carries_its_fields() -> None:
    with pytest.raises(VisibilityExpansionRequired) as info:
        run(static_model(list(REFUND)), "Refund", strategies=[support_sections()])
    error = info.value
    assert error.requested_overrides == {"orders": "full"}
    assert error.requested_overrides is error.overrides
    assert error.section_keys == ("orders",) and "does not accept new tools" in error.reason


# -- ToolsInjected.timestamp ----------------------------------------------------------------


def test_tools_injected_carries_a_timestamp_that_equality_and_to_dict_ignore() -> None:
    before = time.time()
    result = run_with_sections(ScriptedModel(list(REFUND)), "go", sections=support_template())
    after = time.time()
    injected = result.trace.events_of(ToolsInjected)
    assert injected and all(before <= e.timestamp <= after for e in injected)  # type: ignore[attr-defined]
    first = injected[0]
    assert isinstance(first, ToolsInjected)
    other = ToolsInjected(
        iteration=first.iteration,
        tool_names=first.tool_names,
        strategy=first.strategy,
        reason=first.reason,
        after_call=first.after_call,
        section_key=first.section_key,
        timestamp=0.0,
    )
    assert other == first
    assert "timestamp" in first.to_dict()
    assert all("timestamp" not in e for e in result.trace.to_dict()["events"])


# -- metrics --------------------------------------------------------------------------------


@pytest.fixture
def reader() -> Iterator[InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    configure_metrics(MeterProvider(metric_readers=[reader]))
    try:
        yield reader
    finally:
        configure_metrics()


def _sums(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    totals: dict[str, int] = {}
    if data is None:
        return totals
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "harness"
            for metric in scope.metrics:
                totals[metric.name] = sum(int(p.value) for p in metric.data.data_points)
    return totals


def test_counters_are_exported_under_stable_names(reader: InMemoryMetricReader) -> None:
    assert set(METRICS) == {"tools_injected", "visibility_restarts", "dynamic_expansions"}
    dynamic = run_with_sections(ScriptedModel(list(REFUND)), "go", sections=support_template())
    run_with_sections(static_model(list(REFUND)), "go", sections=support_template())
    sums = _sums(reader)
    assert sums["dynamic_expansions"] == 1  # the dynamic run opened "orders" without restart
    assert sums["visibility_restarts"] == 1  # the static run restarted once
    injected_by_runs = len(dynamic.trace.injected)
    assert sums["tools_injected"] >= injected_by_runs > 0


def test_metrics_without_opentelemetry_count_nothing_and_do_not_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import fails
    configure_metrics()
    try:
        record_metric("tools_injected", 2, strategy="x")
        result = run_with_sections(ScriptedModel(list(REFUND)), "go", sections=support_template())
        assert result.output == "ok"
    finally:
        monkeypatch.undo()
        configure_metrics()


def test_a_broken_meter_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def get_meter(self, *args: Any) -> Any:
            raise RuntimeError("exporter down")

    configure_metrics(Broken())
    try:
        with caplog.at_level(logging.ERROR, logger="harness"):
            record_metric("visibility_restarts")
        assert "could not record metric visibility_restarts" in caplog.text
    finally:
        configure_metrics()


def test_a_zero_amount_records_nothing(reader: InMemoryMetricReader) -> None:
    record_metric("visibility_restarts", 0)
    assert "visibility_restarts" not in _sums(reader)
    record_metric("visibility_restarts", 2)
    assert _sums(reader)["visibility_restarts"] == 2


def test_unknown_metric_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown metric 'tool_injected'"):
        record_metric("tool_injected")


# -- logging --------------------------------------------------------------------------------


@llm_tool
def fail_with_secret(token: str) -> str:
    """Fails, quoting its argument."""
    raise RuntimeError(f"bad token {token}")


def test_the_harness_logger_is_silent_by_default() -> None:
    root = logging.getLogger("harness")
    # only a NullHandler: no output of its own, and logging's last resort stays unused
    assert [type(h) for h in root.handlers] == [logging.NullHandler]
    assert root.level == logging.NOTSET
    assert all(not logging.getLogger(name).handlers for name in ("harness.loop", "harness.tools"))


def test_tool_start_completion_errors_and_injections_are_logged_with_timings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(
        [
            call("read_section", {"key": "orders"}),
            call("fail_with_secret", token="sk-live-1234567890"),
            reply("ok"),
        ]
    )
    with caplog.at_level(logging.DEBUG, logger="harness"):
        run_with_sections(
            model, "go", sections=support_template(), tools=[Tool.from_function(fail_with_secret)]
        )
    text = caplog.text
    assert "tool 'read_section' (call" in text and "started" in text
    assert "completed in" in text and " ms (1 attempt(s))" in text
    assert "tool 'fail_with_secret'" in text and "failed in" in text
    assert "exception, RuntimeError" in text
    assert "sections injected lookup_order" in text
    assert "sk-live-1234567890" not in text  # arguments and messages are never logged
    assert {r.name for r in caplog.records} <= {"harness.loop", "harness.tools"}


def test_an_async_tool_start_is_logged_as_async(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    from harness import arun

    @llm_tool
    async def later() -> str:
        """Async."""
        return "done"

    with caplog.at_level(logging.DEBUG, logger="harness"):
        asyncio.run(arun(ScriptedModel([call("later"), reply("x")]), "go", tools=[later]))
    assert "async tool 'later' (call" in caplog.text


# -- discovery events and InvalidToolProvider -----------------------------------------------


@tool_provider(prefix="acct")
class Account:
    def __init__(self, id: Any) -> None:
        self.id = id

    @llm_tool
    def balance(self) -> int:
        """The balance."""
        return 1


@llm_tool
def accounts() -> list[Account]:
    """Two accounts."""
    return [Account("a1"), Account("a2")]


def test_discovery_events_carry_the_count_and_the_qualified_class_name() -> None:
    model = ScriptedModel([call("accounts"), reply("x")])
    result = run(model, "go", tools=[accounts], strategies=[EntityDiscovery()])
    events = result.trace.events_of(ProviderDiscovered)
    assert len(events) == 2
    for event in events:
        assert isinstance(event, ProviderDiscovered)
        assert event.provider == "Account"
        assert event.provider_class == f"{__name__}.Account"
        assert event.provider_count == 2


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: tool_provider(3), "not_a_class"),  # type: ignore[call-overload]
        (lambda: tool_provider(type("Empty", (), {})), "no_tool_methods"),
    ],
)
def test_invalid_tool_provider_carries_class_and_reason(make: Any, reason: str) -> None:
    with pytest.raises(InvalidToolProvider) as info:
        make()
    assert info.value.reason == reason
    if reason == "no_tool_methods":
        assert info.value.provider_class is not None
        assert info.value.provider_class.__name__ == "Empty"
    else:
        assert info.value.provider_class is None


@pytest.mark.parametrize(
    ("bad_id", "reason"), [(None, "none_id"), ([1], "bad_id_type"), ("", "empty_id")]
)
def test_a_bad_provider_id_names_the_class_and_the_reason(bad_id: Any, reason: str) -> None:
    @llm_tool
    def one() -> Account:
        """One account."""
        return Account(bad_id)

    model = ScriptedModel([call("one"), reply("x")])
    with pytest.raises(InvalidToolProvider) as info:
        run(model, "go", tools=[one], strategies=[EntityDiscovery()])
    assert info.value.provider_class is Account and info.value.reason == reason


def test_nothing_is_printed_unless_the_application_configures_logging() -> None:
    """A failing tool logs a warning; with logging unconfigured it must stay silent
    (no output through logging's last-resort handler)."""
    import subprocess
    import sys

    code = (
        "from harness import ScriptedModel, call, llm_tool, reply, run\n"
        "@llm_tool\n"
        "def boom() -> str:\n"
        "    'Fails.'\n"
        "    raise RuntimeError('broken')\n"
        "run(ScriptedModel([call('boom'), reply('done')]), 'hi', tools=[boom])\n"
        "print('ran')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ran"
    assert out.stderr == ""
