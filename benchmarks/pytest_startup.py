"""pytest start-up: what installing the harness adds to ``pytest --co -q`` in an unrelated project.

Installing a distribution that registers a ``pytest11`` entry point makes pytest import
that plugin at every start, and mark the distribution's packages for assertion
rewriting. So the cost of installing the harness is the plugins of every distribution
its install brings (its own, and those of its requirements, transitively).

This benchmark measures that in the current environment, without installing anything
and without network: it writes a one-test project to a temporary folder and runs
``python -m pytest --co -q -p no:cacheprovider`` there, each run seeing only the
plugin distributions of one variant (a small launcher hides the others from
``importlib.metadata``, so pytest's autoload and rewrite marking behave as if only
those were installed):

- ``pytest alone``: no plugin distribution (the project without the harness);
- ``base install``: the plugins of ``tool-loop-harness`` and of its required
  dependencies (what ``pip install tool-loop-harness`` brings);
- ``+ extra X`` (``--extra X``, repeatable): the base install plus the extra's
  requirements, e.g. ``--extra openai`` is the base install as it was while
  ``openai`` (which requires ``anyio``, whose plugin imports asyncio) was required;
- ``all installed`` (``--all``): every plugin of the environment (plain autoload).

Variants run interleaved, ``--repeats`` rounds after one discarded warm-up round;
medians and the difference to ``pytest alone`` are printed. Target: the base install
adds at most 0.3 s. ``--cold`` also re-rewrites every marked module on each start, as
pytest does when its rewritten-module cache cannot be written (e.g. with
``PYTHONDONTWRITEBYTECODE=1`` on a fresh environment); by default that cache is warm.

Run: ``python benchmarks/pytest_startup.py --extra openai`` (``--quick`` for a smoke
run). The environment must have ``tool-loop-harness`` installed, and the distributions
of every requested extra for its variant to mean anything (the dev install has them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

PROJECT = "tool-loop-harness"
TARGET_SECONDS = 0.3

LAUNCHER = r"""
import importlib.metadata as md, json, os, sys

allowed = set(json.loads(os.environ["_STARTUP_ALLOWED"]))
original = md.distributions


def _name(dist):
    import re
    return re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()


def distributions(**kwargs):
    for dist in original(**kwargs):
        plugin = any(ep.group == "pytest11" for ep in dist.entry_points)
        if plugin and _name(dist) not in allowed:
            continue
        yield dist


md.distributions = distributions
if os.environ.get("_STARTUP_COLD"):
    from _pytest.assertion import rewrite

    rewrite._read_pyc = lambda *args, **kwargs: None
    rewrite._write_pyc = lambda *args, **kwargs: True
import pytest

sys.exit(pytest.main(sys.argv[1:]))
"""


def normalize(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(root: str, extras: Iterable[str] = ()) -> set[str]:
    """``root`` and the installed distributions its requirements (and ``extras``) bring."""
    seen: set[str] = set()
    queue: list[tuple[str, frozenset[str]]] = [(normalize(root), frozenset(extras))]
    expanded: set[tuple[str, frozenset[str]]] = set()
    while queue:
        name, wanted = queue.pop()
        if (name, wanted) in expanded:
            continue
        expanded.add((name, wanted))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: it cannot register a plugin in this environment
        seen.add(name)
        for line in requires:
            requirement = Requirement(line)
            marker = requirement.marker
            active = (
                marker is None
                or marker.evaluate({"extra": ""})
                or any(marker.evaluate({"extra": extra}) for extra in wanted)
            )
            if active:
                queue.append((normalize(requirement.name), frozenset(requirement.extras)))
    return seen


def plugin_distributions() -> dict[str, list[str]]:
    """Installed distributions that register pytest plugins -> their plugin modules."""
    found: dict[str, list[str]] = {}
    for dist in metadata.distributions():
        plugins = [ep.value for ep in dist.entry_points if ep.group == "pytest11"]
        if plugins:
            found.setdefault(normalize(dist.metadata["Name"] or ""), []).extend(plugins)
    return found


def write_project(folder: Path) -> None:
    """An unrelated one-test project (its own ini file, so no outer config applies)."""
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_one.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env(allowed: set[str], *, cold: bool) -> dict[str, str]:
    """The environment of a pytest start that sees only the ``allowed`` plugin distributions."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # let pytest cache rewritten modules (warm)
    env["_STARTUP_ALLOWED"] = json.dumps(sorted(allowed))
    if cold:
        env["_STARTUP_COLD"] = "1"
    return env


