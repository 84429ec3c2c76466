"""Every colour the app chooses meets WCAG 2.2 AA in the theme it is shown in (issue 19).

Text 4.5:1 (1.4.3), graphics 3:1 (1.4.11: bars, lines, marks, the focus outline), computed here
from `dashboard.figures.colours` and `.streamlit/config.toml`, which must agree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
import tomllib

from dashboard.figures import charts, colours
from dashboard.figures import images as figures
from dashboard.figures.colours import GRAPHICS_RATIO, TEXT_RATIO, blend, contrast
from dashboard.ui import markup

CONFIG = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
THEMES = ("light", "dark")


@pytest.mark.parametrize(
    ("first", "second", "ratio"),
    [("#ffffff", "#000000", 21.0), ("#777777", "#ffffff", 4.48), ("#3b5bdb", "#3b5bdb", 1.0)],
)
def test_contrast_matches_the_wcag_formula(first: str, second: str, ratio: float) -> None:
    assert contrast(first, second) == pytest.approx(ratio, abs=0.01)
    assert contrast(second, first) == pytest.approx(ratio, abs=0.01)


@pytest.mark.parametrize("theme", THEMES)
def test_the_streamlit_theme_is_the_one_the_colours_module_checks(theme: str) -> None:
    config, ours = CONFIG["theme"][theme], colours.THEMES[theme]
    assert config["backgroundColor"] == ours.background
    assert config["secondaryBackgroundColor"] == ours.secondary_background
    assert config["textColor"] == ours.text
    assert config["primaryColor"] == ours.primary
    assert config["linkColor"] == ours.link
    assert config["chartCategoricalColors"] == list(colours.TOPIC_PALETTE[:10])
    assert figures.THEMES[theme].background == ours.background  # saved charts use the same


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("surface", ["background", "secondary_background"])
def test_text_link_primary_and_captions_read_on_every_surface(theme: str, surface: str) -> None:
    ours = colours.THEMES[theme]
    behind = getattr(ours, surface)
    assert contrast(ours.text, behind) >= TEXT_RATIO
    assert contrast(ours.link, behind) >= TEXT_RATIO
    assert contrast(ours.primary, behind) >= TEXT_RATIO  # a selected segmented control's text
    caption = blend(ours.text, behind, ours.caption_opacity)
    assert contrast(caption, behind) >= TEXT_RATIO, caption
    assert contrast(colours.FOCUS, behind) >= GRAPHICS_RATIO
    assert contrast(colours.ON_PRIMARY, behind) >= GRAPHICS_RATIO
    assert contrast("#ffffff", colours.ON_PRIMARY) >= TEXT_RATIO  # chips, primary buttons
    # A search hit or a Compare term highlighted: the text on the mark keeps 4.5:1.
    for colour, alpha in colours.MARKS.values():
        assert contrast(ours.text, blend(colour, behind, alpha)) >= TEXT_RATIO


@pytest.mark.parametrize("theme", THEMES)
def test_every_chart_colour_has_3_to_1_on_its_themes_background(theme: str) -> None:
    background = colours.THEMES[theme].background
    low = {
        name: round(contrast(colour, background), 2)
        for name, colour in colours.chart_colours(theme)
        if contrast(colour, background) < GRAPHICS_RATIO
    }
    assert low == {}


@pytest.mark.parametrize("theme", THEMES)
def test_the_word_cloud_words_read_as_text(theme: str) -> None:
    palette = colours.word_cloud_palette(theme)
    assert len(palette) >= 8
    assert all(contrast(c, colours.THEMES[theme].background) >= TEXT_RATIO for c in palette)


def test_the_style_sheet_uses_the_checked_colours() -> None:
    assert colours.FOCUS in markup.STYLE and colours.ON_PRIMARY in markup.STYLE
    assert f"opacity: {colours.LIGHT.caption_opacity}" in markup.STYLE
    for colour, alpha in colours.MARKS.values():
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        assert re.search(rf"rgba\({r}, {g}, {b}, {alpha}\)", markup.STYLE), colour


def _drawn_colours(fig: go.Figure) -> set[str]:
    found: set[str] = set()
    for trace in fig.data:
        for part in (getattr(trace, "marker", None), getattr(trace, "line", None)):
            colour = getattr(part, "color", None) if part is not None else None
            if isinstance(colour, str):
                found.add(colour.lower())
            elif isinstance(colour, list | tuple):
                found.update(c.lower() for c in colour if isinstance(c, str))
    return found


def _figures() -> list[go.Figure]:
    counts = pd.Series({"a": 5, "b": 3, "c": 1})
    topics = pd.DataFrame({"topic": [0, 1, -1], "label": ["x · y", "z · w", "outliers"]})
    groups = pd.DataFrame({"group": ["big", "half"], "released": [3, 2], "papers": [4, 4]})
    return [
        charts.choice_bars(counts, title="t", selected=["b"]),
        charts.topic_sizes(topics, pd.Series({0: 2, 1: 1, -1: 1}), selected=[0]),
        charts.words_histogram(pd.Series([10, 20, 30])),
        charts.code_status_bars(pd.Series(["released", "no_code"]).value_counts()),
        charts.top_counts(counts, title="t"),
        charts.release_rate(groups, title="t", group_title="g"),
    ]


@pytest.mark.parametrize("theme", THEMES)
def test_a_chart_shown_in_a_theme_draws_only_that_themes_colours(theme: str) -> None:
    allowed = {c.lower() for _, c in colours.chart_colours(theme)}
    for fig in _figures():
        drawn = _drawn_colours(figures.for_theme(fig, theme))
        assert drawn <= allowed, drawn - allowed


def test_a_selected_bar_differs_from_the_others_by_more_than_colour() -> None:
    bar = charts.choice_bars(pd.Series({"a": 5, "b": 3}), title="t", selected=["b"]).data[0]
    assert list(bar.y) == ["a", charts.SELECTED_MARK + "b"]
    assert contrast(colours.LIGHT.accent, colours.LIGHT.muted) > 1.0


def test_no_light_colour_stands_for_two_dark_ones() -> None:
    pairs: dict[str, set[str]] = {}
    both = zip(colours.chart_colours("light"), colours.chart_colours("dark"), strict=True)
    for (_, light), (_, dark) in both:
        pairs.setdefault(light.lower(), set()).add(dark.lower())
    assert {light: dark for light, dark in pairs.items() if len(dark) > 1} == {}


def test_every_similarity_cell_number_reads_on_its_cell() -> None:
    values = [round(v / 20, 2) for v in range(21)]  # the whole 0-1 scale, one cell per step
    size = 7
    matrix = pd.DataFrame([[values[(i * 3 + j) % 21] for j in range(size)] for i in range(size)])
    fig = charts.similarity_heatmap(matrix, [chr(65 + n) for n in range(size)])
    cells = {(a.y, a.x): a for a in fig.layout.annotations}
    assert len(cells) == size * size
    ratios = []
    for i, row in enumerate(matrix.to_numpy()):
        for j, value in enumerate(row):
            note = cells[(chr(65 + i), chr(65 + j))]
            assert note.text == f"{value:.2f}"
            ratios.append(contrast(note.font.color, charts.cell_colour(value)))
    assert min(ratios) >= TEXT_RATIO
    # the ends of the scale are the scale's own colours: white-ish at 0, dark blue at 1
    assert colours.luminance(charts.cell_colour(0.0)) > 0.9 > 0.1 > colours.luminance(charts.cell_colour(1.0))


def test_a_chart_shown_in_the_dark_theme_leaves_the_figure_it_was_given_as_it_was() -> None:
    fig = charts.choice_bars(pd.Series({"a": 5, "b": 3}), title="t", selected=["b"])
    before = fig.to_dict()
    assert figures.for_theme(fig, "dark") is not fig
    assert fig.to_dict() == before
    # themed() paints background and text too: on a copy, in either theme
    for theme in THEMES:
        assert figures.themed(fig, theme) is not fig
        assert fig.to_dict() == before


def test_a_neighbour_colouring_never_gives_two_neighbours_one_colour() -> None:
    # Random graphs of up to 29 neighbours a node: the 30 topic colours always suffice.
    import random

    for seed in range(30):
        rng = random.Random(seed)
        nodes = list(range(60))
        neighbours: dict[int, set[int]] = {n: set() for n in nodes}
        for a in nodes:
            for b in rng.sample(nodes, 6):
                if a != b:
                    neighbours[a].add(b)
                    neighbours[b].add(a)
        assert max(len(v) for v in neighbours.values()) < len(colours.TOPIC_PALETTE)
        chosen = colours.neighbour_colouring(nodes, neighbours)
        assert set(chosen) == set(nodes)
        assert all(chosen[a] != chosen[b] for a in nodes for b in neighbours[a]), seed


def test_neighbours_get_colours_that_look_apart_not_just_different_hex() -> None:
    # Two reds one OKLab step apart are different strings but the same to the eye: a node whose
    # neighbour is red takes the green.
    palette = ("#d9442b", "#ea5b1e", "#179f28")
    chosen = colours.neighbour_colouring(["a", "b"], {"a": {"b"}, "b": {"a"}}, palette)
    assert chosen == {"a": "#d9442b", "b": "#179f28"}
    assert colours.colour_distance("#d9442b", "#ea5b1e") < colours.colour_distance("#d9442b", "#179f28")
