"""Agents on another framework (pydantic-ai, the OpenAI Agents SDK, a hand-written SDK
loop), run against a harness model served on the wire.

A wire factory takes ``(base_url, api_key)`` and returns ``{"run": ..., "prompt": ...,
"state": ...}``: ``run`` takes the prompt and runs the user's agent against that
endpoint (sync or async, returning anything), ``state`` is any object properties read
(optional), ``prompt`` the prompt to run. ``WireEndpoint`` serves a model on a loopback
``WireServer`` in one wire format, one run at a time: the factory's SDK clients connect
to it as to the provider (the contract gives the agent only a URL and a key, so a real
socket is the one seam every SDK and framework accepts). The run is seen as the
requests the endpoint answered: the wire trace (``harness.cassettes``), the run's
output, its state and the exception it raised.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import queue
import threading
import warnings
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Literal

from harness._errors import HarnessError, ProviderError, UsageError
from harness._names import did_you_mean, format_names
from harness._secrets import scrub_message
from harness._validation import check_choice
from harness.loop import Model, ModelRequest, ModelResponse, Usage
from harness.messages import Message
from harness.scenarios._properties import WireRun

__all__ = [
    "API_KEY",
    "WIRES",
    "WIRE_KEYS",
    "RunStalled",
    "Wire",
    "WireAgent",
    "WireEndpoint",
    "WireFactory",
    "WireOutcome",
    "build_wire_agent",
    "check_wire_factory",
    "wire_route",
]

Wire = Literal["openai-chat", "openai-responses", "anthropic"]
"""The wire formats an agent can be run on."""
WIRES: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic")
_FORMAT_NAMES = {
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic-messages",
}
"""Each wire's format (``harness.formats``: its ``NAME``)."""
_SDK_PREFIX = {"openai-chat": "/v1", "openai-responses": "/v1", "anthropic": ""}
"""What the base URL an SDK is given ends with: the OpenAI SDKs take ``.../v1`` and add
the route, the Anthropic SDK takes the host and adds ``/v1/messages`` itself."""
WIRE_KEYS = ("run", "prompt", "state")
"""The keys a wire factory returns (``state`` optional)."""
API_KEY = "harness-wire-key"
"""The API key wire factories are given (the endpoint checks none; it is no secret)."""

WireFactory = Callable[[str, str], Mapping[str, Any]]
"""``(base_url, api_key) -> {"run": callable, "prompt": str, "state": any}``."""


def _formats() -> dict[str, Any]:
    from harness.formats import wire_formats

    by_name = {f.NAME: f for f in wire_formats()}
    return {wire: by_name[name] for wire, name in _FORMAT_NAMES.items()}


def wire_route(wire: str) -> str:
    """The route of ``wire`` (``/chat/completions``), after checking the name."""
    check_choice(wire, WIRES, name="wire")
    return str(_formats()[wire].ROUTE)


def _route_of(path: str) -> str:
    route = path.split("?", 1)[0].rstrip("/")
    return route[3:] if route.startswith("/v1/") else route


def _wire_of(method: str, path: str) -> str | None:
    """The wire format a request is for (``None``: no format harness serves)."""
    if method != "POST":
        return None
    route = _route_of(path)
    return next((w for w, f in _formats().items() if route == f.ROUTE), None)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WireAgent:
    """One fresh agent from a wire factory, checked."""

    name: str
    """The factory that made it (``module:qualname``)."""
    run: Callable[[str], Any]
    prompt: str
    state: Any = None

    def secret_values(self) -> list[str]:
        """None known: the agent's secrets live in its framework, out of the harness's sight."""
        return []


