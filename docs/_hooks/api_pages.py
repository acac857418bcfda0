"""mkdocs hook: one API reference page per public package, made at build time.

The public packages are the keys of ``tests/public_api.json`` (the pinned public API),
their names each package's ``__all__``. Every object is documented once, on the page
of its *home*: the most specific public package that exports it and whose name its
module starts with (``harness.formats.ToolDefinition``, defined in
``harness.formats._definitions``); the other pages that export it link there. The
pages are rendered by mkdocstrings from the docstrings (griffe reads the source).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
FOLDER = "reference"


def public_packages() -> list[str]:
    """The public packages, ``harness`` first, then by name."""
    pinned = json.loads((ROOT / "tests" / "public_api.json").read_text(encoding="utf-8"))
    return sorted(pinned, key=lambda name: (name != "harness", name))


def _exports(packages: Iterable[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for package in packages:
        module = importlib.import_module(package)
        out[package] = {name: getattr(module, name) for name in module.__all__}
    return out


Key = tuple[int, str]
"""An exported object: its ``id`` and the name it is exported under (two names bound to
one object, such as two aliases of ``tuple[str, ...]``, are two entries)."""


def homes(exports: dict[str, dict[str, Any]]) -> dict[Key, str]:
    """The home package of each exported object."""
    listed: dict[Key, list[str]] = {}
    modules: dict[Key, str] = {}
    for package, names in exports.items():
        for name, value in names.items():
            key = (id(value), name)
            listed.setdefault(key, []).append(package)
            module = getattr(value, "__module__", None)
            if isinstance(module, str) and callable(value):
                modules[key] = module
    out = {}
    for key, packages in listed.items():
        module = modules.get(key, "")
        owners = [p for p in packages if module == p or module.startswith(p + ".")]
        out[key] = max(owners or packages, key=len)
    return out


def _page(package: str, names: dict[str, Any], home: dict[Key, str]) -> str:
    where = {name: home[(id(value), name)] for name, value in names.items()}
    own = sorted(name for name, owner in where.items() if owner == package)
    elsewhere = sorted((name, owner) for name, owner in where.items() if owner != package)
    lines = [f"# `{package}`", "", f"::: {package}", "    options:"]
    lines += ["      show_root_heading: false", "      show_root_toc_entry: false"]
    if own:
        lines.append("      members:")
        lines += [f"        - {name}" for name in own]
    else:
        lines.append("      members: false")
    if elsewhere:
        lines += ["", "## Also exported here", "", "| name | documented in |", "| --- | --- |"]
        lines += [f"| `{name}` | [`{owner}.{name}`][{owner}.{name}] |" for name, owner in elsewhere]
    return "\n".join(lines) + "\n"


def _index(packages: list[str], exports: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# API reference",
        "",
        "One page per public package, made from the docstrings. What counts as public, and",
        "how long a renamed name keeps working: [versions and deprecations](../versioning.md).",
        "",
        "| package | names |",
        "| --- | --- |",
    ]
    lines += [f"| [`{p}`]({p}.md) | {len(exports[p])} |" for p in packages]
    return "\n".join(lines) + "\n"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Give the nav's ``API reference`` entry the index and a page per package."""
    pages: list[Any] = [f"{FOLDER}/index.md"]
    pages += [{package: f"{FOLDER}/{package}.md"} for package in public_packages()]
    for entry in config.nav or []:
        if isinstance(entry, dict) and "API reference" in entry:
            entry["API reference"] = pages
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add ``reference/index.md`` and ``reference/<package>.md`` to the site's files."""
    packages = public_packages()
    exports = _exports(packages)
    home = homes(exports)
    files.append(File.generated(config, f"{FOLDER}/index.md", content=_index(packages, exports)))
    for package in packages:
        content = _page(package, exports[package], home)
        files.append(File.generated(config, f"{FOLDER}/{package}.md", content=content))
    return files
