"""The fuzzer's watchdog: a tool (or strategy) that never returns must not hang a campaign.

An agent that sets no ``tool_timeout`` would wait forever on a hung call in
production; under the fuzzer that call is a finding (``hang``), and the campaign goes
on. Where it can, the watchdog uses a ``SIGALRM`` timer on the main thread (no thread
per call): when an example outlasts the limit while the agent's own code runs (a tool,
or a strategy hook), ``WatchdogTimeout`` is raised there, and the loop turns it into
the call's error result (or a ``StrategyError``). Elsewhere (another thread, Windows,
a timer already armed by pytest-timeout) it cannot: the fuzzer sets ``tool_timeout``
instead, which runs each call in a thread of its own (slower, as safe).

The timer is preferred because a thread per call costs about a third of the time of an
example making eight calls, while the timer costs two system calls per example.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sysconfig
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

import hypothesis
import jsonschema
import pydantic

__all__ = [
    "WATCHDOG_SECONDS",
    "UserCodeTimeout",
    "WatchdogTimeout",
    "signal_watchdog_available",
    "watchdog",
    "watched",
]

WATCHDOG_SECONDS = 10.0
"""How long a call (or a strategy hook) may run before the fuzzer calls it a hang, when
the agent sets no ``tool_timeout`` of its own. A hang is reported as found, not shrunk
(each replay would wait this long again)."""

_RECHECK = 0.25
"""Seconds until the timer looks again when it fired outside the agent's code."""


class WatchdogTimeout(Exception):
    """Raised in a tool or strategy that outlasted the fuzzer's watchdog."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"did not return within {seconds:g}s (the fuzzer's watchdog; the agent sets no "
            "tool_timeout)"
        )
        self.seconds = seconds


class UserCodeTimeout(Exception):
    """An agent factory or a property that outlasted the fuzzer's watchdog."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"did not return within {seconds:g}s (the fuzzer's limit for the agent's own "
            "code: hang_seconds, and never more than max_seconds)"
        )
        self.seconds = seconds


def signal_watchdog_available() -> bool:
    """A ``SIGALRM`` timer can be used here (main thread, POSIX, no timer armed already)."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


_STDLIB = sysconfig.get_paths()["stdlib"].replace("\\", "/")
_OURS = tuple(
    os.path.dirname(path).replace("\\", "/") + "/"
    for path in (
        os.path.dirname(os.path.dirname(__file__)) + "/__init__.py",  # the harness package
        *(module.__file__ or "" for module in (hypothesis, pydantic, jsonschema)),
    )
)
"""Packages whose frames are the harness at work (the loop, validation, the fuzzer)."""


def _in_agent_code(frame: FrameType | None) -> bool:
    """Whether the innermost frame outside the standard library is the agent's own code
    (a tool, a strategy hook), not the harness's or hypothesis's."""
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        if not path.startswith(_STDLIB) or "site-packages" in path:
            return not path.startswith(_OURS)
        frame = frame.f_back
    return False


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Raise ``WatchdogTimeout`` in the agent's code if the block outlasts ``seconds``."""

    def fire(signum: int, frame: FrameType | None) -> None:
        if _in_agent_code(frame):
            signal.setitimer(signal.ITIMER_REAL, seconds)  # the next hang is stopped too
            raise WatchdogTimeout(seconds)
        signal.setitimer(signal.ITIMER_REAL, _RECHECK)

    previous: Any = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


F = TypeVar("F", bound=Callable[..., Any])


def watched(function: F, seconds: float) -> F:
    """``function`` (an agent factory or a property) bounded by ``seconds``: past them,
    ``UserCodeTimeout`` is raised in it (the signal watchdog) or, where no timer can be
    armed, the call is left running in a daemon thread and ``UserCodeTimeout`` is raised
    here. Names (``__module__``, ``__qualname__``) are kept for messages."""
    if getattr(function, "__harness_watched__", None) == seconds:
        return function

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if signal_watchdog_available():
            try:
                with watchdog(seconds):
                    return function(*args, **kwargs)
            except WatchdogTimeout:
                raise UserCodeTimeout(seconds) from None
        return _in_thread(function, args, kwargs, seconds)

    bounded.__harness_watched__ = seconds  # type: ignore[attr-defined]
    return bounded  # type: ignore[return-value]


def _in_thread(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], seconds: float
) -> Any:
    """``function(*args, **kwargs)`` in a daemon thread, waited for ``seconds``."""
    outcome: list[tuple[bool, Any]] = []

    def call() -> None:
        try:
            outcome.append((True, function(*args, **kwargs)))
        except BaseException as exc:  # handed back to the caller's thread as it is
            outcome.append((False, exc))

    thread = threading.Thread(target=call, daemon=True, name="harness-fuzz-watched")
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise UserCodeTimeout(seconds)
    returned, value = outcome[0]
    if returned:
        return value
    raise value
