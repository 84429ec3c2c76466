"""Charts: every figure is titled with labelled axes, shows the numbers given, and escapes corpus text."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pandas as pd
import plotly.graph_objects as go
import pytest
from support.plotly_arrays import values
from support.synthetic import TOPIC_LABELS, make_papers

from dashboard.figures import charts
from dashboard.figures import images as figures

PAPERS = make_papers()
TOPICS = pd.DataFrame({"topic": [0, 1, 2, -1], "label": [*TOPIC_LABELS.values(), "Outlier"]})
HOSTILE = '<img src=x onerror="alert(1)"> :red[x] $x$'


FIGURES: dict[str, Callable[[], go.Figure]] = {
    "top_counts": lambda: charts.top_counts(pd.Series({"ImageNet": 3, "QM9": 2}), title="Datasets"),
    "topic_sizes": lambda: charts.topic_sizes(TOPICS, PAPERS["topic"].value_counts()),
    "release_rate": lambda: charts.release_rate(
        pd.DataFrame({"group": ["a", "b"], "released": [1, 0], "papers": [2, 3]}),
        title="Release rate by source",
        group_title="Source file",
    ),
    "paper_map": lambda: charts.paper_map(PAPERS),
    "distinctive_terms": lambda: charts.distinctive_terms(
        pd.DataFrame({"term": ["graph", "video"], "z": [3.0, -2.0]}), title="Distinctive terms"
    ),
    "similarity_heatmap": lambda: charts.similarity_heatmap(
        pd.DataFrame([[1.0, 0.2], [0.2, 1.0]]), ["Paper A", "Paper B"]
    ),
    "words_histogram": lambda: charts.words_histogram(PAPERS["n_words"]),
    "code_status_bars": lambda: charts.code_status_bars(PAPERS["code_status"].value_counts()),
}


@pytest.mark.parametrize("name", FIGURES)
def test_every_chart_has_a_title_and_axis_titles(name: str) -> None:
    layout = FIGURES[name]().to_dict()["layout"]
    assert layout["title"]["text"]
    assert layout["xaxis"]["title"]["text"]
    # Horizontal bar charts name their categories on the bars themselves; all others title the y axis.
    if name not in ("top_counts", "topic_sizes", "distinctive_terms"):
        assert layout["yaxis"]["title"]["text"]


def test_top_counts_sorts_largest_first_and_drops_zeros() -> None:
    fig = charts.top_counts(pd.Series({"a": 1, "b": 5, "c": 0, "d": 3}), title="t", limit=2)
    bar = fig.to_dict()["data"][0]
    assert list(bar["y"]) == ["b", "d"]
    assert values(bar["x"]) == [5, 3]


def test_topic_sizes_carries_topic_numbers_and_marks_the_selection() -> None:
    counts = pd.Series({0: 2, 1: 2, 2: 1})
    bar = charts.topic_sizes(TOPICS, counts, selected=[1, -1]).to_dict()["data"][0]
    assert values(bar["customdata"]) == [0, 1, 2, -1]
    assert values(bar["x"]) == [2, 2, 1, 0]
    assert bar["y"][0] == "0: graph · message · passing"
    # Selected bars differ by more than their colour (WCAG 1.4.1): their labels start with a tick.
    assert bar["y"][1].startswith(charts.SELECTED_MARK) and bar["y"][3] == charts.SELECTED_MARK + "Outlier"
    assert not bar["y"][2].startswith(charts.SELECTED_MARK)
    assert list(bar["marker"]["color"]) == [charts.MUTED, charts.ACCENT, charts.MUTED, charts.ACCENT]


def test_topic_sizes_leaves_out_topics_with_no_paper_unless_chosen() -> None:
    # A box on the map left every other topic as a bar of zero length.
    bar = charts.topic_sizes(TOPICS, pd.Series({2: 5, 0: 0}), selected=[1]).to_dict()["data"][0]
    assert values(bar["customdata"]) == [2, 1]


def test_topic_sizes_without_selection_colours_every_bar() -> None:
    bar = charts.topic_sizes(TOPICS, pd.Series({0: 1})).to_dict()["data"][0]
    assert set(bar["marker"]["color"]) == {charts.ACCENT}


def test_release_rate_says_in_its_title_when_it_leaves_groups_out() -> None:
    groups = pd.DataFrame({"group": [f"g{i}" for i in range(40)], "released": range(40), "papers": [50] * 40})
    fig = charts.release_rate(groups, title="Code released, per topic", group_title="", limit=30)
    assert fig.layout.title.text == "Code released, per topic — the 30 highest of 40"
    assert len(fig.data[0].y) == 30 and "g39" in fig.data[0].y and "g0" not in fig.data[0].y
    whole = charts.release_rate(groups.head(30), title="Code released, per topic", group_title="")
    assert whole.layout.title.text == "Code released, per topic"
    # The outliers' bar is no topic: 40 topics and the outliers are "of 40", as the page's count says.
    outliers = pd.DataFrame({"group": [charts.OUTLIER_LABEL], "released": [1], "papers": [50]})
    fig = charts.release_rate(pd.concat([groups, outliers]), title="Code released, per topic", group_title="")
    assert fig.layout.title.text == "Code released, per topic — the 30 highest of 40"
    states = pd.DataFrame({"live": range(1, 41), "empty": [1] * 40}, index=[f"g{i}" for i in range(40)])
    fig = charts.repo_states(states, title="Repository states, per topic", limit=25)
    assert fig.layout.title.text == "Repository states, per topic — the 25 largest of 40"
    assert len(fig.data[0].y) == 25 and "g39" in fig.data[0].y and "g0" not in fig.data[0].y


def test_release_rate_shows_share_and_counts_and_skips_small_groups() -> None:
    groups = pd.DataFrame({"group": ["big", "tiny", "half"], "released": [3, 1, 2], "papers": [4, 1, 4]})
    bar = charts.release_rate(groups, title="t", group_title="g", min_papers=2).to_dict()["data"][0]
    assert list(bar["y"]) == ["big", "half"]
    assert values(bar["x"]) == [0.75, 0.5]
    assert list(bar["text"]) == ["75% of 4", "50% of 4"]
    assert list(bar["customdata"]) == ["3 of 4 papers", "2 of 4 papers"]
    # Room right of the longest bar for its label, and no tick past 100%.
    fig = charts.release_rate(groups, title="t", group_title="g").to_dict()["layout"]["xaxis"]
    assert fig["range"][1] == pytest.approx(1.0 / 0.6)
    assert max(fig["tickvals"]) == 1.0
    low = pd.DataFrame({"group": ["a"], "released": [3], "papers": [100]})
    assert (
        charts.release_rate(low, title="t", group_title="g").to_dict()["layout"]["xaxis"]["range"][1] == 0.1
    )


def test_paper_map_has_one_trace_per_topic_with_ids_and_grey_outliers() -> None:
    data = charts.paper_map(PAPERS).to_dict()["data"]
    assert [trace["name"] for trace in data] == [
        "0: graph · message · passing",
        "1: diffusion · guidance · sampling",
        "2: 图神经 · survey",
        "Outlier",
    ]
    assert values(data[0]["customdata"]) == ["p1", "p2"]
    assert data[-1]["marker"]["color"] == charts.OUTLIER_COLOUR
    assert "GraphMol" in data[0]["hovertext"][0]


def test_paper_map_samples_large_tables_and_says_so() -> None:
    big = pd.concat([PAPERS] * 50, ignore_index=True)
    big["id"] = [f"p{i}" for i in range(len(big))]
    fig = charts.paper_map(big, max_points=100)
    assert sum(len(values(trace["x"])) for trace in fig.to_dict()["data"]) == 100
    assert "100 of 300 papers sampled" in fig.layout.title.text


@pytest.mark.parametrize("colour", ["topic", "year"])
@pytest.mark.parametrize("highlight", [False, True])
def test_a_webgl_map_made_unchecked_is_the_figure_plotly_checks(colour: str, highlight: bool) -> None:
    big = pd.concat([PAPERS] * 600, ignore_index=True)  # 3,000 points: drawn with WebGL
    big["id"] = [f"p{i}" for i in range(len(big))]
    background = big[["x", "y"]].iloc[:500]
    made = charts.paper_map(big, background=background, colour=colour, highlight=highlight, dragmode="select")
    checked = charts.paper_map(
        big, background=background, colour=colour, highlight=highlight, dragmode="select", validate=True
    )
    assert made.data[0].type == "scattergl" and not made._validate and checked._validate
    assert json.loads(made.to_json()) == json.loads(checked.to_json())  # the same, up to key order
    dark, dark_checked = figures.for_theme(made, "dark"), figures.for_theme(checked, "dark")
    assert not dark._validate and json.loads(dark.to_json()) == json.loads(dark_checked.to_json())
    assert dark.to_json() != made.to_json()  # recoloured
    # What st.plotly_chart writes (the figure's dict) orjson writes whole, not down Plotly's slow path.
    for unchecked in (made, dark):
        orjson.dumps(unchecked.to_dict(), option=orjson.OPT_SERIALIZE_NUMPY)
    assert charts.paper_map(PAPERS)._validate  # an SVG map is checked as every other chart
    with pytest.raises(ValueError, match="colr"):  # what the check would have caught, it still does
        charts.figure([{"type": "scattergl", "marker": {"colr": "red"}}], title="t", validate=True)


def test_paper_map_of_a_callers_sample_says_how_many_it_was_drawn_from() -> None:
    rows = charts.sample_rows(1_000, max_points=4)
    assert len(rows) == 4 and list(rows) == sorted(set(rows)) and rows.max() < 1_000
    assert list(charts.sample_rows(3, max_points=4)) == [0, 1, 2]
    fig = charts.paper_map(PAPERS.iloc[:4], n_papers=1_000)
    assert "4 of 1,000 papers sampled" in fig.layout.title.text
    assert "sampled" not in charts.paper_map(PAPERS.iloc[:4]).layout.title.text


@pytest.mark.parametrize(
    "title",
    [
        "",
        "Short <b>title</b>",
        "A title of exactly sixty characters, give or take some words",
        "Graph neural networks for molecule property prediction: a survey of message passing models and more",
        "EgoTactile: pairing egocentric video with full-hand pressure supervision for diverse grasps",
        "Supercalifragilistic-expialidocious-hyphenated-words-for-neural-network-testing in graph",
        "x" * 150,
        "  spaced \t out\n title  " * 9,
    ],
)
def test_map_hover_titles_wrap_like_wrapped_label(title: str) -> None:
    assert charts._hover_titles(pd.Series([title])) == [charts.wrapped_label(title)]


def test_corpus_text_is_escaped_everywhere() -> None:
    papers = PAPERS.assign(title=HOSTILE, topic_label=HOSTILE, method_names=[[HOSTILE]] * len(PAPERS))
    figures = [
        charts.top_counts(pd.Series({HOSTILE: 2}), title="t"),
        charts.topic_sizes(pd.DataFrame({"topic": [0], "label": [HOSTILE]}), pd.Series({0: 1})),
        charts.release_rate(
            pd.DataFrame({"group": [HOSTILE], "released": [1], "papers": [1]}), title="t", group_title="g"
        ),
        charts.paper_map(papers),
        charts.distinctive_terms(pd.DataFrame({"term": [HOSTILE], "z": [1.0]}), title="t"),
        charts.similarity_heatmap(pd.DataFrame([[1.0]]), [HOSTILE]),
    ]
    for fig in figures:
        text = str(fig.to_dict()["data"])
        assert "<img" not in text
        assert "&lt;img" in text


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("a  b\n c", 10, "a b c"),
        ("abcdefghijkl", 5, "abcd…"),
        ("<b>&", 10, "&lt;b&gt;&amp;"),
    ],
)
def test_safe_label(text: str, limit: int, expected: str) -> None:
    assert charts.safe_label(text, limit) == expected


def test_wrapped_label_breaks_long_titles_into_at_most_three_lines() -> None:
    label = charts.wrapped_label("word " * 100, width=20)
    assert label.count("<br>") == 2
    assert label.endswith("…")


def test_paper_map_draws_filtered_out_papers_grey_behind_without_ids() -> None:
    data = charts.paper_map(PAPERS.iloc[:2], background=PAPERS.iloc[2:]).to_dict()["data"]
    assert data[0]["name"] == "Filtered out"
    assert data[0].get("customdata") is None and data[0]["hoverinfo"] == "skip"
    assert len(values(data[0]["x"])) == 4
    assert [trace["name"] for trace in data[1:]] == ["0: graph · message · passing"]


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("background", charts.THEME_BACKGROUNDS)
def test_topic_colours_stand_out_on_both_themes(background: str) -> None:
    # WCAG 1.4.11: graphical objects need 3:1 against what is next to them.
    assert min(_contrast(colour, background) for colour in charts.PALETTE) >= 3.0


def test_topic_colours_do_not_repeat_at_25_topics() -> None:
    # Topics 2 and 20 were the same green: 25 topics get 25 different colours.
    assert len(set(charts.PALETTE[:25])) == 25
    assert len(charts.PALETTE) >= 25


def test_the_map_names_each_cluster_where_it_lies_instead_of_a_legend() -> None:
    layout = charts.paper_map(PAPERS).to_dict()["layout"]
    assert not layout.get("showlegend")
    labels = {a["text"]: (a["x"], a["y"]) for a in layout["annotations"]}
    for topic in sorted(set(PAPERS["topic"]) - {-1}):
        group = PAPERS[PAPERS["topic"] == topic]
        name = f"<b>{charts.map_label(topic, group['topic_label'].iloc[0])}</b>"
        assert labels[name] == (pytest.approx(group["x"].median()), pytest.approx(group["y"].median()))
    assert len(labels) == len(set(PAPERS["topic"]) - {-1})  # no label for the outliers


def _boxes(annotations: list[dict], extent: tuple[float, float, float, float]) -> list[tuple[float, ...]]:
    """Each label's box in the map's narrowest plot area (`charts.MAP_PLOT_PX`): centre x, y, half width."""
    (width, height), (x0, x1, y0, y1) = charts.MAP_PLOT_PX, extent
    return [
        (
            (a["x"] - x0) / (x1 - x0) * width + a.get("xshift", 0),
            (a["y"] - y0) / (y1 - y0) * height + a.get("yshift", 0),
            (len(html.unescape(a["text"][3:-4])) * charts.LABEL_CHAR_PX + 4) / 2,
        )
        for a in annotations
    ]


def _pixels(x: float, y: float, extent: tuple[float, float, float, float]) -> tuple[float, float]:
    """A data point's place in the map's narrowest plot area, as `_boxes` places labels."""
    (width, height), (x0, x1, y0, y1) = charts.MAP_PLOT_PX, extent
    return (x - x0) / (x1 - x0) * width, (y - y0) / (y1 - y0) * height


def _covering(boxes: list[tuple[float, ...]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, (x, y, half) in enumerate(boxes)
        for j, (ox, oy, other) in enumerate(boxes[:i])
        if abs(x - ox) < half + other and abs(y - oy) < charts.LABEL_LINE_PX
    ]


def _clusters(
    sizes: dict[int, int], centres: dict[int, tuple[float, float]], spread: float, seed: int
) -> pd.DataFrame:
    """Papers of each topic (``sizes``) scattered around its centre, ``spread`` apart (seeded)."""
    rng = np.random.default_rng(seed)
    return pd.concat(
        [
            PAPERS.iloc[[0] * n].assign(
                id=[f"t{topic}-{i}" for i in range(n)],
                topic=topic,
                topic_label=f"topic{topic} · words · more",
                x=centres[topic][0] + rng.normal(0, spread, n),
                y=centres[topic][1] + rng.normal(0, spread, n),
            )
            for topic, n in sizes.items()
        ],
        ignore_index=True,
    )


def test_map_labels_of_clusters_that_lie_together_move_apart_and_the_largest_stays() -> None:
    # Three clusters around one place in the middle (the seeds' map had "2 retrieval · contrastive" half
    # under "5 graph · calibration") and two far off: the largest keeps its place, the others move a line
    # each way.
    sizes = {0: 40, 1: 25, 2: 10, 3: 30, 4: 30}
    centres = {0: (0.0, 0.0), 1: (0.02, 0.01), 2: (-0.01, -0.01), 3: (5.0, 5.0), 4: (-5.0, -5.0)}
    papers = _clusters(sizes, centres, spread=0.01, seed=0)
    labels = charts.paper_map(papers).to_dict()["layout"]["annotations"]
    shift = {int(a["text"][3]): (a["xshift"], a["yshift"]) for a in labels}  # "<b>N topicN · words</b>"
    assert shift[0] == shift[3] == shift[4] == (0, 0)
    assert {shift[1], shift[2]} == {(0, charts.LABEL_LINE_PX), (0, -charts.LABEL_LINE_PX)}
    extent = (papers["x"].min(), papers["x"].max(), papers["y"].min(), papers["y"].max())
    assert _covering(_boxes(labels, extent)) == []
    assert _covering(_boxes([{**a, "xshift": 0, "yshift": 0} for a in labels], extent)) != []  # they did


def test_a_label_of_one_or_two_papers_leaves_its_points_in_sight() -> None:
    # A small map labels every cluster; a search on the seeds left clusters of one paper whose label,
    # an opaque box at the paper's place, hid the only point it named.
    sizes, centres = {0: 30, 1: 1, 2: 2}, {0: (0.0, 0.0), 1: (5.0, 5.0), 2: (-5.0, 5.0)}
    papers = _clusters(sizes, centres, spread=0.3, seed=1)
    labels = {int(a["text"][3]): a for a in charts.paper_map(papers).to_dict()["layout"]["annotations"]}
    assert set(labels) == {0, 1, 2}  # a small map names every cluster
    assert (labels[0]["xshift"], labels[0]["yshift"]) == (0, 0)  # a large one keeps its place
    extent = (papers["x"].min(), papers["x"].max(), papers["y"].min(), papers["y"].max())
    for topic in (1, 2):
        ((x, y, half),) = _boxes([labels[topic]], extent)
        for px, py in papers.loc[papers["topic"] == topic, ["x", "y"]].itertuples(index=False):
            point_x, point_y = _pixels(px, py, extent)
            # the point, as large as a search hit, is outside the label's box
            radius = charts.MAP_HIT_RADIUS_PX
            assert abs(point_x - x) >= half + radius or abs(point_y - y) >= charts.LABEL_LINE_PX / 2 + radius


def test_random_maps_of_thirty_topics_have_no_label_under_another() -> None:
    # Issue 49: at 53 topics labels hid each other. A label with no free place near its cluster is
    # left out (None), and every label drawn is clear of every other.
    left_out = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        places = [(float(x), float(y)) for x, y in rng.uniform(0, 1, (30, 2))]
        texts = [f"{i} " + "w" * int(rng.integers(8, 30)) for i in range(30)]
        shifts = charts.label_shifts(places, texts, (0.0, 1.0, 0.0, 1.0))
        assert shifts[0] == (0, 0)  # the largest cluster's label keeps its place
        annotations = [
            {"x": x, "y": y, "xshift": shift[0], "yshift": shift[1], "text": f"<b>{text}</b>"}
            for (x, y), text, shift in zip(places, texts, shifts, strict=True)
            if shift is not None
        ]
        assert _covering(_boxes(annotations, (0.0, 1.0, 0.0, 1.0))) == [], seed
        drawn = [shift for shift in shifts if shift is not None]
        left_out += len(shifts) - len(drawn)
        assert all(abs(dy) <= 2 * charts.LABEL_LINE_PX for _, dy in drawn)  # near their cluster
        widths = [len(text) * charts.LABEL_CHAR_PX + 4 for text in texts]  # at most a label sideways
        assert all(
            abs(shift[0]) <= width for shift, width in zip(shifts, widths, strict=True) if shift is not None
        )
    assert left_out > 0  # thirty long labels on a small map: some did not fit


def test_a_crowded_map_draws_only_labels_that_fit_and_names_every_cluster_on_hover() -> None:
    # 54 clusters of 20 points in a 9 x 6 grid, as the 27k corpus's 53 topics: the labels drawn never
    # cover one another, the largest cluster's is drawn, and every cluster's trace carries its name.
    rng = np.random.default_rng(3)
    frames = []
    for topic in range(54):
        n = 20 + (54 - topic)  # topic 0 is the largest
        cx, cy = topic % 9, topic // 9
        frames.append(
            PAPERS.iloc[[0] * n].assign(
                id=[f"t{topic}-{i}" for i in range(n)],
                topic=topic,
                topic_label=f"label{topic} · some words · more",
                x=cx + rng.normal(0, 0.15, n),
                y=cy + rng.normal(0, 0.15, n),
            )
        )
    papers = pd.concat(frames, ignore_index=True)
    fig = charts.paper_map(papers).to_dict()
    labels = fig["layout"]["annotations"]
    extent = (papers["x"].min(), papers["x"].max(), papers["y"].min(), papers["y"].max())
    assert _covering(_boxes(labels, extent)) == []
    assert 0 < len(labels) < 54
    assert any(a["text"].startswith("<b>0 label0") for a in labels)
    named = {trace["name"].split(":")[0] for trace in fig["data"]}
    assert named == {str(t) for t in range(54)}


def _grid_map(rows: int, columns: int, n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for topic in range(rows * columns):
        cx, cy = topic % columns, topic // columns
        frames.append(
            pd.DataFrame(
                {
                    "topic": topic,
                    "x": cx + rng.normal(0, 0.2, n + topic % 7),
                    "y": cy + rng.normal(0, 0.2, n + topic % 7),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize(("rows", "columns"), [(6, 9), (8, 8), (3, 20)])
def test_no_two_neighbouring_clusters_share_a_colour(rows: int, columns: int) -> None:
    # Issue 49: 54 groups shared 31 colours by topic number, neighbours included. On a grid of clusters
    # every cluster's neighbours (left, right, up, down, diagonals) differ from it.
    points = _grid_map(rows, columns)
    colour_of = charts.colours_of_topics(points)
    assert set(colour_of) == set(range(rows * columns))
    assert set(colour_of.values()) <= set(charts.PALETTE)
    for topic, colour in colour_of.items():
        cx, cy = topic % columns, topic // columns
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                x, y = cx + dx, cy + dy
                if (dx or dy) and 0 <= x < columns and 0 <= y < rows:
                    assert colour_of[y * columns + x] != colour, (topic, y * columns + x)


def test_the_map_draws_each_cluster_in_its_neighbour_aware_colour_and_a_caller_can_fix_them() -> None:
    points = _grid_map(4, 4, n=10).assign(title="t", topic_label=lambda p: "w" + p["topic"].astype(str))
    points["id"] = [f"p{i}" for i in range(len(points))]
    expected = charts.colours_of_topics(points)
    drawn = {int(t["name"].split(":")[0]): t["marker"]["color"] for t in charts.paper_map(points).data}
    assert drawn == expected
    fixed = {t: "#179f28" for t in range(16)}
    drawn = {
        int(t.name.split(":")[0]): t.marker.color for t in charts.paper_map(points, topic_colours=fixed).data
    }
    assert set(drawn.values()) == {"#179f28"}


def test_the_word_cloud_draws_only_words_big_enough_to_read() -> None:
    # 150 terms of falling frequency, as the Terms page passes: the tail used to be drawn at 5 px.
    frequencies = {f"term{n:03d}": 1000 / (n + 1) for n in range(150)}
    layout = charts.cloud_layout(frequencies)
    assert layout, "something is drawn"
    assert min(size for _, size in layout) >= charts.CLOUD_MIN_FONT * charts.CLOUD_SCALE
    assert len(layout) < len(frequencies)  # the unreadable tail is left out
    assert layout[0][0] == "term000"


def test_topic_bar_labels_show_two_lines_of_the_label_and_the_whole_label_on_hover() -> None:
    # Issue 49: labels were cut at 30 characters even at 1920 px. Two lines, each no longer than one
    # line was, broken between the label's terms; the bars grow to hold them.
    label = "reinforcement learning · policy optimization · offline reward models · critics"
    table = pd.DataFrame({"topic": [7, 8], "label": [label, "short"]})
    bar = charts.topic_sizes(table, pd.Series({7: 3, 8: 2})).to_dict()
    data = bar["data"][0]
    lines = data["y"][0].split("<br>")
    assert len(lines) == 2
    assert lines[0] == "7: reinforcement learning ·"
    assert lines[1].startswith("policy optimization") and lines[1].endswith("…")
    assert all(len(line) <= len("7: ") + charts.AXIS_LINE_CHARS for line in lines)
    shown = " ".join(lines).replace("…", "")
    assert len(shown) > 30 + len("7: ")  # more than the one line of 30 it had
    assert data["y"][1] == "8: short"
    assert data["hovertext"][0] == f"7: {label}"  # the whole label on hover
    one_line = charts.topic_sizes(table.assign(label="short"), pd.Series({7: 3, 8: 2})).layout.height
    assert bar["layout"]["height"] >= one_line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("short", "short"),
        ("diffusion · guidance · sampling · score · noise · denoising",
         "diffusion · guidance · sampling ·<br>score · noise · denoising"),
        ("large language model · reasoning · chain thought · math",
         "large language model · reasoning ·<br>chain thought · math"),
        ("<b>x</b> " * 10, "&lt;b&gt;x&lt;/b&gt; &lt;b&gt;x&lt;/b&gt; &lt;b&gt;x&lt;/b&gt;<br>"
         "&lt;b&gt;x&lt;/b&gt; &lt;b&gt;x&lt;/b&gt; &lt;b&gt;x&lt;/b&gt;…"),
    ],
)  # fmt: skip
def test_axis_labels_wrap_between_terms_and_stay_escaped(text: str, expected: str) -> None:
    assert charts.axis_label(text) == expected


def test_map_labels_read_at_4_5_to_1_on_their_colour() -> None:
    from dashboard.figures import colours

    labels = charts.paper_map(PAPERS).to_dict()["layout"]["annotations"]
    assert labels
    for label in labels:
        assert label.get("opacity", 1) == 1
        ratio = colours.contrast(label["font"]["color"], label["bgcolor"])
        assert ratio >= colours.TEXT_RATIO, (label["text"], ratio)
    for colour in (*charts.PALETTE, "#3c4043"):
        assert colours.contrast(colours.text_on(colour), colour) >= colours.TEXT_RATIO, colour


def test_map_hover_comes_from_a_hover_column_when_the_caller_has_one() -> None:
    own = charts.paper_map(PAPERS)
    given = charts.paper_map(PAPERS.assign(hover=charts.map_hover(PAPERS)))
    assert [list(t.hovertext) for t in given.data] == [list(t.hovertext) for t in own.data]
    marked = charts.paper_map(PAPERS.assign(hover=[f"cached {i}" for i in range(len(PAPERS))]))
    assert sorted(h for t in marked.data for h in t.hovertext) == sorted(
        f"cached {i}" for i in range(len(PAPERS))
    )


def test_a_maps_sample_is_uniform_and_a_narrower_filter_keeps_the_points_it_still_has() -> None:
    rng = np.random.default_rng(7)
    order = rng.permutation(5_000)
    wide = rng.random(5_000) < 0.6
    narrow = wide & (rng.random(5_000) < 0.5)
    drawn, drawn_narrow = (charts.sample_in_order(m, order, max_points=300) for m in (wide, narrow))
    assert len(drawn) == 300 and wide[drawn].all() and np.array_equal(drawn, np.sort(drawn))
    # every paper drawn for the wide filter that the narrow one keeps is drawn for the narrow one too
    kept = drawn[narrow[drawn]]
    assert set(kept) <= set(drawn_narrow)
    few = np.zeros(5_000, dtype=bool)
    few[[3, 10, 4_000]] = True
    assert charts.sample_in_order(few, order, max_points=300).tolist() == [3, 10, 4_000]
    # uniform: each fifth of the rows gets about a fifth of the points
    shares = np.bincount(drawn * 5 // 5_000, minlength=5) / len(drawn)
    assert np.all(np.abs(shares - 0.2) < 0.06)
    # read a growing head of the order at a time: the same rows as the first of all the masked ones
    order = rng.permutation(100_000)
    for share in (0.0, 0.001, 0.05, 0.9, 1.0):
        mask = rng.random(100_000) < share
        expected = np.sort(order[mask[order]][:300])
        assert charts.sample_in_order(mask, order, max_points=300).tolist() == expected.tolist()


def test_map_hover_texts_kept_per_corpus_are_those_written_on_the_fly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from dashboard.ui import components, data

    monkeypatch.setattr(data, "MAP_HOVERS_KEPT", 20)  # of 60 papers: some of a sample are kept, some not
    papers = pd.concat([PAPERS] * 10, ignore_index=True)  # 60 papers
    papers["title"] = [f"{title} ({n})" for n, title in enumerate(papers["title"])]
    order, ranks, kept = data.map_sample_order("hover-test-corpus", papers)
    assert len(kept) == 20 and sorted(order.tolist()) == list(range(60))
    rows = charts.sample_in_order(np.arange(60) % 2 == 0, order, max_points=25)
    view = SimpleNamespace(source=SimpleNamespace(digest="hover-test-corpus"), papers=papers)
    texts = components._hovers(view, rows, ranks, kept)  # type: ignore[arg-type]
    assert texts == charts.map_hover(papers.iloc[rows])
    assert (ranks[rows] < 20).any() and (ranks[rows] >= 20).any()


def test_charts_are_written_to_json_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """st.plotly_chart writes a figure with plotly.io.to_json's default engine: orjson when installed
    (the standard library's encoder took twice as long on the paper map at a million papers)."""
    import orjson
    import plotly.io

    written: list[int] = []
    dumps = orjson.dumps

    def counted(*args: Any, **kwargs: Any) -> bytes:
        written.append(1)
        return dumps(*args, **kwargs)

    monkeypatch.setattr(orjson, "dumps", counted)
    fig = charts.paper_map(make_papers().assign(x=np.arange(6.0), y=np.arange(6.0)), title="Map")
    text = plotly.io.to_json(fig, validate=False)
    assert written and '"Map"' in text


def test_figure_lays_out_title_axes_and_extras_in_one_validated_call() -> None:
    # Every chart is made by `charts.figure` (one validation, not one per update_layout): the title is
    # escaped, an axis title appears when given ("" included) and not when None, extras pass through.
    bars = {"type": "bar", "x": [1, 2], "y": ["a", "b"], "orientation": "h"}
    fig = charts.figure(
        [bars], title='<b>bold</b> "quoted"', x_title="", subtitle="a & b", yaxis=charts.BARS_DOWN, bargap=0.3
    )
    layout = fig.to_plotly_json()["layout"]
    assert layout["title"]["text"] == '&lt;b&gt;bold&lt;/b&gt; "quoted"'
    assert layout["title"]["subtitle"]["text"] == "a &amp; b"
    assert layout["xaxis"]["title"]["text"] == ""
    assert "title" not in layout.get("yaxis", {}) and layout["yaxis"]["autorange"] == "reversed"
    assert layout["bargap"] == 0.3 and layout["showlegend"] is False
    assert fig.data[0].orientation == "h"
    with pytest.raises(ValueError):  # still validated: a misspelt property is an error, not ignored
        charts.figure([bars], title="x", bargapp=0.3)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_word_cloud_is_a_small_palette_png_in_the_words_colours(theme: str) -> None:
    import io

    from PIL import Image

    from dashboard.figures import colours

    frequencies = {f"term{n:03d}": 1000 / (n + 1) for n in range(150)}
    png = charts.word_cloud_png(frequencies, theme=theme)
    image = Image.open(io.BytesIO(png))
    assert image.mode == "P" and "transparency" in image.info
    assert len(image.getcolors()) <= charts.CLOUD_PNG_COLOURS
    pixels = np.asarray(image.convert("RGBA"))
    assert pixels[0, 0, 3] == 0, "the page shows through the background"
    opaque = pixels[pixels[..., 3] == 255][:, :3]
    assert len(opaque) > 0.1 * np.count_nonzero(pixels[..., 3]), "the words are drawn opaque"
    # The palette merges only the words' smoothed edges: the words keep their colours, which read at
    # 4.5:1 on the theme's background (`test_colours`).
    background = colours.THEMES[theme].background
    drawn, counts = np.unique(opaque, axis=0, return_counts=True)
    readable = [colours.contrast("#" + bytes(c.astype(np.uint8)).hex(), background) >= 4.5 for c in drawn]
    assert counts[readable].sum() > 0.99 * counts.sum()


def test_a_cluster_of_a_few_stray_points_on_a_large_map_gets_no_label() -> None:
    big = _grid_map(2, 2, n=100).assign(title="t", topic_label=lambda p: "w" + p["topic"].astype(str))
    stray = big.iloc[:2].assign(topic=9, topic_label="stray")
    points = pd.concat([big, stray], ignore_index=True)
    points["id"] = [f"p{i}" for i in range(len(points))]
    fig = charts.paper_map(points)
    texts = [a.text for a in fig.layout.annotations]
    assert not any("stray" in text for text in texts)
    assert any(trace.name.startswith("9:") for trace in fig.data)  # still named on hover