def check_wire_factory(factory: object, name: str) -> None:
    """A ``UsageError`` unless ``factory`` can be called as ``factory(base_url, api_key)``."""
    if not callable(factory):
        raise UsageError(
            f"a wire agent factory must be a function (base_url, api_key) -> "
            f"{{'run': ..., 'prompt': ...}}, got {factory!r}"
        )
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: try it as it is
        return
    try:
        signature.bind("http://127.0.0.1:1/v1", API_KEY)
    except TypeError:
        raise UsageError(
            f"the wire agent factory {name} takes {signature}, but a wire factory is called "
            "as factory(base_url, api_key): define it as def make(base_url: str, api_key: "
            "str) -> dict and build the SDK client from both"
        ) from None


def _call_factory(factory: WireFactory, base_url: str, api_key: str, name: str) -> Any:
    try:
        return factory(base_url, api_key)
    except HarnessError as exc:
        raise UsageError(
            scrub_message(f"wire agent factory {name} raised {type(exc).__name__}: {exc}")
        ) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, a BaseException of its own
        raise UsageError(
            scrub_message(f"wire agent factory {name} raised {type(exc).__name__}: {exc}")
        ) from exc


def build_wire_agent(
    factory: WireFactory, base_url: str, api_key: str = API_KEY, *, name: str
) -> WireAgent:
    """Call ``factory(base_url, api_key)`` and check what it returned (``UsageError``)."""
    data = _call_factory(factory, base_url, api_key, name)
    shape = "{'run': a function taking the prompt, 'prompt': 'the prompt', 'state': ...}"
    if not isinstance(data, Mapping):
        raise UsageError(
            f"wire agent factory {name} returned {type(data).__name__} {data!r:.80}; return "
            f"a dict {shape}"
        )
    unknown = [k for k in data if k not in WIRE_KEYS]
    if unknown:
        hints = ", ".join(f"{k!r}{did_you_mean(str(k), WIRE_KEYS)}" for k in unknown)
        raise UsageError(
            f"wire agent factory {name} returned unknown key(s) {hints}; valid: "
            f"{format_names(WIRE_KEYS, quote=False)}"
        )
    run = data.get("run")
    if not callable(run):
        raise UsageError(
            f"wire agent factory {name} must return 'run', a function taking the prompt "
            f"that runs the agent against base_url, got {run!r:.80}"
        )
    prompt = data.get("prompt")
    if not (isinstance(prompt, str) and prompt.strip()):
        raise UsageError(
            f"wire agent factory {name} must return a 'prompt' (the text run is called "
            f"with), got {prompt!r:.80}"
        )
    return WireAgent(name=name, run=run, prompt=prompt, state=data.get("state"))


def _completed(result: Any) -> Any:
    """``result``, awaited on a loop of its own when ``run`` was async (``run`` is
    called on a thread of its own, where no loop runs)."""
    if not inspect.isawaitable(result):
        return result

    async def wait(awaitable: Awaitable[Any]) -> Any:
        return await awaitable

    return asyncio.run(wait(result))


class RunStalled(Exception):
    """The agent's run neither called the endpoint nor returned within the time given
    (its thread is left behind; what it sends later is refused)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the agent's run neither called the endpoint nor returned within {seconds:g}s"
        )
        self.seconds = seconds


class _Session:
    """One run on the endpoint: the model's requests handed from the server's threads
    to the thread that called ``WireEndpoint.run``, which answers them (the model may
    need that thread: hypothesis draws only on its own), and the run's end."""

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.closed = False

    def submit(self, request: ModelRequest) -> queue.SimpleQueue[tuple[bool, Any]]:
        """From a server thread (under the relay's lock, so never after the session
        closed and its waiting requests were refused): where the answer will come."""
        reply: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self.inbox.put(("request", request, reply))
        return reply


