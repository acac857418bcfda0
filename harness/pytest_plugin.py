"""The harness pytest plugin (registered through the ``pytest11`` entry point).

It imports almost nothing at load time (pytest and two stdlib-only helpers), so
installing the package does not slow down unrelated test suites; the loop, the
``openai`` SDK, vcrpy and friends are imported inside the hooks and fixtures that
need them.

Precedence of settings, the most specific first: command line > the test's marker >
the ``harness_config`` fixture > ini file > built-in default (``harness.testing._config``).

Autouse fixtures do one job each: ``_harness_network`` refuses real network,
``_harness_cassette_guard`` activates a marked test's cassette; both read the
resolved ``harness_settings``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness._plugin import _options as _opts, _sink

if TYPE_CHECKING:
    import openai

    from harness.loop import Model
    from harness.models import ScriptedModel, WireServer
    from harness.scenarios import ScenarioOutcome
    from harness.testing import (
        HarnessConfig,
        HarnessRunner,
        McpFakes,
        Settings,
        TimelineSnapshot,
    )

_HOW_TO_ALLOW = (
    "Replay a cassette (@pytest.mark.harness_cassette) or use the in-process fake "
    "(the harness_openai fixture); to allow real traffic pass --harness-network=allow "
    "(ini: harness_network = allow, or HarnessConfig(network='allow') from a conftest "
    "harness_config fixture)."
)
_HOW_TO_RECORD = (
    "This test has a cassette marker and its cassette holds no recorded answer for this "
    "request, so it is recording: record real traffic with --harness-network=allow "
    "--harness-record-mode=once (or rewrite), or record against a loopback server "
    "(harness serve, a local model server) named by OPENAI_BASE_URL; to replay only, run "
    "with --harness-record-mode=none and check the cassette holds this request."
)
_SETTINGS_FIXTURES = frozenset({"harness_config", "harness_settings", "harness_cassette_path"})
_SCENARIO_FAILURE = pytest.StashKey[str]()
_ALIASES = pytest.StashKey[bool]()
"""Whether the harness handles pytest-recording's names (it is not installed)."""


