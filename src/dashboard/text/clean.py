"""Render the LaTeX, markdown and scraper markup found in abstracts as readable plain text.

`clean_markup` is the one entry point: ``\\emph{x}``, ``**x**``, ``$\\sim25\\times$``, ``75\\%``,
``<sup>1</sup>`` and friends become ``x``, ``x``, ``~25×``, ``75%`` and ``¹``. URLs are protected
while the markup around them is rendered, so the cleaned text still holds every link readably.

Design notes
- Every pattern is linear-time: negated character classes instead of nested quantifiers, so a
  hostile 1 MB string costs about as much as a 1 MB abstract.
- Each family of rules runs only when its trigger characters occur (``\\``, ``$``, ``*``, ``<``...),
  which keeps the common case (plain English with a little math) cheap.
- HTML entities (``&amp;``) are left as they are: the text is shown as text, never as markup.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

from dashboard.text.links import LIGATURES, find_urls

__all__ = ["clean_markup", "count_words", "is_placeholder_abstract"]

# --- character tables -----------------------------------------------------------------------


def _words(names: str) -> frozenset[str]:
    return frozenset(names.split())


_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "varkappa": "ϰ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π",
    "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ",
    "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}  # fmt: skip

# Ordinary symbols: rendered in place, the source's spacing kept.
_SYMBOLS = {
    **_GREEK,
    "ell": "ℓ", "infty": "∞", "partial": "∂", "nabla": "∇", "forall": "∀", "exists": "∃",
    "emptyset": "∅", "varnothing": "∅", "top": "⊤", "bot": "⊥", "star": "⋆", "ast": "∗",
    "dagger": "†", "ddagger": "‡", "ldots": "…", "dots": "…", "cdots": "⋯", "vdots": "⋮",
    "prime": "′", "hbar": "ℏ", "aleph": "ℵ", "Re": "ℜ", "Im": "ℑ", "sharp": "♯", "flat": "♭",
    "natural": "♮", "neg": "¬", "lnot": "¬", "langle": "⟨", "rangle": "⟩", "lceil": "⌈",
    "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "Vert": "‖", "lVert": "‖", "rVert": "‖",
    "vert": "|", "lvert": "|", "rvert": "|", "sum": "∑", "prod": "∏", "int": "∫", "oint": "∮",
    "bullet": "•", "degree": "°", "textdegree": "°", "checkmark": "✓",
    # abbreviation macros authors define (\ie, \eg, \etal): their text, not their bare name
    "ie": "i.e.", "eg": "e.g.", "etal": "et al.", "wrt": "w.r.t.", "etc": "etc.", "vs": "vs.", "cf": "cf.",
    "iid": "i.i.d.", "aka": "a.k.a.",
    "copyright": "©", "textregistered": "®", "texttrademark": "™", "euro": "€", "pounds": "£",
    "textemdash": "—", "textendash": "–", "textquotedblleft": "“", "textquotedblright": "”",
    "textquoteleft": "‘", "textquoteright": "’", "textless": "<", "textgreater": ">",
    "textasciitilde": "~", "textbackslash": "\\", "textbar": "|", "textunderscore": "_",
    "textbullet": "•", "texttimes": "×", "uparrow": "↑", "downarrow": "↓", "Uparrow": "⇑",
    "Downarrow": "⇓", "colon": ":", "ss": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
}  # fmt: skip

# Relations and binary operators: spaced when the source spaces them on both sides, else tight.
_OPERATORS = {
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "mp": "∓", "leq": "≤", "le": "≤",
    "leqslant": "≤", "geq": "≥", "ge": "≥", "geqslant": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "~", "simeq": "≃", "cong": "≅", "equiv": "≡", "propto": "∝",
    "ll": "≪", "gg": "≫", "lesssim": "≲", "gtrsim": "≳", "asymp": "≍", "triangleq": "≜",
    "coloneqq": "≔", "doteq": "≐", "thicksim": "~", "in": "∈", "notin": "∉", "ni": "∋",
    "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "supseteq": "⊇", "cup": "∪", "cap": "∩",
    "setminus": "∖", "vee": "∨", "wedge": "∧", "lor": "∨", "land": "∧", "oplus": "⊕",
    "otimes": "⊗", "odot": "⊙", "circ": "∘", "bigcup": "⋃", "bigcap": "⋂", "bigoplus": "⨁",
    "bigotimes": "⨂", "bigodot": "⨀", "uplus": "⊎", "perp": "⊥", "parallel": "∥", "mid": "|",
    "rightarrow": "→", "to": "→", "leftarrow": "←", "gets": "←", "leftrightarrow": "↔",
    "Rightarrow": "⇒", "Leftarrow": "⇐", "Leftrightarrow": "⇔", "implies": "⇒", "iff": "⇔",
    "mapsto": "↦", "longrightarrow": "⟶", "longmapsto": "⟼", "rightharpoonup": "⇀",
    "hookrightarrow": "↪", "bowtie": "⋈", "models": "⊨", "vdash": "⊢", "preceq": "⪯",
    "succeq": "⪰", "prec": "≺", "succ": "≻",
}  # fmt: skip

# Operator names written upright in LaTeX: kept as words.
_FUNCTION_NAMES = _words(
    "log ln lg exp sin cos tan sinh cosh tanh arcsin arccos arctan min max sup inf lim liminf limsup "
    "arg argmin argmax det dim ker deg gcd Pr mod bmod pmod poly polylog tr diag sgn sign"
)

# Layout, font-switch and sizing commands without visible content.
_DROPPED = _words(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr middle displaystyle textstyle "
    "scriptstyle limits nolimits em bf it rm sf sl tt sc up md normalfont ttfamily bfseries itshape "
    "rmfamily sffamily scshape upshape mdseries small footnotesize scriptsize tiny large Large LARGE "
    "huge Huge normalsize noindent newline linebreak par protect xspace relax centering hfill vfill "
    "quad qquad enspace thinspace medspace thickspace negthinspace space smallskip medskip bigskip "
    "clearpage newpage item footnotemark maketitle and faGithub faLink fa hline null"
)

# Commands whose (single) argument is dropped with them.
_DROP_WITH_ARGUMENT = _words(
    "cite citep citet citealt citealp citeauthor citeyear parencite textcite autocite footcite "
    "nocite ref eqref autoref cref Cref pageref label hspace vspace phantom hphantom vphantom "
    "includegraphics bibliography bibliographystyle color pagecolor"
)

_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ", "H": "ℍ", "1": "𝟙"}
_COMBINING = {
    "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "bar": "\u0304",
    "overline": "\u0305", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308", "check": "\u030c",
    "breve": "\u0306", "acute": "\u0301", "grave": "\u0300", "mathring": "\u030a", "c": "\u0327",
    "u": "\u0306", "v": "\u030c", "H": "\u030b", "r": "\u030a", "k": "\u0328",
}  # fmt: skip
_ACCENT_SYMBOLS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
                   ".": "\u0307"}  # fmt: skip

_SUPERSCRIPTS = str.maketrans(
    "0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW*′'",
    "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ*′′",
)
_SUPERSCRIPTABLE = frozenset("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW*′'⊤")
_SUBSCRIPTS = str.maketrans("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUBSCRIPTABLE = frozenset("0123456789+-−=()aehijklmnoprstuvx")

# --- patterns --------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" ([,.;:!?)\]]+)(?= |$)")

# Tags seen in scraped proceedings pages (CVPR's <tex xmlns:mml=...>, <sup>, <inf>); only these
# names, and only with well-formed name="value" attributes, so "a <b and c> d" stays as written.
_TAG_NAMES = r"tex|sup|sub|inf|i|b|em|strong|italic|bold|br|p|span|math|mml:\w+"
# The whitespace a pattern takes before what it matches: all of a run, taken only from where the run
# starts. A plain leading \s* lets the engine start again at every character of a long whitespace run
# that no match follows, rescanning the rest of the run from each: quadratic time. The matches are the
# same, as a leftmost match starts where the run starts and takes all of it (the patterns that use this
# end by taking all the whitespace after them, or a tag, so no search resumes inside a run;
# `_HTML_SUB` may end after one newline, hence its `(?<=>\n)`).
_LEADING_SPACE = r"(?:(?<!\s)\s++|)"
_HTML_SUP = re.compile(rf"{_LEADING_SPACE}<sup(?:\s+[\w:-]+=\"[^\"<>]*\")*\s*>([^<>]{{0,40}})</sup>")
_HTML_SUB = re.compile(
    r"(?:(?:(?<!\s)|(?<=>\n))\s++|)<(sub|inf)(?:\s+[\w:-]+=\"[^\"<>]*\")*\s*>([^<>]{0,40})</\1>\n?"
)
_HTML_TAG = re.compile(rf"</?(?:{_TAG_NAMES})(?:\s+[\w:-]+=\"[^\"<>]*\")*\s*/?>", re.IGNORECASE)

_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")

_MATH_DISPLAY = re.compile(r"\$\$([^$]*)\$\$")
_MATH_INLINE = re.compile(r"\$([^$]+)\$")
_MATH_PAREN = re.compile(r"\\[()\[\]]")
_PERCENT = re.compile(r"\\{1,2}%")
_ESCAPED = re.compile(r"\\\\?([&#_$%{}|])")
_DOUBLED_BACKSLASH = re.compile(r"\\\\(?=[A-Za-z])")
_LINE_BREAK = re.compile(r"\\\\(?:\[[^\[\]]{0,20}\])?")
_SPACING = re.compile(r"\\[,;:> ]|\\!|\\/")
_ACCENT = re.compile(r"\\(['`^\"~=.])\s*(?:\{\s*([A-Za-z]|\\i)\s*\}|([A-Za-z]))")
_TWO_ARGUMENTS = (
    r"href|textcolor|colorbox|frac|dfrac|tfrac|nicefrac|cfrac|binom|overset|underset|stackrel|texorpdfstring"
)
_ARGUMENT = r"(?:\{([^{}]*)\}|([A-Za-z0-9]))"  # a braced group, or LaTeX's single-token argument
_COMMAND_2 = re.compile(rf"\\({_TWO_ARGUMENTS})\s*{_ARGUMENT}\s*{_ARGUMENT}")
_COMMAND_1 = re.compile(
    rf"\\(?!(?:{_TWO_ARGUMENTS})(?![A-Za-z]))([A-Za-z]+)\*?\s*(?:\[[^\[\]{{}}]{{0,100}}\])?\s*\{{([^{{}}]*)\}}"
)
_COMMAND_0 = re.compile(rf"({_LEADING_SPACE})\\([A-Za-z]+)(\s*)(?=([A-Za-z0-9]?))")
_SUPERSCRIPT = re.compile(r"\^\s*(?:\{([^{}]*)\}|(\\?[A-Za-z0-9*′']|\S))")
_SUBSCRIPT = re.compile(r"_\s*(?:\{([^{}]*)\}|([A-Za-z0-9]))")
_BRACE = re.compile(r"[{}]")
_TIE = re.compile(r"(?<=[A-Za-z.,])~(?=\w)")

_LATEX_QUOTES = re.compile(r"``((?:[^`'\"”]|'(?!')){0,400})(?:''|\"|”)")
_LATEX_SINGLE_QUOTES = re.compile(r"(?<![`\w])`([^`'\n]{1,200})'(?!\w)")
_MD_LINK = re.compile(r"!?\[([^\[\]\n]{0,500})\]\(\s*(\x00\d+\x00|[^()\s]{1,2048})\s*\)")
_MD_BOLD = re.compile(r"(\*\*|__)(?=\S)([^*\n]{1,1000}?)(?<=\S)\1")
_MD_BOLD_LONGEST = 1000  # characters of a bold span (the bound in _MD_BOLD)
_BOLD_OPENING = re.compile(r"\*\*|__")
_BOLD_BARRIER = re.compile(r"[*\n]")  # what a bold span never holds
_UNDERSCORE_CLOSING = re.compile(r"(?<=\S)(?=__)")  # where a __bold__ span can end, overlaps included
_MD_ITALIC_STAR = re.compile(r"(?<![*\w\\^_])\*(?=[^\s*])([^*\n]{1,1000}?)(?<=[^\s*\\])\*(?![*\w])")
_MD_ITALIC_UNDERSCORE = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]{1,1000}?)(?<=[^\s_])_(?!\w)")
_MD_CODE = re.compile(r"`([^`\n]{1,500})`")
_EM_DASH = re.compile(r"(?<!-)---(?!-)")
_EN_DASH = re.compile(r"(?<!-)--(?!-)")

_CJK = r"\u2e80-\u2fdf\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")


# --- public API ------------------------------------------------------------------------------


def clean_markup(text: str, *, url_spans: list[tuple[int, int, str]] | None = None) -> str:
    """Render LaTeX, markdown and scraper markup as readable plain text, whitespace normalised.

    >>> clean_markup(r"a $\\sim25\\times$ speed-up, \\emph{75\\%} of **PIAA**")
    'a ~25× speed-up, 75% of PIAA'

    Never raises; ``None`` or a non-string gives its ``str`` form (``None`` gives ``""``).
    ``url_spans`` may pass `dashboard.text.links.find_urls` of the same text when the caller has it.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if not text:
        return ""
    if "(cid:" in text:  # PDF-extraction artefacts: glyph ids of characters the extractor could not map
        text, url_spans = _CID.sub("", text), None
    if not text.isascii() and _LIGATURE.search(text):
        text, url_spans = _LIGATURE.sub(lambda m: LIGATURES[m.group()], text), None
    # Single-character `in` tests run at memchr speed; every family of rules is gated by one.
    irregular = not text.isprintable()  # control characters, newlines, tabs, non-breaking spaces
    if irregular:
        text = _CONTROL.sub(" ", text)  # same length, so url_spans still fit
    edited = False
    if "<" in text:
        rendered = _render_html_tags(text)
        edited, url_spans = rendered != text, None if rendered != text else url_spans
        text = rendered
    urls: list[str] = []
    spans = find_urls(text) if url_spans is None else url_spans
    if spans:
        text = _protect_urls(text, spans, urls)
    if "\\" in text or "$" in text:
        text, edited = _render_latex(text, urls), True
    if "`" in text or "]" in text or "*" in text or "_" in text:
        text, edited = _render_markdown(text, urls), True
    if "~" in text:
        text = _TIE.sub(" ", text)  # LaTeX's unbreakable space: "et~al.", "Fig.~1"
    if "--" in text:
        text = _EN_DASH.sub("–", _EM_DASH.sub("—", text))
    if urls:
        text = _PLACEHOLDER.sub(lambda match: urls[int(match.group(1))], text)
    if irregular or "  " in text:  # every rule above inserts printable characters only
        text = _normalize_spaces(text)
    text = text.strip()
    if edited and (" ." in text or " ," in text or " )" in text or " ;" in text or " :" in text):
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)  # left where a \cite or a tag was dropped
    return text


