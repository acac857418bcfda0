"""Importing OpenTelemetry spans: 100,000 spans read into conversations and traces.

The file is made of agent traces copied with fresh trace and span ids until it holds
``--spans`` spans (one OpenTelemetry trace per copy, so one conversation each), written as
OTLP JSON Lines. By default they are traces as production exports them: content capture
off (the instrumentations' default: ``tests/traces/otlp/*-no-content`` and a ten-request
harness run exported with ``content=False``), each model request with the HTTP client
span an HTTP instrumentation adds under it. ``--content`` uses every file of
``tests/traces/otlp/`` (all flavours, content captured: histories repeated in every
request, a few kilobytes per span) and a harness run with content instead. The import is
what ``harness trace show`` does: read the file, group the spans into conversations, and
build each one's ``Trace`` and missing facts.

Target: 100,000 spans of the default mix in under 2 s (median of ``--repeats`` runs after
a warm-up). With content the cost follows the bytes (the JSON parse alone is about a
third); the figure is reported, not held to the target.

Run: ``python benchmarks/otel_import.py [--content]`` (``--quick``: 10,000 spans, one
repeat).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.traces import otel_conversations, otel_json  # noqa: E402

TARGET_SECONDS = 2.0


def _harness_run(content: bool) -> dict[str, Any]:
    from harness import ScriptedModel, call, llm_tool, reply, run

    @llm_tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id}: shipped"

    steps = [call("lookup", order_id=str(n)) for n in range(9)]
    result = run(ScriptedModel([*steps, reply("ok")]), "Where are my orders?", tools=[lookup])
    return otel_json(result, content=content)


def _with_http(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with an HTTP client span under each model request (what an HTTP
    client instrumentation adds in production)."""
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            http = []
            for span in scope["spans"]:
                if not span["name"].startswith(("chat", "openai.chat")):
                    continue
                http.append(
                    {
                        "traceId": span["traceId"],
                        "spanId": span["spanId"][:8] + "ffff" + span["spanId"][12:],
                        "parentSpanId": span["spanId"],
                        "name": "POST",
                        "kind": 3,
                        "startTimeUnixNano": span["startTimeUnixNano"],
                        "endTimeUnixNano": span["endTimeUnixNano"],
                        "attributes": [
                            {"key": "http.request.method", "value": {"stringValue": "POST"}},
                            {
                                "key": "url.full",
                                "value": {"stringValue": "https://api.invalid/v1/chat/completions"},
                            },
                            {"key": "server.address", "value": {"stringValue": "api.invalid"}},
                            {"key": "http.response.status_code", "value": {"intValue": "200"}},
                        ],
                    }
                )
            scope["spans"].extend(http)
    return document


def _templates(content: bool) -> list[dict[str, Any]]:
    """One OTLP document per source."""
    folder = ROOT / "tests" / "traces" / "otlp"
    chosen = sorted(folder.glob("*.otlp.jsonl"))
    if not content:
        chosen = [p for p in chosen if "no-content" in p.name]
    documents = [_harness_run(content)]
    for path in chosen:
        documents.extend(json.loads(line) for line in path.read_text("utf-8").splitlines() if line)
    return documents if content else [_with_http(d) for d in documents]


def _copy(document: dict[str, Any], number: int) -> dict[str, Any]:
    """``document`` with ids of its own (a new trace)."""
    text = json.dumps(document)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                text = text.replace(span["traceId"], f"{number:032x}")
                old = span["spanId"]
                text = text.replace(old, f"{number % 65536:04x}{old[4:]}")
    copied: dict[str, Any] = json.loads(text)
    return copied


def _spans(document: dict[str, Any]) -> int:
    return sum(len(s["spans"]) for r in document["resourceSpans"] for s in r["scopeSpans"])


def make_file(path: Path, spans: int, *, content: bool = False) -> tuple[int, int]:
    """Write at least ``spans`` spans to ``path``; the spans and bytes written."""
    templates = _templates(content)
    written = 0
    number = 1
    with path.open("w", encoding="utf-8") as file:
        while written < spans:
            document = _copy(templates[number % len(templates)], number)
            file.write(json.dumps(document, separators=(",", ":")) + "\n")
            written += _spans(document)
            number += 1
    return written, path.stat().st_size


def import_file(path: Path) -> tuple[int, int]:
    """What ``harness trace show`` reads: conversations, traces, missing facts."""
    conversations = otel_conversations(path)
    requests = 0
    for conversation in conversations:
        requests += len(conversation.trace().iterations)
        conversation.missing()
    return len(conversations), requests


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10,000 spans, one repeat")
    parser.add_argument("--content", action="store_true", help="traces with content")
    args = parser.parse_args(argv)
    spans, repeats = (10_000, 1) if args.quick else (args.spans, args.repeats)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.otlp.jsonl"
        count, size = make_file(path, spans, content=args.content)
        import_file(path)  # warm-up
        times, cpu = [], []
        for _ in range(repeats):
            start, started = time.perf_counter(), time.process_time()
            conversations, requests = import_file(path)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - started)
    median = statistics.median(times)
    if args.content:
        verdict = "content: reported, no target"
    else:
        held = median <= TARGET_SECONDS * count / 100_000
        verdict = f"{'ok' if held else 'over target'}: {TARGET_SECONDS} s per 100,000 spans"
    print(
        f"{count} spans ({size / 1e6:.1f} MB): {conversations} conversations, {requests} "
        f"requests; import median {median:.2f} s of {repeats}, CPU {statistics.median(cpu):.2f} s "
        f"({verdict})"
    )
    return {"spans": count, "seconds": median, "conversations": conversations}


if __name__ == "__main__":
    main()
