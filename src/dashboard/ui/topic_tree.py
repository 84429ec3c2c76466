"""The Topics page's topic tree: what the number of topics means, the refit action, and the tree.

Any number of topics up to the fitted one is a cut of the tree over the fitted topics
(`dashboard.analytics.hierarchy`): the fitted topics merged, labels from the summed counts, no refit. A
user who
wants topics fitted at that number asks for it (``refit=1`` in the URL, like every setting); more topics
than were fitted are always a refit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import streamlit as st

from dashboard.analytics import hierarchy
from dashboard.figures import tree as tree_charts
from dashboard.ui import components, data, keys
from dashboard.ui.url import update_filters
from dashboard.ui.view import View


def _fitted(view: View) -> tuple[hierarchy.TopicTree, list[str]] | None:
    if view.analysis is None:
        return None
    return data.fitted_tree(view.source.digest, view.papers)


def refit_control(view: View) -> None:
    """Under the number of topics: whether it is a cut or a refit, and the button to switch."""
    fitted = _fitted(view)
    k = view.filters.k
    if fitted is None or k is None:
        return
    tree, _ = fitted
    n_leaves = tree.n_leaves
    if view.filters.refit:
        st.caption(f"Topics refitted at {k}.")
        if k < n_leaves:
            st.button(
                "Back to the tree's cut",
                key=keys.TOPICS_CUT,
                on_click=update_filters,
                args=(lambda f: replace(f, refit=False, topic=()),),
                icon=":material/account_tree:",
                help=f"The {n_leaves} fitted topics merged into {k} (instant).",
            )
    elif k < n_leaves:
        st.caption(f"The {n_leaves} fitted topics merged into {k} along their tree (no refit).")
        st.button(
            f"Refit at {k} topics",
            key=keys.TOPICS_REFIT,
            on_click=update_filters,
            args=(lambda f: replace(f, refit=True, topic=()),),
            icon=":material/refresh:",
            help="Fit the topic model again with this number of topics: its topics are its own, not "
            "merges of the fitted ones. Takes as long as the first analysis (once per number).",
        )
    elif k > n_leaves:
        st.caption(f"More than the {n_leaves} fitted topics: refitted at {k}.")


def tree_section(view: View, topic_colours: Mapping[int, str] | None = None) -> None:
    """The tree of the fitted topics, coloured by the topics they form at the current number (in
    ``topic_colours``, the map's, where given), in an expander drawn only while it is open.

    Below the map, out of sight as the page opens: drawn with the page, it was a good part of every
    switch to Topics (the browser drawing one more chart, and on a first visit the server labelling
    every node of the tree), for a chart a reader opens now and then.
    """
    fitted = _fitted(view)
    if fitted is None:
        return
    tree, leaf_names = fitted
    n_leaves = tree.n_leaves
    if n_leaves < 2:
        return
    k = view.filters.k if view.filters.k is not None and not view.filters.refit else n_leaves
    box = components.lazy_section(
        f"How the {n_leaves} fitted topics merge (the topics' tree)",
        f"{keys.TOPICS_TREE}.open",
        ":material/account_tree:",
    )
    if not box.open:
        return
    with box:
        st.caption(
            f"The {n_leaves} fitted topics (rows), joined two at a time, the most alike first (Ward, on "
            "the topics' centroids). Fewer topics are cuts of this tree: the branches left of the dashed "
            "line form one topic each, in its colour; a merged topic is named from its topics' summed "
            "term counts."
            + (
                " The topics shown above are a refit, so the tree is the fitted one's."
                if view.filters.refit
                else ""
            )
        )
        names = data.tree_node_labels(view.source.digest, tree)
        colours = None if view.filters.refit else topic_colours  # a refit's topics are not the tree's
        figure = tree_charts.tree_figure(tree, min(k, n_leaves), leaf_names, names, colours)
        components.chart(figure, view, name="topic-tree", key=f"{keys.TOPICS_TREE}.{view.model_key}")
