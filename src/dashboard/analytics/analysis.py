"""One call that adds topics, research areas and the map to the paper table: ``analyze(papers)``.

>>> import pandas as pd
>>> abstracts = ["Graph networks for molecules.", "Message passing graph networks.", "Diffusion for images."]
>>> papers = pd.DataFrame({"id": ["a", "b", "c"], "title": ["", "", ""], "abstract": abstracts})
>>> result = analyze(papers, n_topics=2)
>>> sorted(result.papers.columns[-7:])
['areas', 'is_outlier', 'topic', 'topic_label', 'topic_weight', 'x', 'y']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from dashboard.analytics import papermap, representations, similarity
from dashboard.analytics.areas import Taxonomy, area_scores, areas_from_scores, load_taxonomy
from dashboard.analytics.representations import DEFAULT_REPRESENTATION
from dashboard.schema import OUTLIER_LABEL, OUTLIER_TOPIC

if TYPE_CHECKING:  # imported when fitting: the app opens a prebuilt index without scikit-learn
    from dashboard.analytics.hierarchy import TopicTree
    from dashboard.analytics.topics import TopicModel


def paper_texts(papers: pd.DataFrame) -> list[str]:
    """The text analysed for each paper: its own title (not a derived one) and its cleaned abstract.

    Falls back to ``abstract`` when the table has no ``abstract_clean``.
    """
    body_column = "abstract_clean" if "abstract_clean" in papers.columns else "abstract"
    body = (
        papers[body_column].fillna("").astype(str)
        if body_column in papers.columns
        else pd.Series([""] * len(papers), index=papers.index)
    )
    if "title" not in papers.columns:
        return _without_placeholders(body.tolist(), papers)
    titles = papers["title"].fillna("").astype(str)
    if "title_is_derived" in papers.columns:
        # A derived title repeats the abstract's words: counting them twice would only add noise.
        titles = titles.where(~papers["title_is_derived"].fillna(False).astype(bool), "")
    texts = [f"{title}. {text}" if title.strip() else text for title, text in zip(titles, body, strict=True)]
    return _without_placeholders(texts, papers)


def _without_placeholders(texts: list[str], papers: pd.DataFrame) -> list[str]:
    """Empty text for papers whose ``has_abstract`` is False: they are left out of topics, terms and
    similarity (the topic model fits only papers with text; an empty one is topic -1, ``Outlier``)."""
    if "has_abstract" not in papers.columns:
        return texts
    keep = papers["has_abstract"].fillna(True).astype(bool).tolist()
    return [text if kept else "" for text, kept in zip(texts, keep, strict=True)]


@dataclass(frozen=True)
class Analysis:
    """The paper table with analysis columns, the topics table, and what similarity queries need."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    model: TopicModel
    taxonomy: Taxonomy
    positions: dict[str, int] = field(repr=False)

    def _vectors(self, space: str) -> object:
        return self.model.tfidf_ if space == "tfidf" else self.model.lsa_

    def most_similar(
        self, paper_id: str, n: int = 5, space: Literal["tfidf", "lsa"] = "tfidf"
    ) -> pd.DataFrame:
        """The ``n`` papers most similar to ``paper_id`` (itself excluded): id, title, similarity."""
        row = self.positions[str(paper_id)]
        # papers without an abstract (has_abstract False) have no text vector: similar to nothing
        ranked = [(i, s) for i, s in similarity.most_similar(self._vectors(space), row, n) if s > 0]
        rows = [i for i, _ in ranked]
        return pd.DataFrame(
            {
                "id": self.papers["id"].iloc[rows].astype(str).to_numpy(),
                "title": self.papers["title"].iloc[rows].astype(str).to_numpy()
                if "title" in self.papers.columns
                else [""] * len(rows),
                "similarity": np.round([s for _, s in ranked], 4),
            }
        )

    def similarity_matrix(self, ids: Sequence[str], space: Literal["tfidf", "lsa"] = "tfidf") -> pd.DataFrame:
        """Pairwise similarity (cosine, 0..1) of the given papers, indexed by id both ways."""
        ids = [str(i) for i in ids]
        matrix = similarity.similarity_matrix(self._vectors(space), [self.positions[i] for i in ids])
        return pd.DataFrame(np.round(matrix, 4), index=ids, columns=ids)


