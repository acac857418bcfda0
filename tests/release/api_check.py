"""The public API as data, and the check that a release breaks nothing unannounced.

``api/<version>.json`` pins the public API of a release: for every public package (the
keys of ``tests/public_api.json``), every name its ``__all__`` lists, with its kind and,
for functions and classes, the signature (and a class's public members). griffe reads
the signatures from the source (no import of the code it describes); the names come from
``__all__`` at run time, since the lazy packages build theirs from their source
(``harness._lazy``).

The check rebuilds both sides as griffe objects and asks ``griffe.find_breaking_changes``
what breaks between the last release's file and the working tree. A change fails it when
it removes or renames a public name or a class member, removes, reorders or changes the
kind of a parameter, or adds a required one, unless

- the old name is a deprecated alias (routed through ``harness._deprecation.
  deprecated_getattr``, so ``harness._deprecation.deprecated_names()`` lists it, and it
  warns): it counts as kept, with the signature of the object it stands for; or
- a ``breaking`` fragment in ``changes/`` names it (or the class or function it belongs
  to) in backticks: ``` `harness.fuzz.ParamSpec` ```.

Other differences griffe finds (a changed default, a changed return annotation) are
listed, never fatal. ``docs/contributing.md`` ("Releases") says when to write a new file.

    python tests/release/api_check.py check                      # what CI runs (as a test)
    python tests/release/api_check.py dump --release 0.2.0        # api/0.2.0.json, at a release
    python tests/release/api_check.py dump --release 0.1.0 --source /tmp/api-010 --commit 0a48667
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "api"
CHANGES = ROOT / "changes"
PINNED = ROOT / "tests" / "public_api.json"

FATAL = frozenset(
    {
        griffe.BreakageKind.OBJECT_REMOVED,
        griffe.BreakageKind.OBJECT_CHANGED_KIND,
        griffe.BreakageKind.PARAMETER_REMOVED,
        griffe.BreakageKind.PARAMETER_MOVED,
        griffe.BreakageKind.PARAMETER_CHANGED_KIND,
        griffe.BreakageKind.PARAMETER_CHANGED_REQUIRED,
        griffe.BreakageKind.PARAMETER_ADDED_REQUIRED,
    }
)
"""What breaks a caller's code: a name gone, a parameter gone, moved, or newly required."""

_KIND = griffe.ParameterKind
# griffe declares the members as plain strings: call the enum to get members mypy knows
POSITIONAL_ONLY, POSITIONAL, KEYWORD_ONLY = (
    _KIND("positional-only"),
    _KIND("positional or keyword"),
    _KIND("keyword-only"),
)
VAR_POSITIONAL, VAR_KEYWORD = _KIND("variadic positional"), _KIND("variadic keyword")

Entry = dict[str, Any]
"""One public object: ``{"kind": ..., "signature": [...], "members": {...}}``."""


# -- from source to data ---------------------------------------------------------------------


def _signature(function: griffe.Function, *, method: bool) -> list[str]:
    """The parameters as Python writes them: ``a``, ``b=1``, ``/``, ``*``, ``*args``, ``**kw``."""
    params = list(function.parameters)
    if method and "staticmethod" not in function.labels and params:
        params = params[1:]  # self or cls
    out: list[str] = []
    star = False
    for index, param in enumerate(params):
        kind = param.kind
        if kind is VAR_POSITIONAL:
            out.append(f"*{param.name}")
            star = True
        elif kind is VAR_KEYWORD:
            out.append(f"**{param.name}")
        else:
            if kind is KEYWORD_ONLY and not star:
                out.append("*")
                star = True
            default = "" if param.default is None else f"={param.default}"
            out.append(f"{param.name}{default}")
        following = params[index + 1].kind if index + 1 < len(params) else None
        if kind is POSITIONAL_ONLY and following is not POSITIONAL_ONLY:
            out.append("/")
    return out


def _public(name: str) -> bool:
    return not name.startswith("_")


def _resolved(obj: griffe.Object | griffe.Alias | None) -> griffe.Object | None:
    """``obj`` itself, or the object an alias points to (``None`` when it points outside)."""
    if isinstance(obj, griffe.Alias):
        try:
            return obj.final_target
        except griffe.AliasResolutionError:
            return None
    return obj


