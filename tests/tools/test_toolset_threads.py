"""Toolset under threads: readers see a consistent toolset while another thread changes it.

Seed 002 asks for a concurrent-safe registry: a tool loop's strategies run on worker
threads (the sync driver's pool, subagents) while a request builder reads the tools.
A short switch interval makes the interpreter change threads every few bytecodes, so
an unguarded iteration over the tools dictionary fails within a few hundred changes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from harness.tools import Tool, Toolset


def _tool(index: int) -> Tool:
    return Tool.from_function(lambda: index, name=f"tool_{index}", description=f"Tool {index}.")


@pytest.fixture
def fast_switching() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def _race(write: Callable[[int], None], read: Callable[[], object]) -> list[BaseException]:
    """``write`` 2,000 times on one thread while another thread keeps calling ``read``."""
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        try:
            while not done.is_set():
                read()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for index in range(2000):
            write(index)
    finally:
        done.set()
        thread.join()
    return errors


@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda t: t.definitions(), id="definitions"),
        pytest.param(lambda t: t.names, id="names"),
        pytest.param(lambda t: [tool.name for tool in t], id="iteration"),
        pytest.param(lambda t: list(t.view()), id="view"),
        pytest.param(lambda t: t.copy().names, id="copy"),
    ],
)
def test_reads_while_another_thread_adds_tools(read: Callable[[Toolset], object]) -> None:
    toolset = Toolset()
    tools = [_tool(index) for index in range(2000)]

    def add(index: int) -> None:
        toolset.add(tools[index])
        toolset.definitions()  # a fresh cache for the reader to race against

    errors = _race(add, lambda: read(toolset))
    assert errors == []
    assert len(toolset.definitions()) == 2000
    assert toolset.names == tuple(f"tool_{index}" for index in range(2000))


@pytest.mark.usefixtures("fast_switching")
def test_a_read_never_sees_a_half_applied_change() -> None:
    """Names and definitions read together always describe the same tools."""
    toolset = Toolset([_tool(index) for index in range(50)])
    extra = [_tool(index) for index in range(50, 2050)]
    mismatches: list[tuple[int, int]] = []

    def churn(index: int) -> None:
        toolset.add(extra[index])
        toolset.remove(extra[index].name)

    def read() -> None:
        snapshot = toolset.copy()
        if len(snapshot.names) != len(snapshot.definitions()):
            mismatches.append((len(snapshot.names), len(snapshot.definitions())))

    errors = _race(churn, read)
    assert errors == [] and mismatches == []
    assert len(toolset) == 50
