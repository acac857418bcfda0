"""Every relative link in the README and docs/ reaches a file, and a link to a folder of
docs/ reaches one with a README (what GitHub and the site show for it), without
building the site (``test_docs_site.py`` does that, slow)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def broken_links(page: Path, docs: Path = DOCS) -> list[str]:
    """The relative links of ``page`` that reach nothing, or a folder of ``docs`` without
    a README (a folder of code, such as benchmarks/, is browsed as a folder)."""
    text = _CODE.sub("", page.read_text(encoding="utf-8"))
    out = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        folder = path.is_dir() and path.is_relative_to(docs)
        if not path.exists() or (folder and not (path / "README.md").is_file()):
            out.append(target)
    return out


def test_relative_links_reach_pages() -> None:
    broken = {p.relative_to(ROOT).as_posix(): broken_links(p) for p in PAGES}
    assert {page: links for page, links in broken.items() if links} == {}


def test_a_link_to_a_folder_without_a_readme_is_broken(tmp_path: Path) -> None:
    (tmp_path / "example").mkdir()
    page = tmp_path / "index.md"
    page.write_text("[ex](example/) [gone](gone.md) [ok](index.md#top) `[x](no.md)`\n")
    assert broken_links(page, docs=tmp_path) == ["example/", "gone.md"]
    (tmp_path / "example" / "README.md").write_text("# Example\n")
    assert broken_links(page, docs=tmp_path) == ["gone.md"]


def test_the_cassette_page_says_to_scenario_converts_every_conversation() -> None:
    """The CLI writes every conversation of a cassette (``--conversation N`` keeps one);
    the page once said it converted one at a time."""
    from typer.testing import CliRunner

    from harness.cli._app import app

    output = CliRunner().invoke(app, ["cassette", "to-scenario", "--help"]).output
    help_text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", output).split())  # the box rich draws
    assert "default: all of them" in help_text
    page = (DOCS / "cassettes.md").read_text(encoding="utf-8")
    section = page.split("## Showing, checking and converting", 1)[1].split("\n### ", 1)[0]
    assert "one at a time" not in section
    assert "converts whole, every conversation" in section
    assert "`--conversation N` keeps only the N-th" in section