def describe(obj: griffe.Object | griffe.Alias, *, method: bool = False, depth: int = 0) -> Entry:
    """``obj`` (resolved when it is an alias) as an entry of the API file."""
    target = _resolved(obj)
    if target is None:
        return {"kind": "attribute"}  # re-exported from another library
    if isinstance(target, griffe.Class):
        entry: Entry = {"kind": "class"}
        init = _resolved(target.all_members.get("__init__"))
        if isinstance(init, griffe.Function):
            entry["signature"] = _signature(init, method=True)
        if depth < 2:
            members = {
                name: describe(member, method=True, depth=depth + 1)
                for name, member in sorted(target.all_members.items())
                if _public(name)
            }
            if members:
                entry["members"] = members
        return entry
    if isinstance(target, griffe.Function):
        if "property" in target.labels:
            return {"kind": "attribute"}
        return {"kind": "function", "signature": _signature(target, method=method)}
    if isinstance(target, griffe.Module):
        return {"kind": "module"}
    return {"kind": "attribute"}


_EXPORTS = """
import importlib, json, sys, warnings
packages = json.loads(sys.argv[1])
out = {"exports": {}, "deprecated": {}}
for package in packages:
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError:
        continue  # a package this tree does not have
    out["exports"][package] = sorted(module.__all__)
try:
    from harness._deprecation import deprecated_names
except ImportError:  # a release before harness._deprecation
    deprecated_names = dict
for path, renamed in deprecated_names().items():
    package, _, old = path.rpartition(".")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(importlib.import_module(package), old)
    warns = any(issubclass(w.category, DeprecationWarning) for w in caught)
    out["deprecated"][path] = {"module": renamed.module, "new": renamed.new, "warns": warns}
print(json.dumps(out))
"""


def _runtime(source: Path, packages: list[str]) -> dict[str, Any]:
    """``__all__`` of each package and the deprecated aliases, imported from ``source``."""
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _EXPORTS, json.dumps(packages)],
        cwd=source,  # the first entry of sys.path: this tree's harness, not the installed one
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"importing harness from {source} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _load(source: Path) -> griffe.Module:
    logging.getLogger("griffe").setLevel(logging.ERROR)
    loaded = griffe.load("harness", search_paths=[source], resolve_aliases=True)
    assert isinstance(loaded, griffe.Module)
    return loaded


def _lookup(root: griffe.Module, path: str) -> griffe.Object | griffe.Alias | None:
    """The object at dotted ``path`` (``harness.fuzz.ParamSpec``) in the loaded package."""
    parts = path.split(".")
    if parts[0] != root.name:
        return None
    try:
        return root[".".join(parts[1:])] if len(parts) > 1 else root
    except (KeyError, griffe.AliasResolutionError):
        return None


def snapshot(source: Path, packages: list[str]) -> dict[str, Any]:
    """The public API of the tree at ``source``: ``packages`` (each ``{name: entry}``) and
    ``deprecated`` (each routed old name, with the entry of what it stands for)."""
    runtime = _runtime(source, packages)
    root = _load(source)
    api: dict[str, dict[str, Entry]] = {}
    for package, names in runtime["exports"].items():
        entries: dict[str, Entry] = {}
        for name in names:
            obj = _lookup(root, f"{package}.{name}")
            entries[name] = {"kind": "attribute"} if obj is None else describe(obj)
        api[package] = entries
    deprecated: dict[str, Entry | None] = {}
    for path, alias in runtime["deprecated"].items():
        if not alias["warns"]:
            continue  # routed, but silent: not a deprecated alias
        target = _lookup(root, f"{alias['module']}.{alias['new']}")
        deprecated[path] = None if target is None else describe(target)
    return {"packages": api, "deprecated": deprecated}


# -- from data back to griffe, and the comparison ----------------------------------------------