_CID = re.compile(r"\(cid:\d{1,5}\)")
_LIGATURE = re.compile("[" + "".join(LIGATURES) + "]")

# What sites print where they have no abstract: the whole (cleaned) text is one of these.
_PLACEHOLDER_ABSTRACT = re.compile(
    r"(?:abstract|summary)?\s*(?:is\s+)?(?:not\s+|un)?(?:available|provided|given|found|yet)\W*"
    r"|(?:no|missing|without)\s+(?:abstract|summary)(?:\s+(?:is\s+)?(?:available|provided|given|found|yet))?\W*"
    r"|(?:abstract|summary)(?:\s+(?:missing|pending|forthcoming|withheld|tbd|tba|n/?a|none|null|empty))?\W*"
    r"|tb[ad]|n/?a|none|null|nil|nan|empty|unknown|untitled|todo|placeholder|[-–—.?*_x\s]*"
    r"|(?:abstract\W+)?(?:coming\s+soon|to\s+(?:appear|be\s+(?:announced|added|determined)))\W*"
    # NeurIPS/PMLR proceedings pages without an abstract: "Part of Advances in Neural Information ..."
    r"|part\s+of\s+(?:the\s+)?(?:advances|proceedings|international|annual|conference)\b[^.]{0,200}\.?",
    re.IGNORECASE,
)


