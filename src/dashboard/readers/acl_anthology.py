"""ACL Anthology XML: the ``<collection>``/``<volume>``/``<paper>`` files of ``acl-org/acl-anthology``.

Each file of the Anthology's ``data/xml`` (``2023.acl.xml``, ``P19.xml``) holds one collection of
volumes; a volume's ``<meta>`` gives its booktitle, venue(s) and year, and each ``<paper>`` becomes a
record::

    <collection id="2023.acl">
      <volume id="long">
        <meta><booktitle>Proceedings of ...</booktitle><year>2023</year><venue>acl</venue></meta>
        <paper id="1">
          <title><fixed-case>BERT</fixed-case> ...</title>
          <author><first>Ann</first><last>One</last><affiliation>Uni A</affiliation></author>
          <pages>1-12</pages>
          <abstract>We study ... <tex-math>x^2</tex-math> ...</abstract>
          <url hash="...">2023.acl-long.1</url>
          <doi>10.18653/v1/2023.acl-long.1</doi>
          <pwccode url="https://github.com/a/b">a/b</pwccode>
        </paper>

The id is the Anthology id (``2023.acl-long.1``, from ``<url>``, else built from the collection, volume
and paper ids as the Anthology builds it), the page ``https://aclanthology.org/<id>`` and the PDF
``https://aclanthology.org/<id>.pdf``. Markup in titles and abstracts (``<fixed-case>``, ``<i>``,
``<b>``, ``<url>``) is kept as its text; ``<tex-math>`` becomes ``$...$`` so the abstract's LaTeX is
rendered like any other. Venue: the volume's first ``<venue>`` other than the ``ws`` umbrella, else the
venue letter of an old id (``P19`` is ACL), else the booktitle; year: the paper's, else the volume's,
else the collection id's (the file name is the table's own fallback). Front matter is not a paper.

Parsed with the shared hardened expat setup (`dashboard.readers.safexml`): a document type
declaration (entity expansion, external entities) is refused, so is nesting past its depth limit; XML
that is not well-formed keeps the papers before the error and names its line.
"""

from __future__ import annotations

import re
from typing import Any

from dashboard.readers import safexml
from dashboard.readers.bounded import _UNICODE_BOMS, Content, _refuse_binary
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed

ANTHOLOGY_URL = "https://aclanthology.org/"
CHUNK = 1 << 16
# Anthology venue ids whose name is not the id upper-cased (the rest are acronyms: acl -> ACL).
VENUE_NAMES = {
    "findings": "Findings",
    "semeval": "SemEval",
    "conll": "CoNLL",
    "bionlp": "BioNLP",
    "starsem": "*SEM",
    "sigdial": "SIGDIAL",
    "repl4nlp": "RepL4NLP",
}
# The first letter of an old collection id (``P19``) is its venue.
OLD_VENUE_LETTERS = {
    "P": "ACL",
    "D": "EMNLP",
    "N": "NAACL",
    "E": "EACL",
    "C": "COLING",
    "L": "LREC",
    "Q": "TACL",
    "J": "CL",
    "K": "CoNLL",
    "S": "SemEval",
    "I": "IJCNLP",
}
_OLD_ID = re.compile(r"([A-Z])(\d\d)")
_NEW_ID = re.compile(r"(\d{4})\.[\w-]+")
_YEAR = re.compile(r"\d{4}")
# Elements whose text is a field: of a volume's <meta>, of a <paper>, of a paper's <author>.
_META_FIELDS = frozenset({"booktitle", "year", "venue", "publisher", "address", "month"})
_PAPER_FIELDS = frozenset({"title", "abstract", "url", "doi", "pages", "year", "month", "bibkey"})
_AUTHOR_FIELDS = frozenset({"first", "last", "affiliation"})


