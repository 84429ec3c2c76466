"""Sources are named for people: by the venue and year their papers share, never by a hash or a path."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.readers.source_names import source_names


def frame(rows: list[tuple[str, str, object]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["source", "venue", "year"])


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        # The seeds: three hash-named files of one venue and year.
        (
            [("000_f074a6e2e82fdcc8.txt", "ICML", 2026), ("001_0a4efe27d1109a12.txt", "ICML", 2026),
             ("003_fb8fd97882dc0bc7.txt", "ICML", 2026)],
            {"000_f074a6e2e82fdcc8.txt": "ICML 2026 · part 1 of 3",
             "001_0a4efe27d1109a12.txt": "ICML 2026 · part 2 of 3",
             "003_fb8fd97882dc0bc7.txt": "ICML 2026 · part 3 of 3"},
        ),
        # Files of different venues or years are named by them alone.
        ([("a.json", "ICLR", 2024), ("b.json", "NeurIPS", 2024)],
         {"a.json": "ICLR 2024", "b.json": "NeurIPS 2024"}),
        # No venue or year: the file name without folders or suffixes; a bare hash is "file".
        ([("/srv/data/papers.jsonl.gz", "", None)], {"/srv/data/papers.jsonl.gz": "papers"}),
        ([("0a4efe27d1109a12.txt", "", None), ("iclr_notes.csv", "", None)],
         {"0a4efe27d1109a12.txt": "file", "iclr_notes.csv": "iclr_notes"}),
        # A file whose papers span several years is named by its venue only.
        ([("all.csv", "ICML", 2021), ("all.csv", "ICML", 2023)], {"all.csv": "ICML"}),
        ([], {}),
    ],
)  # fmt: skip
def test_source_names(rows: list[tuple[str, str, object]], expected: dict[str, str]) -> None:
    assert source_names(frame(rows)) == expected


def test_no_name_holds_a_folder() -> None:
    names = source_names(frame([("/home/user/corpora/x/../secret/icml.txt", "", None)]))
    assert all("/" not in name for name in names.values())
