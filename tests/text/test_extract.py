"""Method names, datasets and derived titles: tables from the seeds and the real corpora, and properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.text.clean import clean_markup
from dashboard.text.extract import (
    datasets,
    derived_title,
    load_dataset_names,
    meaning_label,
    method_names,
    name_meanings,
)

METHOD_NAMES = [
    # "we propose / introduce / present X, a ..."
    (
        "In this paper, we propose Latent Forcing, a simple modification to existing architectures.",
        ["Latent Forcing"],
    ),
    (
        "We propose self-token prediction, and introduce SAR, the first spatially autoregressive generator.",
        ["SAR"],
    ),
    (
        "To address these issues, we propose SC-MILP, a Dynamic Stratified Contrastive Training Framework.",
        ["SC-MILP"],
    ),
    ("We design a transformer-based robot agent, VIMA, that processes these prompts.", ["VIMA"]),
    (
        "We introduce MC-CP, a hybrid method combining Monte Carlo (MC) dropout and conformal "
        "prediction (CP).",
        ["MC-CP"],
    ),
    (
        "Thus we introduce EgoTactile, a benchmark. With it, we first establish "
        "EgoPressureFormer as a baseline.",
        ["EgoTactile", "EgoPressureFormer"],
    ),
    # an acronym defined with its long form: the acronym
    ("We propose Dynamic Fractal Mamba (DF-Mamba), a recursive state-space model.", ["DF-Mamba"]),
    (
        "We propose Adaptive Curvature-Guided Sparse Zeroth-Order Optimization (CurvZO), which tracks.",
        ["CurvZO"],
    ),
    (
        "we propose **N**oise-**a**ware Low-**R**ank **A**daptation (NaRA), which introduces a core matrix.",
        ["NaRA"],
    ),
    (
        "We propose **V**erification via **I**ntr**a**-Model Routing for **S**peculative "
        "**D**ecoding (VIA-SD).",
        ["VIA-SD"],
    ),
    (
        "we propose a novel LLM-based framework with Dual-side Verification (OptiVer) from two views.",
        ["OptiVer"],
    ),
    (
        "In this paper, we propose a unified segment-to-segment framework (Seg2Seg) for sequence generation.",
        ["Seg2Seg"],
    ),
    (
        "(1) we introduce a new model family (CortexMAE), and (2) we release the first "
        "evaluation suite (Brainmarks).",
        ["CortexMAE", "Brainmarks"],
    ),
    (
        "We introduce SLOT-Align (Single-round, Learning-free Optimal Transport Alignment), a framework.",
        ["SLOT-Align"],
    ),
    (
        "We introduce PETS (**P**rincipled and **E**fficient **T**est-Time **S**elf-Consistency), which.",
        ["PETS"],
    ),
    ("we propose the probabilistic configuration (PC), which introduces probabilities.", ["PC"]),
    # termed / named / called / dubbed / refer to as
    (
        "we present a new multi-label image recognition framework, termed **PIAA**, which formulates.",
        ["PIAA"],
    ),
    (
        "The architecture family implementing this class is named CoFrGeNets - Continued Fraction Networks.",
        ["CoFrGeNets"],
    ),
    (
        "we propose a novel adversarial training framework, called Adversarially Trained DPT (AT-DPT).",
        ["AT-DPT"],
    ),
    (
        "we introduce a novel detection framework, named Learning on Gradients (LGrad), designed for images.",
        ["LGrad"],
    ),
    (
        "we further propose a novel approach called “Learning to Ask,” which can learn optimized questions.",
        ["Learning to Ask"],
    ),
    (
        "a framework based on Wasserstein gradient flows, which we refer to as Generative "
        "Wasserstein Flows (GWF)",
        ["GWF"],
    ),
    (
        "We further propose a simple yet strong baseline dubbed KGEditor, which utilizes additional layers.",
        ["KGEditor"],
    ),
    # the proposed X, "X: Expansion", emphasis
    (
        "The proposed RetroDiT backbone, a graph transformer with rotary embeddings, exploits this ordering.",
        ["RetroDiT"],
    ),
    ("We propose SWING: Space Walks for Implicit Network Graphs, a new class of algorithms.", ["SWING"]),
    ("we propose a novel method -- RACER, extending base routers to output model sets.", ["RACER"]),
    (
        "To resolve this, we propose *Polyphonia*, a framework. We also propose *PolyEvalPrompts*, a set.",
        ["Polyphonia", "PolyEvalPrompts"],
    ),
    (
        r"We introduce \texttt{CUDAnalyst}, a unified analysis layer. \texttt{CUDAnalyst} is stable.",
        ["CUDAnalyst"],
    ),
    (
        "we propose **CoF-T2I**, a model. To establish it, we curate **CoF-Evol-Instruct**, a dataset.",
        ["CoF-T2I", "CoF-Evol-Instruct"],
    ),
    ("Ours (\\textsc{FooNet}) is fast.", ["FooNet"]),
    # never ordinary words, field acronyms or other people's names
    ("Contrastive representation learning (CRL) underpins many modern foundation models.", []),
    ("Mixed Integer Linear Programming (MILP) is a fundamental NP-hard problem.", []),
    ("We propose a new approach to one-shot federated learning (OSFL) that aligns features.", []),
    (
        "We propose a new variational objective by using Optimal Transport (OT) distance, which is a metric.",
        [],
    ),
    ("we first propose a linear program (LP)-based algorithm whose competitive ratio is bounded.", []),
    ("We propose an adversarial reweighting that penalizes calibration errors.", []),
    ("We propose and rigorously justify the coverage improvement principle.", []),
    ("We introduce Bayesian optimization for hyperparameter tuning.", []),
    ("We study large language models (LLMs) and reinforcement learning (RL) with GPT-4 and BERT.", []),
    ("We propose a novel method. We introduce a new framework. We present the results.", []),
    ("Named Entity Recognition (NER) is a core task. We apply the LRP in TGNs.", []),
    ("This relates the Kullback-Leibler (KL) divergence to the score matching loss.", []),
    (
        "In GFlowNets, **it** has been shown that *the* mean square error is a **first rigorous analysis**.",
        [],
    ),
    (
        "We introduce a novel concept removal method for diffusion models such as SD3.5, Flux and Infinity.",
        [],
    ),
    ("we formulate LLM routing as the α-VOR problem to minimize expected set size.", []),
    ("Our RL agent outperforms our LLM-based baseline and the proposed method.", []),
    ("We propose to learn faster. We present Experiments on ImageNet.", []),
    ("", []),
]

_METHOD_IDS = [f"{i}:{text[:40]}" for i, (text, _) in enumerate(METHOD_NAMES)]


@pytest.mark.parametrize(("text", "expected"), METHOD_NAMES, ids=_METHOD_IDS)
def test_method_names(text: str, expected: list[str]) -> None:
    assert method_names(text) == expected
    assert method_names(text, clean=clean_markup(text)) == expected


DATASETS = [
    (
        "State of the art on ImageNet-1k and USPTO-50k; 80.5% on GenAI-Bench.",
        ["ImageNet", "USPTO-50k", "GenAI-Bench"],
    ),
    (
        "on both USPTO-50k (61.2% top-1) and the large-scale USPTO-Full (51.3% top-1)",
        ["USPTO-50k", "USPTO-Full"],
    ),
    (
        "Using MS MARCO as the only paired supervision, ElicitR improves BRIGHT and BEIR.",
        ["MS MARCO", "BRIGHT", "BEIR"],
    ),
    (
        "80.5% on VideoGen Reward, 82.3% on GenAI-Bench, and 75.6% on MJ-Bench-Video.",
        ["GenAI-Bench", "MJ-Bench-Video"],
    ),
    ("reaching 0.86 on GenEval and 7.468 on Imagine-Bench.", ["GenEval", "Imagine-Bench"]),
    (
        "Experiments on CIFAR10/100, SVHN, Tiny-ImageNet, and ImageNet.",
        ["CIFAR-10", "SVHN", "Tiny-ImageNet", "ImageNet"],
    ),
    (
        "results on Cifar-10, MS-MARCO, msmarco, Fashion-MNIST and FashionMNIST",
        ["CIFAR-10", "MS MARCO", "Fashion-MNIST"],
    ),
    (
        "GLUE, SuperGLUE, SQuAD 2.0, HotpotQA, TriviaQA, OK-VQA, GSM8K, MATH, HumanEval and MMLU.",
        [
            "GLUE",
            "SuperGLUE",
            "SQuAD 2.0",
            "HotpotQA",
            "TriviaQA",
            "OK-VQA",
            "GSM8K",
            "MATH",
            "HumanEval",
            "MMLU",
        ],
    ),
    (
        "on KITTI, nuScenes, Waymo, Cityscapes and ADE20K; COCO, MS-COCO, PASCAL VOC 2012.",
        ["KITTI", "nuScenes", "Waymo Open Dataset", "Cityscapes", "ADE20K", "COCO", "PASCAL VOC"],
    ),
    (
        "miniImageNet, tieredImageNet, ogbn-arxiv, QM9, MD17, ZINC, 20 Newsgroups and 3DPW.",
        ["miniImageNet", "tieredImageNet", "ogbn-arxiv", "QM9", "MD17", "ZINC", "20 Newsgroups", "3DPW"],
    ),
    (
        "on the SWE-bench Verified, MT-Bench and AlpacaEval 2.0 leaderboards",
        ["SWE-bench", "MT-Bench", "AlpacaEval"],
    ),
    ("Atari-100k, ImageNet-C and ImageNet-Sketch", ["Atari-100k", "ImageNet-C", "ImageNet-Sketch"]),
    (
        "Experiments on synthetic Markovian data as well as WikiText and TinyStories.",
        ["WikiText", "TinyStories"],
    ),
    # words, tasks and look-alikes are not datasets
    ("Math is hard. The glue holds. An arc. Coco the dog. Kitti.", []),
    ("VQA and QA tasks, C4.5 decision trees, MNISTs, xImageNet, ImageNets", []),
    ("imagenet and cifar-10 written in lowercase", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), DATASETS, ids=[text[:40] for text, _ in DATASETS])
def test_datasets(text: str, expected: list[str]) -> None:
    assert datasets(text) == expected


def test_dataset_list_is_editable(tmp_path: Path) -> None:
    own = tmp_path / "mine.txt"
    own.write_text("# my benchmarks\nFooSet = Foo-Set | FOOSET\nBar 9000\n", encoding="utf-8")
    assert load_dataset_names(str(own)) == [("FooSet", ("Foo-Set", "FOOSET")), ("Bar 9000", ())]
    assert datasets("on FOOSET, Foo-Set and Bar-9000 but not ImageNet", path=str(own)) == [
        "FooSet",
        "Bar 9000",
    ]


def test_packaged_dataset_list_is_large_and_clean() -> None:
    entries = load_dataset_names()
    names = [name for name, _ in entries]
    assert len(names) >= 400
    assert len(set(names)) == len(names), "a name is listed twice"
    assert all(not name.islower() or "-" in name or name[-1].isdigit() for name in names)


TITLES = [
    (
        "We propose PIAA, a training-free multi-label image recognition framework.",
        ["PIAA"],
        "PIAA: a training-free multi-label image recognition framework",
    ),
    (
        "In this paper, we propose Latent Forcing, a simple modification to existing "
        "architectures that achieves "
        "the efficiency of latent diffusion.",
        ["Latent Forcing"],
        "Latent Forcing: a simple modification to existing architectures",  # the clause ends there
    ),
    (
        "We propose SWING: Space Walks for Implicit Network Graphs, a new class of algorithms.",
        ["SWING"],
        "SWING: Space Walks for Implicit Network Graphs",
    ),
    (
        "We introduce PETS (Principled and Efficient Test-Time Self-Consistency), which initiates a study.",
        ["PETS"],
        "PETS: Principled and Efficient Test-Time Self-Consistency",
    ),
    (
        "We propose Dynamic Fractal Mamba (DF-Mamba), a recursive state-space model.",
        ["DF-Mamba"],
        "DF-Mamba: a recursive state-space model",
    ),
    (
        "We propose Dynamic Fractal Mamba (DF-Mamba) for long sequences.",
        ["DF-Mamba"],
        "DF-Mamba: Dynamic Fractal Mamba",
    ),
    (
        "Contrastive representation learning (CRL) underpins many modern foundation models. "
        "Despite progress, ...",
        [],
        "Contrastive representation learning (CRL) underpins many modern foundation models",
    ),
    (
        "In this work, we study how MoE models behave under distribution shift, focusing on how "
        "routing interacts.",
        [],
        "We study how MoE models behave under distribution shift",
    ),
    # A long first sentence ends where a clause that only adds to it starts (issue 12, item 4).
    (
        "Template-free retrosynthesis methods treat the task as black-box sequence generation, limiting "
        "learning efficiency, while semi-template approaches rely on rigid reaction libraries.",
        [],
        "Template-free retrosynthesis methods treat the task as black-box sequence generation",
    ),
    (
        "Diffusion posterior sampling conditions diffusion priors on measurements, but data-consistency "
        "updates are expensive.",
        [],
        "Diffusion posterior sampling conditions diffusion priors on measurements",
    ),
    (
        "We propose ElicitR, a retriever–LM framework with generative regularization that captures nuanced "
        "relationships among passages.",
        ["ElicitR"],
        "ElicitR: a retriever–LM framework with generative regularization",
    ),
    ("e.g. this is a test of abbreviations. Second sentence.", [], "E.g. this is a test of abbreviations"),
    ("Short.", [], "Short"),
    ("α-divergences are useful everywhere.", [], "α-divergences are useful everywhere"),
    ("我们提出了一种新的方法。实验表明它有效。", [], "我们提出了一种新的方法"),
    ("", [], ""),
]


@pytest.mark.parametrize(("clean", "names", "expected"), TITLES, ids=[text[:30] for text, _, _ in TITLES])
def test_derived_title(clean: str, names: list[str], expected: str) -> None:
    assert derived_title(clean, names) == expected


# --- properties --------------------------------------------------------------------------------

_NAMEY = st.lists(
    st.sampled_from(
        [
            "We", "we", "propose", "introduce", "present", "named", "called", "termed", "the proposed", "our",
            "a", "novel", "framework", "method", "Foo", "FooNet", "SAR", "DF-Mamba", "Latent", "Forcing", ",",
            ".", ":", "(", ")", "(FN)", "**", "*", "\\emph{", "}", "Space", "Walks", "and", "to", "of", "LLM",
            "—", "-", "“", "”", "model", "\n", "2", "B&B", "我们", "提出",
        ]
    ),
    max_size=40,
).map(" ".join)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.one_of(_NAMEY, st.text(max_size=300)))
def test_method_names_are_names_from_the_text(text: str) -> None:
    clean = clean_markup(text)
    names = method_names(text, clean=clean)
    assert len(names) == len(set(names))
    for name in names:
        assert name in clean or name in text
        assert name.strip() == name and name
        assert not name.islower(), f"{name!r} is an ordinary word"


@settings(max_examples=200, deadline=None)
@given(st.one_of(_NAMEY, st.text(max_size=300)))
def test_datasets_and_titles_never_raise(text: str) -> None:
    clean = clean_markup(text)
    found = datasets(clean)
    assert len(found) == len(set(found))
    title = derived_title(clean, method_names(text, clean=clean))
    if any(char.isalnum() for char in clean):
        assert title.strip()
    assert "\n" not in title


@pytest.mark.parametrize(
    "text", ["We propose " * 100_000, "(A) " * 250_000, "X: " * 300_000, "Image" * 200_000]
)
@pytest.mark.timeout(60)  # a hang guard for catastrophic backtracking, not a speed assertion
def test_extractors_are_linear_on_hostile_input(text: str) -> None:
    clean = clean_markup(text)
    assert isinstance(method_names(text, clean=clean), list)
    assert isinstance(datasets(clean), list)
    assert isinstance(derived_title(clean, []), str)


def test_seed_method_names(seeds_dir: Path) -> None:
    """Integration: every seed abstract that introduces a name by a cue gives that name."""
    paragraphs = [
        paragraph
        for path in sorted(seeds_dir.glob("*.txt"))
        for paragraph in path.read_text(encoding="utf-8").split("\n\n")[1:]
        if paragraph.strip()
    ]
    found = {name for paragraph in paragraphs for name in method_names(paragraph)}
    expected = {
        "RetroDiT", "ElicitR", "CoF-T2I", "CoF-Evol-Instruct", "PODiff", "EgoTactile", "EgoPressureFormer",
        "RACER", "CoFrGeNets", "PISCES", "Palimpsa", "AnyBand-Diff", "MIST", "Latent Forcing", "SAR",
        "SC-MILP", "VR-Thinker", "SLOT-Align", "SWING", "PETS", "DF-Mamba", "Polyphonia", "PolyEvalPrompts",
        "OptiVer", "TaskLoom", "CurvZO", "PIAA", "FedScar", "VIA-SD", "FedReLa", "FMPlug", "CortexMAE",
        "Brainmarks", "NaRA", "AT-DPT", "SA-RFM", "CUDAnalyst", "GWF",
    }  # fmt: skip
    assert expected <= found
    assert not {"CRL", "MILP", "LLM", "LLMs", "ToM", "SFT", "RL", "OSFL", "Transformer"} & found


# --------------------------------------------------------------------- names per meaning


@pytest.mark.parametrize(
    ("texts", "names", "expected"),
    [
        # unrelated papers sharing an acronym: one meaning each
        (
            ["Margin-aware distillation (MAD) works.", "We use MAD (masking adversarial damage) here."],
            [["MAD"], ["MAD"]],
            [["MAD (Margin-aware distillation)"], ["MAD (masking adversarial damage)"]],
        ),
        # the same long form in another case or hyphenation: one meaning, the commoner spelling
        (
            ["Multi-Agent Debate (MAD) helps.", "multi agent debate (MAD) too.", "Multi-Agent Debate (MAD)."],
            [["MAD"], ["MAD"], ["MAD"]],
            [["MAD (Multi-Agent Debate)"]] * 3,
        ),
        # a name only one paper uses is left as it is; names without a long form too
        (["We propose FooNet (Frozen Object Network)."], [["FooNet"]], [["FooNet"]]),
        ([float("nan"), "x"], [[], []], [[], []]),
    ],
)
def test_name_meanings(texts: list, names: list[list[str]], expected: list[list[str]]) -> None:
    assert name_meanings(texts, names) == expected


def _rows(texts: list, names: list[list[str]]) -> dict[str, int]:
    """The Overview's rows of these papers: each meaning as shown, with how many papers it has."""
    rows: dict[str, int] = {}
    for meanings in name_meanings(texts, names):
        for meaning in set(meanings):
            rows[meaning] = rows.get(meaning, 0) + 1
    return dict(sorted(((meaning_label(m), n) for m, n in rows.items()), key=lambda r: (-r[1], r[0])))