def run_once(folder: Path, launcher: Path, allowed: set[str], *, cold: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one ``pytest --co -q`` start seeing only ``allowed`` plugins."""
    env = child_env(allowed, cold=cold)
    command = [sys.executable, str(launcher), "--co", "-q", "-p", "no:cacheprovider"]
    cpu, start = _child_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - start, _child_cpu() - cpu
    if done.returncode != 0 or "1 test collected" not in done.stdout or done.stderr:
        raise RuntimeError(
            f"pytest failed for plugins {sorted(allowed)}:\n{done.stdout}{done.stderr}"
        )
    return elapsed, cpu


def variants(extras: list[str], everything: bool) -> dict[str, set[str]]:
    """Variant name -> the plugin distributions it sees."""
    plugins = plugin_distributions()
    if normalize(PROJECT) not in plugins:
        raise SystemExit(f"{PROJECT} is not installed in this environment ({sys.executable})")
    chosen: dict[str, set[str]] = {
        "pytest alone": set(),
        "base install": closure(PROJECT) & set(plugins),
    }
    for extra in extras:
        chosen[f"+ extra {extra}"] = closure(PROJECT, [extra]) & set(plugins)
    if everything:
        chosen["all installed"] = set(plugins)
    return chosen


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; return medians and deltas per variant (for the smoke test)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7, help="measured rounds (median)")
    parser.add_argument("--extra", action="append", default=[], help="also time base + EXTRA")
    parser.add_argument("--all", action="store_true", help="also time every installed plugin")
    parser.add_argument("--cold", action="store_true", help="no rewritten-module cache")
    parser.add_argument("--quick", action="store_true", help="one round, for smoke tests")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    chosen = variants(args.extra, args.all)
    plugins = plugin_distributions()
    wall: dict[str, list[float]] = {name: [] for name in chosen}
    cpu: dict[str, list[float]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder)
        launcher = folder / "launch_pytest.py"
        launcher.write_text(LAUNCHER, encoding="utf-8")
        for round_ in range(repeats + 1):  # round 0 warms the caches and is dropped
            for name, allowed in chosen.items():
                elapsed, used = run_once(folder, launcher, allowed, cold=args.cold)
                if round_:
                    wall[name].append(elapsed)
                    cpu[name].append(used)
    medians = {name: statistics.median(values) for name, values in wall.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    print(
        f"pytest --co -q in a one-test project, median of {repeats} interleaved runs "
        f"({'cold' if args.cold else 'warm'} rewrite cache; Python {sys.version.split()[0]}, "
        f"pytest {metadata.version('pytest')})"
    )
    print(f"{'variant':<16} {'wall s':>7} {'added':>7} {'cpu s':>7} {'added':>7}  plugins")
    results: dict[str, Any] = {}
    for name, allowed in chosen.items():
        added = medians[name] - medians["pytest alone"]
        cpu_added = cpu_medians[name] - cpu_medians["pytest alone"]
        shown = ", ".join(f"{dist} ({'/'.join(plugins[dist])})" for dist in sorted(allowed))
        print(
            f"{name:<16} {medians[name]:>7.3f} {added:>+7.3f} {cpu_medians[name]:>7.3f} "
            f"{cpu_added:>+7.3f}  {shown or '-'}"
        )
        results[name] = {
            "median": medians[name],
            "added": added,
            "cpu": cpu_medians[name],
            "cpu_added": cpu_added,
            "plugins": sorted(allowed),
        }
    added = results["base install"]["added"]
    verdict = "met" if added <= TARGET_SECONDS else "MISSED"
    print(f"target: the base install adds at most {TARGET_SECONDS} s: {verdict} ({added:+.3f} s)")
    return results


if __name__ == "__main__":
    main()