def is_placeholder_abstract(clean_text: str) -> bool:
    """True when a cleaned abstract is empty or only a site's placeholder, not a real abstract.

    >>> [is_placeholder_abstract(t) for t in ("Abstract Unavailable", "TBA", "", "We study X.")]
    [True, True, True, False]
    """
    text = clean_text.strip()
    if len(text) > 300:  # a placeholder is short; never scan a real abstract
        return False
    return _PLACEHOLDER_ABSTRACT.fullmatch(text) is not None


def count_words(clean_text: str, *, normalized: bool = False) -> int:
    """Number of words in cleaned text, counted like ``wc -w`` with one exception for CJK.

    A word is a whitespace-separated token (``61.2%`` and ``vision–language`` are one word each).
    Chinese and Japanese are written without spaces, so each Han or kana character counts as one
    word, the usual convention of word processors; Korean separates words with spaces and is
    counted like English.

    >>> count_words("Latent Forcing: a simple fix.")
    5
    >>> count_words("我们提出 PIAA 方法")
    7

    ``normalized=True`` promises the text is `clean_markup` output (single spaces, stripped) and
    skips the whitespace scan.
    """
    if not isinstance(clean_text, str) or not clean_text:
        return 0
    cjk = 0
    if not clean_text.isascii() and _may_hold_cjk(clean_text):
        cjk = len(_CJK_CHAR.findall(clean_text))
        if cjk:
            clean_text = _CJK_CHAR.sub(" ", clean_text)
    if cjk or not normalized:
        if not clean_text.isprintable() or "  " in clean_text:
            clean_text = _normalize_spaces(clean_text)
        clean_text = clean_text.strip()
    return cjk + (clean_text.count(" ") + 1 if clean_text else 0)