@pytest.mark.parametrize(
    ("texts", "names", "expected"),
    [
        # the same expansion: together
        (
            ["Graph Echo Machine (GEM) is new.", "We build a graph echo machine (GEM)."],
            [["GEM"], ["GEM"]],
            {"GEM (Graph Echo Machine)": 2},
        ),
        # the same acronym with different expansions: apart
        (
            ["COpula Multivariate ExTreme (COMET) flows.", "COllaborative METa-learning (COMET) helps."],
            [["COMET"], ["COMET"]],
            {"COMET (COpula Multivariate ExTreme)": 1, "COMET (COllaborative METa-learning)": 1},
        ),
        # the same acronym with no expansion: apart, even beside a paper that gives one
        (
            ["COpula Multivariate ExTreme (COMET) flows.", "We propose COMET for tasks.", "COMET is ours."],
            [["COMET"], ["COMET"], ["COMET"]],
            {"COMET": 1, "COMET (COpula Multivariate ExTreme)": 1},  # shown alike (two rows: see below)
        ),
        # a widely shared name, used without expansion by many papers: one row of all of them
        (
            ["We fine-tune BERT on GLUE.", "Unlike BERT, our model reads.", "BERT-based baselines fail."],
            [[], ["OurNet"], []],
            {"BERT (Bidirectional Encoder Representations from Transformers)": 3, "OurNet": 1},
        ),
        # ...with its variants, the same expansion spelled out, but not a longer name built on it
        (
            ["ResNet-50 backbones.", "Residual Network (ResNet) is used.", "ResNeXt and BERTScore only."],
            [[], [], []],
            {"ResNet (Residual Network)": 2},
        ),
        # a shared name spelled out as something else is that other meaning
        (
            ["We use CLIP.", "Clipped Lipschitz Policy (CLIP) is new.", "CLIP features help."],
            [[], ["CLIP"], []],
            {"CLIP (Contrastive Language-Image Pre-training)": 2, "CLIP (Clipped Lipschitz Policy)": 1},
        ),
    ],
)
def test_names_are_one_row_only_on_evidence(texts: list, names: list[list[str]], expected: dict) -> None:
    rows = _rows(texts, names)
    assert rows == expected


