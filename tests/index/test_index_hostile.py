"""A damaged or hostile index is refused with an IndexFormatError naming the file, never a crash.

Issue 56, item 2: values overwritten in ``tfidf/indices.npy`` at the same size ended the server with
SIGSEGV when a paper was opened, a bad ``indptr`` with SIGBUS; a deeply nested manifest raised a raw
RecursionError, a negative shape a raw ValueError, and ``../../etc/passwd`` as a manifest path
disclosed that file's size. The cases that crashed the process run in a child process, so that this
one survives to say what happened.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from dashboard import index as index

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"

# Opens the index and does what the pages do with its arrays: similar papers, the similarity matrix,
# searches, the Terms page's counts. Exit 3 with the message on IndexFormatError, 0 when all went well.
_EXERCISE = """
import sys
import numpy as np
from dashboard import index
try:
    opened = index.open_index(sys.argv[1])
    ids = opened.papers["id"].tolist()
    for paper_id in ids:
        opened.analysis.most_similar(paper_id)
    opened.analysis.similarity_matrix(ids[:5])
    for q in ("graph", "model", "learning", "a", "diffusion -language"):
        opened.search(q)
    for n in (1, 2, 3):
        opened.term_counts(n).term_frequencies(np.ones(len(ids), dtype=bool))
    index.read_meanings(opened)
except index.IndexFormatError as error:
    print(error)
    sys.exit(3)
print("opened and used")
"""


@pytest.fixture(scope="module")
def seeds_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    return out


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.index"
    shutil.copytree(source, target)
    return target


def _overwrite(copy: Path, name: str, values: Callable[[np.ndarray], None]) -> None:
    """Change values of the array ``name`` in place: same dtype, same size, same manifest."""
    array = np.load(copy / name, mmap_mode="r+")
    values(array)
    array.flush()
    del array


def _exercise(copy: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _EXERCISE, str(copy)], capture_output=True, text=True, timeout=300
    )


def _manifest(copy: Path) -> dict:
    return json.loads((copy / "manifest.json").read_text(encoding="utf-8"))


def _write_manifest(copy: Path, manifest: dict) -> None:
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_an_undamaged_index_survives_the_exercise(seeds_index):
    done = _exercise(seeds_index)
    assert done.returncode == 0, done.stdout + done.stderr


def _set(values: list[int]) -> Callable[[np.ndarray], None]:
    def change(array: np.ndarray) -> None:
        array[: len(values)] = values

    return change


def _spread(value: int) -> Callable[[np.ndarray], None]:
    def change(array: np.ndarray) -> None:
        array[::7] = value

    return change


def _reverse(array: np.ndarray) -> None:
    array[:] = array[::-1].copy()


def _shift_end(array: np.ndarray) -> None:
    array[-1] += 1_000_000


@pytest.mark.parametrize(
    ("name", "change"),
    [
        # (a) indices out of range: past the last column, and negative
        ("tfidf/indices.npy", _spread(2**30)),
        ("tfidf/indices.npy", _spread(-(2**30))),
        ("terms/1/indices.npy", _spread(2**30)),
        ("search/indices.npy", _spread(10**6)),
        ("search/indices.npy", _spread(-1)),
        # (b) indptr: not monotone, past the end of indices, not starting at 0
        ("tfidf/indptr.npy", _set([0, 10**9, 5])),
        ("tfidf/indptr.npy", _reverse),
        ("tfidf/indptr.npy", _shift_end),
        ("terms/2/indptr.npy", _set([0, 2**30, 5])),
        ("search/indptr.npy", _set([0, 10**9, 5])),
        ("search/indptr.npy", _set([7])),
        # an index listed by rows: a row past the last paper
        ("search/odd_rows.npy", _set([10**6])),
    ],
)
def test_damaged_sparse_arrays_are_named_not_a_crash(seeds_index, tmp_path, name, change):
    copy = _copy(seeds_index, tmp_path)
    if name == "search/odd_rows.npy" and np.load(copy / name).size == 0:
        np.save(copy / name, np.array([10**6], dtype=np.int64))  # the seeds have no such row
        manifest = _manifest(copy)
        manifest["files"][name]["bytes"] = (copy / name).stat().st_size
        _write_manifest(copy, manifest)
    else:
        _overwrite(copy, name, change)
    done = _exercise(copy)
    # Before the fix: -11 (SIGSEGV) or -7 (SIGBUS), the whole server gone.
    assert done.returncode == 3, f"exit {done.returncode}: {done.stdout[-500:]}{done.stderr[-2000:]}"
    assert name in done.stdout and "rebuild" in done.stdout


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("papers.arrow", "title"),
        ("papers.arrow", "abstract"),
        ("papers.arrow", "authors"),
        ("papers.arrow", "links"),
        ("search/words.arrow", "word"),
        ("terms/1/terms.arrow", "term"),
        ("method_meanings.arrow", "method_meanings"),
    ],
)
@pytest.mark.parametrize("value", [b"\xff" * 8, b"\x00\x00\x00\x40\x00\x00\x00\x00"])
def test_damaged_offsets_in_arrow_files_are_named_not_a_crash(seeds_index, tmp_path, name, column, value):
    """Arrow trusts the offsets of a file it maps: text or list offsets overwritten in papers.arrow
    (same size, same manifest) ended the process with SIGSEGV."""
    import pyarrow as pa

    copy = _copy(seeds_index, tmp_path)
    whole = pa.memory_map(str(seeds_index / name)).read_buffer()
    offsets = pa.ipc.open_file(whole).read_all().column(column).chunk(0).buffers()[1]
    at = offsets.address - whole.address + 16  # from the third value: not the first, not the last
    data = bytearray(whole.to_pybytes())
    data[at : at + len(value)] = value
    (copy / name).write_bytes(bytes(data))
    done = _exercise(copy)
    assert done.returncode == 3, f"exit {done.returncode}: {done.stdout[-500:]}{done.stderr[-2000:]}"
    assert name in done.stdout and "rebuild" in done.stdout


def _first_text_byte(array, row: int) -> int:
    """The address of the first byte of ``row``'s text in ``array`` (text, a list of texts or of structs)."""
    import pyarrow as pa

    if pa.types.is_struct(array.type):
        return _first_text_byte(array.field(0), row)
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        return _first_text_byte(array.values, array.offsets[row].as_py())
    wide = pa.types.is_large_string(array.type)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)
    return array.buffers()[2].address + int(offsets[array.offset + row])