def topics_table(model: TopicModel, ids: np.ndarray, labels: np.ndarray | None = None) -> pd.DataFrame:
    """One row per topic (outliers last): topic, label, size, top terms, representative paper ids.

    ``ids`` are the ids of the papers the model was fitted on (representatives are among them);
    ``labels`` are every paper's topics when the model was fitted on a sample (sizes count them all).
    """
    if labels is None:
        labels = model.labels_
    sizes = np.bincount(labels[labels >= 0], minlength=model.n_topics_)
    rows = [
        {
            "topic": topic,
            "label": model.topic_labels_[topic],
            "size": int(sizes[topic]),
            "top_terms": list(model.top_terms_[topic]),
            "representative_ids": [str(ids[i]) for i in model.representative_docs_[topic]],
        }
        for topic in range(model.n_topics_)
    ]
    n_outliers = int((labels < 0).sum())
    if n_outliers:
        rows.append(
            {
                "topic": OUTLIER_TOPIC,
                "label": OUTLIER_LABEL,
                "size": n_outliers,
                "top_terms": [],
                "representative_ids": [],
            }
        )
    table = pd.DataFrame(rows, columns=["topic", "label", "size", "top_terms", "representative_ids"])
    return table.astype({"topic": "int64", "size": "int64"})


def analyze(
    papers: pd.DataFrame,
    n_topics: int | str = "auto",
    method: str = "kmeans",
    taxonomy: Path | str | Taxonomy | None = None,
    random_state: int = 0,
    coordinates: np.ndarray | None = None,
    *,
    representation: str = DEFAULT_REPRESENTATION,
    vectors: np.ndarray | None = None,
) -> Analysis:
    """Topics, research areas and map coordinates for every paper (see :mod:`dashboard.analytics.topics`).

    Returns the input table with ``topic, topic_label, topic_weight, is_outlier, areas, x, y`` added.
    ``taxonomy`` is a TOML file of research areas (default: the one shipped with the package).
    The map (``x, y``: :mod:`dashboard.analytics.papermap` of the vectors the topics were found in, so
    a topic's papers lie together) does not depend on the number of topics: ``coordinates`` (n x 2) are
    taken as they are instead of fitting it again.
    ``representation`` names the space the topics are clustered in
    (:mod:`dashboard.analytics.representations`; ``auto``, the default, chooses by the corpus's size).
    A space that needs embeddings uses ``vectors`` (one row per paper: `dashboard.search.topicspace`
    computes them) and falls back to LSA when they are None (the embedding model is not installed).
    """
    from dashboard.analytics.topics import TopicModel

    tax = taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)
    texts = paper_texts(papers)
    space = representations.get(representations.choose(representation, len(papers), vectors is not None))
    model = TopicModel(
        n_topics=n_topics, method=method, random_state=random_state, taxonomy=tax, representation=space.name
    ).fit(texts, vectors=vectors if space.external else None)
    if space.external:  # "papers like this" in the embedding space reads them (`search.like`)
        model.semantic_ = np.asarray(vectors, dtype=np.float32)
    scores = model.area_scores_ if model.area_scores_ is not None else area_scores(texts, tax)
    coords = (
        np.asarray(coordinates, dtype=np.float64)
        if coordinates is not None
        else papermap.layout(model.vectors_, random_state=random_state)  # the topics' own space
    )

    table = papers.copy()
    table["topic"] = model.labels_.astype("int64")
    table["topic_label"] = pd.Series(model.paper_labels(), index=table.index, dtype="str")
    table["topic_weight"] = model.weights_.astype("float64")
    table["is_outlier"] = model.is_outlier_.astype(bool)
    table["areas"] = pd.Series(areas_from_scores(scores, tax), index=table.index, dtype=object)
    table["x"] = np.round(coords[:, 0], 4)
    table["y"] = np.round(coords[:, 1], 4)

    ids = table["id"].astype(str).to_numpy() if "id" in table.columns else np.arange(len(table)).astype(str)
    positions = {paper_id: i for i, paper_id in enumerate(ids)}
    return Analysis(table, topics_table(model, ids), model, tax, positions)


