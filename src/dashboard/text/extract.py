"""Names in an abstract: the paper's own method names, the datasets it uses, and a derived title.

>>> method_names("We propose Latent Forcing, a simple modification. Code: github.com/a/b")
['Latent Forcing']
>>> datasets("State of the art on ImageNet-1k and USPTO-50k; 80.5% on GenAI-Bench.")
['ImageNet', 'USPTO-50k', 'GenAI-Bench']

`method_names` looks only where an abstract names its own contribution: after "we propose /
introduce / present / develop / release ...", after "termed / named / called / dubbed", "the
proposed X", a title-like "X: Expansion Of X", and bold, italic, small-caps or typewriter names
(``**PIAA**``, ``\\textsc{Foo}``). A candidate must look like a name (an acronym, CamelCase, digits,
a capitalised hyphenated form, or capitalised words in an introduction such as "Latent Forcing")
and not be a generic word or a field acronym (``LLM``, ``RL``). When a name is defined with an
acronym, "Dynamic Fractal Mamba (DF-Mamba)", the acronym alone is returned: it is what the paper
and its readers use. Field acronyms defined outside such introductions ("Contrastive
representation learning (CRL) underpins...") are not the paper's own and are not returned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from dashboard.text.clean import clean_markup


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


__all__ = [
    "datasets",
    "derived_title",
    "load_dataset_names",
    "meaning_label",
    "method_names",
    "name_meanings",
]

# --- method names ------------------------------------------------------------------------------

_GENERIC = _words(
    """
    a an the this that these those our we it its their his her my your which what who whose where when
    novel new simple general generic unified efficient effective robust scalable first proposed present
    method methods framework frameworks approach approaches model models algorithm algorithms technique
    techniques architecture architectures system systems network networks module modules pipeline
    pipelines paradigm strategy strategies scheme schemes mechanism mechanisms procedure tool tools
    toolkit library benchmark benchmarks dataset datasets data suite task tasks problem problems setting
    settings objective loss metric metrics layer layers agent agents policy policies estimator theory
    analysis study paper work results experiments experiment and or of for to in on with by from as at
    via using based while whereas however moreover furthermore specifically finally further also then
    thus hence therefore here there recent recently existing prior previous current state art
    in-context zero-shot few-shot one-shot end-to-end plug-and-play training-free state-of-the-art
    english chinese bayesian gaussian markov euclidean riemannian fourier lagrangian hessian newton
    wasserstein boltzmann langevin laplace laplacian shapley kalman hamiltonian hebbian pareto nash stein
    dirichlet poisson bernoulli lipschitz hilbert banach kullback leibler jensen shannon monte carlo
    transformer transformers attention diffusion q-learning
    """
)
# Field acronyms and well-known systems that are almost never a paper's own name.
_FIELD_ACRONYMS = _words(
    """
    AI ML DL NLP CV RL DRL MARL IRL LLM LLMs VLM VLMs MLLM MLLMs LVLM LVLMs LM LMs PLM PLMs DNN DNNs CNN CNNs
    RNN RNNs LSTM GRU GNN GNNs GCN GCNs GAN GANs VAE VAEs MLP MLPs SOTA GPU GPUs TPU CPU API APIs QA VQA
    OOD ID IID KL MSE MAE SGD Adam PAC MDP MDPs POMDP POMDPs RLHF SFT DPO PPO PEFT LoRA ViT ViTs BERT GPT
    GPT-2 GPT-3 GPT-4 GPT-4o ChatGPT CLIP ResNet ResNets PDE PDEs ODE ODEs SDE SDEs NeRF NeRFs 3D 2D 4D
    RGB RGB-D LiDAR IoU mAP FID IS BLEU ROUGE AUC ROC F1 CoT ICL RAG KG KGs NER ASR TTS OCR MRI CT EEG
    fMRI ECG UAV UAVs IoT NAS HPO FL DP HE MPC TL DA UDA SSL CL KD MoE SNN SNNs LLaMA Llama T5 OPT
    SAM DINO MAE DDPM DDIM SDXL VQ-VAE U-Net UNet YOLO NP NP-hard P PCA SVD SVM KNN k-NN TD DQN SAC TD3
    DDPG TRPO A2C A3C BC GAIL MCTS HMM CRF EM MCMC HMC SGLD VI ELBO RKHS NTK GP GPs BO ERM DRO IRM
    ReLU GELU SiLU RoPE FFN MHA KV BPE OCR SLAM MLM MIM CLS CTC RNN-T AR NAR ODQA KBQA ERM MLE MAP MDL
    BEV OT AL FIM TV PTQ QAT UCB MI SQ MAB RFF CCA SPAD LDA ICA NMF GMM EBM EBMs SDP ADMM LP QP TS
    CMA-ES ES GA PSO LQR MPC PID ICP SfM MVS HDR SR ReID MOT VOS NeRF 6D SE(3) SO(3) KAN KANs
    """
)
# (The second-to-last lines were measured on the 27k corpus, bench/method_names.py: field terms such as
# "OT (optimal transport)", "BEV (bird's eye view)", "UCB (upper confidence bound)" led the
# Overview's names once names were counted per meaning.)
_ADJECTIVE_SUFFIXES = (
    "-based", "-like", "-style", "-aware", "-free", "-guided", "-driven", "-specific", "-level", "-wise",
    "-scale", "-shot", "-agnostic", "-invariant", "-equivariant", "-dependent", "-independent",
    "-conditioned", "-augmented", "-oriented", "-centric", "-friendly", "-efficient", "-only", "-order",
    "-enhanced", "-inspired", "-informed", "-regularized", "-constrained", "-supervised", "-trained",
    "-tuned", "-powered", "-assisted", "-generated", "-related", "-type", "-form", "-time", "-space",
)  # fmt: skip
# Words that may follow a name in an introduction: "we propose X, which", "X to", "X that".
_AFTER_NAME_OK = _words(
    "which that to for as with in on by and or where whose using via from the a an is are can which "
    "framework method model approach algorithm architecture benchmark dataset system module pipeline "
    "network networks technique strategy scheme mechanism loss library toolkit suite family agent "
    "backbone paradigm procedure metric protocol tool layer objective estimator"
)
_CUE_VERBS = (
    r"(?:propose|introduce|present|develop|design|devise|build|construct|create|curate|release|establish"
    r"|contribute|offer|put forward|unveil|formulate)[sd]?"
)
_ADVERB = (
    r"(?:(?:first|further|also|then|thus|therefore|hence|here|now|newly|additionally|finally|next|instead|"
    r"subsequently|jointly|further)\s+)?"
)
# Each pattern starts with a literal so the regex engine can skip ahead quickly over an abstract.
_INTRODUCTIONS = (
    # "we call it X" shares the "we" scan with "we propose X"; group 1 tells them apart.
    re.compile(
        rf"we\s+(?:{_ADVERB}{_CUE_VERBS}\s+|((?:call|name|term|dub)\s+"
        r"(?:(?:it|this|them|these|our|the)\s+(?:[a-z\-]+\s+){0,2}?)?))"
    ),
    # "X and proposed Y" is usually prior work; "and propose Y" continues "we ...".
    re.compile(rf"and\s+{_ADVERB}{_CUE_VERBS.replace('[sd]?', '')}\s+"),
    re.compile(rf"this (?:paper|work|study|article|letter)\s+{_ADVERB}{_CUE_VERBS}\s+"),
)
# Each is found with str.find (far faster than a regex alternation over common letters); "med "
# stands for "named " and "termed ", "refer" for "refer to as", "referred to as", "refer to it as".
_NAMING_FINDS = ("med ", "called ", "dubbed ", "coined ", "denoted ", "refer", "namely ")
_NAMING_WORD = re.compile(
    r"(?:named |termed |called |dubbed |coined |denoted (?:as |by )?|namely "
    r"|refer(?:red)? to (?:it )?as )"
)
_PROPOSED_WORDS = ("the proposed ", "our ")
_OUR_ADJECTIVE = re.compile(r"(?:proposed |new |novel )?")
_EXPANSION = re.compile(r"[A-Z][\w\-]*(?: [\w\-]+){1,11}")
# A run of name-like tokens: capitalised words, acronyms, CamelCase, digits, hyphenated forms.
_TOKEN = r"(?:[A-Z0-9][\w\-+.'’]*[\w+]|[A-Z]|[a-z]+[A-Z][\w\-+]*|[a-z]{1,3}[0-9][\w\-]*)"
_NAME_RUN = re.compile(rf"{_TOKEN}(?: {_TOKEN}){{0,5}}")
_ARTICLE = re.compile(r"(?:the|a|an) ")
_PARENTHESIS = re.compile(r"\s*\(([^()]{1,80})\)")
_CONNECTORS = "of|to|on|by|for|and|with|in|via|from|the|a|an"
_TITLE_PHRASE = re.compile(rf"{_TOKEN}(?: (?:(?:{_CONNECTORS}) )?{_TOKEN}){{1,7}}")
_CONNECTOR = re.compile(rf" (?:{_CONNECTORS}) ")
_PHRASE_END = frozenset(',.;:”")')
_ARTICLE_PHRASE = re.compile(
    r"(?:a|an|the|two|three|several)\s+((?:[\w\-–]+\s+){0,8}?)"
    r"(framework|method|approach|model|models|algorithm|architecture|benchmark|dataset|system|technique|"
    r"pipeline|paradigm|network|module|strategy|scheme|mechanism|suite|library|toolkit|agent|loss|metric|"
    r"layer|protocol|tool|family|objective|estimator|environment|simulator|corpus|collection|platform|"
    r"procedure|paradigm|recipe|solver|optimizer|policy|variant|transformer|generator|detector|"
    r"regularizer|attack|defense)\b"
    r"(?:\s*,?\s*(?:called|named|termed|dubbed|coined|namely)\s+|\s*(?:[,:]|–|—| - |--)\s*|\s+)"
)
_EMPHASIS_MARKDOWN = re.compile(r"(\*\*|\*|__)([^*_\n]{2,60}?)\1")
_EMPHASIS_LATEX = re.compile(r"\\(?:emph|textbf|textit|textsc|texttt|textsf|mathsf|mathtt)\{([^{}]{2,60})\}")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(\"“]|$)|[。！？]")
_PREPOSITIONS = _words(
    "to for of in on with from by via under over across between among into about using through "
    "leveraging utilizing utilising exploiting employing adopting incorporating applying integrating "
    "combining"
)


def method_names(text: str, *, clean: str | None = None) -> list[str]:
    """Names the paper gives its own method, model, dataset or benchmark, in order of appearance.

    ``text`` is the abstract as written (its bold and italic marks help); pass ``clean`` when the
    cleaned text is already at hand, to save cleaning it again.

    >>> method_names(r"We propose Dynamic Fractal Mamba (DF-Mamba), a recursive state-space model.")
    ['DF-Mamba']
    >>> method_names("Contrastive representation learning (CRL) underpins foundation models.")
    []
    """
    if not isinstance(text, str):
        return []
    if clean is None:
        clean = clean_markup(text)
    if not clean:
        return []
    found: list[str] = []
    lowered = clean.lower()
    if len(lowered) != len(clean):  # a few Unicode letters change length when lowercased
        lowered = "".join(char.lower() if len(char.lower()) == 1 else char for char in clean)
    for pattern in _INTRODUCTIONS:
        for match in pattern.finditer(lowered):
            if not _starts_word(lowered, match.start()):
                continue
            if match.lastindex:  # "we call it X"
                found.extend(_names_at(clean, match.end(), after_naming_word=True))
            else:
                found.extend(_introduced_names(clean, match.end()))
    for word in _NAMING_FINDS:
        position = lowered.find(word)
        while position >= 0:
            start = position
            if word == "med ":  # back to the start of "named " or "termed "
                named = position >= 2 and lowered.startswith("na", position - 2)
                start = position - 2 if named else max(position - 3, 0)
            naming = _NAMING_WORD.match(lowered, start)
            # "named" but not "Named Entity Recognition": the cue is a lowercase word in the text.
            if naming and _starts_word(lowered, start) and clean[start].islower():
                found.extend(_names_at(clean, naming.end(), after_naming_word=True))
            position = lowered.find(word, position + 1)
    for word in _PROPOSED_WORDS:
        position = lowered.find(word)
        while position >= 0:
            adjective = _OUR_ADJECTIVE.match(lowered, position + len(word))  # optional: always matches
            end = adjective.end() if adjective else position + len(word)
            if _starts_word(lowered, position) and _is_strong(_token_at(clean, end)):
                found.extend(_names_at(clean, end, strong_only=True))
            position = lowered.find(word, end)
    position = clean.find(": ")
    while position >= 0:
        found.extend(_title_like_name(clean, position))
        position = clean.find(": ", position + 2)
    if "*" in text or "__" in text or "\\" in text:
        found.extend(_emphasised_names(text))
    return _unique(name for name in found if name)


# Models and methods many papers use as a tool or baseline, with the long form that is their meaning.
# A paper that names one of these without spelling out another meaning counts as using it: the
# Overview's table then leads with what papers really share. Short names with more than one common
# meaning in the field (SAM, MAE, GAT, DP, DINO) are not listed.
SHARED_NAMES: dict[str, str] = {
    "BERT": "Bidirectional Encoder Representations from Transformers",
    "RoBERTa": "Robustly optimized BERT approach",
    "GPT-2": "OpenAI language model",
    "GPT-3": "OpenAI language model",
    "GPT-3.5": "OpenAI language model",
    "GPT-4": "OpenAI language model",
    "GPT-4V": "OpenAI vision-language model",
    "GPT-4o": "OpenAI language model",
    "ChatGPT": "OpenAI chat model",
    "CLIP": "Contrastive Language-Image Pre-training",
    "ResNet": "Residual Network",
    "ViT": "Vision Transformer",
    "Swin Transformer": "shifted-window vision transformer",
    "LLaMA": "Meta language model",
    "Llama 2": "Meta language model",
    "T5": "Text-to-Text Transfer Transformer",
    "BLIP": "Bootstrapping Language-Image Pre-training",
    "LLaVA": "Large Language and Vision Assistant",
    "Stable Diffusion": "latent text-to-image diffusion model",
    "DDPM": "Denoising Diffusion Probabilistic Model",
    "NeRF": "Neural Radiance Field",
    "U-Net": "convolutional encoder-decoder network",
    "YOLO": "You Only Look Once detector",
    "DETR": "DEtection TRansformer",
    "Faster R-CNN": "region-based detector",
    "Mask R-CNN": "region-based instance segmentation",
    "PointNet": "point cloud network",
    "SimCLR": "contrastive visual representation learning",
    "MoCo": "Momentum Contrast",
    "LoRA": "Low-Rank Adaptation",
    "PPO": "Proximal Policy Optimization",
    "DQN": "Deep Q-Network",
    "SAC": "Soft Actor-Critic",
    "TD3": "Twin Delayed DDPG",
    "MAML": "Model-Agnostic Meta-Learning",
    "AlphaFold": "protein structure prediction model",
    "XGBoost": "gradient boosted trees",
    "word2vec": "word embedding model",
    "GloVe": "Global Vectors for word representation",
    "Whisper": "OpenAI speech recognition model",
    "wav2vec 2.0": "self-supervised speech representation model",
    "EfficientNet": "scaled convolutional network",
    "MobileNet": "mobile convolutional network",
    "VGG": "Visual Geometry Group network",
    "DenseNet": "Densely Connected Convolutional Network",
    "ConvNeXt": "modernised convolutional network",
    "GraphSAGE": "inductive graph representation learning",
    "Adam": "adaptive moment estimation optimizer",
    "AdamW": "Adam with decoupled weight decay",
}
# A shared name as a word: not inside another word, nor the head of a longer name ("ResNet-50" and
# "BERT-based" count, "BERTScore" and "CLIP-Adapter" do not).
# (The word start is checked outside the pattern: a lookbehind first keeps the regex engine from
# skipping ahead to the names' first letters, several times slower.)
_SHARED_PATTERN = re.compile(
    r"("
    + "|".join(re.escape(name) for name in sorted(SHARED_NAMES, key=len, reverse=True))
    + r")(?:-?\d+[A-Za-z]?)?(?!\w|-[A-Z0-9])"
)


def name_meanings(texts: Iterable[object], names: Iterable[Sequence[str]]) -> list[list[str]]:
    """Each paper's method names, each with the long form its abstract gives: ``MAD (Multi-Agent Debate)``.

    Two papers count as naming the same method only when the evidence says so. The same long form
    is evidence: a name its abstract spells out ("Multi-Agent Debate (MAD)", "MAD (Multi-Agent
    Debate)") becomes the name and that long form; long forms are compared ignoring case, hyphens
    and a final plural ``s``, and written the way most papers write them. The same name alone is
    not: unrelated papers introduce the same short acronym (COMET, MAD, CAT), so a name a paper
    introduces without spelling it out, used by other papers too, stays apart, one entry per paper
    (shown as the bare name, `meaning_label`). The exception is a name in `SHARED_NAMES` (BERT,
    ResNet, CLIP): a paper that names one, introduced or not, counts as using it, with the long form
    listed there, unless its abstract spells out another. ``texts`` (one per paper, in order; None
    where there is no text to read) is read once and never kept: a generator of a large corpus's
    abstracts holds one chunk of them at a time (`dashboard.index.build.method_meanings`). One pass over
    the papers: no paper is compared with another.

        >>> texts = ["Margin-aware distillation (MAD) works.", "MAD (masking adversarial damage) too."]
        >>> name_meanings(texts, [["MAD"], ["MAD"]])
        [['MAD (Margin-aware distillation)'], ['MAD (masking adversarial damage)']]
    """
    names = [n if isinstance(n, list) else list(n or ()) for n in names]  # read, never changed
    papers_of: dict[str, int] = {}
    for paper_names in names:
        for name in set(paper_names):
            papers_of[name] = papers_of.get(name, 0) + 1
    long_forms: dict[tuple[str, int], str] = {}  # (name, paper) -> meaning key
    spellings: dict[tuple[str, str], dict[str, int]] = {}  # (name, key) -> long form spelling -> papers
    shared_of: dict[int, list[str]] = {}  # paper -> the shared names it uses, in order
    for paper, (text, paper_names) in enumerate(zip(texts, names, strict=True)):
        if not isinstance(text, str):
            continue
        used = list(
            dict.fromkeys(
                match.group(1)
                for match in _SHARED_PATTERN.finditer(text)
                if not match.start()
                or not (text[match.start() - 1].isalnum() or text[match.start() - 1] in "-_")
            )
        )
        if used:
            shared_of[paper] = used
        for name in [*paper_names, *used]:
            if (name, paper) in long_forms or (papers_of.get(name, 0) < 2 and name not in SHARED_NAMES):
                continue
            long_form = _expansion_of(text, name).rstrip("…").strip()
            if not long_form:
                continue
            key = _meaning_key(long_form)
            long_forms[(name, paper)] = key
            counts = spellings.setdefault((name, key), {})
            counts[long_form] = counts.get(long_form, 0) + 1
    written = {nk: max(counts, key=counts.__getitem__) for nk, counts in spellings.items()}
    for name, long_form in SHARED_NAMES.items():  # a shared name's meaning as it is listed
        written[(name, _meaning_key(long_form))] = long_form
    result: list[list[str]] = []
    for paper, paper_names in enumerate(names):
        meanings = []
        for name in dict.fromkeys([*paper_names, *shared_of.get(paper, ())]):
            meaning = long_forms.get((name, paper))
            if meaning is None and name in SHARED_NAMES:
                meaning = _meaning_key(SHARED_NAMES[name])
            if meaning is not None:
                meanings.append(f"{name} ({written[(name, meaning)]})")
            elif papers_of.get(name, 0) < 2:
                meanings.append(name)
            else:
                meanings.append(f"{name}{_APART}{paper}")  # no evidence it is another paper's method
        result.append(meanings)
    return result


_MEANING_SEPARATORS = re.compile(r"[\s\-‐‑–—]+")
# Between a name and the paper it stands apart for: "COMET⁣17" is paper 17's COMET, shown as "COMET".
_APART = "\u2063"


# A paper number and its separator (`meaning_label`). `(?s)`, not `[\s\S]` or a flag argument: pandas
# hands this pattern to pyarrow's regular expressions only then (`dashboard.ui.tables` labels many at
# once), and both read it as "the separator and all that follows".
MEANING_TAIL = "(?s)" + _APART + ".*"


def meaning_label(meaning: str) -> str:
    """A `name_meanings` entry as a table shows it: a name kept apart per paper loses its paper number.

    >>> meaning_label("COMET\u206317"), meaning_label("MAD (Multi-Agent Debate)")
    ('COMET', 'MAD (Multi-Agent Debate)')
    """
    return re.sub(MEANING_TAIL, "", meaning, count=1)


def _meaning_key(long_form: str) -> str:
    key = _MEANING_SEPARATORS.sub(" ", long_form.casefold()).strip()
    return key[:-1] if key.endswith("s") else key


def _starts_word(text: str, position: int) -> bool:
    return position == 0 or not text[position - 1].isalnum()


def _title_like_name(clean: str, colon: int) -> list[str]:
    """``SWING: Space Walks for Implicit Network Graphs`` -> ``SWING`` (the initials must match)."""
    start = clean.rfind(" ", max(0, colon - 40), colon) + 1
    name = clean[start:colon].strip("(“\"'")
    if not _is_strong(name) and not (name.isupper() and len(name) >= 2):
        return []
    expansion = _EXPANSION.match(clean, colon + 2)
    if expansion and _acronym_matches(name, expansion.group(0).split(), from_start=True):
        return [name]
    return []


def _token_at(text: str, position: int) -> str:
    match = _TOKEN_AT.match(text, position)
    return match.group(0).rstrip(".") if match else ""


_TOKEN_AT = re.compile(r"[^\s,;:()]{0,60}")


def _introduced_names(clean: str, position: int) -> list[str]:
    """Names right after "we propose": "X, a ...", "a novel framework, X,", "... (X)"."""
    direct = _names_at(clean, position)
    if direct and _is_strong(direct[0]):
        return direct  # "we introduce MC-CP, a hybrid method combining Monte Carlo (MC) dropout ..."
    # Otherwise a name in parentheses in the same clause wins: "we propose Verification via ...
    # Decoding (VIA-SD)", "a new model family (CortexMAE)".
    end = min(_clause_end(clean, position), position + 160)
    for match in _PARENTHESIS.finditer(clean, position, end):
        name = _parenthesised_name(clean, position, match)
        if name:
            return [name]
    if direct:
        return direct
    article = _ARTICLE.match(clean, position)
    if article:  # "we propose the Re³Writer, which ..." but not "we introduce a CISS framework"
        names = _names_at(clean, article.end(), strong_only=True)
        after = article.end() + len(names[0]) if names else 0
        if names and clean.startswith(names[0], article.end()) and clean[after : after + 1] in _PHRASE_END:
            return names
    phrase = _ARTICLE_PHRASE.match(clean, position)
    if phrase:
        return _names_at(clean, phrase.end(), strong_only=True)
    return []


def _clause_end(text: str, position: int) -> int:
    match = _SENTENCE_END.search(text, position, min(len(text), position + 300))
    return match.end() if match else min(len(text), position + 300)


def _names_at(
    clean: str, position: int, *, strong_only: bool = False, after_naming_word: bool = False
) -> list[str]:
    """The name that starts at ``position``, or [] when what starts there is not a name."""
    if position < len(clean) and clean[position] in "“\"'‘":
        position += 1
    if not strong_only:
        # "Learning to Optimize (L2O)", "called “Learning to Ask,”": capitalised words joined by
        # lowercase function words, ended by an acronym or by punctuation.
        phrase = _TITLE_PHRASE.match(clean, position)
        if phrase and " " in phrase.group(0) and _CONNECTOR.search(phrase.group(0)):
            words = phrase.group(0).split(" ")
            parenthesis = _PARENTHESIS.match(clean, phrase.end())
            if parenthesis:
                acronym = parenthesis.group(1).strip().strip("“”\"'")
                if _is_strong(acronym) and _acronym_matches(acronym, words, from_start=False):
                    return [acronym]
            if after_naming_word and clean[phrase.end() : phrase.end() + 1] in (
                ",",
                ".",
                ";",
                ":",
                "”",
                '"',
                ")",
            ):
                return [phrase.group(0)]
    run = _NAME_RUN.match(clean, position)
    if not run:
        return []
    tokens = run.group(0).split(" ")
    parenthesis = _PARENTHESIS.match(clean, run.end())
    if parenthesis:  # "Memory-enhanced Sequential Hypergraph Attention Networks (MS-HGAT)"
        acronym = parenthesis.group(1).strip().strip("“”\"'")
        if _is_strong(acronym) and _acronym_matches(acronym, tokens, from_start=False):
            return [acronym]
    # Stop the run at a generic word ("SAR Framework" -> "SAR").
    kept: list[str] = []
    for token in tokens:
        lowered = token.lower().strip(".'’")
        if (
            lowered in _GENERIC
            or token in _FIELD_ACRONYMS
            or all(part in _GENERIC for part in lowered.split("-"))
        ):
            break
        kept.append(token.rstrip(".'’"))
    if not kept:
        return []
    run_end = position + len(" ".join(tokens[: len(kept)]))
    parenthesis = _PARENTHESIS.match(clean, run_end)
    if parenthesis:
        acronym = parenthesis.group(1).strip().strip("“”\"'")
        if _is_strong(acronym) and _acronym_matches(acronym, kept, from_start=False):
            return [acronym]
    if len(kept) == 1:
        shape_ok = _is_strong(kept[0]) or (not strong_only and _is_title_word(kept[0]))
    else:
        shape_ok = not strong_only and all(_is_strong(token) or _is_title_word(token) for token in kept)
    if not shape_ok:
        return []
    # What follows must end the name: punctuation, or a word like "which", "to", "framework".
    following = clean[run_end : run_end + 30].lstrip()
    next_word = following.split(" ", 1)[0].lower().strip(",.;:()") if following else ""
    if following and following[0].isalnum() and next_word not in _AFTER_NAME_OK and not after_naming_word:
        return []
    lowercase_next = following[:1].isalpha() and following[:1].islower()
    if after_naming_word and lowercase_next and next_word not in _AFTER_NAME_OK:
        return []
    return [" ".join(kept)]


def _parenthesised_name(clean: str, clause_start: int, match: re.Match[str]) -> str:
    candidate = match.group(1).strip().strip("“”\"'")
    if " " in candidate or not _is_strong(candidate) and not _is_title_word(candidate):
        return ""
    if candidate in _FIELD_ACRONYMS or candidate.lower() in _GENERIC:
        return ""
    if clean[match.end() : match.end() + 1] == "-":
        return ""  # "a linear program (LP)-based algorithm": the acronym modifies, it does not name
    before_words = clean[clause_start : match.start()].split()
    if not before_words:
        return ""
    if candidate.isupper() or sum(char.isupper() for char in candidate) >= len(candidate) - 1:
        # An all-capitals acronym names the paper's thing only when its long form is not the object
        # of a preposition ("a method for one-shot federated learning (OSFL)" names the field) and,
        # written in lowercase, comes right after the verb ("we propose the probabilistic
        # configuration (PC)", not "... by restricting the optimal transport (OT) problem").
        long_form_start = _long_form_start(candidate, before_words)
        if long_form_start is None:
            return candidate if _is_strong(candidate) and not candidate.isupper() else ""
        preceding = before_words[long_form_start - 1].lower() if long_form_start else ""
        if preceding in _PREPOSITIONS:
            return ""
        long_form = before_words[long_form_start:]
        if long_form_start > 8 or (long_form_start > 3 and not any(word[:1].isupper() for word in long_form)):
            return ""
    return candidate


def _is_strong(token: str) -> bool:
    """An acronym, CamelCase, or letters with digits: ``SAR``, ``ElicitR``, ``CoF-T2I``, ``GPT2-xl``."""
    token = token.strip(".,;:'’\"“”")
    if len(token) < 2 or len(token) > 40 or token in _FIELD_ACRONYMS or not token[0].isalnum():
        return False
    rest = token[1:]
    inner_upper = rest != rest.lower()  # str methods run in C: much faster than a per-character loop
    has_upper = inner_upper or token[0].isupper()
    if not has_upper or token.isdigit() or token.lower().endswith(_ADJECTIVE_SUFFIXES):
        return False
    if inner_upper and (token[0].isupper() or len(token) >= 3):
        return True
    return _DIGIT.search(token) is not None and _LETTER.search(token) is not None


_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")


def _is_title_word(token: str) -> bool:
    """A capitalised word or hyphenated form that is not a generic word: ``Polyphonia``, ``Noise-aware``."""
    token = token.strip(".,;:'’")
    if len(token) < 3 or not token[0].isupper() or token.lower() in _GENERIC:
        return False
    head = token.split("-", 1)[0]
    return head[1:].islower() if len(head) > 1 else "-" in token


def _acronym_matches(short: str, words: list[str], *, from_start: bool) -> bool:
    """Schwartz & Hearst (2003): the short form's letters occur, in order, in ``words``.

    With ``from_start`` the first letter must open the first word ("SWING: Space Walks ..."),
    otherwise it must open some word ("Dynamic Fractal Mamba (DF-Mamba)").
    """
    if not words:
        return False
    return _long_form_start(short, words, from_start=from_start) is not None


def _long_form_start(short: str, words: list[str], *, from_start: bool = False) -> int | None:
    """Index of the word where the long form of ``short`` begins within the trailing ``words``."""
    letters = [char.lower() for char in short if char.isalnum()]
    if not letters or not letters[0].isalpha():
        return None
    limit = min(len(letters) + 5, 2 * len(letters))
    window = words[:limit] if from_start else words[-limit:]
    offset = 0 if from_start else len(words) - len(window)
    long_text = " ".join(window).lower()
    short_index, long_index = len(letters) - 1, len(long_text) - 1
    while short_index >= 0:
        char = letters[short_index]
        while long_index >= 0 and (
            long_text[long_index] != char
            or (short_index == 0 and long_index > 0 and long_text[long_index - 1].isalnum())
        ):
            long_index -= 1
        if long_index < 0:
            return None
        long_index -= 1
        short_index -= 1
    start_word = long_text[: long_index + 1].count(" ")
    if from_start and start_word != 0:
        return None
    return offset + start_word


def _emphasised_names(text: str) -> list[str]:
    names: list[str] = []
    if "*" in text or "__" in text:
        names.extend(match.group(2).strip() for match in _EMPHASIS_MARKDOWN.finditer(text))
    if "\\" in text:
        names.extend(match.group(1).strip() for match in _EMPHASIS_LATEX.finditer(text))
    return [name for name in names if " " not in name and _is_strong(name) and "\\" not in name]


def _unique(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    unique = []
    for name in names:
        name = name.strip(" .,;:'’\"“”")
        if name and name not in seen and name.lower() not in _GENERIC and name not in _FIELD_ACRONYMS:
            seen.add(name)
            unique.append(name)
    return unique


# --- datasets ----------------------------------------------------------------------------------

# Longest FooBench/FooQA/FooEval name looked for; real ones are under 40 characters.
_LONGEST_NAME = 80


def _whole_word(body: str) -> re.Pattern[str]:
    """``body`` matched only as a whole word of letters, digits and hyphens, of at most `_LONGEST_NAME`.

    Both guards keep the search linear in the text. Unguarded, the engine tries ``body`` from every
    capital of a long run ("benchmark AAAA...") and rescans the rest of the run from each: quadratic
    (20,000 capitals took 24 s). The lookbehind lets a match start only where a word starts (a match
    inside a word was dropped by `datasets` anyway), and the possessive lookahead gives up on a
    longer word after `_LONGEST_NAME` characters, so the backtracking in ``body`` is bounded too.
    """
    return re.compile(rf"(?<![\w-])(?=[A-Za-z0-9-]{{1,{_LONGEST_NAME}}}+(?![\w-])){body}(?![\w-])")


_PATTERNS = (
    # FooBench, XYZ-Bench, MJ-Bench-Video, SWE-bench
    ("ench", _whole_word(r"[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-?[Bb]ench(?:-[A-Z][A-Za-z0-9]*)*")),
    # HotpotQA, OK-VQA, PubMedQA
    ("QA", _whole_word(r"[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-?QA")),
    # HumanEval, AlpacaEval, GenEval
    ("Eval", _whole_word(r"[A-Z][A-Za-z0-9]+Eval")),
)
_TASK_ACRONYMS = frozenset({"VQA", "KBQA", "ODQA", "KGQA", "MQA", "LFQA", "CQA", "TQA", "MCQA", "EQA", "QA"})


@dataclass(frozen=True)
class _DatasetMatcher:
    """Everything `datasets` needs, built once per list file."""

    pattern: re.Pattern[str]  # a trie of spellings that start with a capital or a digit
    canonical: dict[str, str]  # spelling -> listed name
    folded: dict[str, str]  # lowercase, no hyphens or spaces -> listed name
    # Spellings that start lowercase (miniImageNet, nuScenes) are found by their first capital or
    # digit ("ImageNet", "Scenes") so the trie can skip lowercase text; here core -> (prefix, spelling).
    prefixed: dict[str, tuple[tuple[str, str], ...]]
    lowercase: tuple[tuple[str, tuple[str, ...]], ...]  # (3-letter gate, spellings): ogbn-arxiv, few


@lru_cache(maxsize=4)
def _dataset_matcher(path: str | None = None) -> _DatasetMatcher:
    canonical: dict[str, str] = {}
    folded: dict[str, str] = {}
    for name, aliases in load_dataset_names(path):
        for spelling in (name, *aliases):
            folded.setdefault(_fold(spelling), name)
            for variant in _variants(spelling):
                canonical.setdefault(variant, name)
    keys: set[str] = set()
    prefixed: dict[str, list[tuple[str, str]]] = {}
    lowercase = []
    for variant in canonical:
        # Anchor on the first capital (else digit) so the trie's first character is one: the regex
        # engine then skips lowercase text fast; "3DPW" is found from "DPW", "20 Newsgroups" from
        # "Newsgroups", "enwik8" from "8". Names with neither are searched for as plain substrings.
        anchor = next((index for index, char in enumerate(variant) if char.isupper()), None)
        if anchor is None:
            anchor = next((index for index, char in enumerate(variant) if char.isdigit()), None)
        if anchor is None:
            lowercase.append(variant)
        elif anchor == 0:
            keys.add(variant)
        else:
            keys.add(variant[anchor:])
            prefixed.setdefault(variant[anchor:], []).append((variant[:anchor], variant))
    return _DatasetMatcher(
        pattern=re.compile(_trie_pattern(keys)),
        canonical=canonical,
        folded=folded,
        prefixed={core: tuple(pairs) for core, pairs in prefixed.items()},
        lowercase=tuple(
            (gate, tuple(sorted(spellings, key=len, reverse=True)))
            for gate, spellings in _group_by_prefix(lowercase).items()
        ),
    )


def _group_by_prefix(spellings: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for spelling in spellings:
        groups.setdefault(spelling[:3], []).append(spelling)
    return groups


def _fold(name: str) -> str:
    return name.lower().replace("-", "").replace(" ", "")


def load_dataset_names(path: str | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """``(name, aliases)`` from a dataset list file; the packaged ``data/datasets.txt`` by default."""
    if path is None:
        content = resources.files("dashboard").joinpath("data/datasets.txt").read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as handle:
            content = handle.read()
    entries = []
    for line in content.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, alias_text = line.partition("=")
        aliases = tuple(alias.strip() for alias in alias_text.split("|") if alias.strip())
        if name.strip():
            entries.append((name.strip(), aliases))
    return entries


def _variants(name: str) -> set[str]:
    forms = {name, name.upper()}
    # "Cifar-10" and "Imagenet" are common spellings; "Math" and "Glue" are words, not MATH and GLUE.
    if name[:1].isalpha() and not (name.isupper() and name.replace(" ", "").isalpha()):
        forms.add(name[:1].upper() + name[1:].lower())
    joined = set()
    for form in forms:
        if "-" in form:
            joined.update({form.replace("-", ""), form.replace("-", " ")})
        if " " in form:
            joined.update({form.replace(" ", "-"), form.replace(" ", "")})
    forms |= joined
    # Generated spellings that are ordinary lowercase words never count; a name listed in
    # lowercase (ogbn-arxiv) is kept as written.
    return {form for form in forms if len(form) >= 2 and (form == name or not form.islower())}


def _trie_pattern(words: set[str]) -> str:
    """One regex for all names, factored as a trie: a few microseconds per abstract for ~1,500 spellings."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        branches, optional = [], False
        for char in sorted(node, key=lambda c: (c == "", c)):
            if char == "":
                optional = True
            else:
                branches.append(re.escape(char) + build(node[char]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if optional:
            return "(?:" + body + ")?" if len(branches) > 1 or len(branches[0]) > 1 else body + "?"
        return body

    # A suffix that starts with a digit or a capital: ImageNet-1k, ImageNet-C, Atari-100k, USPTO-50k.
    return (
        "("
        + build(trie)
        + r")(-(?:[0-9]+(?:\.[0-9]+)?[kKMB]?|[A-Z][A-Za-z0-9]{0,9}))?(?![A-Za-z0-9+]|\.[0-9])"
    )


def datasets(text: str, *, path: str | None = None) -> list[str]:
    """Datasets and benchmarks named in ``text``: the editable list plus FooBench/FooQA/FooEval names.

    Matching is case-sensitive with the variants described in ``data/datasets.txt``; each name is
    reported once, in the list's spelling, in order of first appearance.

    >>> datasets("Using MS-MARCO and msmarco; results on Cifar10 and MATH, not math.")
    ['MS MARCO', 'CIFAR-10', 'MATH']
    """
    if not isinstance(text, str) or not text:
        return []
    matcher = _dataset_matcher(path)
    canonical = matcher.canonical
    found: list[tuple[int, str]] = []
    for match in matcher.pattern.finditer(text):
        start, spelling = match.start(), match.group(1)
        for prefix, variant in matcher.prefixed.get(spelling, ()) if start else ():
            if text.startswith(prefix, start - len(prefix)) and _starts_name(text, start - len(prefix)):
                start, spelling = start - len(prefix), variant  # miniImageNet, 20 Newsgroups
                break
        else:
            if spelling not in canonical or not _starts_name(text, start):
                continue  # inside a word, or the capitalised tail of a name standing alone
        name = canonical[spelling]
        suffix = match.group(2) or ""
        if suffix:
            # "ImageNet-1k" is listed as an alias of ImageNet; "USPTO-Full" is reported as written.
            name = matcher.folded.get(_fold(spelling + suffix), name + suffix)
        found.append((start, name))
    for gate, spellings in matcher.lowercase:
        if gate not in text:  # one test for every ogbn-/ogbg-/ogbl- name
            continue
        for spelling in spellings:
            _find_all(text, spelling, canonical[spelling], found)

    for trigger, extra in _PATTERNS:
        if trigger[0] in text and trigger in text:
            for match in extra.finditer(text):
                start, name = match.start(), match.group(0)
                if start and (text[start - 1].isalnum() or text[start - 1] in "-_"):
                    continue
                if name not in _TASK_ACRONYMS and name not in canonical:
                    found.append((start, name))
                elif name in canonical:
                    found.append((start, canonical[name]))
    found.sort()
    seen: set[str] = set()
    names = []
    for _, name in found:
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _find_all(text: str, spelling: str, name: str, found: list[tuple[int, str]]) -> None:
    position = text.find(spelling)
    while position >= 0:
        end = position + len(spelling)
        if _starts_name(text, position) and (end == len(text) or not text[end].isalnum()):
            found.append((position, name))
        position = text.find(spelling, end)


def _starts_name(text: str, position: int) -> bool:
    return position == 0 or not (text[position - 1].isalnum() or text[position - 1] in "-_/@.")


# --- derived titles ----------------------------------------------------------------------------

_TITLE_WORDS = 12
_LEAD_IN = re.compile(
    r"^(?:(?:in|through|with) (?:this|the present|our) (?:paper|work|study|article|letter),?\s+"
    r"|(?:here|recently|however|moreover|furthermore|specifically|to this end|to address this),\s+)",
    re.IGNORECASE,
)
_EXPANSION_END = re.compile(r"[.;:()]|,\s")
_APPOSITIVE_END = re.compile(r"[.;:()]|,\s+(?:which|where|that|and|while|whose|with|by)\b")
_DANGLING = _words(
    "a an the of and or to for with in on by from that which as at via its their our is are this these "
    "between into over under using based"
)
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|et al|vs|cf|Fig|Eq|etc|approx|resp)\.$", re.IGNORECASE)
_ABBREVIATION_REACH = 16  # characters before a sentence end that can hold one, with the \b before it


def derived_title(clean_text: str, method_names: list[str]) -> str:
    """A short title for a record without one: ``"PIAA: a training-free multi-label ... framework"``.

    With a method name, the name and the phrase that describes it ("X, a ..." or "X: Expansion");
    otherwise the first sentence's main clause, cut to about twelve words. Never empty for
    non-empty text.

    >>> derived_title("We propose PIAA, a training-free multi-label image recognition framework.", ["PIAA"])
    'PIAA: a training-free multi-label image recognition framework'
    """
    if not isinstance(clean_text, str):
        return ""
    text = clean_text.strip()
    if not text:
        return ""
    for name in method_names[:3]:
        description = _description_of(text, name)
        if description:
            return f"{name}: {description}"
    sentence = _first_sentence(text)
    sentence = _LEAD_IN.sub("", sentence, count=1) or sentence
    title = _shorten(sentence, _TITLE_WORDS).rstrip(".")
    if not title:
        title = _shorten(text, _TITLE_WORDS) or text[:80]
    if " " not in title and len(title) > 40:  # Chinese or Japanese: no spaces to cut at
        title = title[:30] + "…"
    if title[:1].isascii() and title[:1].islower():
        title = title[:1].upper() + title[1:]
    return title


def _description_of(text: str, name: str) -> str:
    position = text.find(name)
    while position >= 0:
        after = position + len(name)
        rest = text[after : after + 400]
        parenthesis = _PARENTHESIS.match(rest)
        if parenthesis:
            rest = rest[parenthesis.end() :]
        elif rest.startswith(")"):  # the name was the acronym in "Long Form (NAME), a ..."
            rest = rest[1:]
        stripped = rest.lstrip()
        if stripped[:1] in (",", ":", "–", "—") or stripped.startswith("- "):
            body = stripped.lstrip(",:–—- ").strip()
            first = body.split(" ", 1)[0].lower()
            if stripped[0] == ":" and body[:1].isupper() or first in ("a", "an", "the", "our"):
                end = (_EXPANSION_END if stripped[0] == ":" else _APPOSITIVE_END).search(body)
                phrase = body[: end.start()] if end else body
                phrase = _shorten(phrase, _TITLE_WORDS - 1)
                if len(phrase.split()) >= 2:
                    return phrase
        position = text.find(name, after)
    return _expansion_of(text, name)


def _expansion_of(text: str, name: str) -> str:
    """The long form of an acronym name, written before it or in parentheses after it."""
    position = text.find(name)
    if position < 0:
        return ""
    after = _PARENTHESIS.match(text, position + len(name))
    if after and _acronym_matches(name, after.group(1).split(), from_start=True):
        return _shorten(after.group(1).strip(), _TITLE_WORDS - 1)
    if text[position - 1 : position] == "(":
        words = text[max(0, position - 200) : position - 1].split()
        start = _long_form_start(name, words)
        if start is not None and len(words) - start >= 2:
            return " ".join(words[start:])
    return ""


def _first_sentence(text: str) -> str:
    # Each sentence end costs a bounded amount of work, however many an abbreviation skips ("e.g. A
    # e.g. A ..."): the abbreviation is looked for only where it can be, at the end, and the words
    # are counted only until there are four (a longer candidate has at least as many).
    start, enough_words = 0, False
    while True:
        match = _SENTENCE_END.search(text, start)
        if not match:
            return text
        end = match.start()
        if not _ABBREVIATION.search(text, max(0, end - _ABBREVIATION_REACH), end):
            if enough_words:
                return text[:end]
            candidate = text[:end]
            enough_words = len(candidate.split()) >= 4
            if enough_words or _unspaced(candidate):
                return candidate
        start = match.end()


def _unspaced(text: str) -> bool:
    """Chinese or Japanese sentence: long enough without spaces to stand as a title."""
    return len(text) >= 6 and text.count(" ") <= 2 and not text.isascii()


# Where a clause that only adds to the main one starts: a title ends before it when it runs long.
_CLAUSE_START = re.compile(
    r",\s+(?:but|which|while|whereas|yet|thereby|thus|limiting|raising|causing|leading|making|allowing|"
    r"enabling|resulting|requiring|focusing|where|and thus|as)\s|\s(?:that|which|whose)\s",
    re.IGNORECASE,
)
_CLAUSE_MIN_WORDS = 4


def _shorten(text: str, limit: int) -> str:
    words = text.split()
    if len(words) <= limit:
        return " ".join(words).rstrip(" ,;:–—-")
    # A whole clause reads better than twelve words cut mid-phrase: end at the last clause start
    # within the limit that leaves a title of some words.
    joined = " ".join(words)
    # Words before each clause start are counted from the previous one, and the scan stops past the
    # limit: linear however many clauses a long text holds (", which , which ...").
    cuts, spaces, counted = [], 0, 0
    for match in _CLAUSE_START.finditer(joined):
        cut = match.start()
        spaces += joined.count(" ", counted, cut)
        counted = cut
        n_words = spaces + (1 if cut and joined[cut - 1] != " " else 0)  # words are one space apart
        if n_words > limit:
            break
        if n_words >= _CLAUSE_MIN_WORDS:
            cuts.append(cut)
    if cuts:
        return joined[: cuts[-1]].rstrip(" ,;:–—-")
    kept = words[:limit]
    while len(kept) > 3 and kept[-1].lower().strip(",;:") in _DANGLING:
        kept.pop()
    return " ".join(kept).rstrip(" ,;:–—-") + "…"