def _not_utf8(seeds_index: Path, tmp_path: Path, name: str, column: str) -> tuple[Path, int]:
    """A copy of the index whose ``column`` of ``name`` holds a byte that is not UTF-8 (0xFF) at the
    start of a text, same size, same manifest; and that text's row."""
    import pyarrow as pa

    copy = _copy(seeds_index, tmp_path)
    whole = pa.memory_map(str(seeds_index / name)).read_buffer()
    chunk = pa.ipc.open_file(whole).read_all().column(column).chunk(0)
    row = next(r for r in range(3, len(chunk)) if chunk[r].as_py())  # a row with text, not the first
    at = _first_text_byte(chunk, row) - whole.address
    data = bytearray(whole.to_pybytes())
    data[at] = 0xFF
    (copy / name).write_bytes(bytes(data))
    return copy, row


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("papers.arrow", "title"),
        ("papers.arrow", "abstract"),
        ("papers.arrow", "id"),
        ("papers.arrow", "method_names"),
        ("papers.arrow", "links"),
        ("search/words.arrow", "word"),
    ],
)
def test_text_that_is_not_utf8_in_an_arrow_file_is_named_at_open(seeds_index, tmp_path, name, column):
    """A byte that is not UTF-8 in a text of papers.arrow opened as if sound, then raised a raw Arrow
    error (ArrowInvalid, UnicodeDecodeError) on whichever page first read that text."""
    copy, row = _not_utf8(seeds_index, tmp_path, name, column)
    with pytest.raises(index.IndexFormatError) as raised:
        index.open_index(copy)
    message = str(raised.value)
    assert name in message and "rebuild" in message
    assert f"column {column!r}, row {row:,}: text that is not UTF-8" in message


