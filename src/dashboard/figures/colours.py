"""Every colour the app chooses, per theme, and the WCAG 2.2 contrast ratio that checks them.

WCAG 2.2 AA asks 4.5:1 for text (1.4.3) and 3:1 for the parts of a chart one needs to read it
(1.4.11) against what they are drawn on. The charts are built once in the light theme's colours
(`dashboard.figures.charts`); `recolour` swaps each of those for its dark-theme counterpart
(`DARK_FOR_LIGHT`) when the chart is shown or saved in the dark theme, so every palette is picked for
the theme it is seen in. ``tests/figures/test_colours.py`` computes every ratio listed here.

>>> round(contrast("#ffffff", "#000000"), 1)
21.0
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

TEXT_RATIO = 4.5  # WCAG 2.2, 1.4.3 (AA), text below 18 pt
GRAPHICS_RATIO = 3.0  # WCAG 2.2, 1.4.11, marks, bars, lines, focus outlines
T = TypeVar("T", bound=Hashable)


def luminance(colour: str) -> float:
    """Relative luminance of a ``#rrggbb`` colour (WCAG 2.2 definition), 0 (black) to 1 (white)."""
    value = colour.strip().lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    if len(value) != 6:
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    channels = [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    """The WCAG contrast ratio of two colours, 1 (same) to 21 (black on white).

    >>> round(contrast("#3b5bdb", "#ffffff"), 2)
    5.67
    """
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_on(background: str) -> str:
    """Black or white, whichever reads better on ``background``: one of them always reaches 4.58:1
    (the two ratios multiply to 21), so a label on any colour meets `TEXT_RATIO`.

    >>> text_on("#1f77b4"), text_on("#ff7f0e")
    ('#ffffff', '#000000')
    """
    return "#000000" if contrast("#000000", background) >= contrast("#ffffff", background) else "#ffffff"


def blend(colour: str, over: str, alpha: float) -> str:
    """``colour`` at opacity ``alpha`` drawn over ``over``, as ``#rrggbb`` (what the eye sees)."""
    top, bottom = colour.lstrip("#"), over.lstrip("#")
    mixed = [
        round(alpha * int(top[i : i + 2], 16) + (1 - alpha) * int(bottom[i : i + 2], 16)) for i in (0, 2, 4)
    ]
    return "#" + "".join(f"{c:02x}" for c in mixed)


@dataclass(frozen=True)
class ThemeColours:
    """One theme's colours: those of ``.streamlit/config.toml`` and those the charts use."""

    background: str
    secondary_background: str
    text: str
    primary: str  # the slider, a selected segmented control's text, checkboxes
    link: str
    accent: str  # bars and lines; a selected bar
    muted: str  # a bar that is not selected (and a ✓ on the selected ones' labels: not colour alone)
    outlier: str  # papers in no topic, and the papers filtered out on the map
    rising: str
    falling: str
    live: str
    caption_opacity: float  # captions are the text colour at this opacity (markup.STYLE)


LIGHT = ThemeColours(
    background="#ffffff", secondary_background="#f3f5f9", text="#1f2430", primary="#3b5bdb",
    link="#3b5bdb", accent="#3b5bdb", muted="#868e96", outlier="#80868b", rising="#2f9e44",
    falling="#e8590c", live="#7048e8", caption_opacity=0.78,
)  # fmt: skip
DARK = ThemeColours(
    background="#0f1117", secondary_background="#1b1f2a", text="#e6e9ef", primary="#7c9cff",
    link="#7c9cff", accent="#7c9cff", muted="#868e96", outlier="#9aa0a6", rising="#2f9e44",
    falling="#e8590c", live="#9775fa", caption_opacity=0.78,
)  # fmt: skip
THEMES: dict[str, ThemeColours] = {"light": LIGHT, "dark": DARK}
# The focus outline of every control (`dashboard.ui.markup.STYLE`): one colour with 3:1 against
# both themes' backgrounds and sidebars, since the page's CSS does not know the theme.
FOCUS = "#4a66f7"
# Behind white text where Streamlit puts the primary colour (multiselect chips, primary buttons):
# 4.5:1 with white and 3:1 against both themes' backgrounds (the dark primary had 2.6:1 with white).
ON_PRIMARY = "#4a66f7"
# Highlights behind text (search hits, Compare's shared and distinctive terms) as (colour, opacity):
# the text on them must keep 4.5:1 in both themes (`markup.STYLE`).
MARKS: dict[str, tuple[str, float]] = {"distinct": ("#ffd600", 0.35), "shared": ("#3b5bdb", 0.22)}

# One colour per topic for up to 30 topics, each with 3:1 against both backgrounds (so one palette
# serves both themes), picked one at a time as far as possible (in OKLab) from those before.
TOPIC_PALETTE: tuple[str, ...] = (
    "#c02b6b", "#179f28", "#2a88fa", "#cd7201", "#2c7279", "#b666e2", "#6d52d3", "#6e6c04", "#ed5268",
    "#1295b4", "#b2471c", "#a23dac", "#0d6abc", "#8f8d34", "#dc57ad", "#2d9a78", "#8377fb", "#197922",
    "#a26e22", "#d9442b", "#586deb", "#925cdd", "#357eb4", "#c62a3e", "#528610", "#458475", "#816439",
    "#c148aa", "#d73f6a", "#ea5b1e",
)  # fmt: skip


def oklab(colour: str) -> tuple[float, float, float]:
    """A ``#rrggbb`` colour in OKLab (lightness, a, b): distances there match what the eye tells apart."""
    value = colour.strip().lstrip("#")
    channels = [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    lms = (
        0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b,
        0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b,
        0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b,
    )
    l_, m_, s_ = (v ** (1 / 3) for v in lms)
    return (
        0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
        1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
        0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_,
    )


def colour_distance(first: str, second: str) -> float:
    """How far apart two colours look: their distance in OKLab (0 = the same)."""
    return float(sum((p - q) ** 2 for p, q in zip(oklab(first), oklab(second), strict=True)) ** 0.5)


def neighbour_colouring(
    order: Sequence[T], neighbours: Mapping[T, Collection[T]], palette: Sequence[str] = ()
) -> dict[T, str]:
    """A colour per node of ``order`` such that no two neighbours share one (a greedy graph colouring).

    Nodes are coloured in the given order (the caller puts the largest clusters first); each takes,
    among the colours none of its coloured neighbours has, the one that looks most unlike theirs
    (OKLab), the least used one on a tie, so neighbours differ by more than a shade. A node with more
    coloured neighbours than the palette has colours (never on a map of k-nearest neighbours under
    `TOPIC_PALETTE`'s 30) takes the colour least like theirs.

    >>> neighbour_colouring([0, 1, 2], {0: {1}, 1: {0, 2}, 2: {1}}, ("#ff0000", "#00ff00"))
    {0: '#ff0000', 1: '#00ff00', 2: '#ff0000'}
    """
    palette = tuple(palette) or TOPIC_PALETTE
    chosen: dict[T, str] = {}
    used = dict.fromkeys(palette, 0)
    for node in order:
        taken = [chosen[other] for other in neighbours.get(node, ()) if other in chosen and other != node]
        free = [c for c in palette if c not in taken] or list(palette)

        def score(colour: str, taken: list[str] = taken) -> tuple[float, int, int]:
            nearest = min((colour_distance(colour, other) for other in taken), default=1.0)
            return (-nearest, used[colour], palette.index(colour))

        best = min(free, key=score)
        chosen[node] = best
        used[best] += 1
    return chosen


# Repository states (`dashboard.repocheck`), per theme: from "the code is there" to "nobody knows yet".
REPO_STATE_COLOURS: dict[str, dict[str, str]] = {
    "light": {
        "live": "#2f9e44", "moved": "#5c940d", "archived": "#5c636a", "readme_only": "#c76a00",
        "placeholder": "#e8590c", "empty": "#c92a2a", "not_found": "#862e9c", "blocked": "#5f3dc4",
        "error": "#495057", "not_checked": "#848b93",
    },
    "dark": {
        "live": "#2f9e44", "moved": "#74b816", "archived": "#868e96", "readme_only": "#f08c00",
        "placeholder": "#e8590c", "empty": "#e03131", "not_found": "#be4bdb", "blocked": "#9775fa",
        "error": "#adb5bd", "not_checked": "#ced4da",
    },
}  # fmt: skip


def word_cloud_palette(theme: str) -> tuple[str, ...]:
    """The topic colours that read as text (4.5:1) on this theme's background: the cloud's words."""
    background = THEMES[theme].background
    return tuple(c for c in TOPIC_PALETTE if contrast(c, background) >= TEXT_RATIO)


def _dark_for_light() -> dict[str, str]:
    roles = ("accent", "muted", "outlier", "rising", "falling", "live")
    pairs = {getattr(LIGHT, r): getattr(DARK, r) for r in roles}
    pairs.update(
        {REPO_STATE_COLOURS["light"][s]: REPO_STATE_COLOURS["dark"][s] for s in REPO_STATE_COLOURS["light"]}
    )
    return {light.lower(): dark for light, dark in pairs.items() if light.lower() != dark.lower()}


# A light-theme colour of a chart -> the one the dark theme shows instead.
DARK_FOR_LIGHT: dict[str, str] = _dark_for_light()


def _swap(value: Any, table: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value.lower(), value)
    if isinstance(value, list | tuple):
        return [_swap(v, table) for v in value]
    return value


def _swap_colour(part: Any, table: Mapping[str, str]) -> None:
    colour = getattr(part, "color", None) if part is not None else None
    if colour is None:
        return
    swapped = _swap(colour, table)
    if swapped != colour and not (isinstance(colour, list | tuple) and list(colour) == swapped):
        part.color = swapped


def recolour(fig: Any, theme: str) -> Any:
    """Put ``theme``'s colours on a Plotly figure, in place, and return it: the light ones swapped.

    Marker, marker outline, line and shape colours are swapped where they are one of the light
    theme's chart colours (`DARK_FOR_LIGHT`); everything else is left as it is. The light theme
    changes nothing.
    """
    if theme != "dark":
        return fig
    for trace in fig.data:
        marker = getattr(trace, "marker", None)
        _swap_colour(marker, DARK_FOR_LIGHT)
        _swap_colour(getattr(marker, "line", None) if marker is not None else None, DARK_FOR_LIGHT)
        _swap_colour(getattr(trace, "line", None), DARK_FOR_LIGHT)
    for shape in fig.layout.shapes or ():
        _swap_colour(shape.line, DARK_FOR_LIGHT)
    return fig


def chart_colours(theme: str) -> Iterable[tuple[str, str]]:
    """(name, colour) of every colour a chart may draw in ``theme`` (for the contrast test)."""
    colours = THEMES[theme]
    for role in ("accent", "muted", "outlier", "rising", "falling", "live"):
        yield role, getattr(colours, role)
    for state, colour in REPO_STATE_COLOURS[theme].items():
        yield f"repo state {state}", colour
    for n, colour in enumerate(TOPIC_PALETTE):
        yield f"topic colour {n}", colour
