"""The topic tree as a Plotly figure: which fitted topics merge into which, and where the cut at k is.

A dendrogram lying on its side: one row per fitted topic (its label), merges to the right at the height
at which Ward's criterion joined them (`dashboard.analytics.hierarchy`). Branches under the cut take the
colour of
the topic they form at ``k`` (the same colours as the topic bars and the map); those above it are grey;
a dashed line marks the cut. Hovering a merge shows the merged group's label from its summed counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.analytics.hierarchy import TopicTree
from dashboard.figures.charts import MUTED, PALETTE, safe_label, wrapped_label

ROW_HEIGHT_PX = 18
# The tree has the page's whole width: its rows' names get twice the topic bars' line.
TREE_LABEL_CHARS = 64


def tree_figure(
    tree: TopicTree,
    k: int,
    leaf_names: Sequence[str],
    node_names: Sequence[str],
    topic_colours: Mapping[int, str] | None = None,
) -> go.Figure:
    """The dendrogram of ``tree`` with the cut at ``k`` marked.

    ``leaf_names`` label the fitted topics (rows); ``node_names`` every node (leaves, then one per merge,
    as `TopicTree.node_labels` gives them) for the hover boxes. ``topic_colours`` (topic at ``k`` ->
    colour) are the map's (`charts.colours_of_topics`), so a branch has its cluster's colour; a topic
    they do not name takes the palette's by number.
    """

    def colour_of(topic: int) -> str:
        return (topic_colours or {}).get(topic) or PALETTE[topic % len(PALETTE)]

    n = tree.n_leaves
    fig = go.Figure()
    if n == 0:
        return fig
    group_of = tree.cut(k)
    # Imported here: scipy's clustering brings scipy.spatial, a visible part of every server's start (the
    # warm-up imports this module) for a chart only the Topics page draws.
    from scipy.cluster.hierarchy import leaves_list

    order = leaves_list(tree.linkage) if n > 1 else np.array([0])
    y = np.zeros(2 * n - 1)
    y[order] = np.arange(n)[::-1]  # the first leaf of the order on top
    x = np.zeros(2 * n - 1)
    size = np.zeros(2 * n - 1)
    size[:n] = tree.sizes
    group = np.full(2 * n - 1, -1)
    group[:n] = group_of
    merged_below_cut = n - min(max(k, 1), n)
    lines: dict[int, tuple[list[float | None], list[float | None]]] = {}
    for step, (a, b, height, _) in enumerate(tree.linkage):
        a, b, node = int(a), int(b), n + step
        x[node], y[node], size[node] = height, (y[a] + y[b]) / 2, size[a] + size[b]
        colour = int(group_of[_first_leaf(tree, a)]) if step < merged_below_cut else -1
        group[node] = colour
        xs, ys = lines.setdefault(colour, ([], []))
        xs += [x[a], height, height, x[b], None]
        ys += [y[a], y[a], y[b], y[b], None]
    for colour, (xs, ys) in sorted(lines.items()):
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": MUTED if colour < 0 else colour_of(colour), "width": 2},
                hoverinfo="skip",
            )
        )
    nodes = np.arange(n, 2 * n - 1)
    fig.add_trace(
        go.Scatter(
            x=x[nodes],
            y=y[nodes],
            mode="markers",
            marker={"size": 7, "color": MUTED},
            text=[
                f"{wrapped_label(node_names[i])}<br>{int(size[i]):,} papers"
                + (f"<br>topic {int(group[i])} at k = {k}" if group[i] >= 0 else "")
                for i in nodes.tolist()
            ],
            hovertemplate="%{text}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.zeros(n),
            y=y[:n],
            mode="markers",
            marker={"size": 9, "color": [colour_of(int(g)) for g in group_of]},
            text=[
                f"{wrapped_label(leaf_names[i])}<br>{int(tree.sizes[i]):,} papers<br>topic {int(group_of[i])}"
                f" at k = {k}"
                for i in range(n)
            ],
            hovertemplate="%{text}<extra></extra>",
        )
    )
    if k < n:  # between the last merge made and the first one left undone
        below = tree.linkage[merged_below_cut - 1, 2] if merged_below_cut else 0.0
        above = tree.linkage[merged_below_cut, 2]
        fig.add_vline(
            x=(below + above) / 2,
            line={"dash": "dash", "color": MUTED, "width": 1},
            annotation_text=f"k = {k}",
        )
    fig.update_layout(
        title={"text": f"How the {n} fitted topics merge (cut at {k} topics)", "x": 0, "xanchor": "left"},
        showlegend=False,
        height=int(max(260, ROW_HEIGHT_PX * n + 110)),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        xaxis={"title": "Merge distance (Ward, on the topics' centroids)", "rangemode": "tozero"},
        yaxis={
            "tickmode": "array",
            "tickvals": y[:n].tolist(),
            "ticktext": [safe_label(leaf_names[i], TREE_LABEL_CHARS) for i in range(n)],
            "showgrid": False,
            "zeroline": False,
        },
    )
    return fig


def _first_leaf(tree: TopicTree, node: int) -> int:
    """A leaf under ``node`` (every leaf under a node below the cut is in the same group)."""
    n = tree.n_leaves
    while node >= n:
        node = int(tree.linkage[node - n, 0])
    return node
