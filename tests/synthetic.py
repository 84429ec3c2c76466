"""A small hand-made paper table with every schema and analysis column, for filter and chart tests.

The rows are chosen so each filter has a known answer (see the comments by each row); it is not a
stand-in for the corpus engine, only a fixture whose contents a test can reason about.
"""

from __future__ import annotations

import pandas as pd

from dashboard.schema import ANALYSIS_COLUMNS, CORE_COLUMNS

_ROWS = [
    # id, source, venue, year, title, abstract_clean, methods, links, code_status, datasets, topic, areas
    (
        "p1",
        "a.txt",
        "ICML",
        2024,
        "Graph networks for molecules",
        "We propose GraphMol, a graph neural network for molecule property prediction on QM9.",
        ["GraphMol"],
        [{"url": "https://github.com/x/graphmol", "kind": "code"}],
        "released",
        ["QM9"],
        0,
        ["Graphs"],
    ),
    (
        "p2",
        "a.txt",
        "ICML",
        2024,
        "Message passing revisited",
        "Message passing on graphs is studied; code will be released upon acceptance.",
        [],
        [],
        "promised",
        [],
        0,
        ["Graphs", "Theory"],
    ),
    (
        "p3",
        "b.jsonl",
        "ICLR",
        2025,
        "Diffusion guidance for video",
        "Diffusion models with classifier-free guidance generate video. See https://proj.io/vid.",
        ["VidGuide"],
        [{"url": "https://proj.io/vid", "kind": "project_page"}],
        "project_page_only",
        ["UCF101"],
        1,
        ["Generative models"],
    ),
    (
        "p4",
        "b.jsonl",
        "ICLR",
        2025,
        "Sampling faster with diffusion",
        "A sampler for diffusion on ImageNet; our lab page is https://github.com/somelab.",
        [],
        [{"url": "https://github.com/somelab", "kind": "account"}],
        "account_only",
        ["ImageNet"],
        1,
        ["Generative models"],
    ),
    (
        "p5",
        "c.csv",
        "",
        None,
        "Derived: a bandit bound",
        "A regret bound for bandits; see arXiv https://arxiv.org/abs/2401.00001 for the long version.",
        [],
        [{"url": "https://arxiv.org/abs/2401.00001", "kind": "paper"}],
        "none",
        [],
        -1,
        [],
    ),
    (
        "p6",
        "c.csv",
        "NeurIPS",
        2023,
        "图神经网络 survey",
        "我们研究图神经网络 and message-passing schemes on ImageNet and QM9.",
        ["GNN-S"],
        [{"url": "https://github.com/y/gnns", "kind": "code"}, {"url": "https://d.org/x", "kind": "data"}],
        "released",
        ["ImageNet", "QM9"],
        2,
        ["Graphs"],
    ),
]

# The columns issue 10 adds (see the column contract), per paper id: authors, affiliations,
# countries, decision (the source's text) and its tier. p5 has no authors and no decision, p4's
# abstract is a placeholder; "Ada Lovelace" writes three papers, one of them under a name in CJK.
_PEOPLE = {
    "p1": (["Ada Lovelace", "Alan Turing"], ["Univ A", "Lab B"], ["UK"], "Oral", "oral", True),
    "p2": (["Alan Turing"], ["Lab B"], ["UK"], "Poster", "poster", True),
    "p3": (["Grace Hopper", "Ada Lovelace"], ["Univ A"], ["USA", "UK"], "Spotlight", "spotlight", True),
    "p4": (["Grace Hopper"], ["Univ C"], ["USA"], "Reject", "reject", False),
    "p5": ([], [], [], "", "unknown", True),
    "p6": (["李明", "Ada Lovelace"], ["清华大学"], ["China"], "Accept (poster)", "poster", True),
}
CONTRACT_COLUMNS: tuple[str, ...] = (
    "authors",
    "affiliations",
    "countries",
    "decision",
    "decision_tier",
    "has_abstract",
)

TOPIC_LABELS = {0: "graph · message · passing", 1: "diffusion · guidance · sampling", 2: "图神经 · survey"}


def make_papers() -> pd.DataFrame:
    """The six papers above as a schema-shaped table (core, contract and analysis columns, `url`)."""
    records = []
    for position, row in enumerate(_ROWS, start=1):
        (pid, source, venue, year, title, text, methods, links, status, datasets, topic, areas) = row
        code_url = next((link["url"] for link in links if link["kind"] == "code"), "")
        records.append(
            {
                "id": pid,
                "source": source,
                "position": position,
                "venue": venue,
                "year": year,
                "title": title,
                "title_is_derived": title.startswith("Derived"),
                "abstract": text,
                "abstract_clean": text,
                "n_words": len(text.split()),
                "method_names": methods,
                "links": links,
                "code_url": code_url,
                "github_repo": code_url.removeprefix("https://github.com/") if code_url else "",
                "code_status": status,
                "datasets": datasets,
                "url": f"https://example.org/{pid}",
                **dict(zip(CONTRACT_COLUMNS, _PEOPLE[pid], strict=True)),
                "topic": topic,
                "topic_label": TOPIC_LABELS.get(topic, "Outlier"),
                "topic_weight": 0.0 if topic == -1 else 0.8,
                "is_outlier": topic == -1,
                "areas": areas,
                "x": float(position),
                "y": float(topic),
            }
        )
    papers = pd.DataFrame.from_records(records)
    papers["year"] = papers["year"].astype("Int64")
    for column in ("id", "source", "venue", "title", "abstract", "abstract_clean", "code_url", "github_repo"):
        papers[column] = papers[column].astype("str")
    for column in ("decision", "decision_tier"):
        papers[column] = papers[column].astype("str")
    return papers[[*CORE_COLUMNS, "url", *CONTRACT_COLUMNS, *ANALYSIS_COLUMNS]]
