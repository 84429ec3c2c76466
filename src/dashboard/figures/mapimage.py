"""The paper map as a picture: `charts.paper_map`'s figure drawn to a PNG on the server, without a browser.

A WebGL scatter costs a browser without a graphics card a second or two of processor time whatever it
draws, on every visit to the Topics page; a PNG of the same map costs it a few milliseconds. The
picture is drawn from the Plotly figure itself (its traces' points, colours, sizes and outlines, its
placed labels and title), so it shows what the interactive map shows: the colours, the labels and
where `charts.label_shifts` put them are worked out once, in `charts`. kaleido is not used (it starts
a headless Chromium: seconds); points, boxes and text are drawn with Pillow.

The picture is a uniformly enlarged copy of the map at the size `charts.label_shifts` spaces labels
for (`charts.MAP_PLOT_PX`, 11 px text): its plot is `SCALE` times that size and its text `SCALE` times
11 px, so labels that do not cover one another there do not here either.

>>> import plotly.graph_objects as go
>>> png = map_png(go.Figure(go.Scattergl(x=[0, 1], y=[0, 1], mode="markers")), "dark", pixel_ratio=1)
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dashboard.figures import charts, colours
from dashboard.figures.images import THEMES, plain, theme_name

# The picture's width: Streamlit shrinks an image wider than twice its own content width (730 px) on
# every run (a decode, a resize and an encode), so the PNG is at most 1,460 pixels wide: 730 CSS pixels
# at `PIXEL_RATIO`, shown at that width (less in a narrower window).
WIDTH_PX = 730
PIXEL_RATIO = 2  # image pixels per CSS pixel: sharp on a high-density screen and when the page scales it up
SCALE = 12 / 11  # the picture's labels are 12 px where the interactive map's are 11 (and all else to match)
MARGIN_PX = {"left": 26, "right": 10, "top": 44, "bottom": 28}  # the title above, the axis titles
# Wider than `charts.MAP_PLOT_PX` times SCALE (labels spaced for that only move apart sideways), as tall.
PLOT_PX = (WIDTH_PX - MARGIN_PX["left"] - MARGIN_PX["right"], charts.MAP_PLOT_PX[1] * SCALE)
TITLE_PX, AXIS_TITLE_PX = 17, 12
PADDING = 0.05  # Plotly pads a scatter's automatic axis range by 5% of it each side
LEGEND_SWATCH_PX, LEGEND_LINE_PX, LEGEND_GAP_PX = 10, 18, 18


def height_px(legend: Sequence[tuple[str, str]] = ()) -> int:
    """The picture's height in CSS pixels (its width is `WIDTH_PX`): the title, the plot, the axis
    title and, when the map is coloured by another field than the topic, its ``legend`` ((name,
    colour) per entry) in rows under the plot."""
    rows = len(_legend_rows(legend))
    extra = (rows + 1) * LEGEND_LINE_PX + 6 if rows else 0  # its title's line and each row's
    return int(MARGIN_PX["top"] + PLOT_PX[1] + MARGIN_PX["bottom"] + extra)


def _legend_rows(legend: Sequence[tuple[str, str]]) -> list[list[tuple[float, str, str]]]:
    """The legend's entries as rows that fit the plot's width: (x from the plot's left, name, colour)."""
    if not legend:
        return []
    font = bold_font(round(11 * SCALE))
    rows: list[list[tuple[float, str, str]]] = [[]]
    x = 0.0
    for name, colour in legend:
        width = LEGEND_SWATCH_PX + 6 + font.getlength(name)
        if rows[-1] and x + width > PLOT_PX[0]:
            rows.append([])
            x = 0.0
        rows[-1].append((x, name, colour))
        x += width + LEGEND_GAP_PX
    return rows


@dataclass(frozen=True)
class _Canvas:
    """Where the plot lies in the image (pixels) and how data units map onto it."""

    left: float
    top: float
    extent: tuple[float, float, float, float]  # x0, x1, y0, y1 of the padded axis ranges
    ratio: float  # image pixels per CSS pixel

    def place(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image pixel coordinates of data points (y grows downwards in the image)."""
        x0, x1, y0, y1 = self.extent
        px = self.left + (x - x0) / ((x1 - x0) or 1.0) * PLOT_PX[0] * self.ratio
        py = self.top + (1 - (y - y0) / ((y1 - y0) or 1.0)) * PLOT_PX[1] * self.ratio
        return px, py


@cache
def font_file() -> str:
    """The file of the bold face the labels are drawn in: the app's own letters (Source Sans, the
    variable font Streamlit serves its pages in) where Streamlit is installed, else DejaVu Sans
    (matplotlib's copy: installed with the word cloud), else "" (Pillow's built-in face)."""
    spec = find_spec("streamlit")  # finds the package's folder without importing it
    if spec is not None and spec.origin:
        media = Path(spec.origin).parent / "static" / "static" / "media"
        found = sorted(media.glob("SourceSansVF-Upright*.woff2"))
        if found:
            return str(found[0])
    spec = find_spec("matplotlib")
    if spec is not None and spec.origin:
        dejavu = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
        if dejavu.is_file():
            return str(dejavu)
    return ""


@cache
def bold_font(size: int) -> Any:
    """A bold font of ``size`` pixels whose letters are no wider than the map's labels are spaced for
    (`charts.LABEL_CHAR_PX` at 11 px): a wider face is drawn smaller."""
    path = font_file()
    if not path:
        return ImageFont.load_default(size)
    font = ImageFont.truetype(path, size)
    if b"Bold" in (_variation_names(font) or ()):
        font.set_variation_by_name("Bold")
    sample = "2 multimodal · language 13 graph · neural"
    per_character = font.getlength(sample) / len(sample) / size
    wanted = charts.LABEL_CHAR_PX / 11
    if per_character <= wanted:
        return font
    smaller = ImageFont.truetype(path, max(6, int(size * wanted / per_character)))
    if b"Bold" in (_variation_names(smaller) or ()):
        smaller.set_variation_by_name("Bold")
    return smaller


def _variation_names(font: Any) -> list[bytes] | None:
    try:
        return list(font.get_variation_names())
    except (OSError, AttributeError):  # not a variable font
        return None


def _text_of(part: dict[str, Any], key: str) -> str:
    """The plain text of a layout part's title (``{"title": {"text": ...}}``, or a bare string)."""
    title = part.get(key)
    return plain(title.get("text") if isinstance(title, dict) else title)


def _colour(value: object, theme: str) -> str:
    """A trace's colour as the theme shows it (`colours.DARK_FOR_LIGHT`, as `colours.recolour` does)."""
    text = str(value)
    return colours.DARK_FOR_LIGHT.get(text.lower(), text) if theme == "dark" else text


def _rgba(colour: str, alpha: float = 1.0) -> tuple[int, int, int, int]:
    value = colour.lstrip("#")
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16), round(alpha * 255))


