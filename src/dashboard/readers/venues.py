"""Venue and year from free text: a header line, a venue field, an OpenReview venue id, a file name."""

from __future__ import annotations

import functools
import re

# A small generic list: anything acronym-like (``CoRL``, ``MLSys``, ``KDD``) is recognised without it.
KNOWN_VENUES: dict[str, str] = {
    "neural information processing systems": "NeurIPS",
    "international conference on machine learning": "ICML",
    "international conference on learning representations": "ICLR",
    "computer vision and pattern recognition": "CVPR",
    "international conference on computer vision": "ICCV",
    "european conference on computer vision": "ECCV",
    "north american chapter of the association for computational linguistics": "NAACL",
    "annual meeting of the association for computational linguistics": "ACL",
    "knowledge discovery and data mining": "KDD",
    "conference on language modeling": "COLM",
    "association for the advancement of artificial intelligence": "AAAI",
    "international joint conference on artificial intelligence": "IJCAI",
    "empirical methods in natural language processing": "EMNLP",
    "transactions on machine learning research": "TMLR",
    "journal of machine learning research": "JMLR",
    "artificial intelligence and statistics": "AISTATS",
    "uncertainty in artificial intelligence": "UAI",
    "conference on robot learning": "CoRL",
    "conference on learning theory": "COLT",
    **{
        name.casefold(): name
        for name in (
            "NeurIPS",
            "ICML",
            "ICLR",
            "AAAI",
            "IJCAI",
            "CVPR",
            "ICCV",
            "ECCV",
            "WACV",
            "BMVC",
            "ACL",
            "EMNLP",
            "NAACL",
            "EACL",
            "COLING",
            "COLM",
            "KDD",
            "WWW",
            "SIGIR",
            "WSDM",
            "CIKM",
            "RecSys",
            "AISTATS",
            "UAI",
            "COLT",
            "ALT",
            "CoRL",
            "RSS",
            "ICRA",
            "IROS",
            "MICCAI",
            "MLSys",
            "TMLR",
            "JMLR",
            "TPAMI",
            "ICASSP",
            "Interspeech",
            "arXiv",
        )
    },
    "nips": "NeurIPS",
}
NOT_VENUES = frozenset(
    {
        "PAPERS",
        "PAPER",
        "LIST",
        "ACCEPTED",
        "ABSTRACTS",
        "ABSTRACT",
        "THE",
        "AND",
        "OF",
        "IN",
        "ON",
        "FOR",
        "TRACK",
        "MAIN",
        "ORAL",
        "ORALS",
        "POSTER",
        "POSTERS",
        "ALL",
        "NEW",
        "PDF",
        "URL",
        "ID",
        "AI",
        "ML",
        "TXT",
        "CSV",
        "JSON",
        "II",
        "III",
        "IV",
        "TODO",
        "README",
        "NOTE",
    }
)
_YEAR = re.compile(r"(?<![0-9])(?:19|20)[0-9]{2}(?![0-9])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&]*")


@functools.lru_cache(maxsize=4096)
def venue_and_year(text: str, loose: bool = True) -> tuple[str, int | None]:
    """Venue and year named in a header or venue string, in any language.

    >>> venue_and_year("ICML 2026 论文列表")
    ('ICML', 2026)
    >>> venue_and_year("ICLR.cc/2026/Conference")
    ('ICLR', 2026)

    `loose` also accepts an unknown acronym-like token (``CoRL``, ``XYZConf``) as the venue.
    """
    years = {int(y) for y in _YEAR.findall(text)}
    year = years.pop() if len(years) == 1 else None
    folded = " " + " ".join(re.split(r"[^0-9a-z]+", text.casefold())) + " "
    for name, canonical in _KNOWN_BY_LENGTH:
        if f" {name} " in folded:
            return canonical, year
    for token in _WORD.findall(text):
        base = token.rstrip("0123456789")
        known = KNOWN_VENUES.get(base.casefold())
        if known:
            return known, year
    if loose:
        for token in _WORD.findall(text):
            base = token.rstrip("0123456789")
            if _acronym_like(base):
                return base, year
    return "", year


_KNOWN_BY_LENGTH = sorted(
    ((" ".join(re.split(r"[^0-9a-z]+", name)), canonical) for name, canonical in KNOWN_VENUES.items()),
    key=lambda item: -len(item[0]),
)


def _acronym_like(token: str) -> bool:
    upper = sum(ch.isupper() for ch in token)
    return (
        2 <= len(token) <= 10
        and token[0].isupper()
        and upper >= 2
        and upper * 2 >= len(token)
        and token.upper() not in NOT_VENUES
    )


_BIBTEX_VENUE = re.compile(r"\b(?:booktitle|journal)\s*=\s*[{\"]+([^{}\"]{1,300})", re.I)
_BIBTEX_YEAR = re.compile(r"\byear\s*=\s*[{\"]?\s*((?:19|20)[0-9]{2})\b", re.I)
# Hosts whose URLs never name the paper's venue (an arXiv id such as 2005.14165 would read as a year)
_NO_VENUE_HOSTS = re.compile(r"^(?:https?://)?(?:www\.)?(?:arxiv\.org|doi\.org|dx\.doi\.org|github\.com|"
                             r"openreview\.net|semanticscholar\.org|api\.semanticscholar\.org|"
                             r"scholar\.google\.com|paperswithcode\.com)\b", re.I)  # fmt: skip


def venue_and_year_of_bibtex(bibtex: str) -> tuple[str, int | None]:
    """Venue (from ``booktitle``/``journal``) and ``year`` of a BibTeX entry given as text.

    >>> venue_and_year_of_bibtex("@inproceedings{k, booktitle = {Proceedings of the 36th International "
    ...                          "Conference on Machine Learning}, year = {2019}}")
    ('ICML', 2019)
    """
    venue_match = _BIBTEX_VENUE.search(bibtex)
    year_match = _BIBTEX_YEAR.search(bibtex)
    venue = venue_and_year(venue_match.group(1), loose=False)[0] if venue_match else ""
    return venue, int(year_match.group(1)) if year_match else None


def venue_and_year_of_url(url: str) -> tuple[str, int | None]:
    """Venue and year a paper page's URL names (``icml.cc/virtual/2019/...``, ``content_ICCV_2019``).

    >>> venue_and_year_of_url("https://openaccess.thecvf.com/content_ICCV_2019/html/X_ICCV_2019_paper.html")
    ('ICCV', 2019)
    >>> venue_and_year_of_url("https://arxiv.org/abs/2005.14165")
    ('', None)
    """
    if not url or _NO_VENUE_HOSTS.match(url):
        return "", None
    venue, year = venue_and_year(url.replace("_", " "), loose=False)
    return (venue, year) if venue else ("", None)


def venue_and_year_of_name(stem: str) -> tuple[str, int | None]:
    """Venue and year a file name says (``iclr2025``, ``ICML_2024_papers``, ``nips2024``); known venues only.

    >>> venue_and_year_of_name("ICML_2024_papers"), venue_and_year_of_name("nips2024")
    (('ICML', 2024), ('NeurIPS', 2024))
    """
    spaced = re.sub(r"(?<=[A-Za-z])(?=(?:19|20)[0-9]{2}(?![0-9]))", " ", stem.replace("_", " "))
    return venue_and_year(spaced, loose=False)
