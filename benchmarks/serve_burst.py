"""``harness serve`` under a burst of connections and under slow clients, on loopback.

Cases (the server runs as its own process, ``harness serve --repeat``, so client and
server do not share a GIL):

- ``burst``: N clients (default 500) connect at once and each posts one chat request;
  reported: how many got an answer within the time limit (200, or 503 when every slot
  is busy), and the slowest answer. A listen backlog of 5 leaves most SYNs to the
  kernel's retransmit timer (1 s, 3 s, 7 s...).
- ``slow``: S clients (default 64, the default ``--max-connections``) send one header
  byte every few seconds; meanwhile one ordinary client posts a request every half
  second; reported: how many of its requests got a 200, and the slowest.

Every answer is checked (a 200 carries the scripted reply). No timing assertion: run
``python benchmarks/serve_burst.py`` before and after a change and compare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENARIO = """
name: burst
prompt: hi
model:
  steps:
    - {reply: pong}
"""

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "ping"}]}).encode()
REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
)


def start_server(folder: Path) -> tuple[subprocess.Popen[str], int]:
    """``harness serve`` on a free loopback port; the process and the port."""
    scenario = folder / "burst.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    launch = "import sys; from harness.cli import main; sys.argv[0] = 'harness'; main()"
    command = [sys.executable, "-c", launch, "serve", "-s", str(scenario), "--repeat"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("OPENAI_BASE_URL="):
            port = int(line.strip().rsplit(":", 1)[1].split("/", 1)[0])
            return process, port
    raise RuntimeError("harness serve did not print its URL")


async def one_request(port: int, limit: float) -> tuple[int | None, float]:
    """Post the request; ``(status or None on no answer in time, seconds)``."""
    started = time.perf_counter()
    try:
        answer = await asyncio.wait_for(_exchange(port), limit)
    except (asyncio.TimeoutError, OSError):
        return None, time.perf_counter() - started
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else None
    if status == 200 and b"pong" not in body:
        raise RuntimeError(f"a 200 without the scripted reply: {body[:200]!r}")
    return status, time.perf_counter() - started


async def _exchange(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(REQUEST)
        await writer.drain()
        return await reader.read()
    finally:
        writer.close()


async def burst(port: int, clients: int, limit: float) -> dict[str, Any]:
    outcomes = await asyncio.gather(*(one_request(port, limit) for _ in range(clients)))
    statuses = [s for s, _ in outcomes]
    answered = [t for s, t in outcomes if s is not None]
    return {
        "clients": clients,
        "200": statuses.count(200),
        "503": statuses.count(503),
        "no answer": statuses.count(None),
        "slowest answer s": round(max(answered), 2) if answered else None,
    }


async def trickle(writer: asyncio.StreamWriter, stop: asyncio.Event) -> None:
    """A slow client: one header byte every 2 seconds until stopped or cut off."""
    try:
        for byte in REQUEST:
            if stop.is_set():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(2)
        writer.close()
    except OSError:
        return


async def slow(port: int, tricklers: int, seconds: float) -> dict[str, Any]:
    stop = asyncio.Event()
    writers = []
    for _ in range(tricklers):  # one after the other: each holds its connection
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writers.append(writer)
    slow_clients = [asyncio.create_task(trickle(writer, stop)) for writer in writers]
    await asyncio.sleep(0.5)
    outcomes = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        outcomes.append(await one_request(port, 5.0))
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*slow_clients)
    statuses = [s for s, _ in outcomes]
    return {
        "slow clients": tricklers,
        "requests": len(outcomes),
        "200": statuses.count(200),
        "503": statuses.count(503),
        "no answer": statuses.count(None),
        "slowest s": round(max(t for _, t in outcomes), 2),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=500, help="connections in the burst")
    parser.add_argument("--limit", type=float, default=10.0, help="seconds a client waits")
    parser.add_argument("--slow", type=int, default=64, help="slow clients")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of the slow case")
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.slow, args.seconds = 40, 4, 2.0
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        process, port = start_server(Path(folder))
        try:
            results["burst"] = asyncio.run(burst(port, args.clients, args.limit))
            print("burst:", results["burst"])
            results["slow"] = asyncio.run(slow(port, args.slow, args.seconds))
            print("slow: ", results["slow"])
        finally:
            process.terminate()
            process.wait(10)
            if process.stdout is not None:
                process.stdout.close()
    return results


if __name__ == "__main__":
    main()
