"""``harness serve`` against a minimal reference server on loopback, through the official SDKs.

Both servers run as subprocesses of this script (the same process tree), each on
127.0.0.1; the clients run here:

- ``harness serve --repeat`` serving a one-step scenario (the model calls
  ``get_weather`` with ``{"city": "Paris"}``), in every wire format it serves;
- the reference: one asyncio loop, ``TCP_NODELAY``, a canned answer per route (the
  same bytes the harness fake gives, encoded once at start), written in one send
  (a stream: headers and first event in one send, then one send per event);
- for MCP, ``harness serve --mcp`` serving a scenario's ``get_weather`` tool against a
  reference answering ``server/discover``, ``tools/list`` and ``tools/call`` with
  canned JSON-RPC results.

Per format (``openai`` for Chat Completions and Responses, ``anthropic`` for Messages,
``mcp`` for MCP): p50 and p99 of a tool-call round trip (sequential, one keep-alive
client, the two servers interleaved request by request), the time to the first
streamed event and to the last (p50), and requests per second with 1, 8 and 64
concurrent clients (one async SDK client per server, whose pool keeps one keep-alive
connection per concurrent task; for MCP one SDK session per client, in the SDK's default
connect mode). Every answer is checked (the tool call, its arguments, the tool's
result). A wire format the fake gains is timed by adding its ``Driver``.

Targets (issue 37): round trip p50 and first streamed event within 2x of the
reference's, 64-client throughput at least 0.5x the reference's. No timing
assertion is made here: run ``python benchmarks/serve_latency.py`` before and after
a change, on the same machine under the same load, and compare (``--quick`` for a
smoke run, ``--formats`` to time a few formats only).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

ROUND_TRIP_TARGET = 2.0
"""Round trip p50 and first streamed event: at most this factor of the reference's."""
THROUGHPUT_TARGET = 0.5
"""64-client requests per second: at least this factor of the reference's."""
CONCURRENCY = (1, 8, 64)

PROMPT = "What's the weather in Paris?"
ARGUMENTS = {"city": "Paris"}
TOOL_RESULT = "sunny in Paris"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SCENARIO = """
name: serve_latency
prompt: What's the weather in Paris?
tools:
  - serve_latency_tools:get_weather
model:
  steps:
    - call: get_weather
      args: {city: Paris}
"""
TOOLS_MODULE = '''
def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"
'''

# -- the SDK calls, one driver per format ---------------------------------------------------


def _check_call(name: Any, arguments: Any, where: str) -> None:
    parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    if name != "get_weather" or parsed != ARGUMENTS:
        raise RuntimeError(f"{where}: expected get_weather({ARGUMENTS}), got {name}({arguments})")


class Driver(NamedTuple):
    """One wire format as its official SDK drives it."""

    name: str
    route: str
    """The path the format is served on."""
    body: dict[str, Any]
    """The request the SDK sends (without ``stream``): the reference's canned answer is the
    harness fake's answer to it."""
    sync_client: Callable[[str], Any]
    """A client for the server's root URL (``http://127.0.0.1:PORT``)."""
    async_client: Callable[[str], Any]
    round_trip: Callable[[Any], None]
    """One tool-call request, its answer checked."""
    stream: Callable[[Any], tuple[float, float]]
    """One streamed tool-call request: seconds to the first event and to the last."""
    around_trip: Callable[[Any], Awaitable[None]]
    """``round_trip`` with the async client."""


def _openai(base: str, *, asynchronous: bool = False) -> Any:
    import openai

    factory = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return factory(base_url=f"{base}/v1", api_key="test", max_retries=0, timeout=10)


def _anthropic(base: str, *, asynchronous: bool = False) -> Any:
    import anthropic

    factory = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    return factory(base_url=base, api_key="test", max_retries=0, timeout=10)


CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
CHAT_ARGS: dict[str, Any] = {
    "model": "gpt-test",
    "messages": [{"role": "user", "content": PROMPT}],
    "tools": CHAT_TOOLS,
}
RESPONSES_ARGS: dict[str, Any] = {
    "model": "gpt-test",
    "input": PROMPT,
    "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
}
MESSAGES_ARGS: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": PROMPT}],
    "tools": [{"name": "get_weather", "input_schema": SCHEMA}],
}


def _chat_check(completion: Any) -> None:
    call = completion.choices[0].message.tool_calls[0]
    _check_call(call.function.name, call.function.arguments, "chat")


