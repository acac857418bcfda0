"""The pytest plugin's options, ini keys and markers, as named constants (stdlib only).

Every option has an ini twin. Precedence, strongest first: command line, ini file,
the ``harness_config`` fixture, the test's marker, then the built-in default.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = [
    "FILTER_INIS",
    "MARKERS",
    "NETWORK_MODES",
    "OPTIONS",
    "RECORD_MODES",
    "SCENARIO_PATHS_INI",
    "SNAPSHOT_PROPERTY",
    "TIMELINE_MODES",
    "TIMELINE_SECTION",
    "Option",
    "add_options",
    "cli_or_ini",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")
NETWORK_MODES = ("deny", "deny-all", "allow")
TIMELINE_MODES = ("on-failure", "always", "never")
SCENARIO_PATHS_INI = "harness_scenario_paths"
FILTER_INIS = (
    "harness_filter_headers",
    "harness_filter_query_parameters",
    "harness_filter_post_data_parameters",
)
"""Ini keys (one name per line) adding headers, query parameters and body fields to scrub
from cassettes; the suffix is the ``open_cassette``/``HarnessConfig`` keyword."""
TIMELINE_SECTION = "harness timeline"
"""The report section holding a test's run timelines."""
SNAPSHOT_PROPERTY = "harness_snapshot_written"
"""The user property naming a timeline snapshot file a test wrote."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Option:
    """One plugin option: its ``--flag``, its ini key, choices and default."""

    dest: str
    """Attribute on ``config.option`` and the ini key (``harness_...``)."""
    flag: str
    help: str
    choices: tuple[str, ...] | None = None
    default: str | None = None
    """Built-in default, used when no layer sets a value."""
    is_flag: bool = False


RECORD_MODE = Option(
    dest="harness_record_mode",
    flag="--harness-record-mode",
    choices=RECORD_MODES,
    default="none",
    help="cassette record mode: none (replay only, default), once, new_episodes, all",
)
CASSETTE_DIR = Option(
    dest="harness_cassette_dir",
    flag="--harness-cassette-dir",
    help="folder for cassettes (default: <rootdir>/cassettes)",
)
NETWORK = Option(
    dest="harness_network",
    flag="--harness-network",
    choices=NETWORK_MODES,
    default="deny",
    help="real outbound network: deny (in tests using harness fixtures/markers, default), "
    "deny-all (in every test) or allow; loopback is always allowed",
)
ALLOW_HOSTS = Option(
    dest="harness_allow_hosts",
    flag="--harness-allow-hosts",
    help="comma-separated hosts, addresses or CIDR networks that stay reachable while the "
    "network is denied (loopback always is), e.g. db.internal,10.0.0.0/8",
)
TIMELINE = Option(
    dest="harness_timeline",
    flag="--harness-timeline",
    choices=TIMELINE_MODES,
    default="on-failure",
    help="show run timelines in the terminal summary: on-failure (default), always, never",
)
UPDATE_SNAPSHOTS = Option(
    dest="harness_update_snapshots",
    flag="--harness-update-snapshots",
    is_flag=True,
    help="rewrite timeline snapshots that differ (or are missing) instead of failing",
)

OPTIONS = (RECORD_MODE, CASSETTE_DIR, NETWORK, ALLOW_HOSTS, TIMELINE, UPDATE_SNAPSHOTS)
"""Every option, in help order."""

MARKERS = (
    "harness_cassette(name=None, record_mode=None, match_on=None): replay (or record) the "
    "test's HTTP traffic from cassettes/<test module>/<name or test name>.yaml",
    "harness_scenario(path, check=True): run the test against a harness scenario file "
    "(a glob runs it once per matching file); the harness_scenario fixture holds the outcome",
)


def add_options(parser: Any) -> None:
    """Register the options (one group) and their ini twins on a pytest parser."""
    group = parser.getgroup("harness", "tool-loop harness")
    for opt in OPTIONS:
        if opt.is_flag:
            group.addoption(
                opt.flag, action="store_true", dest=opt.dest, default=None, help=opt.help
            )
            parser.addini(opt.dest, help=opt.help, type="bool", default=None)
        else:
            group.addoption(
                opt.flag, dest=opt.dest, choices=opt.choices, default=None, help=opt.help
            )
            parser.addini(opt.dest, help=opt.help, default=None)
    for key in FILTER_INIS:
        parser.addini(
            key,
            help=f"cassettes: more {key.removeprefix('harness_filter_').replace('_', ' ')} "
            "to scrub (one name per line; credential-like names are scrubbed anyway)",
            type="linelist",
            default=[],
        )
    parser.addini(
        SCENARIO_PATHS_INI,
        help="glob patterns (relative to rootdir) of scenario files to collect as tests",
        type="linelist",
        default=[],
    )


def cli_or_ini(config: Any, opt: Option) -> Any:
    """The value set on the command line, else in the ini file, else ``None``.

    An ini value outside the option's choices raises ``pytest.UsageError``.
    """
    value = getattr(config.option, opt.dest, None)
    if value is not None:
        return value
    value = config.getini(opt.dest)
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        value = value.strip()
    if opt.choices is not None and value not in opt.choices:
        import pytest

        from harness._secrets import scrub_message

        raise pytest.UsageError(
            scrub_message(
                f"ini option {opt.dest} = {value!r} is not valid; choose one of "
                f"{', '.join(opt.choices)} (or pass {opt.flag}=...)"
            )
        )
    return value