def _parameters(signature: Iterable[str], *, method: bool) -> griffe.Parameters:
    params = [griffe.Parameter("self", kind=POSITIONAL)] if method else []
    kind = POSITIONAL
    pending: list[griffe.Parameter] = []
    for item in signature:
        if item == "/":
            for param in pending:
                param.kind = POSITIONAL_ONLY
            continue
        if item == "*":
            kind = KEYWORD_ONLY
            continue
        # griffe counts a parameter without a default as required, *args and **kwargs too
        if item.startswith("**"):
            params.append(griffe.Parameter(item[2:], kind=VAR_KEYWORD, default="{}"))
            continue
        if item.startswith("*"):
            params.append(griffe.Parameter(item[1:], kind=VAR_POSITIONAL, default="()"))
            kind = KEYWORD_ONLY
            continue
        name, has_default, default = item.partition("=")
        param = griffe.Parameter(name, kind=kind, default=default if has_default else None)
        params.append(param)
        pending.append(param)
    return griffe.Parameters(*params)


def _rebuild(name: str, entry: Entry, *, method: bool = False) -> griffe.Object:
    kind = entry["kind"]
    if kind == "class":
        cls = griffe.Class(name)
        if "signature" in entry:
            init = griffe.Function(
                "__init__", parameters=_parameters(entry["signature"], method=True)
            )
            cls.set_member("__init__", init)
        for member, sub in entry.get("members", {}).items():
            cls.set_member(member, _rebuild(member, sub, method=True))
        return cls
    if kind == "function":
        return griffe.Function(name, parameters=_parameters(entry["signature"], method=method))
    if kind == "module":
        return griffe.Module(name)
    return griffe.Attribute(name)


def rebuild(package: str, entries: Mapping[str, Entry]) -> griffe.Module:
    """A griffe module named ``package`` holding ``entries`` (every one of them public)."""
    module = griffe.Module(package)
    for name, entry in entries.items():
        module.set_member(name, _rebuild(name, entry))
    module.exports = list(entries)
    return module


def announced(changes: Path) -> set[str]:
    """The API paths the ``breaking`` fragments in ``changes`` name in backticks."""
    paths: set[str] = set()
    for fragment in sorted(changes.glob("*.md")):
        if fragment.name.split(".")[1:2] != ["breaking"]:
            continue
        for quoted in re.findall(r"`([^`\n]+)`", fragment.read_text(encoding="utf-8")):
            match = re.match(r"[A-Za-z_][\w.]*", quoted)
            if match:
                paths.add(match.group(0).rstrip("."))
    return paths


@dataclasses.dataclass(frozen=True, kw_only=True)
class Problem:
    """One difference griffe found, where it is and what it is."""

    path: str
    """The public path of the object (``harness.run``, ``harness.Tool.definition``)."""
    what: str
    """griffe's kind of breakage, with the parameter or the move when there is one."""
    fatal: bool
    """A name or parameter a caller uses is gone, moved or newly required."""

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Report:
    """What changed since the release, sorted out."""

    release: str
    unannounced: list[Problem]
    """Breaking, with no deprecated alias and no ``breaking`` fragment: fails the check."""
    announced: list[Problem]
    """Breaking, named by a ``breaking`` fragment."""
    kept: list[str]
    """Old names that live on as deprecated aliases."""
    notes: list[Problem]
    """Differences that break no caller (a default, a return annotation)."""

    def explain(self) -> str:
        lines = [f"API check against {self.release}:"]
        if self.unannounced:
            lines.append(
                f"{len(self.unannounced)} breaking change(s) with neither a deprecated alias "
                "(harness._deprecation) nor a changes/<issue>.breaking.<n>.md fragment "
                "naming the path in backticks:"
            )
            lines += [f"  {problem}" for problem in self.unannounced]
        lines += [f"  announced: {problem}" for problem in self.announced]
        lines += [f"  kept as a deprecated alias: {path}" for path in self.kept]
        lines += [f"  note: {problem}" for problem in self.notes]
        return "\n".join(lines)


def _problem(breakage: griffe.Breakage) -> Problem:
    what = breakage.kind.value.lower()
    param = breakage.old_value if breakage.old_value is not None else breakage.new_value
    if isinstance(param, griffe.Parameter):
        what += f": {param.name}"
    if breakage.details:
        what += f" ({breakage.details})"
    return Problem(path=breakage.obj.path, what=what, fatal=breakage.kind in FATAL)