def _chat(client: Any) -> None:
    _chat_check(client.chat.completions.create(**CHAT_ARGS))


async def _achat(client: Any) -> None:
    _chat_check(await client.chat.completions.create(**CHAT_ARGS))


def _chat_stream(client: Any) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    name, arguments = None, ""
    for chunk in client.chat.completions.create(**CHAT_ARGS, stream=True):
        first = first or time.perf_counter()
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            name = call.function.name or name
            arguments += call.function.arguments or ""
    _check_call(name, arguments, "chat stream")
    assert first is not None
    return first - started, time.perf_counter() - started


def _responses_check(response: Any) -> None:
    (call,) = [item for item in response.output if item.type == "function_call"]
    _check_call(call.name, call.arguments, "responses")


def _responses(client: Any) -> None:
    _responses_check(client.responses.create(**RESPONSES_ARGS))


async def _aresponses(client: Any) -> None:
    _responses_check(await client.responses.create(**RESPONSES_ARGS))


def _responses_stream(client: Any) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    completed = None
    for event in client.responses.create(**RESPONSES_ARGS, stream=True):
        first = first or time.perf_counter()
        if event.type == "response.completed":
            completed = event.response
    if completed is None:
        raise RuntimeError("responses stream: no response.completed event")
    _responses_check(completed)
    assert first is not None
    return first - started, time.perf_counter() - started


def _messages_check(message: Any) -> None:
    (block,) = [b for b in message.content if b.type == "tool_use"]
    _check_call(block.name, block.input, "messages")


def _messages(client: Any) -> None:
    _messages_check(client.messages.create(**MESSAGES_ARGS))


async def _amessages(client: Any) -> None:
    _messages_check(await client.messages.create(**MESSAGES_ARGS))


def _messages_stream(client: Any) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    name, arguments = None, ""
    for event in client.messages.create(**MESSAGES_ARGS, stream=True):
        first = first or time.perf_counter()
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            name = event.content_block.name
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            arguments += event.delta.partial_json
    _check_call(name, arguments, "messages stream")
    assert first is not None
    return first - started, time.perf_counter() - started


DRIVERS = {
    "chat": Driver(
        "chat",
        "/v1/chat/completions",
        CHAT_ARGS,
        _openai,
        lambda base: _openai(base, asynchronous=True),
        _chat,
        _chat_stream,
        _achat,
    ),
    "responses": Driver(
        "responses",
        "/v1/responses",
        RESPONSES_ARGS,
        _openai,
        lambda base: _openai(base, asynchronous=True),
        _responses,
        _responses_stream,
        _aresponses,
    ),
    "messages": Driver(
        "messages",
        "/v1/messages",
        MESSAGES_ARGS,
        _anthropic,
        lambda base: _anthropic(base, asynchronous=True),
        _messages,
        _messages_stream,
        _amessages,
    ),
}
"""The model formats (a format the fake gains adds its driver here); ``mcp`` is timed by
its own functions below."""

# -- the reference servers -------------------------------------------------------------------


class _Reference(asyncio.Protocol):
    """Minimal HTTP/1.1 keep-alive server: ``answer(request line, body)`` gives the sends."""

    def __init__(self, answer: Callable[[str, bytes], list[bytes]]) -> None:
        self.answer = answer
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = bytes(self.buffer[end + 4 : end + 4 + length])
            del self.buffer[: end + 4 + length]
            assert self.transport is not None
            for piece in self.answer(head[0], body):
                self.transport.write(piece)


def _head(status: str, headers: dict[str, str], length: int) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join([*lines, f"content-length: {length}", "", ""])).encode("latin-1")


def _model_answers() -> Callable[[str, bytes], list[bytes]]:
    """Canned answers per (route, stream): the bytes the harness fake gives, made once."""
    from harness.loop import Model, ModelRequest, ModelResponse
    from harness.messages import AssistantMessage, ToolCall
    from harness.models import WireServer

    class Weather(Model):
        name = "reference"

        def request(self, request: ModelRequest) -> ModelResponse:
            call = ToolCall(id="call_1", name="get_weather", arguments=json.dumps(ARGUMENTS))
            message = AssistantMessage(tool_calls=(call,))
            return ModelResponse(message=message, finish_reason="tool_calls")

    app = WireServer(Weather()).app
    canned: dict[tuple[str, bool], list[bytes]] = {}
    for driver in DRIVERS.values():
        for stream in (False, True):
            body = json.dumps({**driver.body, "stream": stream}).encode()
            reply = app.handle("POST", driver.route, body, {})
            if reply.status != 200:
                raise RuntimeError(
                    f"reference {driver.name}: the fake answered {reply.body[:300]!r}"
                )
            head = _head("200 OK", dict(reply.headers), len(reply.body))
            sends = [head + reply.chunks[0], *reply.chunks[1:]] if stream else [head + reply.body]
            canned[driver.route, stream] = sends

    def answer(line: str, body: bytes) -> list[bytes]:
        path = line.split(" ")[1]
        return canned[path, json.loads(body).get("stream") is True]

    return answer


