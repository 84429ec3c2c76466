"""The paper map as a picture (`mapimage.map_png`): the interactive map's points, colours, hits and
labels, drawn on the server in either theme, at the size the page shows it."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from dashboard.figures import charts, colours, mapimage
from dashboard.figures.images import THEMES

# Two tight clusters far apart: topic 0 on the left, topic 1 on the right; 300 points so that the
# map is a WebGL one (above 2,000 with the background) only where a test asks for it.
RNG = np.random.default_rng(0)
LEFT, RIGHT = (-10.0, 0.0), (10.0, 0.0)


def clusters(n: int = 150) -> pd.DataFrame:
    """Two topics' points, ``n`` each, in two tight clusters (left: topic 0, right: topic 1)."""
    rows = []
    for topic, (cx, cy) in enumerate((LEFT, RIGHT)):
        xs, ys = cx + RNG.normal(0, 0.3, n), cy + RNG.normal(0, 0.3, n)
        label = "graph · message · passing" if topic == 0 else "video · diffusion · frames"
        rows += [
            {
                "id": f"{topic}-{i}",
                "title": f"Paper {i}",
                "x": x,
                "y": y,
                "topic": topic,
                "topic_label": label,
            }
            for i, (x, y) in enumerate(zip(xs, ys, strict=True))
        ]
    return pd.DataFrame(rows)


COLOURS = {0: "#c02b6b", 1: "#179f28"}


