"""Text as it may reach a screen: without the characters that are invisible or reorder the rest.

Corpus text (titles, venues, authors, file names) may carry Unicode formatting characters that are
not shown themselves but change what is shown around them: the bidirectional controls (a right-to-
left override makes ``report\u202egnp.exe`` read as ``reportexe.png``), zero-width characters (two
names that look the same but differ), the invisible "tag" characters (hidden text some tools read),
and C0/C1 control characters. `visible` removes them; every table, chart label, sidebar option and
download name the app shows goes through it (through the loader for the paper table, through
`dashboard.figures.charts` for chart labels, through `dashboard.ui.markup` for HTML and markdown).

The choice is to remove them, not to show them as symbols: a paper title never needs them to be
read (they are formatting, and right-to-left text shows correctly without overrides, from the
letters' own direction), and a removed override cannot reorder the text after it.

    >>> visible("T8 \u202egnp.exe")
    'T8 gnp.exe'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial

import pandas as pd

# Bidi controls: ALM, LRM/RLM, the embeddings and overrides LRE RLE PDF LRO RLO, the isolates LRI RLI
# FSI PDI. Invisible format characters: soft hyphen, Mongolian vowel separator, zero-width space,
# ZWNJ/ZWJ, word joiner and invisible operators, the deprecated format characters U+206A-U+206F,
# the byte-order mark, interlinear annotation marks, and the tag characters U+E0000-U+E007F.
# C0/C1 controls except tab and newline; line and paragraph separators.
INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# Separators that end a line or paragraph: a space where they stood, so the words stay apart.
_AS_SPACE = re.compile("[\x0b\x0c\x1c-\x1f\x85\u2028\u2029]")


def visible(text: object) -> str:
    """``text`` as a string without invisible formatting and control characters (tab, newline kept).

    Line and paragraph separators become spaces; everything else in `INVISIBLE` goes.

    >>> visible("a\u200bb\u2028c\u2066d\u2069")
    'ab cd'
    """
    value = str(text)
    if not INVISIBLE.search(value):
        return value
    return INVISIBLE.sub("", _AS_SPACE.sub(" ", value))


def has_invisible(text: object) -> bool:
    """Whether `visible` would change ``text``."""
    return INVISIBLE.search(str(text)) is not None


def visible_frame(frame: pd.DataFrame, *, strip: bool = False) -> pd.DataFrame:
    """``frame`` with `visible` applied to every text cell and every string in a list cell.

    ``strip``: also strip the whitespace the removal left at either end of a cleaned value (the readers
    strip fields before this runs, and ``"\u00ad abc"`` would become ``" abc"``).

    Only the cells holding an invisible character are rebuilt (one vectorised search per column
    finds them), and ``frame`` itself is returned when there are none; dicts (the ``links`` column)
    are left as they are: their URLs are never shown as links unless plain (`ui.markup.safe_url`).
    """
    changed: dict[str, pd.Series] = {}
    for name in frame.columns:
        column = frame[name]
        if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)):
            continue
        if pd.api.types.is_object_dtype(column):  # lists of names, or str: one search over them all
            if not INVISIBLE.search("\n".join(_strings_in(column))):
                continue
            flagged = column.map(_holds_invisible, na_action="ignore").fillna(False).astype(bool)
        else:  # Arrow strings: searched in Arrow
            flagged = column.str.contains(INVISIBLE.pattern, regex=True, na=False).astype(bool)
        if not flagged.any():
            continue
        fixed = column.copy()
        fixed[flagged] = column[flagged].map(partial(_visible_value, strip=strip))
        changed[str(name)] = fixed
    return frame.assign(**changed) if changed else frame


def _strings_in(column: pd.Series) -> Iterator[str]:
    for value in column:
        if isinstance(value, str):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, str))


def _holds_invisible(value: object) -> bool:
    if isinstance(value, str):
        return INVISIBLE.search(value) is not None
    if isinstance(value, (list, tuple)):
        return any(isinstance(item, str) and INVISIBLE.search(item) is not None for item in value)
    return False


def _visible_value(value: object, strip: bool = False) -> object:
    if isinstance(value, str):
        return visible(value).strip() if strip else visible(value)
    if isinstance(value, (list, tuple)):
        # A name that was nothing but invisible characters ("\u00ad") is no name: dropped, as a reader
        # drops an empty one, so the table reads the same after an export and a load.
        cleaned = (_visible_value(item, strip) if isinstance(item, str) else item for item in value)
        return type(value)(item for item in cleaned if item != "")
    return value