def _mcp_answers() -> Callable[[str, bytes], list[bytes]]:
    """Canned JSON-RPC results (the 2026-07-28 protocol's stateless POSTs)."""
    info = {"io.modelcontextprotocol/serverInfo": {"name": "reference", "version": ""}}
    tool = {"name": "get_weather", "description": "The weather of a city.", "inputSchema": SCHEMA}
    results: dict[str, Any] = {
        "server/discover": {
            "cacheScope": "private",
            "capabilities": {"tools": {"listChanged": False}},
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "ttlMs": 0,
            "_meta": info,
        },
        "tools/list": {
            "cacheScope": "private",
            "resultType": "complete",
            "tools": [tool],
            "ttlMs": 0,
        },
        "tools/call": {
            "content": [{"type": "text", "text": TOOL_RESULT}],
            "isError": False,
            "resultType": "complete",
            "_meta": info,
        },
    }
    headers = {"content-type": "application/json"}

    def answer(line: str, body: bytes) -> list[bytes]:
        if not line.startswith("POST "):
            return [_head("405 Method Not Allowed", {}, 0)]
        message = json.loads(body)
        if "id" not in message:  # a notification
            return [_head("202 Accepted", {}, 0)]
        result = results[message["method"]]
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        return [_head("200 OK", headers, len(data)) + data]

    return answer


def serve_reference(kind: str) -> None:
    """Run a reference server (``model`` or ``mcp``) until killed; prints its URL."""
    answer = _model_answers() if kind == "model" else _mcp_answers()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Reference(answer), "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(f"URL=http://127.0.0.1:{port}", flush=True)
        await server.serve_forever()

    asyncio.run(main())


# -- the processes ---------------------------------------------------------------------------