def _may_hold_cjk(text: str) -> bool:
    # Han and kana (U+3000..U+9FFF) start with UTF-8 lead bytes E3..E9; encoding and a byte search run
    # in C, about ten times faster than any per-character scan in Python or the regex engine.
    encoded = text.encode("utf-8", "surrogatepass")
    return any(lead in encoded for lead in _CJK_LEAD_BYTES)


_CJK_LEAD_BYTES = (b"\xe3", b"\xe4", b"\xe5", b"\xe6", b"\xe7", b"\xe8", b"\xe9", b"\xef\xa4", b"\xe2\xba")


# --- steps -----------------------------------------------------------------------------------


def _normalize_spaces(text: str) -> str:
    """Every whitespace run as one space; str.replace is much faster than a regex for the usual cases."""
    text = text.replace("\n", " ").replace("\r", " ").replace("\t", " ")
    if not text.isprintable():
        text = _SPACES.sub(" ", _CONTROL.sub(" ", text))
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _render_html_tags(text: str) -> str:
    if "<sup" in text:
        text = _HTML_SUP.sub(lambda m: _script(m.group(1).strip(), superscript=True, tight=True), text)
    if "<sub" in text or "<inf" in text:
        text = _HTML_SUB.sub(lambda m: _script(m.group(2).strip(), superscript=False, tight=True), text)
    return _HTML_TAG.sub(" ", text)


