"""What a test runs with: models, sessions, the runner, MCP fakes, scenario files, the
loopback server, OpenAI clients and timeline snapshots.

Registered as part of ``harness.pytest_plugin``, which imports its fixtures. Loaded at
pytest start-up, so besides pytest and ``harness._plugin`` it imports only what every
test run imports anyway for its settings (the exception tree and the lazy
``harness.testing`` package); models, scenarios and SDK clients are imported inside the
fixture that needs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness import testing
from harness._errors import UsageError
from harness._plugin._marks import SCENARIO_FAILURE, cassette_markers
from harness.testing import _options as opts

if TYPE_CHECKING:
    import openai

    from harness.loop import Model, Session
    from harness.models import ScriptedModel, WireServer
    from harness.scenarios import ScenarioOutcome
    from harness.testing import HarnessRunner, McpFakes, Settings, TimelineSnapshot

__all__ = [
    "harness_async_openai",
    "harness_mcp",
    "harness_model",
    "harness_openai",
    "harness_runner",
    "harness_scenario",
    "harness_scripted",
    "harness_server",
    "harness_session",
    "harness_snapshot",
]


@pytest.fixture
def harness_scripted() -> Any:
    """A factory for scripted models: ``harness_scripted([call(...), reply(...)])``."""
    from harness.models import ScriptedModel

    def make(steps: Any, **kwargs: Any) -> ScriptedModel:
        return ScriptedModel(steps, **kwargs)

    return make


@pytest.fixture
def harness_session() -> Iterator[Any]:
    """A factory for sessions: ``harness_session(model, tools=..., strategies=...)`` returns
    a ``harness.Session`` (the arguments of ``harness.run``); each is closed after the test,
    so a scripted model with steps left fails it there (every session is closed even when
    closing one fails)."""
    from harness.loop import Session

    made: list[Session] = []

    def make(model: Any, **kwargs: Any) -> Session:
        session = Session(model, **kwargs)
        made.append(session)
        return session

    yield make
    # every session is closed, even after one failed to: the first error is raised, the
    # others noted on it
    errors: list[Exception] = []
    for session in made:
        try:
            session.close()
        except Exception as exc:
            errors.append(exc)
    if errors:
        add_note = getattr(errors[0], "add_note", None)  # Python 3.11+
        for other in errors[1:]:
            if callable(add_note):
                add_note(f"closing another session failed too: {type(other).__name__}: {other}")
        raise errors[0]


@pytest.fixture
def harness_runner() -> HarnessRunner:
    """Runs the loop (``.run``/``.arun``/``.run_scenario``) and records every trace for
    the test report (timelines on failure, JUnit properties)."""
    return testing.HarnessRunner()


@pytest.fixture
def harness_mcp() -> Iterator[McpFakes]:
    """A factory for fake MCP servers (needs the ``mcp`` extra):
    ``harness_mcp("shop", [{"name": "search", "result": "[]"}], changes=[...])`` returns an
    ``McpServer`` on a scripted in-memory server; all are closed after the test."""
    fakes = testing.McpFakes()
    try:
        yield fakes
    finally:
        fakes.close()


@pytest.fixture
def harness_scenario(request: pytest.FixtureRequest) -> ScenarioOutcome:
    """The outcome of running the ``harness_scenario`` marker's file (fails the test when
    the scenario's expectations fail, unless the marker says ``check=False``)."""
    from harness.testing._items import describe_failure, run_scenario_file

    marker = request.node.get_closest_marker("harness_scenario")
    path = getattr(request, "param", None)
    if marker is None or path is None:
        raise UsageError(
            "the harness_scenario fixture needs @pytest.mark.harness_scenario('path.yaml')"
        )
    outcome = run_scenario_file(path)
    if marker.kwargs.get("check", True) and not outcome.passed:
        request.node.stash[SCENARIO_FAILURE] = describe_failure(outcome)
    return outcome