def _start(command: list[str], prefix: str, cwd: Path | None = None) -> tuple[Any, str]:
    """Start a server process; it and the URL it printed on a line starting with ``prefix``."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=cwd)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(prefix):
            return process, line.strip().split("=", 1)[1]
    process.wait(10)
    raise RuntimeError(f"{command[:4]} exited ({process.returncode}) without printing its URL")


def _stop(*processes: Any) -> None:
    """End each process (killed if it does not stop within 10 s)."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def start_harness(folder: Path, *, mcp: bool) -> tuple[Any, str]:
    """``harness serve`` (``--mcp``) on the benchmark scenario; the process and its root URL."""
    (folder / "serve_latency.yaml").write_text(SCENARIO, encoding="utf-8")
    (folder / "serve_latency_tools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    launch = "import sys; from harness.cli import main; sys.argv[0] = 'harness'; main()"
    command = [sys.executable, "-c", launch, "serve", "-s", "serve_latency.yaml", "--repeat"]
    if mcp:
        return _start([*command[:-1], "--mcp"], "MCP_URL=", cwd=folder)
    process, url = _start(command, "OPENAI_BASE_URL=", cwd=folder)
    return process, url.removesuffix("/v1")


def start_reference(kind: str) -> tuple[Any, str]:
    process, url = _start([sys.executable, __file__, "--reference", kind], "URL=")
    return process, url + ("/mcp" if kind == "mcp" else "")


# -- measuring -------------------------------------------------------------------------------


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def interleaved(calls: dict[str, Callable[[], Any]], count: int) -> dict[str, list[Any]]:
    """Each call ``count`` times, taking turns (so a noisy moment hits both alike)."""
    results: dict[str, list[Any]] = {label: [] for label in calls}
    for _ in range(count):
        for label, call in calls.items():
            results[label].append(call())
    return results


def timed(call: Callable[[], None]) -> Callable[[], float]:
    def run() -> float:
        started = time.perf_counter()
        call()
        return time.perf_counter() - started

    return run


Session = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens one client: entered and left in the task that uses it (the MCP SDK needs that)."""


async def throughput(
    session: Session, call: Callable[[Any], Awaitable[None]], clients: int, seconds: float
) -> float:
    """Requests per second of ``clients`` concurrent clients calling in a loop for
    ``seconds``, once each has made a first call (its connection open, code warm)."""
    warm = asyncio.Event()
    window: list[float] = []
    finished: list[float] = []
    done = 0

    async def one() -> None:
        nonlocal done
        async with session() as client:
            await call(client)
            window.append(time.perf_counter())
            if len(window) == clients:
                window.append(time.perf_counter() + seconds)
                warm.set()
            await warm.wait()
            while time.perf_counter() < window[-1]:
                await call(client)
                done += 1
            finished.append(time.perf_counter())

    await asyncio.gather(*(one() for _ in range(clients)))
    return done / (max(finished) - window[-2])


Rates = dict[str, dict[int, list[float]]]
"""Requests per second per server and concurrency, one value per round."""


async def rates(
    sessions: Mapping[str, Session],
    call: Callable[[Any], Awaitable[None]],
    seconds: float,
    rounds: int,
) -> Rates:
    """Requests per second per server and concurrency, the servers taking turns."""
    totals: Rates = {label: {n: [] for n in CONCURRENCY} for label in sessions}
    for _ in range(rounds):
        for clients in CONCURRENCY:
            for label, session in sessions.items():
                totals[label][clients].append(await throughput(session, call, clients, seconds))
    return totals


Table = dict[str, dict[str, float]]
"""Per format: ``harness``, ``reference`` and ``ratio``, each a value per metric."""


def compare(trips: dict[str, list[float]], per_rate: Rates, streams: Any = None) -> Table:
    """The metrics of both servers and their ratios: latencies the ratio of the p50s (of
    requests taking turns), rates the median over rounds of each round's ratio (the two
    runs of a round are adjacent, so a noisy moment hits both)."""
    table: Table = {}
    for label in ("harness", "reference"):
        metrics = {
            "round trip p50 ms": _ms(statistics.median(trips[label])),
            "round trip p99 ms": _ms(_p99(trips[label])),
        }
        if streams is not None:
            metrics["first event p50 ms"] = _ms(statistics.median(f for f, _ in streams[label]))
            metrics["last event p50 ms"] = _ms(statistics.median(e for _, e in streams[label]))
        for n in CONCURRENCY:
            metrics[f"rps {n} clients"] = round(statistics.median(per_rate[label][n]), 1)
        table[label] = metrics
    ours, ref = table["harness"], table["reference"]
    table["ratio"] = {metric: ours[metric] / ref[metric] for metric in ours}
    for n in CONCURRENCY:
        pairs = zip(per_rate["harness"][n], per_rate["reference"][n], strict=True)
        table["ratio"][f"rps {n} clients"] = statistics.median(h / r for h, r in pairs)
    return table


async def _model_rates(bases: dict[str, str], driver: Driver, seconds: float, rounds: int) -> Rates:
    """One async SDK client per server: its pool holds one keep-alive connection per
    concurrent task."""
    clients = {label: driver.async_client(base) for label, base in bases.items()}
    try:
        sessions = {label: partial(contextlib.nullcontext, c) for label, c in clients.items()}
        return await rates(sessions, driver.around_trip, seconds, rounds)
    finally:
        for client in clients.values():
            await client.close()


def measure_model(
    bases: dict[str, str], driver: Driver, count: int, seconds: float, rounds: int
) -> Table:
    """Round trips, streams and throughput of one format against each server."""
    clients = {label: driver.sync_client(base) for label, base in bases.items()}
    try:
        for _ in range(max(5, count // 10)):  # warm: connections open, code paths loaded
            for client in clients.values():
                driver.round_trip(client)
                driver.stream(client)
        trips = interleaved(
            {label: timed(partial(driver.round_trip, c)) for label, c in clients.items()}, count
        )
        streams = interleaved(
            {label: partial(driver.stream, c) for label, c in clients.items()}, max(10, count // 3)
        )
    finally:
        for client in clients.values():
            client.close()
    per_rate = asyncio.run(_model_rates(bases, driver, seconds, rounds))
    return compare(trips, per_rate, streams)


@contextlib.asynccontextmanager
async def mcp_session(url: str) -> AsyncIterator[Any]:
    """An official MCP SDK client session (one HTTP client of its own)."""
    from mcp import Client

    async with Client(url) as client:
        yield client


async def mcp_call(client: Any) -> None:
    """``tools/call get_weather``, its result checked."""
    result = await client.call_tool("get_weather", ARGUMENTS)
    text = result.content[0].text if result.content else None
    if result.is_error or text != TOOL_RESULT:
        raise RuntimeError(f"mcp: expected {TOOL_RESULT!r}, got {result!r}")


async def _mcp_trips(urls: dict[str, str], count: int) -> dict[str, list[float]]:
    async with contextlib.AsyncExitStack() as stack:
        clients = {
            label: await stack.enter_async_context(mcp_session(u)) for label, u in urls.items()
        }
        for _ in range(max(5, count // 10)):
            for client in clients.values():
                await mcp_call(client)
        times: dict[str, list[float]] = {label: [] for label in urls}
        for _ in range(count):
            for label, client in clients.items():
                started = time.perf_counter()
                await mcp_call(client)
                times[label].append(time.perf_counter() - started)
        return times


def measure_mcp(urls: dict[str, str], count: int, seconds: float, rounds: int) -> Table:
    """``tools/call`` round trips and throughput (one session per client) against each
    MCP server."""
    try:
        trips = asyncio.run(_mcp_trips(urls, count))
        sessions = {label: partial(mcp_session, url) for label, url in urls.items()}
        return compare(trips, asyncio.run(rates(sessions, mcp_call, seconds, rounds)))
    except Exception as exc:  # the SDK's task groups wrap a wrong answer in exception groups
        raise _first_leaf(exc) from exc


def _first_leaf(exc: BaseException) -> BaseException:
    inner = getattr(exc, "exceptions", None)
    return _first_leaf(inner[0]) if inner else exc


# -- the report ------------------------------------------------------------------------------


def _rows(results: dict[str, Table]) -> Iterator[tuple[str, ...]]:
    for fmt, table in results.items():
        for metric, ratio in table["ratio"].items():
            target = ""
            if metric in ("round trip p50 ms", "first event p50 ms"):
                met = ratio <= ROUND_TRIP_TARGET
                target = f"<= {ROUND_TRIP_TARGET:g}x " + ("ok" if met else "MISSED")
            elif metric == f"rps {CONCURRENCY[-1]} clients":
                met = ratio >= THROUGHPUT_TARGET
                target = f">= {THROUGHPUT_TARGET:g}x " + ("ok" if met else "MISSED")
            ours, ref = table["harness"][metric], table["reference"][metric]
            yield fmt, metric, f"{ours:g}", f"{ref:g}", f"{ratio:.2f}x", target


def report(results: dict[str, Table]) -> None:
    header = ("format", "metric", "harness", "reference", "ratio", "target")
    rows = [header, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print(
            "  ".join(
                cell.ljust(w) if i < 2 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )


def main(argv: list[str] | None = None) -> dict[str, Table]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument(
        "--formats",
        default="chat,responses,messages,mcp",
        help="comma-separated: chat, responses, messages, mcp",
    )
    parser.add_argument("--count", type=int, default=300, help="sequential round trips per server")
    parser.add_argument("--seconds", type=float, default=0.5, help="length of a throughput run")
    parser.add_argument("--rounds", type=int, default=5, help="throughput runs per server")
    parser.add_argument("--reference", choices=("model", "mcp"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.reference:
        serve_reference(args.reference)
        return {}
    if args.quick:
        args.count, args.seconds, args.rounds = 20, 0.2, 1
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - {*DRIVERS, "mcp"})
    if unknown:
        parser.error(f"unknown formats {unknown}; choose from {[*DRIVERS, 'mcp']}")
    results: dict[str, Table] = {}
    with tempfile.TemporaryDirectory() as folder:
        model_formats = [f for f in formats if f in DRIVERS]
        if model_formats:
            ours, our_url = start_harness(Path(folder), mcp=False)
            ref, ref_url = start_reference("model")
            try:
                bases = {"harness": our_url, "reference": ref_url}
                for fmt in model_formats:
                    results[fmt] = measure_model(
                        bases, DRIVERS[fmt], args.count, args.seconds, args.rounds
                    )
            finally:
                _stop(ours, ref)
        if "mcp" in formats:
            ours, our_url = start_harness(Path(folder), mcp=True)
            ref, ref_url = start_reference("mcp")
            try:
                urls = {"harness": our_url, "reference": ref_url}
                results["mcp"] = measure_mcp(urls, args.count, args.seconds, args.rounds)
            finally:
                _stop(ours, ref)
    report(results)
    return results


if __name__ == "__main__":
    main()
