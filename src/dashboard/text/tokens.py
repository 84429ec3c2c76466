"""Tokens for topics, terms and similarity: one tokenizer, one stop list, one vectoriser factory.

Three word lists decide what a *term* is:

- ``FUNCTION_WORDS``: English function words (the, of, which, ...).
- ``BOILERPLATE``: words every abstract uses whatever its subject (propose, novel, state-of-the-art, ...).
- ``GENERIC_TERMS``: ML words too common to name a topic on their own (model, learning, data, ...) that
  still build meaningful phrases ("reinforcement learning", "language model").

A function word, a boilerplate word or punctuation ends a phrase, so n-grams never straddle one; generic
terms are dropped as single words but kept inside n-grams. ``STOP_WORDS`` is the union of the three.

Words are lower-cased and lightly singularised ("models" -> "model", "studies" -> "study") so that
"model · models" can never be two terms. Numbers, URLs, e-mail addresses and LaTeX commands and inline
formulas are skipped. CJK text (no spaces between words) becomes overlapping character bigrams.
"""

from __future__ import annotations

import functools
import gc
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:  # imported when a vectoriser is made: opening a prebuilt index needs no scikit-learn
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

# fmt: off
FUNCTION_WORDS: frozenset[str] = frozenset((
    "a", "about", "above", "according", "accordingly", "across", "actually", "after", "afterwards", "again",
    "against", "ago", "al", "albeit", "all", "almost", "alone", "along", "already", "also", "although",
    "always", "am", "among", "amongst", "an", "and", "another", "any", "anybody", "anyhow", "anyone",
    "anything", "anyway", "anywhere", "are", "aren", "around", "as", "aside", "at", "away", "be", "became",
    "because", "become", "becomes", "becoming", "been", "before", "beforehand", "behind", "being", "below",
    "beside", "besides", "between", "beyond", "billion", "both", "but", "by", "can", "cannot", "cf",
    "could", "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "done", "down", "during",
    "e.g", "each", "eg", "eight", "either", "else", "elsewhere", "enough", "especially", "et", "etc",
    "even", "ever", "every", "everybody", "everyone", "everything", "everywhere", "except", "far", "few",
    "fewer", "fifth", "first", "five", "for", "former", "formerly", "four", "fourth", "from", "further",
    "furthermore", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "hence", "her", "here",
    "hereby", "herein", "hers", "herself", "him", "himself", "his", "how", "however", "hundred", "i", "i.e",
    "ie", "if", "ii", "iii", "in", "inc", "indeed", "inside", "instead", "into", "is", "isn", "it", "its",
    "itself", "iv", "ix", "just", "last", "lately", "latter", "latterly", "least", "less", "let", "like",
    "likewise", "many", "may", "maybe", "me", "meanwhile", "might", "million", "mine", "more", "moreover",
    "most", "mostly", "much", "must", "my", "myself", "namely", "neither", "never", "nevertheless", "next",
    "nine", "no", "nobody", "non", "none", "noone", "nor", "not", "nothing", "now", "nowhere", "of", "off",
    "often", "on", "once", "one", "ones", "only", "onto", "or", "other", "others", "otherwise", "ought",
    "our", "ours", "ourselves", "out", "outside", "over", "overall", "own", "per", "perhaps", "please",
    "quite", "rather", "really", "regarding", "same", "second", "seven", "several", "shall", "she",
    "should", "since", "six", "so", "some", "somebody", "somehow", "someone", "something", "sometime",
    "sometimes", "somewhat", "somewhere", "still", "such", "ten", "than", "that", "the", "their", "theirs",
    "them", "themselves", "then", "thence", "there", "thereafter", "thereby", "therefore", "therein",
    "thereof", "thereupon", "these", "they", "third", "this", "those", "though", "thousand", "three",
    "through", "throughout", "thru", "thus", "to", "together", "too", "toward", "towards", "two", "under",
    "underneath", "unless", "unlike", "until", "unto", "up", "upon", "us", "versus", "very", "vi", "via",
    "vii", "viii", "vs", "was", "wasn", "we", "were", "weren", "what", "whatever", "when", "whence",
    "whenever", "where", "whereas", "whereby", "wherein", "whereupon", "wherever", "whether", "which",
    "while", "whilst", "who", "whoever", "whole", "whom", "whose", "why", "will", "with", "within",
    "without", "won", "would", "wouldn", "xi", "yet", "you", "your", "yours", "yourself", "yourselves",
    "zero",
))
# fmt: on