def _is_announced(path: str, paths: set[str], packages: Iterable[str]) -> bool:
    """Whether ``path`` or the class or function it belongs to is named (a package is too
    broad to announce everything in it)."""
    parts = path.split(".")
    candidates = {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    return bool((candidates - set(packages)) & paths)


def compare(
    release: Mapping[str, Any], current: Mapping[str, Any], announced_paths: set[str]
) -> Report:
    """The breaking changes from the ``release`` API file's data to the ``current``
    snapshot, given the paths the breaking fragments announce."""
    packages = release["packages"]
    unannounced: list[Problem] = []
    announced_: list[Problem] = []
    notes: list[Problem] = []
    kept: list[str] = []
    for package, entries in packages.items():
        now = dict(current["packages"].get(package, {}))
        for name, entry in entries.items():
            path = f"{package}.{name}"
            if name not in now and path in current["deprecated"]:
                kept.append(path)
                now[name] = current["deprecated"][path] or entry
        for breakage in griffe.find_breaking_changes(
            rebuild(package, entries), rebuild(package, now)
        ):
            problem = _problem(breakage)
            if not problem.fatal:
                notes.append(problem)
            elif _is_announced(problem.path, announced_paths, packages):
                announced_.append(problem)
            else:
                unannounced.append(problem)
    return Report(
        release=str(release.get("release", "?")),
        unannounced=unannounced,
        announced=announced_,
        kept=kept,
        notes=notes,
    )


def latest_release(api: Path = API) -> Path:
    """The API file of the newest release in ``api/`` (by version number)."""

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in path.stem.split("."))

    files = [p for p in api.glob("*.json") if re.fullmatch(r"\d+(\.\d+)*", p.stem)]
    if not files:
        raise FileNotFoundError(f"no API file of a release in {api} (api/<version>.json)")
    return max(files, key=version)


def check(root: Path = ROOT, release_file: Path | None = None) -> Report:
    """The working tree at ``root`` against the last release's API file."""
    release = json.loads((release_file or latest_release(root / "api")).read_text("utf-8"))
    current = snapshot(root, list(release["packages"]))
    return compare(release, current, announced(root / "changes"))


def _format(data: Mapping[str, Any]) -> str:
    """The API file as JSON a reviewer can read: one line per name or class member."""

    def one(entry: Entry) -> str:
        return json.dumps({k: v for k, v in entry.items() if k != "members"})

    lines = ["{"]
    lines += [f" {json.dumps(key)}: {json.dumps(data[key])}," for key in data if key != "packages"]
    lines.append(' "packages": {')
    packages = data["packages"]
    for p_index, (package, entries) in enumerate(packages.items()):
        lines.append(f"  {json.dumps(package)}: {{")
        for e_index, (name, entry) in enumerate(entries.items()):
            last = "" if e_index == len(entries) - 1 else ","
            members = entry.get("members")
            if not members:
                lines.append(f"   {json.dumps(name)}: {one(entry)}{last}")
                continue
            lines.append(f'   {json.dumps(name)}: {one(entry)[:-1]}, "members": {{')
            body = [f"    {json.dumps(m)}: {json.dumps(sub)}" for m, sub in members.items()]
            lines.append(",\n".join(body))
            lines.append(f"   }}}}{last}")
        lines.append("  }" + ("" if p_index == len(packages) - 1 else ","))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def _dump(args: argparse.Namespace) -> int:
    source = Path(args.source).resolve()
    packages = sorted(json.loads((source / "tests" / "public_api.json").read_text("utf-8")))
    data: dict[str, Any] = {"release": args.release}
    if args.commit:
        data["commit"] = args.commit
    data["packages"] = snapshot(source, packages)["packages"]
    out = Path(args.output or API / f"{args.release}.json")
    out.write_text(_format(data), encoding="utf-8")
    print(f"wrote {out} ({sum(len(v) for v in data['packages'].values())} public names)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="write the API file of a release")
    dump.add_argument("--release", required=True, help="the version, e.g. 0.2.0")
    dump.add_argument("--source", default=str(ROOT), help="the released tree (default: here)")
    dump.add_argument(
        "--commit",
        help="the released commit, when it is not the one that adds the file (the fragment "
        "check counts changes after it)",
    )
    dump.add_argument("-o", "--output", help="default: api/<release>.json")
    commands.add_parser("check", help="compare the working tree with the last release")
    args = parser.parse_args(argv)
    if args.command == "dump":
        return _dump(args)
    report = check()
    print(report.explain())
    return 1 if report.unannounced else 0


if __name__ == "__main__":
    sys.exit(main())
