"""Text as it may reach a screen: without the characters that are invisible or reorder the rest.

Corpus text (titles, venues, authors, file names) may carry Unicode formatting characters that are
not shown themselves but change what is shown around them: the bidirectional controls (a right-to-
left override makes ``report\u202egnp.exe`` read as ``reportexe.png``), zero-width characters (two
names that look the same but differ), the invisible "tag" characters (hidden text some tools read),
and C0/C1 control characters. `visible` removes them; every table, chart label, sidebar option and
download name the app shows goes through it (through the loader for the paper table, through
`dashboard.charts` for chart labels, through `dashboard.ui.markup` for HTML and markdown).

The choice is to remove them, not to show them as symbols: a paper title never needs them to be
read (they are formatting, and right-to-left text shows correctly without overrides, from the
letters' own direction), and a removed override cannot reorder the text after it.

    >>> visible("T8 \u202egnp.exe")
    'T8 gnp.exe'
"""

from __future__ import annotations

import re

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