def test_papers_naming_an_acronym_without_its_long_form_are_rows_of_their_own() -> None:
    texts = ["COpula Multivariate ExTreme (COMET) flows.", "We propose COMET for tasks.", "COMET is ours."]
    meanings = name_meanings(texts, [["COMET"], ["COMET"], ["COMET"]])
    assert len({m for paper in meanings for m in paper}) == 3  # three rows of one paper each
    assert [meaning_label(m) for paper in meanings[1:] for m in paper] == ["COMET", "COMET"]


def test_a_shared_name_is_found_in_papers_that_introduce_nothing() -> None:
    meanings = name_meanings(["Our ViT baseline.", None, "A ViT (Vision Transformer) study."], [[], [], []])
    assert meanings == [["ViT (Vision Transformer)"], [], ["ViT (Vision Transformer)"]]


@pytest.mark.parametrize(
    "text",
    [
        "We propose optimal transport (OT) regularisation for domain shift.",
        "We present a bird's eye view (BEV) detector for driving.",
        "We introduce an upper confidence bound (UCB) rule for bandits.",
    ],
)
def test_field_terms_measured_on_the_27k_corpus_are_not_method_names(text: str) -> None:
    assert not {"OT", "BEV", "UCB"} & set(method_names(text))


def test_labelled_method_pairs_are_well_formed() -> None:
    """`bench/method_precision.py` scores the Overview's rows on these hand-labelled pairs."""
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / "method_pairs.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) >= 200
    assert set(rows[0]) == {"name", "paper_id", "row_meaning", "label", "note"}
    assert {row["label"] for row in rows} == {"0", "1"}
    assert all(row["row_meaning"].startswith(row["name"]) and row["note"] for row in rows)
    assert len({(row["row_meaning"], row["paper_id"]) for row in rows}) == len(rows)