# fmt: off
BOILERPLATE: frozenset[str] = frozenset((
    "ablation", "ablations", "abstract", "accomplish", "accurately", "achieve", "achieved", "achievement",
    "achieves", "achieving", "additionally", "address", "addressed", "addresses", "addressing", "adopt",
    "adopted", "advance", "advanced", "advancement", "advances", "advancing", "advantage", "advantageous",
    "afterward", "aim", "aiming", "aims", "allow", "allowed", "allowing", "allows", "alternative",
    "alternatively", "analyse", "analysed", "analyses", "analyze", "analyzed", "analyzing", "applied",
    "applies", "apply", "applying", "approach", "approaches", "appropriate", "arbitrary", "article",
    "aspect", "assume", "assumed", "attain", "attempt", "available", "avoid", "based", "baseline", "basic",
    "behave", "benchmarked", "benefit", "benefits", "beside", "best", "better", "beyond", "boost",
    "boosting", "bridge", "bridging", "bring", "broad", "broader", "build", "building", "builds", "built",
    "call", "called", "capable", "capture", "captures", "capturing", "careful", "carefully", "case",
    "central", "challenge", "challenging", "characterize", "characterized", "claim", "clear", "clearly",
    "closely", "combine", "combined", "combines", "combining", "come", "commonly", "comparable", "compare",
    "compared", "comparing", "comparison", "compelling", "competitive", "complete", "completely", "complex",
    "comprehensive", "comprehensively", "conduct", "conducted", "consider", "considerable", "considerably",
    "considered", "considering", "consist", "consistent", "consistently", "consisting", "consists",
    "construct", "constructed", "contain", "contains", "contrast", "contribute", "contribution",
    "contributions", "conventional", "core", "correspond", "corresponding", "critical", "crucial",
    "current", "currently", "deal", "deliver", "delivers", "demonstrate", "demonstrated", "demonstrates",
    "demonstrating", "derive", "derived", "describe", "described", "designed", "despite", "detail",
    "detailed", "develop", "developed", "developing", "development", "difference", "different", "differs",
    "difficult", "difficulty", "directly", "discuss", "discussed", "diverse", "do", "effect", "effective",
    "effectively", "effectiveness", "efficacy", "efficient", "efficiently", "eight", "elaborate", "emerge",
    "emerged", "emerging", "empirical", "empirically", "employ", "employed", "employing", "employs",
    "enable", "enabled", "enables", "enabling", "encourage", "enhance", "enhanced", "enhancement",
    "enhances", "enhancing", "ensure", "ensures", "ensuring", "entire", "entirely", "equip", "especially",
    "essential", "essentially", "establish", "established", "establishes", "establishing", "evaluate",
    "evaluated", "evaluates", "evaluating", "evidence", "exactly", "examine", "examined", "example",
    "excellent", "exhibit", "exhibits", "exist", "existing", "exists", "expensive", "experiment",
    "experimental", "experimentally", "experiments", "explain", "explore", "explored", "explores",
    "exploring", "extend", "extended", "extending", "extends", "extensive", "extensively", "facilitate",
    "facilitates", "fact", "factor", "fail", "fails", "failure", "far", "faster", "feasible", "finally",
    "find", "finding", "findings", "firstly", "focus", "focused", "focuses", "focusing", "formulate",
    "formulated", "found", "foundational", "fully", "fundamental", "fundamentally", "furthermore", "gain",
    "gains", "general", "generalizable", "generally", "give", "given", "gives", "giving", "goal", "goes",
    "good", "great", "greatly", "grow", "growing", "guarantee", "handle", "hard", "help", "helps",
    "highlight", "highlighted", "highlighting", "highlights", "highly", "hold", "holds", "holistic",
    "however", "huge", "hypothesize", "idea", "identified", "identifies", "identify", "identifying",
    "illustrate", "impact", "important", "importantly", "impressive", "improve", "improved", "improvement",
    "improvements", "improves", "improving", "include", "included", "includes", "including", "incorporate",
    "incorporated", "incorporates", "incorporating", "increase", "increased", "increases", "increasing",
    "increasingly", "indicate", "indicates", "inherent", "inherently", "initial", "innovative", "insight",
    "insightful", "insights", "instance", "integrate", "integrates", "integrating", "interesting",
    "introduce", "introduced", "introduces", "introducing", "intuition", "intuitive", "investigate",
    "investigated", "investigates", "investigating", "investigation", "involve", "involved", "involves",
    "involving", "issue", "issues", "key", "known", "lack", "lacks", "largely", "lead", "leading", "leads",
    "learn", "learned", "learns", "least", "levels", "leverage", "leveraged", "leverages", "leveraging",
    "lightweight", "limit", "limitation", "limitations", "limited", "limiting", "little", "main", "mainly",
    "maintain", "maintaining", "maintains", "major", "make", "makes", "making", "manner", "marginal",
    "meaningful", "means", "meanwhile", "merely", "method", "methodology", "methods", "mild", "mitigate",
    "mitigates", "mitigating", "modern", "more", "motivate", "motivated", "motivation", "multiple", "need",
    "needed", "needs", "new", "notable", "notably", "novel", "numerous", "observe", "observed", "obtain",
    "obtained", "obtaining", "off-the-shelf", "offer", "offering", "offers", "original", "outperform",
    "outperformed", "outperforming", "outperforms", "overcome", "overcoming", "overlooked", "paper",
    "paradigm", "part", "particular", "particularly", "perform", "performance", "performed", "performing",
    "performs", "pipeline", "play", "plays", "plug-and-play", "poor", "poorly", "popular", "possible",
    "potential", "potentially", "powerful", "practical", "practice", "precise", "precisely", "present",
    "presented", "presenting", "presents", "previous", "previously", "primarily", "principle", "principled",
    "prior", "problem", "problems", "procedure", "proceed", "produce", "produced", "produces", "producing",
    "progress", "promising", "proper", "properly", "propose", "proposed", "proposes", "proposing",
    "provably", "prove", "proved", "proves", "provide", "provided", "provides", "providing", "purpose",
    "pursue", "ranging", "rapid", "rapidly", "rarely", "reach", "reaching", "realistic", "recent",
    "recently", "reduce", "reduced", "reduces", "reducing", "refer", "regard", "related", "relatively",
    "relevant", "reliable", "relies", "rely", "relying", "remain", "remaining", "remains", "remarkable",
    "remarkably", "render", "report", "reported", "represent", "represents", "require", "required",
    "requirement", "requires", "requiring", "research", "researcher", "researchers", "resolve", "respect",
    "respectively", "result", "resulting", "results", "reveal", "revealed", "reveals", "rigorous",
    "satisfactory", "scalability", "scalable", "scenario", "scenarios", "seamless", "seamlessly",
    "secondly", "see", "seek", "seem", "seen", "serve", "serves", "setting", "settings", "setup", "severe",
    "show", "showcase", "showcases", "showed", "showing", "shown", "shows", "significant", "significantly",
    "similar", "similarly", "simple", "simply", "simultaneously", "solution", "solutions", "solve",
    "solved", "solves", "solving", "sophisticated", "sota", "specific", "specifically", "standard",
    "state-of-art", "state-of-the-art", "straightforward", "strong", "stronger", "strongly", "struggle",
    "struggles", "studied", "studies", "study", "studying", "substantial", "substantially", "succeed",
    "success", "successful", "successfully", "suffer", "suffers", "sufficient", "suggest", "suggests",
    "suitable", "summary", "superior", "supported", "supports", "surpass", "surpasses", "surpassing",
    "systematic", "systematically", "tailored", "take", "takes", "taking", "task", "tasks", "technique",
    "techniques", "tend", "tested", "therefore", "thorough", "thoroughly", "today", "toolkit", "towards",
    "tradeoff", "traditional", "traditionally", "tremendous", "try", "typical", "typically", "ultimately",
    "underlying", "understand", "understanding", "unified", "unique", "unlike", "unprecedented", "use",
    "used", "useful", "uses", "using", "usually", "utility", "utilize", "utilized", "utilizes", "utilizing",
    "validate", "validated", "validates", "validation", "valuable", "variety", "various", "vast",
    "verified", "verify", "versatile", "version", "versus", "viewpoint", "way", "ways", "well", "wide",
    "widely", "wider", "work", "works", "yield", "yielding", "yields",
    # measured on the corpora in /work/shared/corpora (bench/boilerplate.py): among the most used
    # words of every one of them, and about no subject ("due to", "bridge the gap", "publicly on GitHub")
    "ability", "due", "gap", "github", "publicly", "real-world",
))
# fmt: on