def test_a_deeply_nested_manifest_is_named(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    depth = 100_000
    (copy / "manifest.json").write_text('{"a": ' * depth + "1" + "}" * depth, encoding="utf-8")
    with pytest.raises(index.IndexFormatError, match=r"manifest\.json") as raised:
        index.open_index(copy)
    assert "rebuild" in str(raised.value)
    assert not index.is_index(copy)  # asked first by the app: no RecursionError there either
    (copy / "manifest.json").write_text("[" * depth + "]" * depth, encoding="utf-8")
    with pytest.raises(index.IndexFormatError, match=r"manifest\.json"):
        index.read_manifest(copy)


@pytest.mark.parametrize(
    "shape",
    [[-5, 10], [57, -1], [10**12, 10], [57], "57x10", [57.5, 10], [True, 10], None],
)
def test_a_bad_shape_in_the_manifest_is_named(seeds_index, tmp_path, shape):
    copy = _copy(seeds_index, tmp_path)
    manifest = _manifest(copy)
    manifest["arrays"]["tfidf"]["shape"] = shape
    _write_manifest(copy, manifest)
    with pytest.raises(index.IndexFormatError, match=r"manifest\.json|tfidf") as raised:
        index.open_index(copy)
    assert "rebuild" in str(raised.value)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda m: m.__setitem__("files", ["papers.arrow"]),
        lambda m: m["files"].__setitem__("papers.arrow", {"bytes": -1, "sha256": "0"}),
        lambda m: m["files"].__setitem__("papers.arrow", {"bytes": "many"}),
        lambda m: m.__setitem__("arrays", None),
        lambda m: m.__setitem__("papers", "all"),
        lambda m: m.__setitem__("topics", -3),
        lambda m: m.__delitem__("arrays"),
        lambda m: m["files"].pop("tfidf/indices.npy"),  # a file the opener reads must be listed
    ],
)
def test_a_malformed_manifest_is_named(seeds_index, tmp_path, mutate):
    copy = _copy(seeds_index, tmp_path)
    manifest = _manifest(copy)
    mutate(manifest)
    _write_manifest(copy, manifest)
    with pytest.raises(index.IndexFormatError, match=r"manifest\.json"):
        index.open_index(copy)


