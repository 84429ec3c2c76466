"""How good are the topics? Agreement with OpenReview's primary_area on ICLR 2026, coherence, speed.

Prints, in one run:
- AMI / NMI / ARI of the default model's topics against ``primary_area`` (21 labels), NPMI coherence of
  its topics' top-10 terms, number of topics and outliers, fit time; the same for variants of ours
  (no taxonomy guidance, NMF, LDA) and for two plain scikit-learn baselines on the same texts
  (TF-IDF + NMF with k=21, counts + LDA with k=21);
- the research-area taxonomy's agreement with ``primary_area``;
- end-to-end time (load + analyze) of the seeds and of the 27k corpus, each in a fresh process.

AMI is the headline: plain NMI grows with the number of topics and can be gamed. Outliers count as one
more cluster (topic -1), as the dashboard shows them. NPMI is computed the same way for every model:
a paper "contains" a term when the term (singular or plural, any case, hyphen or space) occurs in its
title or abstract, so no model is judged by its own tokenizer.

    python bench/topic_quality.py            # everything
    python bench/topic_quality.py --quick    # skip the 27k end-to-end run
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import NMF, LatentDirichletAllocation
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, normalized_mutual_info_score

from dashboard.analytics.analysis import paper_texts
from dashboard.analytics.areas import assign_areas, load_taxonomy
from dashboard.analytics.terms import term_pattern
from dashboard.analytics.topics import TopicModel
from dashboard.corpus import load

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
ICLR = CORPORA / "iclr2026-openreview-1k" / "papers.jsonl"
BIG = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"
SEEDS = REPO / "seeds"
N_AREAS = 21


def npmi(top_terms: list[list[str]], texts: list[str]) -> float:
    """Mean NPMI over topics of their top terms' pairs, by document co-occurrence in ``texts``."""
    vocabulary = sorted({t for terms in top_terms for t in terms})
    present = {t: np.array([bool(term_pattern(t).search(x)) for x in texts]) for t in vocabulary}
    n = len(texts)
    per_topic = []
    for terms in top_terms:
        values = []
        for a, b in itertools.combinations(terms, 2):
            p_a, p_b = present[a].mean(), present[b].mean()
            p_ab = (present[a] & present[b]).sum() / n
            if p_ab == 0:
                values.append(-1.0)
            elif p_ab == 1:
                values.append(1.0)
            else:
                values.append(float(np.log(p_ab / (p_a * p_b)) / -np.log(p_ab)))
        if values:
            per_topic.append(float(np.mean(values)))
    return float(np.mean(per_topic)) if per_topic else 0.0