# fmt: off
GENERIC_TERMS: frozenset[str] = frozenset((
    "accuracy", "ai", "algorithm", "analysis", "application", "architecture", "artificial", "benchmark",
    "capability", "component", "computational", "cost", "data", "dataset", "deep", "domain", "efficiency",
    "evaluation", "feature", "framework", "function", "information", "input", "intelligence", "learning",
    "loss", "machine", "mechanism", "metric", "model", "module", "network", "neural", "objective", "output",
    "parameter", "quality", "representation", "sample", "scale", "structure", "system", "train", "trained",
    "training",
    # measured as above (bench/boilerplate.py): 9-21% of the abstracts of every corpus, and a subject
    # only inside a phrase ("code generation", "drug design", "training set"); "large", "time" and
    # "process" stay terms (tests/text/test_tokens.py says why)
    "code", "design", "high", "number", "property", "set", "single", "strategy", "term",
))
# fmt: on


STOP_WORDS: frozenset[str] = FUNCTION_WORDS | BOILERPLATE | GENERIC_TERMS
"""Words that are never a term on their own (function words, abstract boilerplate, generic ML words)."""

PHRASE_BREAKERS: frozenset[str] = FUNCTION_WORDS | BOILERPLATE
"""Words that end a phrase: with stop words on, no n-gram contains one."""