def topic_tree(fitted: Analysis) -> TopicTree:
    """The merge tree over an analysis's topics (:mod:`dashboard.analytics.hierarchy`), from what it holds:
    every paper's topic, TF-IDF row and embedding (an index built before trees were stored works too)."""
    from dashboard.analytics.hierarchy import build_tree

    n_topics = int((fitted.topics["topic"] != OUTLIER_TOPIC).sum())
    model = fitted.model
    return build_tree(
        fitted.papers["topic"].to_numpy(dtype=np.int64),
        model.tfidf_,
        model.embedding_,
        n_topics,
        model.terms_,
    )


def cut(fitted: Analysis, tree: TopicTree, k: int) -> Analysis:
    """``fitted`` with its topics merged into ``k`` along ``tree`` (labels from the summed counts).

    Every paper keeps its fitted topic's group (outliers stay outliers); a group's representatives are
    its topics' representatives most like the group's centroid. The map, TF-IDF and similarity are
    those of ``fitted``. ``k`` at or above the tree's leaves gives ``fitted`` itself.
    """
    if k >= tree.n_leaves:
        return fitted
    described = tree.describe(k)
    topics_of = described.paper_topics(fitted.papers["topic"].to_numpy(dtype=np.int64))
    names = np.array([*described.labels, OUTLIER_LABEL], dtype=object)
    fitted_topics = fitted.topics.set_index("topic")
    vectors = fitted.model.embedding_
    centroid_sums = np.zeros((described.k, tree.centroids.shape[1]))
    np.add.at(centroid_sums, described.group_of, tree.centroids * tree.sizes[:, None])
    rows = []
    for group in range(described.k):
        candidates = [
            paper_id
            for leaf in described.members(group)
            for paper_id in fitted_topics.at[leaf, "representative_ids"]
        ]
        positions = [fitted.positions[p] for p in candidates]
        closeness = (
            np.asarray(vectors[np.sort(positions)] @ centroid_sums[group]) if positions else np.zeros(0)
        )
        by_row = dict(zip(np.sort(positions).tolist(), closeness.tolist(), strict=True))
        ranked = sorted(zip(candidates, positions, strict=True), key=lambda c: (-by_row[c[1]], c[1]))
        rows.append(
            {
                "topic": group,
                "label": described.labels[group],
                "size": int((topics_of == group).sum()),
                "top_terms": described.top_terms[group],
                "representative_ids": [paper_id for paper_id, _ in ranked[:10]],
            }
        )
    outliers = fitted.topics.loc[fitted.topics["topic"] == OUTLIER_TOPIC]
    table = (
        pd.concat([pd.DataFrame(rows), outliers], ignore_index=True) if len(outliers) else pd.DataFrame(rows)
    )
    table = table[["topic", "label", "size", "top_terms", "representative_ids"]].astype(
        {"topic": "int64", "size": "int64"}
    )
    # The labels as a categorical column: one small code per paper pointing at k + 1 names. Writing a
    # million label strings (Arrow's take) filled tens of MB of fresh memory every cut (page faults);
    # the codes are 1 MB. Equal labels (possible in principle)
    # cannot be categories, so they get the strings. The outlier label is the last name (-1 wraps).
    codes = topics_of % len(names)
    if len(set(names.tolist())) == len(names):
        labels = pd.Series(pd.Categorical.from_codes(codes, names), index=fitted.papers.index)
    else:
        labels = pa.array(names.tolist(), type=pa.large_string()).take(pa.array(codes)).to_pandas()
        labels = labels.set_axis(fitted.papers.index)
    papers = fitted.papers.assign(topic=topics_of, topic_label=labels)
    return Analysis(papers, table, fitted.model, fitted.taxonomy, fitted.positions)
