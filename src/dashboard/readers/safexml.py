"""The one hardened XML parser setup, shared by every reader that parses XML (Excel parts, ACL Anthology).

Expat, with what lets XML attack a reader switched off: any document type declaration is refused (a
DTD is how entity expansion, "billion laughs", and external entities get in, and no format we read
needs one), entity declarations and external entity references are refused should one slip past, and
nesting deeper than `MAX_XML_DEPTH` is refused. Callers pass their own handlers and say, through
`refuse`, which exception a refusal becomes; `feed` turns expat's own errors into the same exception.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any
from xml.parsers import expat

MAX_XML_DEPTH = 64

StartHandler = Callable[[str, dict[str, str]], None]
EndHandler = Callable[[str], None]
TextHandler = Callable[[str], None]


def hardened_parser(
    start: StartHandler,
    end: EndHandler,
    text: TextHandler | None = None,
    *,
    refuse: Callable[[str], Exception],
    doctype_note: str = "",
) -> expat.XMLParserType:
    """An expat parser (namespaces as ``uri}local``) calling `start`, `end` and `text`, that raises
    ``refuse(reason)`` at a document type declaration, an entity, or nesting past `MAX_XML_DEPTH`.

    >>> parser = hardened_parser(lambda t, a: None, lambda t: None, refuse=ValueError)  # doctest: +SKIP
    >>> parser.Parse(b"<!DOCTYPE x [<!ENTITY a 'a'>]><x/>", True)  # doctest: +SKIP
    ValueError: declares a document type (<!DOCTYPE>): refused (entity expansion and ...)
    """
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    depth = 0

    def refuse_dtd(*_: Any) -> None:
        raise refuse(
            f"declares a document type (<!DOCTYPE>){doctype_note}: refused "
            "(entity expansion and external entities come this way)"
        )

    def on_start(tag: str, attributes: dict[str, str]) -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_XML_DEPTH:
            raise refuse(f"nests XML more than {MAX_XML_DEPTH} levels deep: refused")
        start(tag, attributes)

    def on_end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        end(tag)

    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    parser.ExternalEntityRefHandler = refuse_dtd  # type: ignore[assignment]
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = on_start
    parser.EndElementHandler = on_end
    if text is not None:
        parser.CharacterDataHandler = text
    return parser


def feed(
    parser: expat.XMLParserType, chunks: Iterable[bytes | bytearray], refuse: Callable[[str], Exception]
) -> Iterator[None]:
    """Feed `chunks` to `parser`, one step per chunk (so a caller can hand on what each chunk
    finished); a document that is not well-formed raises ``refuse("is not well-formed XML (...)")``."""
    try:
        for chunk in chunks:
            parser.Parse(chunk, False)
            yield None
        parser.Parse(b"", True)
    except expat.ExpatError as error:
        raise refuse(f"is not well-formed XML ({error})") from None
    yield None