class _Relay(Model):
    """The model the endpoint serves: it hands each request of ``route`` to the current
    run's session; between runs, a provider error the SDKs do not retry."""

    __test__ = False

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.route = wire_route(wire)
        self.name = "harness-wire"
        self.lock = threading.Lock()
        self.session: _Session | None = None
        self.path: Callable[[], str] = lambda: ""
        """The path of the request being answered (the server's latest)."""

    def request(self, request: ModelRequest) -> ModelResponse:
        with self.lock:
            session = self.session
            if session is None or session.closed:
                raise ProviderError(
                    "no run is being served on this endpoint", status=503, retryable=False
                )
            path = self.path()
            if _route_of(path) != self.route:  # another format: the agent's SDK is the wrong one
                raise ProviderError(
                    f"this endpoint serves {self.wire} (POST {self.route}), not {path}",
                    status=404,
                    retryable=False,
                )
            reply = session.submit(request)
        answered, value = reply.get()
        if answered:
            return value  # type: ignore[no-any-return]
        raise value


_FAILED = ProviderError("the served model failed", status=500, retryable=False)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WireOutcome:
    """One run on the endpoint: the run, and what the agent's SDK called."""

    run: WireRun
    called: tuple[tuple[str, str], ...]
    """``(method, path)`` of every request the endpoint received, in order."""
    answered: int
    """Requests of the endpoint's wire format that reached the model."""
    failure: BaseException | None = None
    """What the served model raised (the run then saw a 500)."""

    def problem(self, wire: str) -> str | None:
        """Why the run says nothing about the agent: it never called the endpoint, or
        called another wire format (``None`` when it called ``wire``)."""
        wrong = [(m, p) for m, p in self.called if _wire_of(m, p) not in (wire, None)]
        if wrong:
            method, path = wrong[0]
            other = _wire_of(method, path)
            return (
                f"the agent called {other} ({method} {path}), but the wire is {wire}: "
                f"fuzz it with --wire {other} (wire={other!r}), or point its {wire} client "
                "at base_url"
            )
        if self.answered == 0:
            seen = ", ".join(f"{m} {p}" for m, p in self.called[:3])
            error = self.run.error
            raised = f"; it raised {type(error).__name__}: {error}" if error is not None else ""
            return scrub_message(
                f"the agent's run never called the {wire} endpoint it was given (base_url)"
                + (f": it sent only {seen}" if seen else "")
                + raised
                + ". Build the SDK client inside the factory from base_url and api_key "
                "(e.g. OpenAI(base_url=base_url, api_key=api_key))"
            )
        return None


def _messages(exchanges: list[tuple[ModelRequest, ModelResponse | None]]) -> list[Message]:
    if not exchanges:
        return []
    request, response = exchanges[-1]
    history = list(request.messages)
    if response is not None:
        history.append(response.message)
    return history