@pytest.mark.parametrize(
    "escape", ["../secret.txt", "../../../../../../etc/passwd", "ABSOLUTE", "tfidf/../../secret.txt"]
)
def test_manifest_paths_outside_the_index_are_refused_unread(seeds_index, tmp_path, escape):
    copy = _copy(seeds_index, tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("s" * 12_345, encoding="utf-8")
    name = str(secret) if escape == "ABSOLUTE" else escape
    manifest = _manifest(copy)
    manifest["files"][name] = {"bytes": 1, "sha256": "0" * 64}
    _write_manifest(copy, manifest)
    before = secret.stat().st_atime_ns
    for verify in (False, True):
        with pytest.raises(index.IndexFormatError, match="outside the index") as raised:
            index.open_index(copy, verify=verify)
        message = str(raised.value)
        assert "manifest.json" in message
        assert "12,345" not in message and "12345" not in message  # its size is not disclosed
        passwd = Path("/etc/passwd")
        if passwd.exists():
            assert f"{passwd.stat().st_size:,}" not in message
    assert secret.stat().st_atime_ns == before  # not read (where the file system keeps access times)


def test_a_file_linked_to_outside_the_index_is_refused(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    outside = tmp_path / "outside.npy"
    shutil.copy(copy / "tfidf" / "indices.npy", outside)
    (copy / "tfidf" / "indices.npy").unlink()
    os.symlink(outside, copy / "tfidf" / "indices.npy")
    with pytest.raises(index.IndexFormatError, match=r"tfidf/indices\.npy.*outside the index"):
        index.open_index(copy)


@pytest.mark.parametrize(
    ("name", "replacement"),
    [
        ("lsa.npy", lambda a: a[:-1]),  # a row short
        ("embedding.npy", lambda a: a.reshape(-1)),  # one dimension
        ("tfidf/data.npy", lambda a: a.astype(np.float64)[: len(a) // 2]),  # another dtype
        ("tfidf/indices.npy", lambda a: a.astype(np.float32)),  # indices that are not integers
        ("search/lengths.npy", lambda a: a[:-3]),
    ],
)
def test_arrays_of_the_wrong_shape_or_dtype_are_named(seeds_index, tmp_path, name, replacement):
    copy = _copy(seeds_index, tmp_path)
    np.save(copy / name, replacement(np.load(copy / name)))
    manifest = _manifest(copy)
    manifest["files"][name]["bytes"] = (copy / name).stat().st_size  # consistent sizes: a crafted index
    _write_manifest(copy, manifest)
    with pytest.raises(index.IndexFormatError, match="rebuild") as raised:
        opened = index.open_index(copy)
        opened.analysis.most_similar(opened.papers["id"].iloc[0])
    assert name in str(raised.value)


def test_an_index_without_checksums_opens_and_is_still_checked(seeds_index, tmp_path):
    """An index whose manifest lists sizes only (no checksums) opens, validated by its structure."""
    copy = _copy(seeds_index, tmp_path)
    manifest = _manifest(copy)
    for facts in manifest["files"].values():
        facts.pop("sha256", None)
    _write_manifest(copy, manifest)
    opened = index.open_index(copy)
    assert len(opened.papers) == 57
    _overwrite(copy, "tfidf/indices.npy", _spread(2**30))
    done = _exercise(copy)
    assert done.returncode == 3 and "tfidf/indices.npy" in done.stdout, done.stdout + done.stderr


def test_a_damaged_topic_tree_is_named(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    with np.load(copy / index.TREE_FILE) as stored:
        arrays = dict(stored)
    arrays["linkage"][:, :2] = 10**6  # merges of topics that do not exist
    np.savez(copy / index.TREE_FILE, **arrays)
    manifest = _manifest(copy)
    manifest["files"][index.TREE_FILE]["bytes"] = (copy / index.TREE_FILE).stat().st_size
    _write_manifest(copy, manifest)
    with pytest.raises(index.IndexFormatError, match=index.TREE_FILE):
        index.read_tree(index.open_index(copy))


# ----------------------------------------------------------------------------- what the app shows


def test_app_names_the_damaged_file_instead_of_ending_the_server(seeds_index, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    copy = _copy(seeds_index, tmp_path)
    _overwrite(copy, "tfidf/indices.npy", _spread(2**30))
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(copy))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No papers could be read" in e.value for e in at.error)
    # The load report names the file and what to do (its caption escapes Markdown).
    report = " ".join(str(c.value) for c in at.caption).replace("\\", "")
    assert "tfidf/indices.npy" in report and "outside the" in report and "rebuild" in report


def test_app_names_the_column_and_row_of_text_that_is_not_utf8(seeds_index, tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    copy, row = _not_utf8(seeds_index, tmp_path, "papers.arrow", "abstract")
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(copy))
    # The damaged copies share one manifest, which is what the app's caches know an index by.
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    st.cache_resource.clear()
    assert not at.exception
    assert any("No papers could be read" in e.value for e in at.error)
    report = " ".join(str(c.value) for c in at.caption).replace("\\", "")
    assert "papers.arrow" in report and f"'abstract', row {row:,}: text that is not UTF-8" in report


def test_app_counts_the_terms_itself_when_the_index_s_counts_are_damaged(seeds_index, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    copy = _copy(seeds_index, tmp_path)
    _overwrite(copy, "terms/1/indices.npy", _spread(2**30))
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(copy))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any(m.value == "**57 of 57 papers**" for m in at.sidebar.markdown)
    at.switch_page("src/dashboard/app_pages/terms.py").run()
    assert not at.exception
    assert not at.error