def _protect_urls(text: str, spans: list[tuple[int, int, str]], urls: list[str]) -> str:
    """Swap each URL for a placeholder so no markup rule touches it (``_`` and ``--`` are common in URLs)."""
    pieces, last = [], 0
    for start, end, url in spans:
        pieces.append(text[last:start])
        pieces.append(f"\x00{len(urls)}\x00")
        urls.append(url)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _render_latex(text: str, urls: list[str]) -> str:
    text = _PERCENT.sub("%", text)
    if "\\\\" in text:
        # Sources that store LaTeX JSON-escaped twice (\\mathbf{x}): a real line break before a
        # letter is rare in an abstract, a doubled command is not.
        text = _DOUBLED_BACKSLASH.sub(r"\\", text)
    # Escaped characters become private-use stand-ins so later rules do not read them as markup.
    text = _ESCAPED.sub(lambda m: _ESCAPE_STANDIN[m.group(1)], text)
    text = _LINE_BREAK.sub(" ", text)
    text = _SPACING.sub(lambda m: "" if m.group(0) in ("\\!", "\\/") else " ", text)
    if "\\'" in text or '\\"' in text or "\\`" in text or "\\^" in text or "\\~" in text or "\\=" in text:
        text = _ACCENT.sub(_accent, text)
    if "$" in text:
        text = _MATH_DISPLAY.sub(lambda m: f" {_render_math(m.group(1), urls)} ", text)
        text = _MATH_INLINE.sub(lambda m: _render_math(m.group(1), urls), text)
    if "\\" in text:
        text = _MATH_PAREN.sub("", text)
        text = _render_commands(text, urls)
    text = _BRACE.sub("", text)
    for standin, original in _ESCAPE_RESTORE:
        if standin in text:
            text = text.replace(standin, original)
    return text


_ESCAPE_STANDIN = {"&": "\ue000", "#": "\ue001", "_": "\ue002", "$": "\ue003", "%": "\ue004", "{": "\ue005",
                   "}": "\ue006", "|": "\ue007"}  # fmt: skip
