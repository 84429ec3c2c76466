"""Uploads on a shared server: the limits per upload and per session, the memory budget shared by all
sessions, the worker process that reads an upload, and a link to an upload after a reload.

Real processes, real gzip bombs and real AppTest sessions; nothing is mocked. Limits are lowered
with monkeypatch where the default would need hundreds of megabytes.
"""

from __future__ import annotations

import gzip
import io
import operator
import threading
import time
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import corpus
from dashboard.server import uploads, worker

REPO = Path(__file__).resolve().parents[2]
MiB = 1 << 20


def _paragraphs(word: str, n: int) -> bytes:
    text = "\n\n".join(f"We study {word} number {i} with graphs and {word} models." for i in range(n))
    return text.encode()


# --------------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("files", "new", "expected"),
    [
        ([("a.txt", 10)] * 3, [0, 1, 2], None),
        ([("a.txt", 10)] * 11, range(11), "this upload: 11 files, above the limit of 10 files per upload"),
        ([("a", 10)] * 21, [20], "this session's files: 21 files, above the limit of 20 files per session"),
        ([("a.txt", 201 * MiB)], [0], "this upload: 201.0 MiB, above the limit of 200.0 MiB per upload"),
        (
            [("a.txt", 150 * MiB), ("b.txt", 160 * MiB)],
            [1],
            "this session's files: 310.0 MiB, above the limit of 300.0 MiB per session",
        ),
    ],
)
def test_file_and_byte_limits_name_the_limit_that_was_hit(
    files: list[tuple[str, int]], new: list[int], expected: str | None
) -> None:
    message = uploads.check_files(files, new)
    if expected is None:
        assert message is None
    else:
        assert message is not None and message.startswith(expected), message
        assert "dashboard.server.uploads.MAX_" in message  # says which constant to raise


def test_limits_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uploads, "MAX_UPLOAD_FILES", 1)
    assert "limit of 1 file per upload (dashboard.server.uploads.MAX_UPLOAD_FILES)" in str(
        uploads.check_files([("a", 1), ("b", 1)], [0, 1])
    )


def test_decompressed_size_of_a_gzip_bomb_stops_at_the_allowance() -> None:
    bomb = gzip.compress(b"\0" * (64 * MiB), compresslevel=9)  # 64 MiB in about 64 kB
    counted = uploads.decompressed_size(bomb, stop_after=8 * MiB)
    assert 8 * MiB < counted <= 9 * MiB  # stopped a chunk past the allowance, not at 64 MiB
    assert uploads.decompressed_size(gzip.compress(b"abc") + gzip.compress(b"de"), 1 << 30) == 5
    assert uploads.decompressed_size(b"plain text", 1 << 30) == 10


def test_decompressed_size_of_a_zip_is_what_its_directory_declares() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.xml", b"x" * 100_000)
        archive.writestr("b.xml", b"y" * 50_000)
    assert uploads.decompressed_size(buffer.getvalue(), 1 << 30) == 150_000


def test_prepare_refuses_past_the_decompressed_and_paper_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    small = ("small.txt", _paragraphs("small", 3))
    packed = ("packed.txt.gz", gzip.compress(b"We study a thing at length. " * 200_000))  # 5.6 MB
    monkeypatch.setattr(uploads, "MAX_SESSION_DECOMPRESSED", 4 * MiB)
    refused = uploads.prepare([small, packed], [1], "auto")
    assert refused.result is None
    assert "this session's files: " in refused.refused and "once decompressed" in refused.refused
    assert "MAX_SESSION_DECOMPRESSED" in refused.refused

    monkeypatch.setattr(uploads, "MAX_UPLOAD_PAPERS", 2)
    refused = uploads.prepare([small], [0], "auto")
    assert refused.refused.startswith("this upload: 3 papers, above the limit of 2 papers per upload")
    fine = uploads.prepare([small], [0], "auto", {"dashboard.server.uploads": {"MAX_UPLOAD_PAPERS": 5}})
    assert fine.refused == "" and len(fine.result.papers) == 3 and fine.analysis is not None


# --------------------------------------------------------------------------- the store


def test_the_store_keeps_to_its_budget_least_recently_used_first() -> None:
    store = uploads.UploadStore(budget=lambda: 100)
    store.put("a", "load", "A", charge=40, holder="s1")
    store.put("b", "load", "B", charge=40, holder="s2")
    assert store.get("a", "load") == "A"  # a is now the most recently used
    store.put("c", "load", "C", charge=40, holder="s3")
    assert store.digests() == ["a", "c"] and store.total() == 80 and store.evictions == 1
    store.put("a", ("analyze", 5), "topics", charge=50)  # a grows: c goes
    assert store.digests() == ["a"] and store.total() == 90
    with pytest.raises(MemoryError, match="MEMORY_BUDGET"):
        store.put("d", "load", "D", charge=101, holder="s4")
    assert store.digests() == ["a"]


