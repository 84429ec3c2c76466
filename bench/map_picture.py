"""What the paper map costs a browser as a Plotly chart and as a picture, by the number of points drawn.

`python bench/map_picture.py [--points 500 1000 2000 5000 10000 20000] [--repeat 3]`

For each number of points: the processor seconds headless Chromium (no graphics card, as the browser
tests and `bench/page_switch.py` run it) spends drawing `charts.paper_map`'s figure with plotly.js in
a page of its own (an SVG scatter up to 2,000 points, WebGL above, as the app draws it), and the same
for an ``<img>`` of `mapimage.map_png`'s PNG of that figure; and the server's processor seconds to make
that PNG. It chose `components.MAP_PICTURE_ABOVE`, the size from which the Topics page shows the picture.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import plotly
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from dashboard.figures import charts, mapimage  # noqa: E402

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
# One page holds plotly.js (as the app's page does, from its first chart on); each measurement draws
# one more map into it, or one more picture.
PAGE = """<!doctype html><html><head><script src="file://{js}"></script></head><body></body></html>"""
DRAW_CHART = """async (figure) => {
  document.body.replaceChildren();
  const box = document.createElement("div");
  box.style.cssText = "width:1100px;height:560px";
  document.body.append(box);
  await Plotly.newPlot(box, figure.data, figure.layout);
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
DRAW_PICTURE = """async (png) => {
  document.body.replaceChildren();
  const image = new Image();
  image.style.width = "730px";
  image.src = "data:image/png;base64," + png;
  document.body.append(image);
  await image.decode();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""


def papers(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` points in 40 blobs, as a map of 40 topics (titles and hover texts short)."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, 40, n)
    centres = rng.normal(0, 10, (40, 2))
    xy = centres[topic] + rng.normal(0, 1.2, (n, 2))
    return pd.DataFrame(
        {"id": [f"p{i}" for i in range(n)], "title": [f"Paper {i} about things" for i in range(n)],
         "x": xy[:, 0], "y": xy[:, 1], "topic": topic, "topic_label": [f"word{t} · other" for t in topic]}
    )  # fmt: skip


def browser_cpu(own: int) -> float:
    """Processor seconds so far of the browser's processes (this script's children)."""
    total = 0.0
    for process in psutil.Process(own).children(recursive=True):
        try:
            total += sum(process.cpu_times()[:2])
        except psutil.Error:
            continue
    return total


def drawn(page: object, script: str, argument: object) -> float:
    """Processor seconds the browser spends on ``script(argument)`` and the frames after it."""
    before = browser_cpu(os.getpid())
    page.evaluate(script, argument)  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]  # compositing after the last frame
    return browser_cpu(os.getpid()) - before


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[500, 1000, 2000, 5000, 10000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"],
        )
        page_file = Path(tmp) / "page.html"
        page_file.write_text(PAGE.format(js=PLOTLY_JS), encoding="utf-8")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_file.as_uri())
        page.wait_for_function("() => typeof Plotly !== 'undefined'")
        warm = charts.paper_map(papers(3_000), validate=False)  # each kind drawn once first, not counted
        drawn(page, DRAW_CHART, orjson.loads(warm.to_json()))
        drawn(page, DRAW_PICTURE, base64.b64encode(mapimage.map_png(warm)).decode())
        print("points  chart (browser s)  picture (browser s)  PNG (server s)")
        for n in args.points:
            fig = charts.paper_map(papers(n), validate=False)
            figure = orjson.loads(fig.to_json())
            started = time.process_time()
            png = base64.b64encode(mapimage.map_png(fig)).decode()
            server = time.process_time() - started
            chart_s = [drawn(page, DRAW_CHART, figure) for _ in range(args.repeat)]
            picture_s = [drawn(page, DRAW_PICTURE, png) for _ in range(args.repeat)]
            print(
                f"{n:>6}  {statistics.median(chart_s):17.2f}  {statistics.median(picture_s):19.2f}"
                f"  {server:14.2f}   ({fig.data[0].type})",
                flush=True,
            )
        browser.close()
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
