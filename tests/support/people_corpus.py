"""A small Paper Copilot-shaped corpus with authors, institutions, countries and decisions.

Written from the shape of Paper Copilot's ``paperlists`` JSON (``author`` and ``aff`` joined by
``;``, countries in ``aff_country_unique``, the decision in ``status``), so the app tests see these
columns the way the readers produce them from a user's file. Who wrote what is chosen so a test can
reason about it: "Ada Lovelace" writes papers 0-5, "Alan Turing" the even ones, and so on.
"""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = (
    "graph neural networks for molecule property prediction with message passing over atoms and bonds",
    "diffusion models with classifier-free guidance for fast image and video generation at scale",
    "regret bounds for contextual bandits and reinforcement learning with function approximation",
)
STATUSES = ("Oral", "Spotlight", "Poster", "Poster", "Reject", "Poster")
N_PAPERS = 24


def record(i: int) -> dict[str, str]:
    """Paper ``i`` of the corpus as a Paper Copilot record."""
    authors = ["Ada Lovelace"] if i < 6 else []
    authors += ["Alan Turing"] if i % 2 == 0 else ["Grace Hopper"]
    authors += [f"Student {i}"]
    affiliations = ["University of Oxford" if a != "Grace Hopper" else "Yale University" for a in authors]
    countries = sorted(
        {"United States" if a == "Yale University" else "United Kingdom" for a in affiliations}
    )
    code = f"https://github.com/lab/method{i}" if i % 3 == 0 else ""
    topic = TOPICS[i % 3]
    return {
        "id": f"paper{i}",
        "title": f"Paper {i} on {topic.split(' for ')[0]}",
        "status": STATUSES[i % len(STATUSES)],
        "track": "main",
        "author": "; ".join(authors),
        "aff": "; ".join(affiliations),
        "aff_country_unique": ";".join(countries),
        "abstract": f"We study {topic}. Our method, Method{i}, improves on prior work in experiments "
        f"number {i}; the analysis covers {topic.split()[-1]} and more.",
        "github": code,
        "site": f"https://icml.cc/virtual/2019/poster/{1000 + i}",
    }


def write(directory: Path) -> Path:
    """Write the corpus as ``icml2019.json`` in ``directory``; returns the file's path."""
    path = directory / "icml2019.json"
    path.write_text(json.dumps([record(i) for i in range(N_PAPERS)]), encoding="utf-8")
    return path