@dataclass(frozen=True)
class _Trace:
    """What the picture needs of one scatter trace, read from the figure once (each read of a Plotly
    property walks its validators: reading them point by point was most of the picture's time)."""

    x: np.ndarray
    y: np.ndarray
    name: str
    colour: str
    size: float
    opacity: float
    outline: str
    outline_width: float
    in_legend: bool


def _traces(fig: Any) -> list[_Trace]:
    """The figure's scatter traces, in the order they are drawn."""
    traces = []
    for trace in fig.data:
        if trace.type not in ("scatter", "scattergl"):
            continue
        marker = trace.marker
        line = marker.line
        traces.append(
            _Trace(
                x=np.asarray(trace.x if trace.x is not None else (), dtype=float),
                y=np.asarray(trace.y if trace.y is not None else (), dtype=float),
                name=str(trace.name or ""),
                colour=str(marker.color or colours.LIGHT.accent),
                size=float(marker.size or 6),
                opacity=float(1.0 if marker.opacity is None else marker.opacity),
                outline=str(line.color or "") if line is not None else "",
                outline_width=float(line.width or 1) if line is not None else 0.0,
                in_legend=trace.showlegend is not False,
            )
        )
    return traces


def _extent(traces: Sequence[_Trace]) -> tuple[float, float, float, float]:
    """The axes' ranges as Plotly sets them automatically: the points' span, padded."""
    if not traces:
        return (-1.0, 1.0, -1.0, 1.0)
    x, y = np.concatenate([t.x for t in traces]), np.concatenate([t.y for t in traces])
    keep = np.isfinite(x) & np.isfinite(y)
    if not keep.any():
        return (-1.0, 1.0, -1.0, 1.0)
    x0, x1, y0, y1 = x[keep].min(), x[keep].max(), y[keep].min(), y[keep].max()
    pad_x, pad_y = (x1 - x0) * PADDING or 1.0, (y1 - y0) * PADDING or 1.0
    return (float(x0 - pad_x), float(x1 + pad_x), float(y0 - pad_y), float(y1 + pad_y))


