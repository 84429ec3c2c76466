"""The index build on a real Dask LocalCluster: the same index, file for file, as the local build.

Every comparison is between a local build and a Dask build of the same code and settings, so it stays
true whatever columns the readers produce.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from dashboard import index as index
from dashboard.cli import main as cli

distributed = pytest.importorskip("distributed")
from dashboard.index import distributed as daskbuild  # noqa: E402 (needs distributed)

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"
# Small partitions and a small fit sample, so the seeds have many partitions and most papers go
# through the assign map (TopicTransform) on the workers, not only the fitted model's rows.
SAMPLED = {"partition_size": 10, "fit_size": 40}
# Worker processes are spawned, and a spawned child runs the parent's __main__ again. Streamlit's
# AppTest (other test modules) leaves app.py as __main__; keep pytest's, as it was at collection.
PYTEST_MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True, scope="module")
def pytest_main():
    previous = sys.modules["__main__"]
    sys.modules["__main__"] = PYTEST_MAIN
    yield
    sys.modules["__main__"] = previous


@pytest.fixture(scope="module")
def cluster(pytest_main):
    """Two worker processes; a task may kill its worker once and is still run (allowed-failures 1)."""
    import cloudpickle
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests/
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = daskbuild.start_local_cluster(2)  # what --dask local:2 starts
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def local_sampled(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("local") / "seeds.index"
    return index.build_index([SEEDS], out, workers=1, **SAMPLED)


def _files(manifest: dict) -> dict[str, str]:
    return {name: facts["sha256"] for name, facts in manifest["files"].items()}


def _same_files(local: dict, dask: dict) -> None:
    assert set(_files(dask)) == set(_files(local))
    differ = [name for name, sha in _files(local).items() if _files(dask)[name] != sha]
    assert differ == [], f"files that differ between the local and the Dask build: {differ}"


class KillWorker(distributed.WorkerPlugin):
    """Makes the worker process exit when it starts a task whose key begins with ``step``.

    Once when ``flag`` is set (the flag file records that it happened), every time otherwise.
    """

    name = "kill-worker"

    def __init__(self, step: str, flag: str | None) -> None:
        self.step, self.flag = step, flag

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith(self.step):
            return
        if self.flag is not None:
            if os.path.exists(self.flag):
                return
            Path(self.flag).write_text(str(key))
        os._exit(1)


@pytest.mark.corpora
def test_iclr_1k_on_two_workers_is_the_local_index_file_for_file(cluster, corpora_dir, tmp_path):
    source = corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl"
    settings = {"partition_size": 250, "fit_size": 500}  # 4 partitions; 500 papers assigned by the workers
    local = index.build_index([source], tmp_path / "local.index", workers=1, **settings)
    lines: list[str] = []
    dask = index.build_index(
        [source], tmp_path / "dask.index", dask=cluster.scheduler_address, progress=lines.append, **settings
    )
    _same_files(local, dask)
    assert local["papers"] == dask["papers"] == 1000 and dask["fit_papers"] == 500
    assert any("dashboard http" in line for line in lines)
    assert any("counted 4/4 partitions" in line for line in lines)
    assert index.open_index(tmp_path / "dask.index", verify=True).papers["id"].is_unique


def test_seeds_on_two_workers_from_the_cli_are_the_local_index(cluster, tmp_path, capsys):
    local = index.build_index([SEEDS], tmp_path / "local.index", workers=1)
    out = tmp_path / "dask.index"
    assert cli.main(["index", str(SEEDS), "--out", str(out), "--dask", cluster.scheduler_address]) == 0
    dask = json.loads((out / "manifest.json").read_text())
    _same_files(local, dask)
    assert dask["built_with"] == f"dask {cluster.scheduler_address}"
    assert "dashboard http" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("address", "expected"),
    [("local:2", ("local", 2)), ("tcp://10.0.0.5:8786", ("tcp://10.0.0.5:8786", None))],
)
def test_dask_addresses(address, expected):
    assert daskbuild.parse_address(address) == expected


@pytest.mark.parametrize("address", ["local:0", "local:x", "nohost"])
def test_bad_dask_address_is_a_usage_error(address, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["index", str(SEEDS), "--out", str(tmp_path / "x.index"), "--dask", address])
    assert exit_.value.code == 2 and "--dask" in capsys.readouterr().err
    assert not (tmp_path / "x.index").exists()


def _built_with_a_worker_killed(cluster, step: str, tmp_path: Path, **options) -> dict:
    """A Dask build of the seeds during which the first worker to start a ``step`` task dies (checked)."""
    flag = tmp_path / "killed"
    client = distributed.Client(cluster)
    try:
        client.register_plugin(KillWorker(step, str(flag)))
        try:
            dask = index.build_index(
                [SEEDS], tmp_path / "dask.index", dask=cluster.scheduler_address, **SAMPLED, **options
            )
        finally:
            client.unregister_worker_plugin(KillWorker.name)
        assert flag.read_text().startswith(step)  # a worker did die, running such a task
        client.wait_for_workers(2, timeout=60)  # the nanny started a new one
    finally:
        client.close()
    return dask


def test_a_worker_killed_mid_build_is_survived_with_the_same_index(cluster, local_sampled, tmp_path):
    _same_files(local_sampled, _built_with_a_worker_killed(cluster, "assign-", tmp_path))


def _no_kept_vectors(monkeypatch) -> None:
    """No vectors in this process's memo or on disk (`topicspace.kept`): the local build encodes, in
    its pool, what the Dask build encodes on its workers."""
    from dashboard.search import topicspace

    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", "none")
    monkeypatch.setattr(topicspace, "_MEMO", type(topicspace._MEMO)())


def test_sentence_embeddings_are_encoded_on_the_workers_with_the_same_bytes(cluster, tmp_path, monkeypatch):
    """``--semantic`` on Dask: an encode task per partition on the workers (one of which dies running
    one), and every file, semantic.npy too, as the local build's in its pool of two processes."""
    from dashboard.search import semantic

    if not semantic.available():
        pytest.skip(f"needs the embedding model: {semantic.EXTRA_HINT}")
    _no_kept_vectors(monkeypatch)
    local = index.build_index([SEEDS], tmp_path / "local.index", workers=2, semantic=True, **SAMPLED)
    dask = _built_with_a_worker_killed(cluster, "encode-", tmp_path, semantic=True)
    _same_files(local, dask)
    assert "semantic.npy" in _files(dask) and dask["semantic"]["model"] == semantic.MODEL_ID
    single = index.build_index([SEEDS], tmp_path / "one.index", workers=1, semantic=True)  # in this process
    assert _files(single)["semantic.npy"] == _files(local)["semantic.npy"]


