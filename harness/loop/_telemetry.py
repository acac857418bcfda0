"""Counters exported through OpenTelemetry (optional), and the ``harness`` logger.

Metrics: when ``opentelemetry-api`` is importable (the ``otel`` extra), these counters
are recorded on the meter ``harness`` of the global meter provider (or of the one given
to ``configure_metrics``). Without it, counting costs one dictionary lookup. The names
are stable:

=======================  ===========================================================
``tools_injected``       tools added to a run's toolset (attribute ``strategy``)
``visibility_restarts``  runs restarted to show prompt sections in full
``dynamic_expansions``   prompt sections opened without a restart
=======================  ===========================================================

Logging: the loop, the strategies and the registry log under the ``harness`` logger
(``logging.getLogger("harness")`` and its children). The library sets no level and adds
only a ``NullHandler`` (the standard library's advice for libraries), so nothing is
printed, not even warnings through logging's last-resort handler, unless the
application configures logging.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["METRICS", "configure_metrics", "logger", "record_metric"]

logger = logging.getLogger("harness")
"""The library's logger; ``harness.loop``, ``harness.injection`` ... are its children."""
logger.addHandler(logging.NullHandler())

METRICS: dict[str, str] = {
    "tools_injected": "Tools added to a run's toolset",
    "visibility_restarts": "Runs restarted to show prompt sections in full",
    "dynamic_expansions": "Prompt sections opened without a restart",
}
"""The stable metric names and their descriptions."""

_state: dict[str, Any] = {"provider": None, "counters": {}, "meter": None}


def configure_metrics(meter_provider: Any = None) -> None:
    """Record the counters on ``meter_provider`` (``None``: the global one, the default)."""
    _state["provider"] = meter_provider
    _state["meter"] = None
    _state["counters"] = {}


def _counter(name: str) -> Any:
    counters: dict[str, Any] = _state["counters"]
    if name in counters:
        return counters[name]
    meter = _state["meter"]
    if meter is None:
        try:
            from opentelemetry import metrics
        except ImportError:  # the otel extra is not installed: count nothing
            counters[name] = None
            return None
        from harness._version import __version__

        provider = _state["provider"]
        if provider is None:
            meter = metrics.get_meter("harness", __version__)
        else:
            meter = provider.get_meter("harness", __version__)
        _state["meter"] = meter
    counter = meter.create_counter(name, unit="1", description=METRICS[name])
    counters[name] = counter
    return counter


def record_metric(name: str, amount: int = 1, **attributes: str) -> None:
    """Add ``amount`` to the counter ``name`` (one of ``METRICS``), when OpenTelemetry is
    available; never raises for a broken meter (metrics must not end a run)."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known metrics: {sorted(METRICS)}")
    if amount <= 0:
        return
    try:
        counter = _counter(name)
        if counter is not None:
            counter.add(amount, attributes)
    except Exception:  # a broken exporter or meter: log it, keep the run going
        logger.exception("could not record metric %s", name)