# -- configuration ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _opts.add_options(parser, aliases=not _opts.pytest_recording_active(pluginmanager))


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from harness._plugin import _hookspecs

    pluginmanager.add_hookspecs(_hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    aliases = not _opts.pytest_recording_active(config.pluginmanager)
    config.stash[_ALIASES] = aliases
    for line in _opts.MARKERS:
        config.addinivalue_line("markers", line)
    if aliases:
        config.addinivalue_line("markers", _opts.VCR_MARKER)
        from harness._plugin import _vcr_alias

        config.pluginmanager.register(_vcr_alias, "harness-vcr-alias")
    for opt in _opts.OPTIONS:
        if not opt.is_flag:
            _opts.cli_or_ini(config, opt)  # a bad ini value fails the session at once
    if _opts.cli_or_ini(config, _opts.COVERAGE):
        from harness.loop import capture_run

        block = capture_run()  # session-wide: every run any test makes
        config.stash[_COVERAGE] = (block, block.__enter__())


_COVERAGE = pytest.StashKey[Any]()
"""The session's ``capture_run`` block and its capture (``--harness-coverage``)."""


def pytest_unconfigure(config: pytest.Config) -> None:
    opened = config.stash.get(_COVERAGE, None)
    if opened is not None:
        opened[0].__exit__(None, None, None)


def _coverage_report(config: pytest.Config) -> str | None:
    """The injection coverage of the session's runs (``None`` when not asked for)."""
    opened = config.stash.get(_COVERAGE, None)
    if opened is None:
        return None
    from harness.scenarios import InjectionCoverage

    coverage = InjectionCoverage()
    for captured in opened[1].all_runs:
        coverage.declare(captured.tools, captured.strategies)
        coverage.add_run(captured.trace)
    return coverage.format()


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.stash.get(_ALIASES, True):
        return None
    return (
        "harness: pytest-recording is active, so --record-mode, --disable-recording, the vcr "
        "marker and vcr_config are its own; harness cassettes follow harness_cassette, "
        "harness_config and --harness-record-mode"
    )


def _cassette_markers(item: pytest.Item) -> list[pytest.Mark]:
    """The test's cassette markers, weakest first: ``vcr`` (when ours), ``harness_cassette``."""
    aliases = item.config.stash.get(_ALIASES, True)
    names = ("vcr", "harness_cassette") if aliases else ("harness_cassette",)
    return [m for m in (item.get_closest_marker(n) for n in names) if m is not None]


def _how_to_allow(item: pytest.Item) -> str:
    """The refusal's advice for this test: record its cassette, or replay/fake/allow."""
    return _HOW_TO_RECORD if _cassette_markers(item) else _HOW_TO_ALLOW


def _uses_harness(item: pytest.Item) -> bool:
    if _cassette_markers(item) or item.get_closest_marker("harness_scenario"):
        return True
    names = getattr(item, "fixturenames", ())
    return any(n.startswith("harness_") and n not in _SETTINGS_FIXTURES for n in names)


# -- per-test bookkeeping --------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    outer = _sink.current()
    _sink.open_sink(item.nodeid)
    try:
        return (yield)
    finally:
        _sink.restore(outer)


_CASSETTE = pytest.StashKey[Any]()
"""The active cassette of a test and its vcrpy ``match_on``."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    failure = item.stash.get(_SCENARIO_FAILURE, None)
    if failure is not None:
        pytest.fail(failure, pytrace=False)  # the marked scenario failed: the test fails
    try:
        return (yield)
    except Exception as exc:
        # a request the cassette cannot answer: the harness's explanation (closest recorded
        # request and diff, or the end of the cassette), not the SDK's "Connection error"
        found = item.stash.get(_CASSETTE, None)
        if found is None:
            raise
        from harness.testing._vcr import translate_error

        error = translate_error(exc, match_on=found[1])
        if error is None:
            raise
        raise error.with_traceback(exc.__traceback__) from None  # one report: the harness's


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    sink = _sink.current()
    if sink is not None and call.when == "call" and sink.traces:
        from harness.testing._report import junit_properties

        item.user_properties.extend(junit_properties(sink.traces))
    report = yield
    if sink is None or call.when != "call" or not (sink.traces or sink.failures or sink.costs):
        return report
    _keep_for_page(item.config, report, sink)
    mode = _opts.cli_or_ini(item.config, _opts.TIMELINE) or "on-failure"
    if mode == "never" or (mode == "on-failure" and not report.failed):
        return report
    from harness.testing._report import report_text, summary_line

    # The assertion message already shows a failed harness check's table: print it once.
    shown_by_assertion = (
        report.failed
        and bool(sink.failures)
        and call.excinfo is not None
        and call.excinfo.errisinstance(AssertionError)
    )
    if not shown_by_assertion and all(
        name != _opts.TIMELINE_SECTION for name, _ in report.sections
    ):
        report.sections.append(
            (_opts.TIMELINE_SECTION, report_text(sink.traces, sink.failures, sink.costs))
        )
    report.harness_summary = summary_line(sink.traces, sink.failures, sink.costs)
    return report


_PAGE = pytest.StashKey[list[Any]]()
"""What each test left for the ``--harness-html`` page, in order."""


def _keep_for_page(config: pytest.Config, report: pytest.TestReport, sink: _sink.TestSink) -> None:
    if _opts.cli_or_ini(config, _opts.HTML) is None:
        return
    from harness.testing._report import TestRecord

    config.stash.setdefault(_PAGE, []).append(
        TestRecord(
            nodeid=report.nodeid,
            passed=report.passed,
            traces=tuple(sink.traces),
            costs=tuple(sink.costs),
        )
    )


@pytest.hookimpl(wrapper=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_refusal(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A refusal wrapped by an SDK (``openai.APIConnectionError: Connection error.``) is
    named in the failure and its summary line, not only deep in the chained causes."""
    report = yield
    error = call.excinfo.value if call.excinfo is not None else None
    if not report.failed or error is None:
        return report
    from harness._errors import NetworkRefused
    from harness.testing._network import refusal_in

    refused = refusal_in(error)
    if refused is None or isinstance(error, NetworkRefused):
        return report
    longrepr = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection("harness: the network guard refused this request", str(refused))
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = f"NetworkRefused: {refused} (surfaced as {crash.message})"
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    coverage = _coverage_report(config)
    if coverage is not None:
        terminalreporter.write_sep("=", "harness injection coverage")
        for line in coverage.splitlines():
            terminalreporter.write_line(line)
    reports = [
        r for key in ("failed", "error", "passed") for r in terminalreporter.stats.get(key, [])
    ]
    entries = [
        (r.nodeid, r.harness_summary) for r in reports if getattr(r, "harness_summary", None)
    ]
    if entries:  # one line per test: where its run first diverged (or what it did)
        terminalreporter.write_sep("=", "harness timelines")
        for nodeid, line in entries:
            terminalreporter.write_line(f"{nodeid}: {line}")
    written = [
        str(value)
        for r in terminalreporter.stats.get("", []) + reports
        for key, value in getattr(r, "user_properties", ())
        if key == _opts.SNAPSHOT_PROPERTY and getattr(r, "when", "") == "teardown"
    ]
    if written:
        terminalreporter.write_sep("-", f"harness: {len(written)} timeline snapshot(s) written")
        for path in written:
            terminalreporter.write_line(path)


def pytest_sessionfinish(session: pytest.Session) -> None:
    snapshots = sys.modules.get("harness.testing._snapshot")
    if snapshots is not None:
        snapshots.apply_inline_updates()
    path = _opts.cli_or_ini(session.config, _opts.HTML)
    if path is not None and not hasattr(session.config, "workerinput"):
        from harness.testing._report import html_page

        page = Path(session.config.invocation_params.dir, path)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(html_page(session.config.stash.get(_PAGE, [])), encoding="utf-8")


def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    assertions = sys.modules.get("harness.assertions")
    if assertions is None or op not in ("==", "!="):
        return None
    if isinstance(right, assertions.Expectation):
        expectation, subject = right, left
    elif isinstance(left, assertions.Expectation):
        expectation, subject = left, right
    else:
        return None
    try:
        verdict = expectation.check(subject, record=False)
    except Exception:
        return None
    if op == "!=":
        return [f"expected the run not to satisfy: {expectation.description} (it does)"]
    if verdict.passed or verdict.failure is None:
        return None
    # below -vv pytest keeps 8 lines: a compact table keeps the marked row in them
    lines: list[str] = verdict.lines(window=10, compact=_assertion_verbosity(config) < 2)
    return lines


def _assertion_verbosity(config: pytest.Config) -> int:
    get = getattr(config, "get_verbosity", None)
    if get is not None:
        return int(get("assertions"))
    return int(config.getoption("verbose"))


# -- collection: scenario files and the harness_scenario marker ------------------------


def pytest_collect_file(file_path: Any, parent: pytest.Collector) -> pytest.Collector | None:
    patterns = parent.config.getini(_opts.SCENARIO_PATHS_INI)
    if not patterns or file_path.suffix not in (".yaml", ".yml"):
        return None
    from harness.testing._items import ScenarioFile, matches_patterns

    if not matches_patterns(file_path, parent.config.rootpath, patterns):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("harness_scenario")
    if marker is None:
        return
    from harness._errors import UsageError
    from harness.testing._items import scenario_paths

    if not marker.args:
        raise UsageError("harness_scenario needs a path: @pytest.mark.harness_scenario('x.yaml')")
    bases = [metafunc.definition.path.parent, metafunc.config.rootpath]
    paths = [p for pattern in marker.args for p in scenario_paths(str(pattern), bases)]
    if "harness_scenario" not in metafunc.fixturenames:
        metafunc.fixturenames.append("harness_scenario")
    metafunc.parametrize(
        "harness_scenario", paths, indirect=True, ids=[p.stem for p in paths], scope="function"
    )


# -- fixtures ----------------------------------------------------------------------------


def _allow_hosts(config: pytest.Config) -> list[str]:
    value = _opts.cli_or_ini(config, _opts.ALLOW_HOSTS) or ""
    return [h.strip() for h in str(value).replace("\n", ",").split(",") if h.strip()]


def _phase_network(item: pytest.Item) -> str:
    """The network mode known before fixtures run: command line or ini, else the
    ``harness_config`` fixture when it is the built-in one or takes no arguments."""
    network = _opts.cli_or_ini(item.config, _opts.NETWORK)
    if network is not None:
        return str(network)
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.get("harness_config") if info is not None else None
    if defs:
        fixturedef = defs[-1]
        builtin = getattr(fixturedef.func, "__module__", "") == __name__
        if not builtin and not fixturedef.argnames:
            try:
                return getattr(fixturedef.func(), "network", None) or "deny"
            except Exception:
                return "deny"
    return "deny"


@contextlib.contextmanager
def _phase_guard(item: pytest.Item) -> Iterator[None]:
    network = _phase_network(item)
    if network == "deny-all" or (network == "deny" and _uses_harness(item)):
        from harness.testing._network import deny_network

        with deny_network(item.nodeid, _how_to_allow(item), allow_hosts=_allow_hosts(item.config)):
            yield
        return
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Guard fixture setup too, session- and module-scoped fixtures included."""
    with _phase_guard(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    with _phase_guard(item):
        return (yield)


@pytest.fixture(autouse=True)
def _harness_network(request: pytest.FixtureRequest) -> Iterator[None]:
    """Refuse real network per the resolved ``network`` setting (one job: the guard)."""
    item = request.node
    network = _opts.cli_value(request.config, _opts.NETWORK)
    if network is None:  # only then the per-test layers can matter
        network = request.getfixturevalue("harness_settings").network
    if network == "deny-all" or (network == "deny" and _uses_harness(item)):
        from harness.testing._network import deny_network

        with deny_network(
            item.nodeid, _how_to_allow(item), allow_hosts=_allow_hosts(request.config)
        ):
            yield
        return
    yield


@pytest.fixture(autouse=True)
def _harness_cassette_guard(request: pytest.FixtureRequest, _harness_network: None) -> None:
    """Activate a marked test's cassette for the whole test (one job: the cassette)."""
    if _cassette_markers(request.node):
        request.getfixturevalue("harness_cassette")


@pytest.fixture
def harness_config() -> HarnessConfig:
    """Defaults for harness fixtures; override it in a ``conftest.py`` (returns a
    ``harness.testing.HarnessConfig``). The command line and the test's marker win."""
    from harness.testing import HarnessConfig

    return HarnessConfig()


@pytest.fixture
def harness_settings(request: pytest.FixtureRequest, harness_config: HarnessConfig) -> Settings:
    """The settings in force for this test, after the precedence rule
    (CLI > marker > fixture > ini > default)."""
    from harness._errors import SettingOverridden
    from harness.testing import resolve_settings
    from harness.testing._config import check_marker_kwargs

    markers = _cassette_markers(request.node)
    kwargs: dict[str, Any] = {}
    for mark in markers:  # weakest first: harness_cassette's arguments beat vcr's
        check_marker_kwargs(mark.name, mark.args, mark.kwargs)
        kwargs.update({k: v for k, v in mark.kwargs.items() if v is not None})
    aliases = request.config.stash.get(_ALIASES, True)
    settings = resolve_settings(
        request.config,
        harness_config,
        kwargs or None,
        vcr_config=request.getfixturevalue("vcr_config") if aliases else None,
        marker="/".join(m.name for m in markers) or "harness_cassette",
    )
    for sentence in settings.overridden:
        request.node.warn(SettingOverridden(sentence))
    return settings


@pytest.fixture
def harness_cassette_path(request: pytest.FixtureRequest, harness_settings: Settings) -> Path:
    """Where the test's cassette lives: ``<cassette dir>/<test module>/<name>.yaml``, the
    name from the marker's ``name`` (or first argument), else the test's name. Override it
    to use another layout (e.g. pytest-recording's, next to the test module)."""
    from harness.testing import cassette_path

    name = None
    for mark in _cassette_markers(request.node):
        name = mark.kwargs.get("name") or (mark.args[0] if mark.args else None) or name
    return cassette_path(
        harness_settings.cassette_dir, request.node.path, name or request.node.name
    )


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
    from harness.testing import HarnessRunner

    return HarnessRunner()


@pytest.fixture
def harness_mcp() -> Iterator[McpFakes]:
    """A factory for fake MCP servers (needs the ``mcp`` extra):
    ``harness_mcp("shop", [{"name": "search", "result": "[]"}], changes=[...])`` returns an
    ``McpServer`` on a scripted in-memory server; all are closed after the test."""
    from harness.testing import McpFakes

    fakes = McpFakes()
    try:
        yield fakes
    finally:
        fakes.close()


@pytest.fixture
def harness_scenario(request: pytest.FixtureRequest) -> ScenarioOutcome:
    """The outcome of running the ``harness_scenario`` marker's file (fails the test when
    the scenario's expectations fail, unless the marker says ``check=False``)."""
    from harness._errors import UsageError
    from harness.testing._items import describe_failure, run_scenario_file

    marker = request.node.get_closest_marker("harness_scenario")
    path = getattr(request, "param", None)
    if marker is None or path is None:
        raise UsageError(
            "the harness_scenario fixture needs @pytest.mark.harness_scenario('path.yaml')"
        )
    outcome = run_scenario_file(path)
    if marker.kwargs.get("check", True) and not outcome.passed:
        request.node.stash[_SCENARIO_FAILURE] = describe_failure(outcome)
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
    from harness._errors import UsageError

    raise UsageError(
        "harness_openai serves the harness_model fixture: override harness_model in your test "
        "module or conftest.py (return a Model, e.g. harness_scripted([...])), mark the test "
        "with harness_scenario('file.yaml'), or replay a cassette with harness_cassette"
    )


def cassette_match_on(match_on: Any) -> tuple[str, ...]:
    """The vcrpy ``match_on`` list for a setting (presets expanded)."""
    from harness.testing._vcr import expand_match_on

    return expand_match_on(match_on)


@pytest.fixture
def harness_cassette(
    request: pytest.FixtureRequest, harness_settings: Settings, harness_cassette_path: Path
) -> Iterator[Any]:
    """The test's vcrpy cassette (at ``harness_cassette_path``), active for the test;
    record mode, matchers and filters follow the settings. ``None`` under
    ``--disable-recording``."""

    from harness._errors import CassetteError
    from harness.testing import open_cassette

    if harness_settings.disable_recording:
        yield None
        return
    filters = harness_settings.cassette_filters  # the most specific layer's names
    hook = request.config.hook
    matchers: dict[str, Any] = {}
    for mapping in hook.pytest_harness_cassette_matchers(config=request.config):
        matchers.update(mapping or {})
    scrubbers = [
        s
        for group in hook.pytest_harness_cassette_scrubbers(config=request.config)
        for s in group or ()
    ]
    harness_config = request.getfixturevalue("harness_config")
    marker_kwargs: dict[str, Any] = {}
    for mark in _cassette_markers(request.node):  # weakest first: vcr, then harness_cassette
        marker_kwargs.update(mark.kwargs)
    match_on = harness_settings.match_on
    if marker_kwargs.get("match") is not None:
        match_on = (str(marker_kwargs["match"]),)  # a preset: semantic, strict, path-only
    opened = open_cassette(
        harness_cassette_path,
        record_mode=harness_settings.record_mode,
        match_on=match_on,
        matchers=matchers,
        scrubbers=scrubbers,
        secrets=getattr(harness_config, "secrets", ()),
        unused=str(marker_kwargs.get("unused") or "warn"),
        **filters,
    )
    with contextlib.ExitStack() as stack:
        problem: str | None = None
        try:
            cassette = stack.enter_context(opened)
        except CassetteError as exc:  # missing in replay mode, unreadable: the advice alone,
            problem = str(exc)  # not the plugin's frames above it (nor a chained copy)
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        request.node.stash[_CASSETTE] = (cassette, cassette_match_on(match_on))
        yield cassette


def _require_openai(feature: str) -> None:
    from harness._extras import require

    require("openai", feature)


def _client_kwargs(request: pytest.FixtureRequest) -> dict[str, Any] | None:
    """Arguments for a real client replaying or recording the cassette, or ``None`` for the
    fake. The ``harness_server`` the test uses wins, then ``harness_config``, then
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""
    if not _cassette_markers(request.node):
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
    from harness.testing import TimelineSnapshot

    snapshot = TimelineSnapshot(
        test_path=request.node.path,
        test_name=request.node.name,
        update=harness_settings.update_snapshots,
        worker=hasattr(request.config, "workerinput"),
    )
    yield snapshot
    for path in snapshot.written:
        request.node.user_properties.append((_opts.SNAPSHOT_PROPERTY, str(path)))
