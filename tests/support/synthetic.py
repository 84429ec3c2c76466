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
                "track": "",
                "tldr": "",
                "project_url": "",
                "paper_url": f"https://example.org/{pid}",
                "citations": None,
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
    papers["citations"] = papers["citations"].astype("Int64")
    for column in ("id", "source", "venue", "title", "abstract", "abstract_clean", "code_url", "github_repo",
                   "decision", "decision_tier", "track", "tldr", "project_url", "paper_url"):  # fmt: skip
        papers[column] = papers[column].astype("str")
    for column in ("decision", "decision_tier"):
        papers[column] = papers[column].astype("str")
    return papers[[*CORE_COLUMNS, "url", *ANALYSIS_COLUMNS]]  # CORE_COLUMNS holds CONTRACT_COLUMNS


# --------------------------------------------------------------------- a corpus with planted trends

TREND_TOPICS: dict[str, tuple[str, ...]] = {
    "graphs": ("graph", "node", "edge", "molecule", "message", "passing"),
    "diffusion": ("diffusion", "denoising", "image", "generation", "sampler", "score"),
    "agents": ("policy", "reward", "agent", "environment", "exploration", "return"),
}


def trend_papers(
    years: tuple[int, ...] = (2020, 2021, 2022, 2023, 2024),
    venues: tuple[str, ...] = ("ConfA", "ConfB"),
    per_venue_year: int = 40,
    seed: int = 0,
    diffusion_growth: float = 0.12,
) -> pd.DataFrame:
    """Papers with planted trends, a ``topic`` column and the columns the Trends page reads.

    Planted: topic 1 (diffusion) grows year by year (10% of the papers in the first year, +12 points a
    year: ``diffusion_growth``), topic 0 (graphs) shrinks by as much, topic 2 (agents) stays at 30%; the
    word ``quantum`` appears in a growing share of papers (5%, then +15 points a year) in every topic;
    ``lattice`` in half the papers every year (flat); ``zebra`` once, in the last year (rare: must not
    top anything).
    Released code: 20% in the first year, +10 points a year. ConfB has more agents papers than ConfA.
    Decision tiers: accepted for half the diffusion papers, a quarter of the others.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    names = list(TREND_TOPICS)
    rows = []
    for y_index, year in enumerate(years):
        diffusion = 0.10 + diffusion_growth * y_index
        for v_index, venue in enumerate(venues):
            agents = 0.30 + (0.15 if v_index == 1 else 0.0)
            graphs = max(0.0, 1.0 - diffusion - agents)
            shares = np.array([graphs, diffusion, agents]) / (graphs + diffusion + agents)
            for i in range(per_venue_year):
                topic = int(rng.choice(3, p=shares))
                words = list(rng.choice(TREND_TOPICS[names[topic]], size=12))
                words += list(rng.choice(("method", "results", "show", "propose", "study"), size=4))
                if rng.random() < 0.05 + 0.15 * y_index:
                    words.append("quantum")
                if rng.random() < 0.5:
                    words.append("lattice")
                if y_index == len(years) - 1 and v_index == 0 and i == 0:
                    words.append("zebra")
                abstract = " ".join(str(w) for w in words) + "."
                released = rng.random() < 0.2 + 0.1 * y_index
                accepted = rng.random() < (0.5 if topic == 1 else 0.25)
                rows.append(
                    {
                        "id": f"{venue}-{year}-{i}",
                        "venue": venue,
                        "year": year,
                        "title": f"{names[topic]} paper {i}",
                        "abstract_clean": abstract,
                        "abstract": abstract,
                        "topic": topic,
                        "code_status": "released" if released else "none",
                        "decision_tier": "poster" if accepted else "reject",
                        "areas": [names[topic].title()],
                    }
                )
    papers = pd.DataFrame(rows)
    papers["year"] = papers["year"].astype("Int64")
    return papers