def _legend(layout: dict[str, Any], traces: Sequence[_Trace]) -> list[tuple[str, str]]:
    """(name, colour) of each trace the legend lists, or [] when the figure shows no legend."""
    if not layout.get("showlegend"):
        return []
    return [(t.name, t.colour) for t in traces if t.name and t.in_legend]


def _draw_points(image: Image.Image, traces: Sequence[_Trace], canvas: _Canvas, theme: str) -> Image.Image:
    """Every trace's markers, in order; the traces of one opacity go on one layer (one blend each)."""
    layers: list[tuple[float, list[_Trace]]] = []
    for trace in traces:
        if layers and layers[-1][0] == trace.opacity:
            layers[-1][1].append(trace)
        else:
            layers.append((trace.opacity, [trace]))
    for opacity, group in layers:
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        # Pillow's drawing core, called straight: `ImageDraw.ellipse` works its colours out anew on
        # each call (0.062 against 0.050 s for a map's 20,000 points).
        core = ImageDraw.Draw(layer).draw
        for trace in group:
            px, py = canvas.place(trace.x, trace.y)
            keep = np.isfinite(px) & np.isfinite(py)
            radius = trace.size * SCALE * canvas.ratio / 2
            fill = core.draw_ink(_rgba(_colour(trace.colour, theme)))
            outline = core.draw_ink(_rgba(_colour(trace.outline, theme))) if trace.outline else None
            line_width = max(1, round(trace.outline_width * canvas.ratio)) if outline is not None else 0
            for x, y in zip(px[keep].tolist(), py[keep].tolist(), strict=True):
                box = (x - radius, y - radius, x + radius, y + radius)
                core.draw_ellipse(box, fill, 1)
                if outline is not None and outline != fill:
                    core.draw_ellipse(box, outline, 0, line_width)
        if opacity < 1.0:
            alpha = np.asarray(layer.getchannel("A"), dtype=np.float32) * opacity
            layer.putalpha(Image.fromarray(alpha.astype(np.uint8)))
        image = Image.alpha_composite(image, layer)
    return image


def _draw_labels(draw: ImageDraw.ImageDraw, layout: dict[str, Any], canvas: _Canvas) -> None:
    """The clusters' labels where the figure placed them (`charts.label_shifts`), on their colour."""
    font = bold_font(round(11 * SCALE * canvas.ratio))
    pad = 2 * SCALE * canvas.ratio
    for note in layout.get("annotations") or ():
        if note.get("x") is None or note.get("y") is None:
            continue
        px, py = canvas.place(np.array([float(note["x"])]), np.array([float(note["y"])]))
        # A shift is in screen pixels, up positive (Plotly's), at the interactive map's scale.
        cx = float(px[0]) + float(note.get("xshift") or 0) * SCALE * canvas.ratio
        cy = float(py[0]) - float(note.get("yshift") or 0) * SCALE * canvas.ratio
        text = plain(note.get("text"))
        left, top, right, bottom = draw.textbbox((cx, cy), text, font=font, anchor="mm")
        if note.get("bgcolor"):
            draw.rectangle((left - pad, top - pad, right + pad, bottom + pad), fill=str(note["bgcolor"]))
        colour = str((note.get("font") or {}).get("color") or "#000000")
        draw.text((cx, cy), text, font=font, fill=colour, anchor="mm")


