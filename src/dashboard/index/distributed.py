"""The index build's maps as tasks of a Dask cluster: the same index as the local build, file for file.

    paper-dashboard index papers/ --out papers.index --dask local:4            # a LocalCluster of 4 processes
    paper-dashboard index s3://b/papers/ --out papers.index --dask tcp://scheduler:8786

:func:`dashboard.index.build.build_index` runs three maps (four with ``semantic``) and keeps the rest on the
client:

- **read** (a task per input file): `index.read_partitions` loads the file and cuts it into partitions of
  ``partition_size`` papers; each partition's table (Arrow IPC bytes) comes back to the client, which
  keeps the paper table, the ids and the fit sample, and stays on the worker for the next step;
- **count** (a task per partition): `index.count_files` on the worker holding the partition; its files
  (vocabulary, term counts, area scores, search words) come back to the client for the reductions;
- the **fit** on the seeded sample and the **reductions** (vocabularies, search words) run on the
  client while or after the counts run;
- **assign** (a task per partition): `index.assign_part` on the worker holding the partition's counts,
  with the vocabularies and the fitted model's parts scattered to every worker once; the client writes
  each partition's rows as they come back, in order;
- **encode** (with ``semantic``, a task per partition): `maps.encode_part`, the partition's texts through
  the sentence-embedding model, sent the partition's table; the client writes ``semantic.npy`` in order.

The tasks are the functions the local build runs in its worker processes, on the same bytes, so every
file of the index is the same (the test compares every checksum of the manifest).

A worker that dies is survived: its tasks are run again on the others (Dask's lineage: a partition whose
count result was lost is read and counted again); a task that raises is retried ``retries`` times. When
a task still fails, the build stops with an `index.IndexBuildError` naming the partition and the file.
The client prints the cluster's dashboard link and a line as each step's tasks complete.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

import numpy as np

from dashboard import corpus
from dashboard.index.format import IndexBuildError
from dashboard.index.maps import (
    AssignInputs,
    Part,
    assign_part,
    collect_reads,
    count_files,
    encode_part,
    read_partitions,
    submitted_ahead,
)

__all__ = ["DaskMaps", "parse_address", "probe_scheduler", "start_local_cluster"]

RETRIES = 2  # a task that raises is run again this many times (a flaky read of a URL, say)


# ``local:N`` starts N processes on this machine: more than a few per core only thrash (each holds its
# partitions in memory), and a typo of 100000 would fork until the machine stops.
MAX_LOCAL_WORKERS = max(4, 4 * (os.cpu_count() or 1))
SCHEMES = ("tcp", "tls")  # a scheduler's address; its dashboard (http://host:8787) is not one
PROBE_SECONDS = 10.0
# A Dask scheduler greets a new connection with a handshake message of a few hundred bytes, preceded
# by its length (8 bytes, little-endian); anything else (a web server's silence, an SSH banner read as
# a length of exabytes) is not a scheduler, and is refused before Dask's client tries to read it.
MAX_GREETING_BYTES = 1 << 26


def parse_address(address: str) -> tuple[str, int | None]:
    """``("local", N)`` for ``local:N``, else ``(address, None)`` for a scheduler's ``tcp://host:port``.

    Raises ValueError, saying what is expected, for anything else: N outside 1..`MAX_LOCAL_WORKERS`,
    another scheme (``http://`` is the dashboard's), no host, a port outside 1..65535.

    >>> parse_address("local:2"), parse_address("tcp://10.0.0.5:8786")
    (('local', 2), ('tcp://10.0.0.5:8786', None))
    """
    text = address.strip()
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not (count.isascii() and count.isdigit()) or not 1 <= int(count[:6]) <= MAX_LOCAL_WORKERS:
            raise ValueError(
                f"--dask {address}: expected local:N with N from 1 to {MAX_LOCAL_WORKERS} worker processes "
                "on this machine, e.g. local:4"
            )
        return "local", int(count)
    if "://" not in text and ":" in text:
        text = f"tcp://{text}"  # host:port, as Dask itself reads it
    scheme, _, rest = text.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme.lower() not in SCHEMES or not rest:
        web = scheme.lower() in ("http", "https") and bool(rest)
        hint = " (http:// is the dashboard's address; the scheduler's is tcp://host:8786)" if web else ""
        raise ValueError(f"--dask {address}: expected tcp://host:port or local:N{hint}")
    if (
        not host.strip("[]")
        or "/" in rest
        or not (port.isascii() and port.isdigit())
        or not 0 < int(port[:6]) < 65536
    ):
        raise ValueError(f"--dask {address}: expected tcp://host:port with a port from 1 to 65535")
    return text, None


def probe_scheduler(address: str, timeout: float = PROBE_SECONDS) -> None:
    """Check that a Dask scheduler answers at ``tcp://host:port`` before Dask's client connects.

    Raises IndexBuildError naming the address when nothing listens, nothing answers, or what answers
    is not a scheduler's greeting (see `MAX_GREETING_BYTES`). ``tls://`` is only checked for a listener.
    """
    import socket
    import struct

    scheme, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as connection:
            if scheme.lower() != "tcp":
                return
            greeting = b""
            while len(greeting) < 8:
                chunk = connection.recv(8 - len(greeting))
                if not chunk:
                    break
                greeting += chunk
    except TimeoutError:
        raise IndexBuildError(
            f"--dask {address}: no Dask scheduler answered within {timeout:.0f} s (is it a scheduler's "
            "tcp:// address, not its dashboard or another service?)"
        ) from None
    except OSError as error:
        raise IndexBuildError(
            f"cannot reach the Dask scheduler at {address}: {error.strerror or error}"
        ) from None
    if len(greeting) < 8 or struct.unpack("<Q", greeting)[0] > MAX_GREETING_BYTES:
        raise IndexBuildError(
            f"--dask {address}: what answers there is not a Dask scheduler (its greeting is not Dask's); "
            "give the scheduler's tcp://host:port"
        )


def start_local_cluster(n_workers: int) -> Any:
    """The LocalCluster of ``local:N``: N worker processes of one thread each, dashboard on a free port.

    One thread per worker: the tasks are pure Python and NumPy holding the GIL, so processes are what
    runs them in parallel. Each worker's memory limit is Dask's default share of this machine's memory.
    """
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: never clash with another cluster's 8787
        silence_logs=logging.ERROR,
    )


def _pick(read: tuple[dict[str, Any], list[tuple[bytes, int]]], chunk: int) -> bytes:
    """One partition's paper table out of a read task's result (runs where the result is)."""
    return read[1][chunk][0]


class DaskMaps:
    """The build's maps on a Dask cluster (the interface of `index._LocalMaps`).

    ``address`` is a scheduler address, or ``local:N`` to start a LocalCluster of N worker processes
    (one thread each: the tasks are pure Python and NumPy holding the GIL) for this build only.
    """

    def __init__(self, address: str, say: Callable[[str], None], retries: int = RETRIES) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise IndexBuildError(
                "--dask needs dask and distributed: pip install 'paper-dashboard[dask]'"
            ) from None
        self.say = say
        self.retries = retries
        self.token = uuid4().hex[:8]  # task keys unique to this build (a cluster may run several)
        try:
            where, n_workers = parse_address(address)
        except ValueError as error:
            raise IndexBuildError(str(error)) from None
        self.cluster = None
        if n_workers is None:
            probe_scheduler(where)
        try:
            if n_workers is not None:
                self.cluster = start_local_cluster(n_workers)
                self.client = Client(self.cluster)
            else:
                self.client = Client(where, timeout="30s")
        except (OSError, TimeoutError) as error:
            if self.cluster is not None:
                self.cluster.close()
            raise IndexBuildError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        workers = len(self.client.scheduler_info().get("workers", {}))
        say(
            f"Dask: {workers} worker{'s' * (workers != 1)} at {self.client.scheduler.address}; "
            f"dashboard {self.client.dashboard_link}"
        )
        self.papers: dict[Path, Any] = {}
        self.counts: list[tuple[Part, Any]] = []

    def _key(self, step: str, name: str) -> str:
        return f"{step}-{name}-{self.token}"

    def _result(self, future: Any, where: str) -> Any:
        """The task's result; a clear IndexBuildError naming ``where`` when it failed for good."""
        from distributed import KilledWorker

        try:
            return future.result()
        except IndexBuildError:
            raise  # raised by the task itself: it names the partition and the file
        except KilledWorker as error:
            raise IndexBuildError(
                f"{where}: every worker that ran it died ({error}); out of memory? See the README's "
                "memory per worker, or use smaller partitions"
            ) from None
        except (OSError, TimeoutError) as error:
            raise IndexBuildError(
                f"{where}: lost the Dask cluster ({type(error).__name__}: {error})"
            ) from None

    def read(
        self, items: Sequence[Any], work: Path, partition_size: int
    ) -> tuple[corpus.LoadReport, list[Part]]:
        """Step 0: a read task per file; each partition's table is written under ``work`` as it arrives."""
        from distributed import as_completed

        files = [(n, item) for n, item in enumerate(items) if not isinstance(item, corpus.FileReport)]
        # Fewer files than workers: cut each into a partition per worker, so all of them count.
        workers = len(self.client.scheduler_info().get("workers", {}))
        pieces = workers if len(files) < workers else 1
        futures = {
            self.client.submit(
                read_partitions,
                str(item),
                partition_size,
                pieces,
                key=self._key("read", f"{n:05d}"),
                retries=self.retries,
            ): (n, item)
            for n, item in files
        }
        results: dict[int, tuple[dict[str, Any], list[tuple[Path, int]]]] = {}
        for done, future in enumerate(as_completed(futures), start=1):
            number, item = futures[future]
            report, tables = self._result(future, f"reading {item}")
            found = []
            for chunk, (table, rows) in enumerate(tables):
                directory = work / f"{number:05d}-{chunk:04d}"
                directory.mkdir(parents=True)
                (directory / "papers.arrow").write_bytes(table)
                found.append((directory, rows))
                self.papers[directory] = self.client.submit(
                    _pick, future, chunk, key=self._key("partition", directory.name)
                )
            results[number] = (report, found)
            self.say(f"  read {done}/{len(files)} files")
        ordered = [results[n] for n, _ in files]
        return collect_reads(items, [r for r, _ in ordered], [f for _, f in ordered])

    def start_counting(self, parts: list[Part], taxonomy_text: str, taxonomy_name: str) -> None:
        """Step 1: a count task per partition, on the worker that holds its table."""
        self.counts = [
            (
                part,
                self.client.submit(
                    count_files,
                    self.papers[part.directory],
                    taxonomy_text,
                    taxonomy_name,
                    part.where,
                    key=self._key("count", part.directory.name),
                    retries=self.retries,
                ),
            )
            for part in parts
        ]
        self.papers = {}  # the count tasks hold what they need; Dask frees the tables after them

    def finish_counting(self) -> None:
        """Wait for the counts, writing each partition's count files to its folder as they arrive."""
        from distributed import as_completed

        parts = {future: part for part, future in self.counts}
        for done, future in enumerate(as_completed(list(parts)), start=1):
            part = parts[future]
            for name, data in self._result(future, part.where).items():
                (part.directory / name).write_bytes(data)
            if done == len(parts) or done % max(1, len(parts) // 10) == 0:
                self.say(f"  counted {done}/{len(parts)} partitions")

    def finish_words(self) -> None:
        """Nothing to wait for: each count task here indexes its partition's search words as well."""

    def assign(self, parts: list[Part], shared: AssignInputs) -> Iterator[dict[str, Any]]:
        """Step 3: an assign task per partition (where its counts are); results yielded in order."""
        shared_future = self.client.scatter(shared, broadcast=True, hash=False)
        counts = dict((part.directory, future) for part, future in self.counts)
        futures: list[Any] = [
            self.client.submit(
                assign_part,
                counts[part.directory],
                shared_future,
                part.where,
                key=self._key("assign", part.directory.name),
                retries=self.retries,
            )
            for part in parts
        ]
        self.counts = []
        del counts
        for done, (part, future) in enumerate(zip(parts, futures, strict=True), start=1):
            result = self._result(future, part.where)
            futures[done - 1] = None  # let the cluster free it
            if done == len(parts) or done % max(1, len(parts) // 10) == 0:
                self.say(f"  assigned {done}/{len(parts)} partitions")
            yield result
        del shared_future

    def encode(self, parts: list[Part]) -> Iterator[np.ndarray]:
        """The ``--semantic`` map: an encode task per partition, sent its table; results in order.

        A few partitions per worker are in flight, no more: each task carries its table's bytes.
        """
        workers = max(1, len(self.client.scheduler_info().get("workers", {})))

        def submit(part: Part) -> Any:
            return self.client.submit(
                encode_part,
                (part.directory / "papers.arrow").read_bytes(),
                part.where,
                key=self._key("encode", part.directory.name),
                retries=self.retries,
            )

        for done, (part, future) in enumerate(submitted_ahead(submit, parts, 2 * workers), start=1):
            result = self._result(future, part.where)
            if done == len(parts) or done % max(1, len(parts) // 10) == 0:
                self.say(f"  encoded {done}/{len(parts)} partitions")
            yield result

    def close(self) -> None:
        """Let go of the cluster (and stop it when this build started it)."""
        self.papers, self.counts = {}, []
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