def test_a_corpus_is_dropped_when_the_last_session_holding_it_ends() -> None:
    store = uploads.UploadStore(budget=lambda: 1000)
    store.put("shared", "load", "S", charge=10, holder="s1")
    store.get("shared", "load", holder="s2")  # a second session with the same files
    store.put("own", "load", "O", charge=10, holder="s2")
    store.keep_only(["s2"])  # s1 ended
    assert store.digests() == ["shared", "own"]
    store.keep_only([])  # s2 ended
    assert store.digests() == [] and store.total() == 0
    store.put("x", "load", "X", charge=10, holder="s3")
    store.let_go("x", "s3")  # went back to the bundled corpus / uploaded other files
    assert not store.holds("x")


def test_memo_computes_once_when_sessions_ask_at_once() -> None:
    store = uploads.UploadStore(budget=lambda: 1000)
    store.put("d", "load", "table", charge=10, holder="s1")
    calls: list[int] = []

    def compute() -> tuple[str, int]:
        calls.append(1)
        time.sleep(0.2)
        return "counts", 5

    threads = [threading.Thread(target=store.memo, args=("d", "counts", compute)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and store.get("d", "counts") == "counts" and store.total() == 15


# --------------------------------------------------------------------------- the worker process


def test_the_worker_returns_the_result_and_its_size() -> None:
    value, size = worker.run(sum, [1, 2, 3], timeout=60, memory_bytes=1 << 30)
    assert value == 6 and size > 0


def test_the_worker_is_stopped_after_its_time() -> None:
    with pytest.raises(worker.WorkerError, match="stopped after 1 s"):
        worker.run(time.sleep, 600, timeout=1, memory_bytes=1 << 30)  # killed: the test's timeout is 600 s


def test_the_worker_is_stopped_when_it_takes_too_much_memory() -> None:
    with pytest.raises(worker.WorkerError, match="more than 0.2 GiB of memory"):
        worker.run(operator.mul, b"x", 1 << 30, timeout=120, memory_bytes=200 * MiB)


def test_an_error_in_the_job_comes_back_as_a_worker_error() -> None:
    with pytest.raises(worker.WorkerError, match="ZeroDivisionError"):
        worker.run(operator.truediv, 1, 0, timeout=60, memory_bytes=1 << 30)


# --------------------------------------------------------------------------- in the app


def _app(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("src/dashboard/app_pages/papers.py")
    return at.run()


def _upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.sidebar.get("file_uploader")[0].set_value([(n, d, "application/octet-stream") for n, d in files])
    return at.run()


def _captions(at: AppTest) -> str:
    return " ".join(str(c.value) for c in at.sidebar.caption)


@pytest.fixture
def bundled_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)


def test_the_app_refuses_an_upload_past_a_limit_and_says_which(
    bundled_corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uploads, "MAX_UPLOAD_FILES", 1)
    at = _upload(_app(), ("a.txt", _paragraphs("alpha", 3)), ("b.txt", _paragraphs("beta", 3)))
    assert not at.exception
    assert "Not loaded: this upload: 2 files, above the limit of 1 file per upload" in _captions(at).replace(
        "\\", ""
    )
    seeds = len(corpus.load([REPO / "seeds"]).papers)
    assert f"{seeds:,} of {seeds:,} papers" in " ".join(m.value for m in at.sidebar.markdown)


def test_the_app_refuses_too_many_papers_in_the_load_report(
    bundled_corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uploads, "MAX_SESSION_PAPERS", 4)
    at = _upload(_app(), ("many.txt", _paragraphs("many", 6)))
    assert not at.exception
    assert "No papers could be read" in " ".join(e.value for e in at.error)
    shown = " ".join(str(t.value) for t in at.main.table) + _captions(at).replace("\\", "")
    assert "6 papers, above the limit of 4 papers per session" in shown.replace("\\", ""), shown


def test_a_link_to_an_upload_after_a_reload_says_the_corpus_changed(bundled_corpus: None) -> None:
    at = _upload(_app({"q": "graphs"}), ("mine.txt", _paragraphs("mine", 4)))
    marker = at.query_params["uploaded"]
    marker = marker if isinstance(marker, str) else marker[0]
    assert len(marker) == 12 and not at.warning  # the URL marks the upload; nothing to warn about

    reloaded = _app({"q": "graphs", "uploaded": marker})  # a reload: a new session without the files
    warning = " ".join(w.value for w in reloaded.warning).replace("\\", "")
    assert "This link was made for an uploaded corpus, which this browser session does not hold" in warning
    assert "bundled seeds" in warning and "Upload the files again" in warning
    reloaded.button(key="corpus.upload_link_dismiss").click().run()
    assert "uploaded" not in reloaded.query_params and not reloaded.warning

    back = next(b for b in at.sidebar.button if b.label == "Back to the bundled corpus")
    back.click().run()
    assert "uploaded" not in at.query_params and not at.warning


def test_an_uploaded_corpus_lives_in_the_store_and_goes_with_its_session(bundled_corpus: None) -> None:
    from dashboard.ui import data

    at = _upload(_app(), ("stored.txt", _paragraphs("stored", 5)))
    held = at.session_state["corpus.uploads"]
    assert isinstance(held, data.HeldUpload) and not hasattr(held, "files")  # no copy of the bytes
    store = data.upload_store()
    assert store.holds(held.digest) and store.total() > 0
    at.sidebar.get("file_uploader")[0].set_value([]).run()  # the files removed from the uploader
    assert not store.holds(held.digest)
