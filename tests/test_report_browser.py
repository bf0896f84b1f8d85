"""report.html opened in headless Chromium shows the heatmap, and a report with every section
shows its scatter plots and tables (screenshot checks).

Needs a Chromium binary (`apt-get install chromium`). Without one the test is skipped, unless
HARNESS_BROWSER_TESTS=1 asks for it, in which case it fails saying what to install.
The same check by hand is documented in docs/metrics.md.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.analyses.correlation.correlate import correlations_from_tables
from harness.report.plots import SCATTER_COLOUR
from harness.report.write import write_reports
from harness.results.model import RunResults
from tests.report_fixtures import rich_results

PAPER = Path(__file__).resolve().parents[1] / "benchmarks" / "paper"
pytestmark = pytest.mark.integration


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        message = "no chromium binary on PATH: apt-get install -y chromium"
        if os.environ.get("HARNESS_BROWSER_TESTS") == "1":
            pytest.fail(f"HARNESS_BROWSER_TESTS=1 but {message}")
        pytest.skip(f"{message} (or set HARNESS_BROWSER_TESTS=1 to make this a failure)")
    return found


def screenshot(browser: str, page: Path, out: Path, profile: Path,
               height: int = 2000) -> np.ndarray:
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
               f"--screenshot={out}", f"--window-size=1200,{height}", page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert out.exists(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    from matplotlib.image import imread

    return imread(io.BytesIO(out.read_bytes()), format="png")[..., :3]


def test_report_html_shows_the_heatmap_in_chromium(tmp_path: Path):
    browser = chromium()
    correlations = correlations_from_tables(PAPER / "v2s-table4.yaml",
                                            PAPER / "senteval-table5.yaml")
    results = RunResults(spec={"name": "paper-correlations"}, correlations=correlations)
    write_reports(tmp_path, results, ["html"])
    rgb = screenshot(browser, tmp_path / "report.html", tmp_path / "shot.png", tmp_path / "profile")

    assert rgb.shape[:2] == (2000, 1200)
    # not blank: text and tables drew something, and the page is not one colour
    assert (rgb.min(axis=-1) < 0.9).mean() > 0.01 and rgb.std() > 0.05
    # the heatmap's reds (Id/PERM and Id rho up to 0.83) and the colour bar's blues
    red = (rgb[..., 0] - rgb[..., 2] > 0.3) & (rgb[..., 0] - rgb[..., 1] > 0.3)
    blue = (rgb[..., 2] - rgb[..., 0] > 0.3)
    assert red.sum() > 5000, "no red heatmap cells in the screenshot"
    assert blue.sum() > 200, "no blue (negative end of the colour bar) in the screenshot"
    rows, columns = np.nonzero(red)
    # one block of cells, several cells wide and high, not scattered pixels
    assert columns.max() - columns.min() > 300 and rows.max() - rows.min() > 100
    block = red[rows.min():rows.max() + 1, columns.min():columns.max() + 1]
    assert block.mean() > 0.2


def test_full_report_shows_heatmap_and_scatter_plots_in_chromium(tmp_path: Path):
    browser = chromium()
    write_reports(tmp_path, rich_results(), ["html"])
    rgb = screenshot(browser, tmp_path / "report.html", tmp_path / "shot.png",
                     tmp_path / "profile", height=9000)
    ink = rgb.min(axis=-1) < 0.9
    rows = np.nonzero(ink.any(axis=1))[0]
    # the page is long (every section drew) and fits the window: the last ink is not at its edge
    assert 4000 < rows.max() < 8990
    # the four scatter plots' points, in a purple no other figure uses: 4 plots x 5 encoders
    purple = np.asarray([int(SCATTER_COLOUR[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    points = np.abs(rgb - purple).max(axis=-1) < 0.05
    assert points.sum() > 20 * 20, "no scatter points in the screenshot"
    point_rows = np.nonzero(points.any(axis=1))[0]
    # two rows of plots at 1200 px: points spread over several hundred pixels vertically
    assert point_rows.max() - point_rows.min() > 300
    # the heatmap's reds lie above the scatter plots, as the sections are ordered
    red = (rgb[..., 0] - rgb[..., 2] > 0.3) & (rgb[..., 0] - rgb[..., 1] > 0.3)
    assert red[:point_rows.min()].sum() > 3000


def test_report_html_opens_with_a_table_of_contents_whose_links_land(tmp_path: Path):
    """The rendered DOM has the contents list, every link names a section that exists, every
    figure decoded to an image with a size, and the top of the page shows the links (blue)."""
    import re

    browser = chromium()
    write_reports(tmp_path, rich_results(), ["html"])
    page = (tmp_path / "report.html").resolve().as_uri()
    dumped = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'dom-profile'}", "--dump-dom", page],
        capture_output=True, text=True, timeout=120, check=False).stdout
    nav = dumped[dumped.index("<nav id=\"contents\">"):dumped.index("</nav>")]
    targets = re.findall(r'href="#([^"]+)"', nav)
    assert len(targets) > 8
    for target in targets:
        assert f'<section id="{target}">' in dumped
    rgb = screenshot(browser, tmp_path / "report.html", tmp_path / "top.png",
                     tmp_path / "profile", height=900)
    links = (rgb[..., 2] - rgb[..., 0] > 0.5) & (rgb[..., 1] < 0.3)  # the default link blue
    rows = np.nonzero(links.any(axis=1))[0]
    assert links.sum() > 500 and rows.min() < 400, "no contents links at the top of the page"
    # every embedded figure decodes: a PNG with a width and height
    from tests.test_report import embedded_images, png_size

    images = embedded_images((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert images and all(min(png_size(data)) > 50 for data in images.values())