def image_of(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def pixel_of(fig: object, image: Image.Image, x: float, y: float) -> tuple[int, int]:
    """Where the data point (x, y) of ``fig`` lies in its picture (as `map_png` places it)."""
    traces = mapimage._traces(fig)
    ratio = image.width / mapimage.WIDTH_PX
    canvas = mapimage._Canvas(
        mapimage.MARGIN_PX["left"] * ratio, mapimage.MARGIN_PX["top"] * ratio, mapimage._extent(traces), ratio
    )
    px, py = canvas.place(np.array([x]), np.array([y]))
    return int(px[0]), int(py[0])


def unlabelled(fig: Any) -> Any:
    """``fig`` without its cluster labels (``update_layout(annotations=[])`` leaves them)."""
    fig.layout.annotations = ()
    return fig


def near(colour: tuple[int, int, int], hex_colour: str, tolerance: int = 40) -> bool:
    target = tuple(int(hex_colour.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return all(abs(a - b) <= tolerance for a, b in zip(colour, target, strict=True))


def test_the_picture_is_a_png_twice_the_size_the_page_shows() -> None:
    png = mapimage.map_png(charts.paper_map(clusters(), topic_colours=COLOURS))
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.size == (mapimage.WIDTH_PX * 2, mapimage.height_px() * 2)
    # Streamlit shrinks (decodes, resizes, encodes) an image wider than 1,460 pixels on every run.
    assert image.width <= 1_460


def test_the_png_holds_the_drawn_pixels_exactly() -> None:
    """The map's own PNG writer (rows unfiltered): any reader gets back every pixel as drawn."""
    pixels = np.random.default_rng(0).integers(0, 256, size=(37, 53, 3), dtype=np.uint8)
    pixels[:10] = (255, 255, 255)  # a flat run, as the map's background
    png = mapimage.png_bytes(Image.fromarray(pixels, "RGB"))
    read = Image.open(io.BytesIO(png))
    read.load()  # decodes every chunk: a wrong length or checksum raises here
    assert read.mode == "RGB" and read.size == (53, 37)
    assert np.array_equal(np.asarray(read), pixels)
    assert np.array_equal(
        np.asarray(Image.open(io.BytesIO(mapimage.png_bytes(Image.new("RGBA", (2, 1)))))), [[[0, 0, 0]] * 2]
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_background_is_the_themes(theme: str) -> None:
    image = image_of(mapimage.map_png(charts.paper_map(clusters(), topic_colours=COLOURS), theme))
    assert near(image.getpixel((3, image.height - 3)), THEMES[theme].background, tolerance=2)  # type: ignore[arg-type]


def test_a_topics_points_are_drawn_in_its_colour_where_they_lie() -> None:
    papers = clusters()
    # No labels: they would cover the clusters' middles, where the points are looked at.
    fig = unlabelled(charts.paper_map(papers, topic_colours=COLOURS))
    image = image_of(mapimage.map_png(fig))
    for topic, (x, y) in enumerate((LEFT, RIGHT)):
        seen = image.getpixel(pixel_of(fig, image, x, y))
        # drawn at 85% opacity over the white background
        assert near(seen, colours.blend(COLOURS[topic], "#ffffff", 0.85), tolerance=12), (topic, seen)  # type: ignore[arg-type]
    assert near(image.getpixel(pixel_of(fig, image, 0.0, 0.0)), "#ffffff", tolerance=2)  # type: ignore[arg-type]  # nothing between


def test_search_hits_are_drawn_large_outlined_and_over_the_grey_rest() -> None:
    papers = clusters()
    hits, rest = papers[papers["topic"] == 1], papers[papers["topic"] == 0].assign(x=lambda t: t["x"] - 20)
    # The rest lies exactly under the hits too: the hits must be on top of it.
    under = hits[["x", "y"]]
    fig = unlabelled(
        charts.paper_map(
            hits, background=pd.concat([rest[["x", "y"]], under]), highlight=True, topic_colours=COLOURS
        )
    )
    image = image_of(mapimage.map_png(fig))
    x, y = pixel_of(fig, image, *RIGHT)
    assert near(image.getpixel((x, y)), COLOURS[1], tolerance=12)  # type: ignore[arg-type]  # opaque, on top
    # the grey rest on its own: pale (25% of the outliers' grey)
    gx, gy = pixel_of(fig, image, float(rest["x"].iloc[0]), float(rest["y"].iloc[0]))
    assert near(image.getpixel((gx, gy)), colours.blend(colours.LIGHT.outlier, "#ffffff", 0.25), tolerance=12)  # type: ignore[arg-type]
    # a hit is outlined: dark pixels at its edge, around a lone hit
    lone = charts.paper_map(hits.iloc[:1].assign(x=0.0, y=0.0), background=rest[["x", "y"]], highlight=True)
    lone_image = image_of(mapimage.map_png(unlabelled(lone)))
    cx, cy = pixel_of(lone, lone_image, 0.0, 0.0)
    row = [lone_image.getpixel((cx + dx, cy)) for dx in range(0, 20)]
    assert any(near(p, charts.HIT_OUTLINE, tolerance=30) for p in row)  # type: ignore[arg-type]


def test_the_dark_theme_swaps_the_grey_as_the_interactive_map_does() -> None:
    papers = clusters()
    fig = unlabelled(charts.paper_map(papers.iloc[:1], background=papers.iloc[1:][["x", "y"]]))
    image = image_of(mapimage.map_png(fig, "dark"))
    gx, gy = pixel_of(fig, image, float(papers["x"].iloc[200]), float(papers["y"].iloc[200]))
    seen = image.getpixel((gx, gy))
    assert near(seen, colours.blend(colours.DARK.outlier, colours.DARK.background, 0.25), tolerance=12), seen  # type: ignore[arg-type]


def test_labels_are_drawn_on_their_topics_colour_where_the_figure_places_them() -> None:
    papers = clusters()
    fig = charts.paper_map(papers, topic_colours=COLOURS)
    (first, *_) = fig.layout.annotations
    assert first.xshift == 0 and first.yshift == 0  # two labels far apart: neither moved
    image = image_of(mapimage.map_png(fig))
    x, y = pixel_of(fig, image, float(first.x), float(first.y))
    topic = int(str(first.text).split()[0].removeprefix("<b>"))
    # The label's box is its topic's colour, opaque, and its text is black or white on it.
    box = [image.getpixel((x + dx, y + dy)) for dx in range(-60, 60, 3) for dy in (-10, -8, 8, 10)]
    assert sum(near(p, COLOURS[topic], tolerance=4) for p in box) > len(box) / 2  # type: ignore[arg-type]
    inside = [image.getpixel((x + dx, y)) for dx in range(-40, 40)]
    assert any(near(p, colours.text_on(COLOURS[topic]), tolerance=30) for p in inside)  # type: ignore[arg-type]


def test_a_label_the_figure_leaves_out_is_left_out() -> None:
    papers = clusters()
    fig = charts.paper_map(papers, topic_colours=COLOURS)
    kept = fig.layout.annotations[0]
    without = charts.paper_map(papers, topic_colours=COLOURS).update_layout(annotations=[kept])
    image = image_of(mapimage.map_png(without))
    other = fig.layout.annotations[1]
    x, y = pixel_of(fig, image, float(other.x), float(other.y))
    box = [image.getpixel((x + dx, y + dy)) for dx in range(-60, 60, 3) for dy in (-9, 9)]
    assert sum(near(p, COLOURS[1 - int(str(kept.text)[3])], tolerance=4) for p in box) < len(box) / 2  # type: ignore[arg-type]


def test_the_large_map_of_many_points_is_drawn_from_its_webgl_figure() -> None:
    rng = np.random.default_rng(1)
    n = 6_000
    papers = pd.DataFrame(
        {
            "id": [str(i) for i in range(n)],
            "title": ["t"] * n,
            "x": rng.normal(0, 5, n),
            "y": rng.normal(0, 5, n),
            "topic": rng.integers(0, 40, n),
        }
    ).assign(topic_label=lambda t: "word" + t["topic"].astype(str) + " · other")
    fig = charts.paper_map(papers, validate=False)
    assert fig.data[0].type == "scattergl"
    image = image_of(mapimage.map_png(fig))
    drawn = np.asarray(image)
    assert (np.abs(drawn.astype(int) - 255).sum(axis=2) > 30).mean() > 0.1  # a good part of it is points


def test_a_map_coloured_by_another_field_has_a_legend_under_it() -> None:
    papers = clusters().assign(year=lambda t: np.where(t["topic"] == 0, 2020, 2021))
    fig = charts.paper_map(papers, colour="year", topic_colours=COLOURS)
    legend = mapimage._legend(fig.layout.to_plotly_json(), mapimage._traces(fig))
    assert [name for name, _ in legend] == ["2020", "2021"]
    image = Image.open(io.BytesIO(mapimage.map_png(fig)))
    assert image.height == mapimage.height_px(legend) * 2 > mapimage.height_px() * 2
    assert image.width == mapimage.WIDTH_PX * 2
