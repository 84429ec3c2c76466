"""What opening and reading an index leaves resident in the server. Of its memory-mapped files: rows
taken from the paper table read only the columns asked for (`schema.rows_of`: at a million papers,
``papers.iloc[rows][columns]`` over a 20,000-row map sample made 2.6 GB of abstracts resident), and
the check of a sparse matrix's positions reads them from the file, not through the mapping (0.65 GB
of posting lists at a million); a mapping's residency is read in ``/proc/self/smaps``. Of the table's
own objects: rows without values share one empty list (235 MB of a million papers' lists)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp

from dashboard.index import format as index_format
from dashboard.schema import rows_of

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="a mapping's resident pages are Linux's /proc"
)

N_PAPERS, ABSTRACT_BYTES = 4_000, 10_000  # 40 MB of abstracts beside 100 KB of map columns


def resident_bytes(path: Path) -> int:
    """Bytes of ``path`` mapped into this process and resident (the Rss of its mappings)."""
    total, current = 0, ""
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as smaps:
        for line in smaps:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split(maxsplit=5)
                current = parts[5].strip() if len(parts) > 5 else ""
            elif line.startswith("Rss:") and current == str(path):
                total += int(line.split()[1]) * 1024
    return total


def test_rows_of_some_columns_leave_the_other_columns_unread(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    table = pa.table(
        {
            "x": rng.normal(size=N_PAPERS),
            "y": rng.normal(size=N_PAPERS),
            "topic": rng.integers(0, 20, N_PAPERS),
            "abstract": pa.array(
                [f"{i:05d}" * (ABSTRACT_BYTES // 5) for i in range(N_PAPERS)], pa.large_string()
            ),
        }
    )
    path = tmp_path / "papers.arrow"
    index_format.write_arrow(table, path)
    papers = index_format.arrow_to_table(index_format.read_arrow(path))
    before = resident_bytes(path)
    assert before < N_PAPERS * ABSTRACT_BYTES / 4  # mapped, not read: the test's premise

    rows = np.sort(rng.choice(N_PAPERS, size=1_000, replace=False))
    picked = rows_of(papers, rows, ("x", "y", "topic", "not a column"))

    assert list(picked.columns) == ["x", "y", "topic"]
    assert picked["x"].tolist() == table.column("x").to_numpy()[rows].tolist()
    grown = resident_bytes(path) - before
    assert grown < 2 << 20, (
        f"{grown / 1e6:.1f} MB of the file became resident for 1,000 rows of 3 small columns"
    )


def test_the_check_of_a_sparse_matrix_leaves_its_positions_unmapped(tmp_path: Path) -> None:
    rows, columns, per_row = 2_000, 50_000, 4_000  # 8M positions: 32 MB of indices.npy
    rng = np.random.default_rng(1)
    indices = rng.integers(0, columns, rows * per_row, dtype=np.int32)
    np.save(tmp_path / "indices.npy", indices)
    np.save(tmp_path / "indptr.npy", np.arange(0, rows * per_row + 1, per_row, dtype=np.int64))
    np.save(tmp_path / "data.npy", np.ones(rows * per_row, dtype=np.float32))

    matrix = index_format.load_csr(tmp_path, (rows, columns))

    assert resident_bytes(tmp_path / "indices.npy") < 1 << 20  # checked, every value, from the file
    assert matrix[7].indices.tolist() == indices[7 * per_row : 8 * per_row].tolist()
    # ... and a position past the last column is still found, and named
    indices[-1] = columns
    np.save(tmp_path / "indices.npy", indices)
    with pytest.raises(index_format.IndexFormatError, match=f"entry {rows * per_row - 1:,} is {columns:,}"):
        index_format.load_csr(tmp_path, (rows, columns))
    assert isinstance(matrix, sp.csr_matrix)


def test_rows_without_values_share_one_empty_list() -> None:
    values = [["ImageNet"], [], None, [], ["COCO", "ImageNet"], []]
    table = pa.table({"datasets": pa.array(values, pa.list_(pa.large_string()))})
    column = index_format.arrow_to_table(table)["datasets"].tolist()

    assert column == values
    empties = [cell for cell in column if cell == []]
    assert len(empties) == 3 and all(cell is empties[0] for cell in empties)  # one object, not three
    assert column[0][0] is column[4][1]  # a text value is one object too