@pytest.fixture
def harness_model(request: pytest.FixtureRequest) -> Model:
    """The model the ``harness_openai`` fake serves: the ``harness_scenario`` marker's
    script, else override this fixture (e.g. return ``harness_scripted([...])``)."""
    marker = request.node.get_closest_marker("harness_scenario")
    if marker is not None and marker.args:
        from harness.scenarios import load_scenario
        from harness.testing._items import scenario_paths

        bases = [request.node.path.parent, request.config.rootpath]
        return load_scenario(scenario_paths(str(marker.args[0]), bases)[0]).build_model()
    raise UsageError(
        "harness_openai serves the harness_model fixture: override harness_model in your test "
        "module or conftest.py (return a Model, e.g. harness_scripted([...])), mark the test "
        "with harness_scenario('file.yaml'), or replay a cassette with harness_cassette"
    )


def _require_openai(feature: str) -> None:
    from harness._extras import require

    require("openai", feature)


def _client_kwargs(request: pytest.FixtureRequest) -> dict[str, Any] | None:
    """Arguments for a real client replaying or recording the cassette, or ``None`` for the
    fake. The ``harness_server`` the test uses wins, then ``harness_config``, then
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""
    if not cassette_markers(request.node):
        return None
    request.getfixturevalue("harness_cassette")
    from harness.testing._config import openai_client_settings

    base_url, api_key = openai_client_settings(request.getfixturevalue("harness_config"))
    if "harness_server" in request.fixturenames:
        base_url = request.getfixturevalue("harness_server").url
    return {"base_url": base_url, "api_key": api_key, "max_retries": 0}


@pytest.fixture
def harness_server(request: pytest.FixtureRequest) -> Iterator[WireServer]:
    """A loopback server (``WireServer``: OpenAI Chat Completions and Responses, Anthropic
    Messages) serving the ``harness_model`` fixture's model for this test. A
    ``harness_cassette`` test that uses it records through it
    (``--harness-record-mode=once``) and replays without it: one command, no second
    shell, no ``OPENAI_BASE_URL``."""
    from harness.models import WireServer

    with WireServer(request.getfixturevalue("harness_model")) as server:
        yield server


@pytest.fixture
def harness_openai(request: pytest.FixtureRequest) -> Iterator[openai.OpenAI]:
    """An ``openai.OpenAI`` client: replaying the test's cassette when it is marked
    ``harness_cassette``, else served in-process by the ``harness_model`` fixture. A
    request the network guard refuses raises ``NetworkRefused`` (not the SDK's
    ``APIConnectionError``)."""
    _require_openai("the harness_openai fixture")
    kwargs = _client_kwargs(request)
    if kwargs is not None:
        from harness.testing._refusal import RefusalSurfacingOpenAI

        client: openai.OpenAI = RefusalSurfacingOpenAI(**kwargs)
    else:
        from harness.models import fake_openai_client

        client = fake_openai_client(request.getfixturevalue("harness_model"))
    with client:
        yield client


@pytest.fixture
def harness_async_openai(request: pytest.FixtureRequest) -> openai.AsyncOpenAI:
    """The ``openai.AsyncOpenAI`` twin of ``harness_openai``."""
    _require_openai("the harness_async_openai fixture")
    kwargs = _client_kwargs(request)
    if kwargs is not None:
        from harness.testing._refusal import RefusalSurfacingAsyncOpenAI

        return RefusalSurfacingAsyncOpenAI(**kwargs)
    from harness.models import fake_async_openai_client

    return fake_async_openai_client(request.getfixturevalue("harness_model"))


@pytest.fixture
def harness_snapshot(
    request: pytest.FixtureRequest, harness_settings: Settings
) -> Iterator[TimelineSnapshot]:
    """Compare a run's timeline with a stored snapshot: ``harness_snapshot(result)`` (file
    next to the test) or ``harness_snapshot(result, '''...''')`` (inline)."""
    snapshot = testing.TimelineSnapshot(
        test_path=request.node.path,
        test_name=request.node.name,
        update=harness_settings.update_snapshots,
        worker=hasattr(request.config, "workerinput"),
    )
    yield snapshot
    for path in snapshot.written:
        request.node.user_properties.append((opts.SNAPSHOT_PROPERTY, str(path)))