# Plurals the suffix rules in normalise_word would get wrong.
_IRREGULAR: dict[str, str] = {
    "biases": "bias", "aliases": "alias", "analyses": "analysis", "hypotheses": "hypothesis",
    "syntheses": "synthesis", "theses": "thesis", "axes": "axis", "indices": "index", "vertices": "vertex",
    "matrices": "matrix", "simplices": "simplex", "caches": "cache", "niches": "niche", "movies": "movie",
    "cookies": "cookie", "corpora": "corpus", "criteria": "criterion", "phenomena": "phenomenon",
    "lenses": "lens", "gases": "gas", "statuses": "status", "viruses": "virus", "genera": "genus",
}  # fmt: skip

# Words ending in "s" that are not plurals.
# fmt: off
_KEEP_AS_IS: frozenset[str] = frozenset((
    "access", "across", "alias", "always", "analysis", "apparatus", "atlas", "axis", "basis", "bayes",
    "bias", "bonus", "boss", "campus", "canvas", "chaos", "chess", "class", "consensus", "corpus", "crisis",
    "cross", "diagnosis", "does", "ellipsis", "emphasis", "focus", "gas", "gauss", "genus", "glass", "has",
    "hers", "his", "hypothesis", "is", "its", "lens", "less", "locus", "loss", "mass", "metastasis",
    "modulus", "news", "nexus", "ours", "paralysis", "pass", "perhaps", "process", "prognosis", "radius",
    "series", "sometimes", "species", "status", "stimulus", "stress", "success", "synthesis", "thesis",
    "this", "thus", "unless", "us", "virus", "was", "whereas", "yes", "yours",
))
# fmt: on

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR_RE = re.compile(f"[{_CJK}]")
_WORD_CHAR = rf"[^\W_{_CJK}]"
# One scan finds every piece of a text. Order matters: what is skipped (URLs, e-mail addresses, inline
# formulas, LaTeX commands) is matched before words; punctuation that ends a phrase is its own piece.
_EMAIL = r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+|"
_PIECES = (
    r"https?://\S+|www\.\S+|{email}\$[^$]{{0,300}}\$|\\[A-Za-z]+"
    r"|[.,;:!?()\[\]{{}}\"“”/|=<>+*&%]|\s[-–—]\s"
    rf"|[{_CJK}]+"
    rf"|\d[dD]\b|[^\W\d_{_CJK}]{_WORD_CHAR}*(?:['’\-]{_WORD_CHAR}+)*"
)
_PIECE_RE = re.compile(_PIECES.format(email=_EMAIL))
# The same without e-mail addresses, for a text without "@": trying an address at each word read the
# whole word to look for an "@" (a third of the scan).
_PIECE_NO_EMAIL_RE = re.compile(_PIECES.format(email=""))


