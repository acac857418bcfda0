"""OTLP JSON documents written by hand, for the reading tests."""

from __future__ import annotations

import json
from typing import Any

TRACE = "0af7651916cd43dd8448eb211c80319c"


def value(item: Any) -> dict[str, Any]:
    """A Python value as an OTLP ``AnyValue``."""
    if isinstance(item, bool):
        return {"boolValue": item}
    if isinstance(item, int):
        return {"intValue": str(item)}
    if isinstance(item, float):
        return {"doubleValue": item}
    if isinstance(item, str):
        return {"stringValue": item}
    if isinstance(item, (list, tuple)):
        return {"arrayValue": {"values": [value(v) for v in item]}}
    if isinstance(item, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": value(v)} for k, v in item.items()]}}
    raise TypeError(item)


def span(
    number: int,
    name: str,
    attributes: dict[str, Any],
    *,
    parent: int | None = None,
    trace: str = TRACE,
    start: int | None = None,
) -> dict[str, Any]:
    """A span numbered ``number`` (its id), started at ``number`` ms unless told."""
    data: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{number:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str((start if start is not None else number) * 1_000_000),
        "endTimeUnixNano": str(((start if start is not None else number) + 1) * 1_000_000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }
    if parent is not None:
        data["parentSpanId"] = f"{parent:016x}"
    return data


def document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}
        ]
    }


def as_json(data: Any) -> str:
    return json.dumps(data)