def test_topics_in_the_sentence_embedding_on_dask_are_the_local_build(cluster, tmp_path, monkeypatch):
    """The default space of a conference-sized corpus (the sentence embedding, `topicspace`) on Dask:
    the encode map runs on the workers, the topics are fitted on the vectors they sent back, and every
    file (topics, map, semantic.npy, the model's parts for appends) is the local build's."""
    from dashboard.search import semantic

    if not semantic.available():
        pytest.skip(f"needs the embedding model: {semantic.EXTRA_HINT}")
    _no_kept_vectors(monkeypatch)
    settings = {"partition_size": 10, "representation": "minilm"}  # 6 partitions, every paper fitted
    local = index.build_index([SEEDS], tmp_path / "local.index", workers=2, **settings)
    lines: list[str] = []
    dask = index.build_index(
        [SEEDS], tmp_path / "dask.index", dask=cluster.scheduler_address, progress=lines.append, **settings
    )
    _same_files(local, dask)
    assert dask["representation"] == local["representation"] == "minilm"
    assert "semantic.npy" in _files(dask) and any("encoded 6/6 partitions" in line for line in lines)


def test_a_task_that_keeps_killing_workers_fails_naming_it_and_keeps_the_old_index(
    cluster, local_sampled, tmp_path
):
    out = tmp_path / "seeds.index"
    old = index.build_index([SEEDS], out, workers=1)
    client = distributed.Client(cluster)
    try:
        client.register_plugin(KillWorker("count-00000-0001", None))
        try:
            with pytest.raises(index.IndexBuildError) as failure:
                index.build_index([SEEDS], out, dask=cluster.scheduler_address, **SAMPLED)
        finally:
            client.unregister_worker_plugin(KillWorker.name)
        client.wait_for_workers(2, timeout=60)
    finally:
        client.close()
    message = str(failure.value)
    # Usually the killing partition itself; a task that shared its worker when it died may reach
    # Dask's limit of worker deaths first, and is then the one named. Either way: a partition and file.
    assert re.search(r"partition \d{5}-\d{4} \(papers \d+-\d+ of \w+\.txt\)", message), message
    assert "died" in message
    assert json.loads((out / "manifest.json").read_text())["digest"] == old["digest"]
    index.open_index(out, verify=True)  # the old index, whole
    assert [p.name for p in tmp_path.iterdir()] == ["seeds.index"]  # no partial build left behind


def test_a_task_error_names_the_partition_and_the_file(cluster):
    client = distributed.Client(cluster)
    try:
        where = index.partition_name("00002-0000", "abstracts.jsonl", 0, 250)
        future = client.submit(index.count_files, b"not an arrow file", "", "default", where, pure=False)
        with pytest.raises(
            index.IndexBuildError,
            match=r"counting partition 00002-0000 \(papers 1-250 of "
            r"abstracts.jsonl\) failed: ArrowInvalid",
        ):
            future.result()
    finally:
        client.close()


def test_urls_in_and_out_give_the_same_index(cluster, tmp_path):
    fsspec = pytest.importorskip("fsspec")
    local = index.build_index([SEEDS], tmp_path / "local.index", workers=1)
    out = "memory://indexes/seeds.index"
    dask = index.build_index([SEEDS.as_uri()], out, dask=cluster.scheduler_address)
    _same_files(local, dask)
    assert dask["corpus_digest"] == local["corpus_digest"]
    fs = fsspec.filesystem("memory")
    stored = json.loads(fs.cat("/indexes/seeds.index/manifest.json"))
    assert stored["digest"] == dask["digest"]
    assert sorted(p.removeprefix("/indexes/seeds.index/") for p in fs.find("/indexes/seeds.index")) == sorted(
        [*dask["files"], "manifest.json"]
    )
    assert not fs.exists("/indexes/seeds.index.partial-" + str(os.getpid()))
    assert index.read_report(out).summary() == index.read_report(tmp_path / "local.index").summary()
