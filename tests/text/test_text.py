"""clean_markup and count_words: tables of markup found in real abstracts, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.text.clean import clean_markup, count_words

CLEAN_CASES = [
    # LaTeX text commands
    (r"a \emph{statistically consistent} loss", "a statistically consistent loss"),
    (r"\textbf{bold} \textit{italic} \texttt{CUDAnalyst} \textsc{Bar}", "bold italic CUDAnalyst Bar"),
    (r"\textbf{\emph{nested}} and {\em grouped} and {\bf old}", "nested and grouped and old"),
    (r"$\mathrm{d}x$ and $\text{KL}$ and $\operatorname{tr}(A)$", "dx and KL and tr(A)"),
    (r"\url{https://github.com/Gwangho99/mem-curv-diff}.", "https://github.com/Gwangho99/mem-curv-diff."),
    (r"in our \href{https://github.com/a/b}{repository}.", "in our repository (https://github.com/a/b)."),
    (r"\href{https://github.com/a/b}{https://github.com/a/b}", "https://github.com/a/b"),
    (
        r"\href{https://github.com/z/M}{\textcolor{orange}{\texttt{https://github.com/z/M}}}.",
        "https://github.com/z/M.",
    ),
    (r"as shown \cite{smith2020} and \citep[p.~3]{a,b}.", "as shown and."),
    (r"models (see \cite{a}).", "models (see)."),
    (r"(e.g. 55%)\footnote{\url{https://github.com/r/C}}.", "(e.g. 55%) (https://github.com/r/C)."),
    (r"Fr\'echet, na\"ive, Poincar{\'e}, Erd\H{o}s, \c{c}a", "Fréchet, naïve, Poincaré, Erdős, ça"),
    (r"Lee~et~al. and Fig.~1", "Lee et al. and Fig. 1"),
    (r"\ours{} beats \FedProx", "ours beats FedProx"),
    # math
    (r"$\sim25\times$ speed-up", "~25× speed-up"),
    (r"($\sim25\times$)", "(~25×)"),
    (r"up to $75\\%$ (offline)", "up to 75% (offline)"),
    (r"61.2\% top-1", "61.2% top-1"),
    (r"$O(1/m + 1/\sqrt{n})$", "O(1/m + 1/√n)"),
    (r"$\widetilde{O}(\varepsilon^{-k \vee 2})$", "Õ(ε^(-k ∨ 2))"),
    (r"$\alpha$-VOR and $\epsilon$-neighborhood", "α-VOR and ε-neighborhood"),
    (r"$\Omega(\log n)$ and $\Theta(1)$", "Ω(log n) and Θ(1)"),
    (r"$256\times 256$ and $a \times b$", "256×256 and a × b"),
    (r"$x \sim \mathcal{N}(0, I)$", "x ~ N(0, I)"),
    (r"$\mathbb{R}^d$, $\mathbb{E}[x]$", "ℝᵈ, 𝔼[x]"),
    (r"$\ell_2$, $\ell_{\infty}$, $x_i$, $x_{train}$", "ℓ₂, ℓ_∞, xᵢ, x_train"),
    (r"$x^{2}$, $x^\top$, $G^*$, $e^{k+1}$", "x², xᵀ, G*, eᵏ⁺¹"),
    (r"$\sum_{i=1}^{n} x_i$", "∑ᵢ₌₁ⁿ xᵢ"),
    (r"$\frac{a}{b}$, $\frac12$, \frac{a+b}{c}", "a/b, 1/2, (a+b)/c"),
    (r"$a \leq b \geq c \approx d \neq e$", "a ≤ b ≥ c ≈ d ≠ e"),
    (r"$f \rightarrow g$, $\infty$, $\pm 1$, $a \cdot b$", "f → g, ∞, ±1, a · b"),
    (r"$\{x_i\}$ and \$5", "{xᵢ} and $5"),
    (r"$$E = mc^2$$", "E = mc²"),
    (r"\(\epsilon\)-optimal", "ε-optimal"),
    (r"$\\mathbf{x}$ and $\\{\\pm 1\\}$", "x and {±1}"),  # LaTeX stored JSON-escaped twice
    # escapes and punctuation
    (r"Q\&A, \#1, snake\_case, \$3", "Q&A, #1, snake_case, $3"),
    ("vision--language, 20--50 steps---really", "vision–language, 20–50 steps—really"),
    ("``one-vs-all'' and ``the model's''", "“one-vs-all” and “the model's”"),
    ("``Contextual Networks” (CTN)", "“Contextual Networks” (CTN)"),
    ("learn `how to learn' quickly", "learn ‘how to learn’ quickly"),
    # markdown
    ("we introduce **VR-Thinker**, a model", "we introduce VR-Thinker, a model"),
    ("we propose *Polyphonia*, a framework", "we propose Polyphonia, a framework"),
    ("***both*** and _under_ and __strong__", "both and under and strong"),
    ("**N**oise-**a**ware Low-**R**ank **A**daptation", "Noise-aware Low-Rank Adaptation"),
    ("**(1)** visual inputs", "(1) visual inputs"),
    ("backgrounds**Project url: x", "backgrounds Project url: x"),
    ("at [https://github.com/g/NaRA](https://github.com/g/NaRA).", "at https://github.com/g/NaRA."),
    ("available [here](https://github.com/G/BDI).", "available here (https://github.com/G/BDI)."),
    ("run `pip install x` now", "run pip install x now"),
    ("x_1 snake_case a*b*c 2*3", "x_1 snake_case a*b*c 2*3"),
    ("*https://github.com/ML-GSAI/DPT*.", "https://github.com/ML-GSAI/DPT."),
    # URLs are never rewritten
    ("see https://github.com/h/WDRO_coreset_a_ and x--y", "see https://github.com/h/WDRO_coreset_a_ and x–y"),
    (
        r"https://github.com/f/Eff\/icient and \url{https://x.org/a\_b}",
        "https://github.com/f/Efficient and https://x.org/a_b",
    ),
    ("www.x.org/~me/a--b and github.com/a/b_c_", "www.x.org/~me/a--b and github.com/a/b_c_"),
    # scraped CVPR pages
    (
        'a \n<tex xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:xlink="http://www.w3.org/1999/xlink">'
        "$256\\times 256$</tex>\n image",
        "a 256×256 image",
    ),
    (
        'repository\n<sup xmlns:mml="http://www.w3.org/1998/Math/MathML">1</sup>\nhttps://github.com/x/y.',
        "repository¹ https://github.com/x/y.",
    ),
    ('iS\n<inf xmlns:mml="http://www.w3.org/1998/Math/MathML">EE</inf>\n to probe', "iSEE to probe"),
    ("termed Faster (F\n<inf>2</inf>\nC), AP\n<inf>r</inf>\n on LVIS", "termed Faster (F₂C), APᵣ on LVIS"),
    # left as text
    ("a <b and c> d", "a <b and c> d"),
    ("x &lt;script&gt; &amp; y", "x &lt;script&gt; &amp; y"),
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),
    ("costs $5 and nothing else", "costs $5 and nothing else"),
    ("我们提出 PIAA 方法。", "我们提出 PIAA 方法。"),
    # whitespace
    ("  two\n\nlines\r\n\tand\u00a0spaces  ", "two lines and spaces"),
    ("a\x00b\x07c", "a b c"),
    ("", ""),
]


@pytest.mark.parametrize(("raw", "expected"), CLEAN_CASES)
def test_clean_markup(raw: str, expected: str) -> None:
    assert clean_markup(raw) == expected


@pytest.mark.parametrize("value", [None, 3, 2.5])
def test_clean_markup_takes_non_strings(value: object) -> None:
    assert clean_markup(value) == ("" if value is None else str(value))  # type: ignore[arg-type]


COUNT_CASES = [
    ("", 0),
    ("   ", 0),
    ("Latent Forcing: a simple fix.", 5),
    ("61.2% top-1 on vision–language tasks", 5),
    ("a — b", 3),
    ("two\nlines", 2),
    ("我们提出 PIAA 方法", 7),
    ("日本語のテキスト", 8),
    ("한국어 문장", 2),
    ("BERT使用", 3),
]


@pytest.mark.parametrize(("text", "expected"), COUNT_CASES)
def test_count_words(text: str, expected: int) -> None:
    assert count_words(text) == expected


def test_count_words_normalized_matches_default_on_clean_text() -> None:
    clean = clean_markup("We propose **PIAA**, a  framework\n for $x_i$ (see \\cite{a}).")
    assert count_words(clean, normalized=True) == count_words(clean) == 8


# Inputs a catastrophically backtracking pattern would never finish; each is about 1 MB.
ADVERSARIAL = [
    "$" * 1_000_000,
    "\\" * 1_000_000,
    "\\emph{" * 150_000,
    "{" * 500_000 + "}" * 500_000,
    "**a" * 330_000,
    "*" * 1_000_000,
    "_a" * 500_000,
    "[" * 500_000 + "](" * 250_000,
    "https://" + "a" * 1_000_000,
    "http://x.org/" + "(" * 1_000_000,
    "www." * 250_000,
    "github.com/" * 90_000,
    "a.com/" * 160_000,
    "<sup " * 200_000,
    '<tex a="' * 120_000,
    "``" * 500_000,
    "--" * 500_000,
    "$x^{" * 250_000,
    "\\frac{" * 160_000,
    "\\href{a}{" * 100_000,
    " " * 1_000_000,
    "\n" * 1_000_000,
    "a " * 500_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"{t[:12]!r}x{len(t)}" for t in ADVERSARIAL])
@pytest.mark.timeout(60)  # a hang guard for catastrophic backtracking, not a speed assertion
def test_clean_markup_is_linear_on_hostile_input(text: str) -> None:
    assert isinstance(clean_markup(text), str)
    assert count_words(text) >= 0


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_clean_markup_never_raises_and_normalises_whitespace(text: str) -> None:
    clean = clean_markup(text)
    assert clean == clean.strip()
    assert "  " not in clean
    assert not any(char in clean for char in "\n\r\t\x00")
    assert count_words(clean, normalized=True) == count_words(clean)


_MARKUP_HEAVY = st.text(alphabet="ab \\${}*_[]()<>`'~-^.:/0@#%&|\"\n", max_size=80)


@settings(max_examples=200, deadline=None)
@given(_MARKUP_HEAVY)
def test_clean_markup_never_raises_on_markup_soup(text: str) -> None:
    assert isinstance(clean_markup(text), str)


_WORDS = st.lists(st.text(alphabet="abcXYZ019é", min_size=1, max_size=8), max_size=20)
_SPACES = st.lists(st.sampled_from([" ", "  ", "\n", "\t", " \n "]), min_size=20, max_size=20)


@settings(max_examples=200, deadline=None)
@given(_WORDS, _SPACES)
def test_plain_text_only_has_its_whitespace_normalised(words: list[str], spaces: list[str]) -> None:
    text = "".join(word + space for word, space in zip(words, spaces, strict=False))
    assert clean_markup(text) == " ".join(words)
    assert count_words(text) == len(words)


_PROSE = st.text(alphabet="abcXY01 .,;:!?()'\"-/%", max_size=120)


@settings(max_examples=200, deadline=None)
@given(_PROSE)
def test_clean_markup_is_idempotent_on_prose(text: str) -> None:
    once = clean_markup(text)
    assert clean_markup(once) == once