_ESCAPE_RESTORE = tuple((standin, "‖" if char == "|" else char) for char, standin in _ESCAPE_STANDIN.items())


def _render_math(math: str, urls: list[str]) -> str:
    if "\\" in math:
        math = _render_commands(math, urls)
    if "^" in math:
        math = _SUPERSCRIPT.sub(lambda m: _script(_first(m), superscript=True), math)
    if "_" in math:
        math = _SUBSCRIPT.sub(lambda m: _script(_first(m), superscript=False), math)
    return _BRACE.sub("", math)


def _first(match: re.Match[str]) -> str:
    group = match.group(1)
    return (group if group is not None else match.group(2)).strip()


def _script(content: str, *, superscript: bool, tight: bool = False) -> str:
    """``x^{2}`` -> ``x²``; contents without Unicode forms stay readable: ``x^(k+1)``, ``x_train``."""
    content = content.replace("{", "").replace("}", "")
    if superscript and content in ("⊤", "T", "top"):
        return "ᵀ"
    table, allowed = (_SUPERSCRIPTS, _SUPERSCRIPTABLE) if superscript else (_SUBSCRIPTS, _SUBSCRIPTABLE)
    if content and len(content) <= 4 and all(char in allowed for char in content):
        return content.translate(table)
    if tight:
        return content
    if superscript:
        return f"^{content}" if len(content) <= 1 else f"^({content})"
    return f"_{content}"


def _accent(match: re.Match[str]) -> str:
    letter = match.group(2) or match.group(3)
    if letter == "\\i":
        letter = "i"
    return unicodedata.normalize("NFC", letter + _ACCENT_SYMBOLS[match.group(1)])


def _render_commands(text: str, urls: list[str]) -> str:
    # Innermost groups first; each pass is linear and nesting deeper than a few levels is rare.
    for _ in range(6):
        before = text
        text = _COMMAND_2.sub(lambda match: _two_argument_command(match, urls), text)  # \frac12 has no {
        if "{" in text:
            text = _COMMAND_1.sub(_one_argument_command, text)
        if text == before:
            break
    if "\\" in text:
        text = _COMMAND_0.sub(_bare_command, text)
    return text


def _two_argument_command(match: re.Match[str], urls: list[str]) -> str:
    name = match.group(1)
    first = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
    second = (match.group(4) if match.group(4) is not None else match.group(5)).strip()
    if name == "href":
        return _link_text(second, first, urls)
    if name in ("textcolor", "colorbox", "overset", "underset", "stackrel", "texorpdfstring"):
        return second
    if name == "binom":
        return f"C({first}, {second})"
    return f"{_group(first)}/{_group(second)}"


def _link_text(label: str, url: str, urls: list[str]) -> str:
    """``[t](u)`` and ``\\href{u}{t}`` -> ``t (u)``, or just ``u`` when the label is the URL itself."""
    label_tail, url_tail = _url_tail(label.strip(), urls), _url_tail(url, urls)
    if not label_tail or not url_tail or label_tail == url_tail:
        return url or label
    return f"{label.strip()} ({url})"


def _url_tail(text: str, urls: list[str]) -> str:
    """The URL (or label) without scheme, ``www.``, trailing slash and case, placeholders resolved."""
    if "\x00" in text:
        text = _PLACEHOLDER.sub(lambda match: urls[int(match.group(1))], text)
    text = text.split("://", 1)[-1].rstrip("/").lower()
    return text[4:] if text.startswith("www.") else text


def _group(part: str) -> str:
    return f"({part})" if any(char in part for char in " +-−±·×/") else part


_KEEP_CONTENT = _words(
    "emph textbf textit texttt textsc textrm textsf textsl textup textnormal textmd text mbox hbox "
    "fbox mathrm mathbf mathit mathsf mathtt mathnormal mathcal mathscr mathfrak operatorname "
    "boldsymbol bm pmb underline ul uline url ensuremath smash textsuperscript textsubscript "
    "mathbbm bbm mathds nolinkurl path texttt"
)