def read_acl_anthology(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for ACL Anthology XML: one record per ``<paper>``, in file order."""
    data = content.data
    if not data.startswith(_UNICODE_BOMS):  # UTF-16 XML has NUL bytes; a PDF named .xml has a magic
        _refuse_binary(data)
    reader = _Collection(log)
    chunks = (data[at : at + CHUNK] for at in range(0, len(data), CHUNK))
    try:
        for _ in safexml.feed(reader.parser, chunks, reader.malformed):
            pass
    except _Malformed as error:
        if reader.root is None:
            raise FileRefused(f"the file {error.reason}: not an ACL Anthology file") from None
        log.skip(f"line {error.line}", f"the file {error.reason}: the papers before it are kept, none after")
    if reader.root is None:
        raise FileRefused("no XML element found: not an ACL Anthology file")
    return Parsed(reader.records)


class _Malformed(FileRefused):
    """Expat's own error: XML that is not well-formed, at a line."""

    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


class _Collection:
    """Expat handlers that build a record per ``<paper>`` as the file streams past."""

    def __init__(self, log: FileLog) -> None:
        self.log = log
        self.parser = safexml.hardened_parser(
            self.start, self.end, self.text, refuse=self.refuse, doctype_note=", which no Anthology file has"
        )
        self.records: list[Record] = []
        self.root: str | None = None
        self.collection_id = ""
        self.volume_id = ""
        self.meta: dict[str, Any] = {}
        self.paper: dict[str, Any] | None = None
        self.paper_line = 0
        self.author: dict[str, str] | None = None
        self.stack: list[str] = []
        self.field: str | None = None  # the element whose text is being gathered
        self.field_depth = 0
        self.parts: list[str] = []

    # ------------------------------------------------------------------ expat handlers

    def refuse(self, reason: str) -> FileRefused:
        """A refusal of the hardened parser (a DTD, deep nesting), with the line it came at."""
        return FileRefused(f"the file {reason} (line {self.parser.CurrentLineNumber})")

    def malformed(self, reason: str) -> _Malformed:
        """Expat's error, with the line it names."""
        return _Malformed(reason, self.parser.ErrorLineNumber)

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        """An element opens: a volume, a paper, an author, a field, or markup inside a field."""
        parent = self.stack[-1] if self.stack else None
        self.stack.append(tag)
        if self.field is not None:
            if tag == "tex-math":
                self.parts.append("$")
            return
        if parent is None:
            self._root(tag, attributes)
        elif tag == "volume" and parent == "collection":
            self.volume_id, self.meta = attributes.get("id", ""), {"venues": []}
        elif tag == "paper" and parent == "volume":
            self.paper = {"paper_id": attributes.get("id", ""), "authors": [], "affiliations": []}
            self.paper_line = self.parser.CurrentLineNumber
        elif self.paper is not None and tag == "author" and parent == "paper":
            self.author = {}
        elif self.paper is not None and tag == "pwccode" and parent == "paper":
            self.paper.setdefault("code", attributes.get("url", ""))
        elif (
            (parent == "meta" and tag in _META_FIELDS and self.paper is None)
            or (parent == "paper" and tag in _PAPER_FIELDS and self.paper is not None)
            or (parent == "author" and tag in _AUTHOR_FIELDS and self.author is not None)
        ):
            self.field, self.field_depth, self.parts = tag, len(self.stack), []

    def end(self, tag: str) -> None:
        """An element closes: a field's text is kept, a paper becomes a record."""
        depth = len(self.stack)
        self.stack.pop()
        if self.field is not None:
            if tag == "tex-math":
                self.parts.append("$")
            if depth == self.field_depth:
                self._keep(tag, "".join(self.parts))
                self.field = None
            return
        if tag == "author" and self.author is not None and self.paper is not None:
            name = " ".join(part for part in (self.author.get("first"), self.author.get("last")) if part)
            if name:
                self.paper["authors"].append(name)
            affiliation = self.author.get("affiliation")
            if affiliation and affiliation not in self.paper["affiliations"]:
                self.paper["affiliations"].append(affiliation)
            self.author = None
        elif tag == "paper" and self.paper is not None:
            self._add_paper(self.paper)
            self.paper = None

    def text(self, data: str) -> None:
        """Character data: gathered while inside a field."""
        if self.field is not None:
            self.parts.append(data)

    # ------------------------------------------------------------------ the record

    def _root(self, tag: str, attributes: dict[str, str]) -> None:
        self.root = tag
        if tag == "collection":
            self.collection_id = attributes.get("id", "")
        elif tag == "volume":  # the Anthology's older files: a volume alone
            self.volume_id, self.meta = attributes.get("id", ""), {"venues": []}
        else:
            raise FileRefused(
                f"not an ACL Anthology file: its root element is <{tag[:40]}>, not <collection> or <volume> "
                "(the files of acl-org/acl-anthology data/xml)"
            )

    def _keep(self, tag: str, text: str) -> None:
        text = text.strip() if tag == "abstract" else " ".join(text.split())
        if self.author is not None and self.paper is not None:
            self.author[tag] = text
        elif self.paper is not None:
            self.paper[tag] = text
        elif tag == "venue":
            self.meta["venues"].append(text)
        else:
            self.meta[tag] = text

    def _add_paper(self, paper: dict[str, Any]) -> None:
        anthology_id = self._anthology_id(paper)
        record: dict[str, Any] = {
            "id": anthology_id,
            "title": paper.get("title", ""),
            "abstract": paper.get("abstract", ""),
            "authors": paper["authors"],
            "affiliations": paper["affiliations"],
            "venue": self._venue(),
            "year": self._year(paper),
            "doi": paper.get("doi", ""),
            "pages": paper.get("pages", ""),
            "booktitle": self.meta.get("booktitle", ""),
        }
        url = paper.get("url", "")
        if url.startswith(("https://", "http://")):
            record["url"] = url
        elif anthology_id:
            record["url"] = ANTHOLOGY_URL + anthology_id
            record["pdf_url"] = ANTHOLOGY_URL + anthology_id + ".pdf"
        elif record["doi"]:
            record["url"] = "https://doi.org/" + record["doi"]
        if paper.get("code"):
            record["code_url"] = paper["code"]
        place = (
            f"paper {anthology_id} (line {self.paper_line})" if anthology_id else f"line {self.paper_line}"
        )
        self.records.append(Record(place, len(self.records) + 1, record))

    def _anthology_id(self, paper: dict[str, Any]) -> str:
        """The paper's Anthology id: its ``<url>`` when that is one, else built as the Anthology does."""
        url = paper.get("url", "")
        if url and not url.startswith(("https://", "http://")):
            return url
        collection, volume, number = self.collection_id, self.volume_id, paper["paper_id"]
        if not (collection and volume and number.isdigit()):
            return ""
        if "." in collection:  # 2023.acl, volume long, paper 1 -> 2023.acl-long.1
            return f"{collection}-{volume}.{number}"
        if collection.startswith("W") and volume.isdigit():  # W19, volume 12, paper 3 -> W19-1203
            return f"{collection}-{int(volume):02d}{int(number):02d}"
        return f"{collection}-{volume}{int(number):03d}"  # P19, volume 1, paper 1 -> P19-1001

    def _venue(self) -> str:
        venues = [venue for venue in self.meta.get("venues", []) if venue and venue.lower() != "ws"]
        if venues:
            venue = venues[0]
            return VENUE_NAMES.get(venue.lower(), venue.upper())
        old = _OLD_ID.fullmatch(self.collection_id)
        if old and old.group(1) in OLD_VENUE_LETTERS:
            return OLD_VENUE_LETTERS[old.group(1)]
        return str(self.meta.get("booktitle", ""))

    def _year(self, paper: dict[str, Any]) -> str:
        for text in (paper.get("year", ""), self.meta.get("year", "")):
            if _YEAR.fullmatch(text):
                return text
        new = _NEW_ID.fullmatch(self.collection_id)
        if new:
            return new.group(1)
        old = _OLD_ID.fullmatch(self.collection_id)
        if old:
            two = int(old.group(2))
            return str(2000 + two if two < 50 else 1900 + two)
        return ""