class WireEndpoint:
    """A loopback endpoint in one wire format, serving one run's model at a time."""

    def __init__(self, wire: str) -> None:
        from harness.models import WireServer

        self.wire = check_choice(wire, WIRES, name="wire")
        self._relay = _Relay(wire)
        self._server = WireServer(self._relay)
        self._relay.path = self._latest_path
        self._started = False

    def _latest_path(self) -> str:
        requests = self._server.app.requests
        return requests[-1].path if requests else ""

    def start(self) -> WireEndpoint:
        """Listen (a free port on 127.0.0.1)."""
        if not self._started:
            self._server.start()
            self._started = True
        return self

    def close(self) -> None:
        """Stop listening."""
        if self._started:
            self._server.stop()
            self._started = False

    def __enter__(self) -> WireEndpoint:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """What the agent's SDK client is given (``http://127.0.0.1:PORT/v1`` for the
        OpenAI formats, without ``/v1`` for Anthropic's)."""
        self.start()
        return self._server.url.removesuffix("/v1") + _SDK_PREFIX[self.wire]

    def build(self, factory: WireFactory, *, name: str) -> WireAgent:
        """A fresh agent from ``factory``, pointed at this endpoint."""
        return build_wire_agent(factory, self.base_url, API_KEY, name=name)

    def run(self, agent: WireAgent, model: Model, *, timeout: float | None = None) -> WireOutcome:
        """Run ``agent`` with ``model`` answering its requests: ``run`` is called on a
        thread of its own, the model answers on this one. ``timeout`` seconds without a
        request or the run's end make the run end with ``RunStalled``."""
        self.start()
        app, relay = self._server.app, self._relay
        session = _Session()
        with relay.lock:
            app.requests.clear()
            app.responses.clear()
            relay.session = session
        thread = threading.Thread(
            target=_run_agent, args=(agent, session), name="harness-wire-run", daemon=True
        )
        exchanges: list[tuple[ModelRequest, ModelResponse | None]] = []
        failure: BaseException | None = None
        output: Any = None
        error: BaseException | None = None
        try:
            thread.start()
            while True:
                try:
                    item = session.inbox.get(timeout=timeout)
                except queue.Empty:
                    error = RunStalled(timeout or 0.0)
                    break
                if item[0] == "done":
                    output, error = item[1], item[2]
                    break
                _kind, request, reply = item
                if failure is not None:  # the run goes on after a failure: it hears a 500
                    reply.put((False, _FAILED))
                    continue
                exchanges.append((request, None))
                try:
                    response = model.request(request)
                except ProviderError as exc:
                    reply.put((False, exc))
                    continue
                except BaseException as exc:  # a script that ran out, hypothesis stopping
                    failure = exc
                    reply.put((False, _FAILED))
                    continue
                exchanges[-1] = (request, response)
                reply.put((True, response))
        finally:
            with relay.lock:
                session.closed = True
                relay.session = None
                called = tuple((r.method, r.path) for r in app.requests)
            _refuse_waiting(session)
        return WireOutcome(
            run=self._run_of(agent, exchanges, output, error),
            called=called,
            answered=len(exchanges),
            failure=failure,
        )

    def _run_of(
        self,
        agent: WireAgent,
        exchanges: list[tuple[ModelRequest, ModelResponse | None]],
        output: Any,
        error: BaseException | None,
    ) -> WireRun:
        from harness.cassettes import trace_from_requests
        from harness.formats import ParsedRequest

        requests = [
            ParsedRequest(
                model=None,
                messages=tuple(r.messages),
                tools=tuple(r.tools),
                tool_choice=r.settings.tool_choice,
            )
            for r, _ in exchanges
        ]
        trace = trace_from_requests(requests, [response for _, response in exchanges])
        return WireRun(
            output=output,
            messages=_messages(exchanges),
            iterations=len(exchanges),
            tools_injected=list(trace.injected),
            trace=trace,
            usage=Usage(),
            state=agent.state,
            error=error,
            wire=self.wire,
        )


def _run_agent(agent: WireAgent, session: _Session) -> None:
    """The run's thread: call ``run`` and report how it ended."""
    try:
        session.inbox.put(("done", _completed(agent.run(agent.prompt)), None))
    except BaseException as exc:  # the framework's own failures are the run's ending
        session.inbox.put(("done", None, exc))
    finally:
        _close_thread_loop()


def _close_thread_loop() -> None:
    """Close the event loop a sync ``run`` left on this thread (pydantic-ai's
    ``run_sync`` makes one per thread and never closes it): the thread ends here, and
    its loop's sockets would be reported unclosed much later, in someone else's test."""
    policy = asyncio.get_event_loop_policy()
    try:
        with warnings.catch_warnings():  # 3.12+ warns when no loop is set
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = policy.get_event_loop()
    except RuntimeError:  # none was made
        return
    if not (loop.is_running() or loop.is_closed()):
        loop.close()
    policy.set_event_loop(None)


def _refuse_waiting(session: _Session) -> None:
    """Answer the requests still waiting in a closed session (a stalled run's)."""
    while True:
        try:
            item = session.inbox.get_nowait()
        except queue.Empty:
            return
        if item[0] == "request":
            item[2].put((False, _FAILED))