def _one_argument_command(match: re.Match[str]) -> str:
    name, argument = match.group(1), match.group(2)
    if name in _KEEP_CONTENT:
        return argument
    if name in _DROP_WITH_ARGUMENT:
        return ""
    if name in ("mathbb", "mathbbm", "bbm", "mathds"):
        stripped = argument.strip()
        return _BLACKBOARD.get(stripped, stripped)
    if name == "sqrt":
        return f"√{_group(argument.strip())}"
    if name in _COMBINING:
        stripped = argument.strip()
        if len(stripped) == 1:
            return unicodedata.normalize("NFC", stripped + _COMBINING[name])
        return stripped
    if name == "footnote":
        return f" ({argument.strip()})"
    if name in _SYMBOLS or name in _OPERATORS or name in _FUNCTION_NAMES or name in _DROPPED:
        # A symbol followed by a group, e.g. \alpha{x}: render the symbol, keep the group.
        return f"{_SYMBOLS.get(name) or _OPERATORS.get(name) or ('' if name in _DROPPED else name)}{argument}"
    # An author's own macro, e.g. \ours{} or \method{Foo}: its argument, else its name.
    return argument if argument.strip() else name


def _bare_command(match: re.Match[str]) -> str:
    before, name, after, next_char = match.group(1), match.group(2), match.group(3), match.group(4)
    if name in _OPERATORS:
        symbol = _OPERATORS[name]
        return f" {symbol} " if before and after else f"{before and ' '}{symbol}"
    if name in _SYMBOLS:
        return f"{before}{_SYMBOLS[name]}{after}"
    if name in _FUNCTION_NAMES:
        return f"{before}{name}{after or (' ' if next_char else '')}"
    if name in _DROPPED or name in _DROP_WITH_ARGUMENT:
        return " " if before or after else ""
    if name in ("sqrt",):
        return f"{before}√"
    if name in _COMBINING or name in ("mathcal", "mathbb", "mathrm", "mathbf", "text", "emph"):
        return before  # an accent or font command without braces: keep what follows as it is
    return f"{before}{name}{after}"


def _render_markdown(text: str, urls: list[str]) -> str:
    if "`" in text:
        text = _LATEX_QUOTES.sub(r"“\1”", text).replace("``", "“")
        text = _LATEX_SINGLE_QUOTES.sub(r"‘\1’", text)
        text = _MD_CODE.sub(r"\1", text)
    if "]" in text and "](" in text:
        text = _MD_LINK.sub(lambda m: _link_text(m.group(1), m.group(2), urls), text)
    if "__" in text:
        text = _render_underscore_bold(text)
    elif "*" in text:
        text = _MD_BOLD.sub(r"\2", text)
    if "*" in text:
        text = _MD_ITALIC_STAR.sub(r"\1", text)
        if "**" in text:
            text = text.replace("**", " ")  # an unpaired bold marker carries no meaning in prose
    if "_" in text:
        text = _MD_ITALIC_UNDERSCORE.sub(r"\1", text)
    return text


def _render_underscore_bold(text: str) -> str:
    """``_MD_BOLD.sub(r"\\2", text)``, in linear time when the text holds ``__``.

    A ``**`` span cannot hold ``*``, so the regex's search from one ends at the next ``*``; a ``__``
    span can hold ``_``, so from each ``__`` that opens nothing ("__a __a __a ...") the regex read up to
    `_MD_BOLD_LONGEST` characters. Here the regex runs only from an opening whose span can end: the
    first ``__`` after a non-space past it must come within the bound and before any ``*`` or newline,
    found by bisecting two lists made in one pass each. The result is the regex's, opening by opening.
    """
    closings = [match.start() for match in _UNDERSCORE_CLOSING.finditer(text)]
    barriers = [match.start() for match in _BOLD_BARRIER.finditer(text)]
    pieces: list[str] = []
    last = position = 0
    while opening := _BOLD_OPENING.search(text, position):
        start = opening.start()
        match = (
            _MD_BOLD.match(text, start)
            if text[start] == "*" or _can_close(start, closings, barriers)
            else None
        )
        if match is None:
            position = start + 1
            continue
        pieces += (text[last:start], match.group(2))
        last = position = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _can_close(start: int, closings: list[int], barriers: list[int]) -> bool:
    """Whether the ``__`` at ``start`` has a closing ``__`` within reach of `_MD_BOLD` (see above)."""
    first = start + 2  # the span's first character; it holds at least one
    index = bisect.bisect_left(closings, first + 1)
    if index == len(closings) or closings[index] - first > _MD_BOLD_LONGEST:
        return False
    barrier = bisect.bisect_left(barriers, first)
    return barrier == len(barriers) or barriers[barrier] >= closings[index]
