"""The documentation site: built with ``mkdocs build --strict`` (a broken link, anchor or
reference fails it), with an API reference page per public package where every public
name is documented once, on its home package's page."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = ROOT / "mkdocs.yml"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_pages", ROOT / "docs/_hooks/api_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_every_public_name_has_one_home_that_exports_it() -> None:
    hook = _hook()
    exports = hook._exports(hook.public_packages())
    home = hook.homes(exports)
    for package, names in exports.items():
        for name, value in names.items():
            owner = home[(id(value), name)]
            assert name in exports[owner], (package, name, owner)
    import harness

    assert home[(id(harness.ToolDefinition), "ToolDefinition")] == "harness.tools"
    assert home[(id(harness.run), "run")] == "harness.loop"
    assert home[(id(harness.HarnessError), "HarnessError")] == "harness"  # harness._errors


def test_the_site_is_strict_about_links_anchors_and_pages() -> None:
    text = MKDOCS.read_text(encoding="utf-8")
    assert re.search(r"^strict: true$", text, re.M)
    for check in ("omitted_files", "absolute_links", "unrecognized_links", "anchors"):
        assert re.search(rf"^  {check}: warn$", text, re.M), check


@pytest.mark.slow
def test_the_site_builds_strictly_with_an_api_page_per_package(tmp_path: Path) -> None:
    done = _build(MKDOCS, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    for package in _hook().public_packages():
        assert (site / "reference" / package / "index.html").is_file(), package
    tools = (site / "reference" / "harness.tools" / "index.html").read_text(encoding="utf-8")
    assert 'id="harness.tools.Tool"' in tools and 'id="harness.tools.llm_tool"' in tools
    top = (site / "reference" / "harness" / "index.html").read_text(encoding="utf-8")
    assert 'href="../harness.loop/#harness.loop.run"' in top  # re-exported: a link home
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "0.1.0" in changelog  # CHANGELOG.md, included


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the page](missing.md).\n", encoding="utf-8")
    validation = re.search(r"^validation:\n(?:  .*\n)+", MKDOCS.read_text(encoding="utf-8"), re.M)
    assert validation is not None
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nstrict: true\n{validation.group(0)}", encoding="utf-8")
    done = _build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "missing.md" in done.stdout + done.stderr