def _piece_re(text: str) -> re.Pattern[str]:
    return _PIECE_RE if "@" in text else _PIECE_NO_EMAIL_RE


_BREAK = ""  # marks a phrase boundary in a scanned text
_BREAKERS_AND_BREAK = PHRASE_BREAKERS | {_BREAK}
_JUST_BREAK = frozenset({_BREAK})
_SKIPPED_PREFIXES = ("http://", "https://", "www.", "$", "\\")


def normalise_word(word: str) -> str:
    """Lower-case and singularise one word.

    >>> [normalise_word(w) for w in ["Studies", "graphs", "LLMs", "analysis", "model's"]]
    ['study', 'graph', 'llm', 'analysis', 'model']
    """
    word = word.lower().replace("’", "'")
    if "'" in word:
        # "model's" -> "model"; "don't" -> "don" (a function word)
        word = word.partition("'")[0]
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if "-" in word:
        head, _, last = word.rpartition("-")
        return f"{head}-{normalise_word(last)}" if last else head
    if len(word) <= 3 or word in _KEEP_AS_IS or not word.endswith("s"):
        return word
    if word.endswith(("ss", "us", "is", "ics", "ous")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    return word[:-1]


@functools.lru_cache(maxsize=1 << 17)
def _piece_terms(piece: str) -> tuple[tuple[str, int, int], ...]:
    """What one scanned piece contributes: (term or _BREAK, start, end) relative to the piece."""
    first = piece[0]
    is_text = first.isalnum() or _CJK_CHAR_RE.match(first)
    if not is_text or piece.startswith(_SKIPPED_PREFIXES) or "@" in piece:
        return ((_BREAK, 0, len(piece)),)
    if _CJK_CHAR_RE.match(first):
        if len(piece) == 1:
            return ((_BREAK, 0, 0), (piece, 0, 1), (_BREAK, 1, 1))
        # Each character bigram is a phrase of its own: the bigrams already span the words.
        size = len(piece)
        breaks = [(_BREAK, i, i) for i in range(size - 1)]
        bigrams = [(piece[i : i + 2], i, i + 2) for i in range(size - 1)]
        return (*itertools.chain.from_iterable(zip(breaks, bigrams, strict=True)), (_BREAK, size, size))
    term = normalise_word(piece)
    if len(term) < 2:
        return ((_BREAK, 0, len(piece)),)
    return ((term, 0, len(piece)),)


def scan(text: str) -> list[str]:
    """The terms of ``text`` in order, ``""`` where a phrase ends (punctuation, URL, formula).

    >>> scan("Graph networks, see https://x.org.")
    ['graph', 'network', '', 'see', '']
    """
    out: list[str] = []
    for piece in _piece_re(text).findall(text):
        parts = _piece_terms(piece)
        if len(parts) == 1:
            out.append(parts[0][0])
        else:
            out.extend(p[0] for p in parts)
    return out


def scan_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Like :func:`scan` but with each term's character span in ``text``."""
    out: list[tuple[str, int, int]] = []
    for match in _piece_re(text).finditer(text):
        offset = match.start()
        out.extend((term, offset + start, offset + end) for term, start, end in _piece_terms(match.group()))
    return out


def _phrases(terms: list[str], stop_words: bool) -> list[list[int]]:
    """Index runs of consecutive terms that form phrases."""
    breakers = _BREAKERS_AND_BREAK if stop_words else _JUST_BREAK
    runs: list[list[int]] = []
    current: list[int] = []
    for i, term in enumerate(terms):
        if term in breakers:
            if current:
                runs.append(current)
                current = []
        else:
            current.append(i)
    if current:
        runs.append(current)
    return runs


def _ngram_indices(
    terms: list[str], ngram_range: tuple[int, int], stop_words: bool
) -> Iterable[tuple[str, int, int]]:
    """(n-gram, index of first term, index of last term) for every n-gram within a phrase."""
    low, high = ngram_range
    generic = GENERIC_TERMS if stop_words else frozenset()
    for run in _phrases(terms, stop_words):
        if len(run) == 1:  # the common phrase of one term (every CJK bigram is one): no slicing
            if low == 1 and terms[run[0]] not in generic:
                yield terms[run[0]], run[0], run[0]
            continue
        words = [terms[i] for i in run]
        for n in range(low, high + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                if all(w in generic for w in gram):
                    continue
                yield " ".join(gram) if n > 1 else gram[0], run[i], run[i + n - 1]


def ngrams(text: str, ngram_range: tuple[int, int] = (1, 2), *, stop_words: bool = True) -> list[str]:
    """The terms of ``text``: n-grams that stay within a phrase; stop words dropped unless told.

    >>> ngrams("We propose graph neural networks for large language models.")
    ['graph', 'graph neural', 'large', 'language', 'large language', 'language model']
    """
    return ngrams_of_scan(scan(text), ngram_range, stop_words=stop_words)


def ngrams_of_scan(
    terms: Sequence[str], ngram_range: tuple[int, int] = (1, 2), *, stop_words: bool = True
) -> list[str]:
    """:func:`ngrams` of an already scanned text (scan once, count several ways)."""
    # The hot loop of every vectoriser: kept flat (no spans, one set lookup per term).
    low, high = ngram_range
    breakers = _BREAKERS_AND_BREAK if stop_words else _JUST_BREAK
    out: list[str] = []
    run: list[str] = []
    for term in (*terms, _BREAK):
        if term not in breakers:
            run.append(term)
            continue
        if run:
            for n in range(low, high + 1):
                if n == 1:
                    out.extend(w for w in run if w not in GENERIC_TERMS) if stop_words else out.extend(run)
                    continue
                for i in range(len(run) - n + 1):
                    gram = run[i : i + n]
                    if not stop_words or not all(w in GENERIC_TERMS for w in gram):
                        out.append(" ".join(gram))
            run = []
    return out


def ngrams_with_spans(
    text: str, ngram_range: tuple[int, int] = (1, 2), *, stop_words: bool = True
) -> list[tuple[str, int, int]]:
    """The terms of ``text`` as ``(term, start, end)`` character spans (for highlighting)."""
    # Every tuple made here is acyclic, but on a long text their number set off the cyclic collector
    # again and again, each pass over all of them: more than half the time on 100 kB of CJK. It runs
    # once this is done; one left off by another thread is left off.
    collecting = gc.isenabled()
    gc.disable()
    try:
        scanned = scan_with_spans(text)
        terms = [term for term, _, _ in scanned]
        return [
            (gram, scanned[first][1], scanned[last][2])
            for gram, first, last in _ngram_indices(terms, ngram_range, stop_words)
        ]
    finally:
        if collecting:
            gc.enable()


def tokenize(text: str, *, stop_words: bool = True) -> list[str]:
    """Single-word terms of ``text``, normalised, in order.

    >>> tokenize("We propose novel Transformers for 3D point clouds, see https://x.org")
    ['transformer', '3d', 'point', 'cloud']
    """
    return ngrams(text, (1, 1), stop_words=stop_words)


class Analyzer:
    """A picklable callable text -> terms, for scikit-learn vectorisers (``analyzer=``).

    A document may also be given already scanned (the list :func:`scan` returns), so a corpus is
    scanned once for TF-IDF, term counts and area rules alike.
    """

    def __init__(self, ngram_range: tuple[int, int] = (1, 2), stop_words: bool = True) -> None:
        self.ngram_range = ngram_range
        self.stop_words = stop_words

    def __call__(self, document: str | Sequence[str]) -> list[str]:
        terms = scan(document) if isinstance(document, str) else document
        return ngrams_of_scan(terms, self.ngram_range, stop_words=self.stop_words)

    def __repr__(self) -> str:
        return f"Analyzer(ngram_range={self.ngram_range}, stop_words={self.stop_words})"


def min_df_for(n_documents: int) -> int:
    """A document-frequency floor that grows with the corpus: 1 for a handful of abstracts, 2 from 20.

    Terms seen once carry no topic signal, and in a large corpus they are most of the vocabulary.
    """
    if n_documents < 20:
        return 1
    if n_documents < 5_000:
        return 2
    return max(3, n_documents // 5_000)


def make_vectorizer(
    kind: Literal["tfidf", "count"] = "tfidf",
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: bool = True,
    min_df: int | float = 1,
    max_df: int | float = 1.0,
    max_features: int | None = None,
    binary: bool = False,
) -> TfidfVectorizer | CountVectorizer:
    """The one vectoriser factory used by topics, terms and similarity, so every view sees the same terms.

    TF-IDF uses sublinear term frequency (a word said five times is not five times as topical) and
    float32 (half the memory of float64 at no cost in quality).

    >>> make_vectorizer("count").fit(["graph neural networks"]).get_feature_names_out().tolist()
    ['graph', 'graph neural']
    """
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    # The analyzer lower-cases itself (scikit-learn's lower-casing does not apply to a callable analyzer).
    common = {
        "analyzer": Analyzer(ngram_range, stop_words),
        "lowercase": False,
        "min_df": min_df,
        "max_df": max_df,
        "max_features": max_features,
        "binary": binary,
        "dtype": np.float32,
    }
    if kind == "count":
        return CountVectorizer(**common)
    return TfidfVectorizer(sublinear_tf=True, **common)


class NoTermsLeft(ValueError):
    """No term of the counted texts survives the vectoriser's document-frequency rules."""


@dataclass(frozen=True)
class CountedTexts:
    """The 1-2-gram counts of some texts, made by an earlier pass over them (the index build's count map),
    in the form that lets a vectoriser be fitted on them as if it had read the texts.

    ``counts`` is texts x terms; its columns are the terms in the order they first appear in the texts
    (text after text, each text's n-grams in :func:`ngrams_of_scan` order) and ``terms`` names them. That
    order is what scikit-learn's ``fit_transform`` numbers terms by before sorting them, and it decides
    the order of each row's entries, hence the float sums of the TF-IDF: kept, the matrix is the same to
    the bit.
    """

    counts: Any  # scipy.sparse.csr_matrix of integer counts, each row's columns ascending
    terms: Sequence[str]

    def fit_tfidf(self, vectorizer: TfidfVectorizer) -> Any:
        """Fit ``vectorizer`` (from :func:`make_vectorizer`) on the counted texts; their TF-IDF matrix.

        What ``vectorizer.fit_transform(texts)`` does after counting (scikit-learn's ``_sort_features``
        and ``_limit_features``: min_df, max_df, then the max_features most frequent), repeated on the
        counts. Raises `NoTermsLeft` when no term survives (the texts' own path then drops stop words
        no more, which counts without stop words cannot do).
        """
        import scipy.sparse as sp
        from sklearn.feature_extraction.text import TfidfTransformer

        analyzer = vectorizer.analyzer
        if not isinstance(analyzer, Analyzer) or not analyzer.stop_words:
            raise ValueError("counted texts fit only a vectoriser of make_vectorizer with stop words")
        n_docs = self.counts.shape[0]
        if not len(self.terms):
            raise NoTermsLeft("empty vocabulary; perhaps the documents only contain stop words")
        counts = sp.csr_matrix(self.counts)
        index = np.int32 if counts.nnz <= np.iinfo(np.int32).max else np.int64  # as scikit-learn picks it
        matrix = sp.csr_array(
            (counts.data.astype(vectorizer.dtype), counts.indices.astype(index), counts.indptr.astype(index)),
            shape=counts.shape,
        )
        matrix.sort_indices()  # already sorted: this sets the flag scikit-learn's own count leaves set
        min_df, max_df, limit = vectorizer.min_df, vectorizer.max_df, vectorizer.max_features
        high = float(max_df if isinstance(max_df, Integral) else max_df * n_docs)
        low = float(min_df if isinstance(min_df, Integral) else min_df * n_docs)
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        terms = np.asarray(list(self.terms), dtype=object)
        if limit is not None:  # sorted first: the most frequent are then picked in that order
            matrix, terms = _sort_terms(matrix, terms)
        frequency = np.bincount(matrix.indices, minlength=matrix.shape[1])
        mask = (frequency <= high) & (frequency >= low)
        if limit is not None and mask.sum() > limit:
            totals = np.asarray(matrix.sum(axis=0)).ravel()
            best = (-totals[mask]).argsort()[:limit]  # scikit-learn's own call: ties fall the same way
            kept = np.zeros(len(frequency), dtype=bool)
            kept[np.where(mask)[0][best]] = True
            mask = kept
        columns = np.where(mask)[0]
        if not len(columns):
            raise NoTermsLeft("After pruning, no terms remain. Try a lower min_df or a higher max_df.")
        matrix, terms = matrix[:, columns], terms[columns]
        if limit is None:
            matrix, terms = _sort_terms(matrix, terms)
        transformer = TfidfTransformer(
            norm=vectorizer.norm,
            use_idf=vectorizer.use_idf,
            smooth_idf=vectorizer.smooth_idf,
            sublinear_tf=vectorizer.sublinear_tf,
        ).fit(matrix)
        # The state fit_transform leaves: the vocabulary (term -> column) and the fitted transformer.
        vectorizer.fixed_vocabulary_ = False
        vectorizer.vocabulary_ = {str(term): column for column, term in enumerate(terms)}
        vectorizer._tfidf = transformer
        return transformer.transform(matrix, copy=False)


def _sort_terms(matrix: Any, terms: np.ndarray) -> tuple[Any, np.ndarray]:
    """Columns renumbered in term order (each row's entries keep their order, as scikit-learn's do)."""
    order = sorted(range(len(terms)), key=terms.__getitem__)
    new_column = np.empty(len(terms), dtype=matrix.indices.dtype)
    new_column[order] = np.arange(len(terms), dtype=matrix.indices.dtype)
    matrix.indices = new_column.take(matrix.indices, mode="clip")
    return matrix, terms[order]