def _draw_frame(
    image: Image.Image, layout: dict[str, Any], ratio: float, theme: str, legend: Sequence[tuple[str, str]]
) -> None:
    """The title (left, above the plot), the two axis titles and the legend, in the theme's text colour."""
    draw = ImageDraw.Draw(image)
    ink = THEMES[theme].text
    title = _text_of(layout, "title")
    if title:
        draw.text(
            (MARGIN_PX["left"] * ratio, MARGIN_PX["top"] * ratio / 2),
            title,
            font=bold_font(round(TITLE_PX * ratio)),
            fill=ink,
            anchor="lm",
        )
    axis_font = bold_font(round(AXIS_TITLE_PX * ratio))
    plot_left, plot_top = MARGIN_PX["left"] * ratio, MARGIN_PX["top"] * ratio
    plot_right, plot_bottom = plot_left + PLOT_PX[0] * ratio, plot_top + PLOT_PX[1] * ratio
    x_title = _text_of(layout.get("xaxis") or {}, "title")
    if x_title:
        where = ((plot_left + plot_right) / 2, plot_bottom + MARGIN_PX["bottom"] * ratio / 2)
        draw.text(where, x_title, font=axis_font, fill=ink, anchor="mm")
    y_title = _text_of(layout.get("yaxis") or {}, "title")
    if y_title:  # drawn sideways, on its own small image turned a quarter
        box = draw.textbbox((0, 0), y_title, font=axis_font)
        label = Image.new("RGBA", (int(box[2]) + 2, int(box[3]) + 2), (0, 0, 0, 0))
        ImageDraw.Draw(label).text((1, 1), y_title, font=axis_font, fill=ink)
        turned = label.rotate(90, expand=True)
        where = (
            int(MARGIN_PX["left"] * ratio / 2 - turned.width / 2),
            int((plot_top + plot_bottom) / 2 - turned.height / 2),
        )
        image.paste(turned, where, turned)
    if legend:  # under the x axis's title, in rows
        font = bold_font(round(11 * SCALE * ratio))
        y = plot_bottom + MARGIN_PX["bottom"] * ratio + 6 * ratio
        legend_title = _text_of(layout.get("legend") or {}, "title")
        draw.text((plot_left, y), legend_title, font=font, fill=ink, anchor="lt")
        swatch = LEGEND_SWATCH_PX * ratio
        for row in _legend_rows(legend):
            y += LEGEND_LINE_PX * ratio
            for x, name, colour in row:
                left = plot_left + x * ratio
                draw.ellipse(
                    (left, y + 2 * ratio, left + swatch, y + 2 * ratio + swatch), fill=_colour(colour, theme)
                )
                draw.text((left + swatch + 6 * ratio, y), name, font=font, fill=ink, anchor="lt")


def map_png(fig: Any, theme: str = "light", *, pixel_ratio: int = PIXEL_RATIO) -> bytes:
    """A PNG of a `charts.paper_map` figure in the app's ``theme``, `WIDTH_PX` by `height_px` CSS
    pixels at ``pixel_ratio`` image pixels each: the same points, colours, outlines, labels and title.

    Hover, selection and zoom are what it leaves out (the interactive map has them).
    """
    theme = theme_name(theme)
    ratio = float(pixel_ratio)
    traces = _traces(fig)
    layout = fig.layout.to_plotly_json()  # plain values, read once (no points in it: cheap)
    legend = _legend(layout, traces)
    size = (round(WIDTH_PX * ratio), round(height_px(legend) * ratio))
    image = Image.new("RGBA", size, _rgba(THEMES[theme].background))
    canvas = _Canvas(MARGIN_PX["left"] * ratio, MARGIN_PX["top"] * ratio, _extent(traces), ratio)
    image = _draw_points(image, traces, canvas, theme)
    _draw_labels(ImageDraw.Draw(image), layout, canvas)
    _draw_frame(image, layout, ratio, theme, legend)
    return png_bytes(image)


def png_bytes(image: Image.Image) -> bytes:
    """An RGB image as a PNG: rows unfiltered, deflated at level 1.

    Pillow tries five filters on every row to pick one: on a map that was half the encoding, and its
    pick came out larger than no filter at all (a map of 40,000 points: 0.066 s and 521 KB against
    0.038 s and 415 KB here). Level 1: a fifth of the default level's time for a few per cent more bytes.
    """
    pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)
    height, width = pixels.shape[:2]
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # each row: filter 0 ("none"), its pixels
    rows[:, 1:] = pixels.reshape(height, 3 * width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + chunk(b"IEND", b"")
    )
