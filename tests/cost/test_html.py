"""The cost page: one self-contained file, and what a real browser shows of it.

The browser test renders the page with headless Chromium from the distribution's
packages (``apt-get install chromium``) and checks the DOM it built and the pixels it
drew; it skips, saying so, where no Chromium is installed.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from harness.cli._compare import comparison_html
from harness.cost._html import CACHED_COLOUR, UNCACHED_COLOUR
from harness.scenarios import ComparisonResult, run_comparison

ROOT = Path(__file__).resolve().parents[2]
FILE_TOOLS = ROOT / "scenarios" / "compare" / "file_tools.yaml"
BROWSER = next((b for b in ("chromium", "chromium-browser") if shutil.which(b)), None)
NO_BROWSER = "no headless Chromium on this machine: apt-get install chromium to run this test"


@pytest.fixture(scope="module")
def result() -> ComparisonResult:
    return run_comparison(FILE_TOOLS)


def test_the_page_fetches_nothing(result: ComparisonResult) -> None:
    page = comparison_html(result)
    assert page.startswith("<!DOCTYPE html>")
    for fetching in ("<script", "<link", "src=", "url(", "@import", "<img", "<iframe"):
        assert fetching not in page
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched


def test_the_page_has_a_chart_and_a_table_per_variant(result: ComparisonResult) -> None:
    page = comparison_html(result)
    assert page.count('<svg class="chart"') == len(result.variants) == 3
    assert page.count('<tr class="variant"') == 3
    facade = next(v for v in result.variants if v.name == "facade")
    assert page.count('<g class="break"') == len(facade.report.breaks) == 2
    assert 'data-cause="tools-changed"' in page


def _browser(*args: str, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    assert BROWSER is not None
    return subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            # nothing leaves loopback: no name resolves, every request goes to a dead port
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9",
            f"--user-data-dir={tmp / 'profile'}",
            *args,
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )


def _pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """A PNG's rows of RGB(A) bytes (8-bit, not interlaced: what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and colour in (2, 6)
    size = 3 if colour == 2 else 4
    data, at = b"", 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + length]
        at += 12 + length
    raw, rows, previous = zlib.decompress(data), [], bytes(width * size)
    stride = width * size + 1
    for y in range(height):
        kind, line = raw[y * stride], bytearray(raw[y * stride + 1 : (y + 1) * stride])
        for i in range(len(line)):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                guess = min(
                    (abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner)
                )
                line[i] = (line[i] + guess[2]) & 255
        rows.append(bytes(line))
        previous = bytes(line)
    return width, size, rows


def _count(rows: list[bytes], size: int, colour: str) -> int:
    want = bytes.fromhex(colour[1:])
    return sum(1 for row in rows for x in range(0, len(row), size) if row[x : x + 3] == want)


@pytest.mark.skipif(BROWSER is None, reason=NO_BROWSER)
def test_a_real_browser_renders_the_charts_and_the_summary(
    result: ComparisonResult, tmp_path: Path
) -> None:
    page = tmp_path / "compare.html"
    page.write_text(comparison_html(result), encoding="utf-8")
    dom = _browser("--dump-dom", page.as_uri(), tmp=tmp_path).stdout.decode()
    rows = re.findall(r'<tr class="variant" data-variant="([^"]+)">', dom)
    assert rows == ["facade", "eager", "allowed"]
    assert dom.count('class="break"') == 2 and "tools-changed (unfolding)" in dom
    shot = tmp_path / "compare.png"
    _browser(
        "--hide-scrollbars",
        "--window-size=1000,2600",
        f"--screenshot={shot}",
        page.as_uri(),
        tmp=tmp_path,
    )
    _, size, pixels = _pixels(shot.read_bytes())
    cached, uncached = _count(pixels, size, CACHED_COLOUR), _count(pixels, size, UNCACHED_COLOUR)
    assert cached > 1000 and uncached > 1000  # both kinds of bar were drawn
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body><p>no chart</p></body></html>")
    _browser(
        "--hide-scrollbars",
        "--window-size=1000,600",
        f"--screenshot={shot}",
        blank.as_uri(),
        tmp=tmp_path,
    )
    _, size, pixels = _pixels(shot.read_bytes())
    assert _count(pixels, size, CACHED_COLOUR) == 0  # the colour comes from the bars alone