def scores(truth: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    return {
        "AMI": adjusted_mutual_info_score(truth, labels),
        "NMI": normalized_mutual_info_score(truth, labels),
        "ARI": adjusted_rand_score(truth, labels),
    }


def row(
    name: str,
    truth: np.ndarray,
    labels: np.ndarray,
    top_terms: list[list[str]],
    texts: list[str],
    seconds: float,
) -> dict:
    outliers = int((labels < 0).sum())
    k = len(set(labels.tolist()) - {-1})
    return {
        "model": name,
        **scores(truth, labels),
        "NPMI": npmi(top_terms, texts),
        "k": k,
        "outliers": outliers,
        "fit s": seconds,
    }


def ours(texts: list[str], truth: np.ndarray, name: str, **params: object) -> dict:
    start = time.perf_counter()
    model = TopicModel(**params).fit(texts)
    seconds = time.perf_counter() - start
    top = [[t for t, _ in terms[:10]] for terms in model.top_terms_]
    return row(name, truth, model.labels_, top, texts, seconds)


def plain_nmf(texts: list[str], truth: np.ndarray) -> dict:
    """What a user would do first: TF-IDF (English stop words, uni+bigrams) and NMF with k = 21."""
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(stop_words="english", ngram_range=(1, 2))
    matrix = vectorizer.fit_transform(texts)
    nmf = NMF(N_AREAS, random_state=0)
    labels = nmf.fit_transform(matrix).argmax(axis=1)
    seconds = time.perf_counter() - start
    terms = vectorizer.get_feature_names_out()
    top = [[str(terms[i]) for i in np.argsort(-c)[:10]] for c in nmf.components_]
    return row("plain TF-IDF + NMF, k=21", truth, labels, top, texts, seconds)


def plain_lda(texts: list[str], truth: np.ndarray) -> dict:
    """The textbook LDA: word counts (English stop words, min_df=2) and LDA with k = 21."""
    start = time.perf_counter()
    vectorizer = CountVectorizer(stop_words="english", min_df=2)
    matrix = vectorizer.fit_transform(texts)
    lda = LatentDirichletAllocation(N_AREAS, random_state=0)
    labels = lda.fit_transform(matrix).argmax(axis=1)
    seconds = time.perf_counter() - start
    terms = vectorizer.get_feature_names_out()
    top = [[str(terms[i]) for i in np.argsort(-c)[:10]] for c in lda.components_]
    return row("plain counts + LDA, k=21", truth, labels, top, texts, seconds)


def taxonomy_agreement(papers: pd.DataFrame, truth: np.ndarray) -> None:
    start = time.perf_counter()
    taxonomy = load_taxonomy()
    areas = assign_areas(paper_texts(papers), taxonomy)
    seconds = time.perf_counter() - start
    best = np.array([a[0] if a else "(none)" for a in areas], dtype=object)
    frame = pd.DataFrame({"area": best, "truth": truth})
    # Each area's majority primary_area: how often is a paper's best area "right" under that mapping,
    # and how often is the paper's true area among the areas it got (multi-label)?
    majority = frame.groupby("area")["truth"].agg(lambda s: s.value_counts().index[0])
    purity = float((frame["area"].map(majority) == frame["truth"]).mean())
    hit = float(
        np.mean([any(majority.get(a) == t for a in labels) for labels, t in zip(areas, truth, strict=True)])
    )
    agreement = scores(truth, best)
    print(
        f"\nResearch-area taxonomy ({len(taxonomy.areas)} areas, keyword rules) vs primary_area:\n"
        f"  best area: AMI {agreement['AMI']:.3f}  NMI {agreement['NMI']:.3f}  ARI {agreement['ARI']:.3f}\n"
        f"  papers with >= 1 area: {np.mean([bool(a) for a in areas]):.1%};  areas per paper: "
        f"{np.mean([len(a) for a in areas]):.2f}\n"
        f"  purity (best area's majority primary_area is the paper's): {purity:.1%};  "
        f"the paper's primary_area is among its areas' majorities: {hit:.1%}\n"
        f"  (assigning areas: {seconds:.2f} s)"
    )


def end_to_end(path: Path, label: str) -> None:
    """Load + analyze in a fresh process, so the figure includes every cold cache (imports excepted)."""
    code = (
        "import time, resource, json, sys\n"
        "t0 = time.perf_counter()\n"
        "from dashboard.corpus import load\n"
        "from dashboard.analytics.analysis import analyze\n"
        "t1 = time.perf_counter()\n"
        f"papers = load([{str(path)!r}]).papers\n"
        "t2 = time.perf_counter()\n"
        "result = analyze(papers)\n"
        "t3 = time.perf_counter()\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "figures = {'papers': len(papers), 'imports': t1 - t0, 'load': t2 - t1, 'analyze': t3 - t2}\n"
        "figures.update(topics=int(result.model.n_topics_), outliers=int(result.model.is_outlier_.sum()))\n"
        "print(json.dumps({**figures, 'rss': rss}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"  {label:<10} {figures['papers']:>6,} papers: load {figures['load']:.2f} s + analyze "
        f"{figures['analyze']:.2f} s = {figures['load'] + figures['analyze']:.2f} s end to end "
        f"({figures['topics']} topics, {figures['outliers']} outliers, peak RSS {figures['rss']:.0f} MB; "
        f"imports {figures['imports']:.2f} s not counted)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="skip the 27k end-to-end run")
    args = parser.parse_args()
    # The plain baseline runs with scikit-learn's defaults, as a user would; its NMF stops at max_iter.
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    if not ICLR.exists():
        sys.exit(f"ICLR corpus not found at {ICLR} (the real corpora live in ../shared/corpora)")

    papers = load([ICLR]).papers
    truth = papers["primary_area"].astype(str).to_numpy()
    texts = paper_texts(papers)
    print(
        f"ICLR 2026: {len(papers):,} papers, {len(set(truth))} primary areas; text = title + abstract_clean\n"
    )

    rows = [
        ours(texts, truth, "ours (default: auto k)"),
        ours(texts, truth, "ours, k=21", n_topics=21),
        ours(texts, truth, "ours, no taxonomy guidance", guidance=0.0),
        ours(texts, truth, "ours, method=nmf", method="nmf"),
        ours(texts, truth, "ours, method=lda, k=21", method="lda", n_topics=21),
        plain_nmf(texts, truth),
        plain_lda(texts, truth),
    ]
    table = pd.DataFrame(rows).set_index("model")
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(table.to_string())
    default, baseline = table.iloc[0], table.loc["plain TF-IDF + NMF, k=21"]
    verdict = (
        default["AMI"] > baseline["AMI"] and default["NPMI"] > baseline["NPMI"] and default["AMI"] >= 0.25
    )
    print(
        f"\nTarget (default beats plain NMF on AMI and NPMI, AMI >= 0.25): "
        f"AMI {default['AMI']:.3f} vs {baseline['AMI']:.3f}, NPMI {default['NPMI']:.3f} vs "
        f"{baseline['NPMI']:.3f} -> {'met' if verdict else 'NOT met'}"
    )

    taxonomy_agreement(papers, truth)

    print("\nEnd to end (fresh process; targets: seeds < 1 s, 27k < 60 s):")
    end_to_end(SEEDS, "seeds")
    if not args.quick and BIG.exists():
        end_to_end(BIG, "27k")


if __name__ == "__main__":
    main()
