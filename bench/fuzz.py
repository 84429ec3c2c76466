"""Fuzz the corpus readers: generated hostile inputs in every format, no exception may escape.

    python bench/fuzz.py                      # a million generated inputs (about 10-20 min on 2 cores)
    python bench/fuzz.py --count 20000        # a quick run
    python bench/fuzz.py --workers 2 --seed 7
    python bench/fuzz.py --atheris -- -max_total_time=600   # coverage-guided, if atheris is installed
    python bench/fuzz.py --extractors         # every extractor and reader over 100 kB pathological texts
    python bench/fuzz.py --extractors --size 20000 --cap 60   # smaller texts; a call over 60 s is cut

Each input is one uploaded file (name, bytes) given to `dashboard.corpus.load_uploads`, the function
behind every upload and every CLI path. Inputs are made from paper-like records (every field alias,
hostile strings: markup, URLs, formula triggers, control and bidi characters, huge numbers, deep
nesting) written as text, markdown, JSON, JSON Lines, CSV, TSV, Parquet or Excel, sometimes gzipped,
sometimes in another encoding, then mutated (bytes flipped, cut, repeated, spliced with another
format). One in `--derive-every` inputs also runs the enrichment (cleaning, links, method names).
A few in a thousand are large (100 kB to 2 MB) and made of the patterns that make parsers slow.

With ``--extractors`` it instead runs every extractor of abstract text (`tests/hostile_text.py` finds
them: method names, datasets, titles, cleaning, tokens, links, venues, enrichment) and every reader on
each pathological text of `hostile_text.PAYLOADS` (runs of capitals, digits, brackets, ``$``, ``\\``,
dots, whitespace before a trigger, ...), and prints, per extractor, the slowest text and its CPU seconds
(target < 1 s each, the bound `tests/readers/test_fuzz_extractors.py` holds). ``--cap`` runs each call in a
child process and stops it after that many seconds, for measuring code that is still quadratic.

Otherwise it prints inputs/s, the number of exceptions (must be 0; each one is saved under bench/results/fuzz/
with its traceback), the largest time the readers took per started 100 kB of input (must stay under
1 s; for a gzip file, per 100 kB of what it decompresses to: the work grows with the content, which
corpus caps at 100 times the file above 1 MiB) and the input that took it, and the same with
enrichment (reported, not a target: a 100 kB file of 50,000 two-byte records is 50,000 papers to
enrich). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import multiprocessing
import random
import sys
import time
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "fuzz"
CHUNK = 100 * 1024  # time is charged per started 100 kB of input
TARGET_SECONDS_PER_CHUNK = 1.0

HOSTILE = [
    "<script>alert(1)</script>", '<img src=x onerror="alert(1)">', "[x](javascript:alert(1))",
    "[d](data:text/html,<b>x</b>)", ":red[red] :material/home:", "$x^2$ $$\\int$$", "&lt;b&gt; &amp;",
    "=HYPERLINK(\"http://e.x\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "'=1", "''-1",
    "\u202eevil", "zero\u200bwidth", "\x00\x01\x02\x1b[31m", "\x85\u2028\u2029", "\ufeff",
    "\ud7ff\ue000\uffff",
    "https://github.com/a/b.git).", "http://x.org/a_(b)", "www.example.com/x", "github.com/owner", "ftp://x",
    "file:///etc/passwd", "../../etc/passwd", "C:\\x", "%s%n{0}{{x}}", "\\emph{x} \\url{y} $\\sim25\\times$",
    "**b** *i* _u_ `c`", "We propose FooNet: a net.", "ICML 2026 Papers", "ICML 2026 论文列表", "1e999", "-0",
    "NaN", "null", "true", "[" * 70, "{" * 70, '"' * 9, "\\" * 9, "\\u0000", "é" * 3, "\U0001f600",
]  # fmt: skip
KEYS = [
    "title", "abstract", "Abstract", "summary", "text", "description", "id", "paper_id", "forum", "url",
    "link", "pdf", "code", "code_url", "github", "authors", "author", "keywords", "tags", "year", "venue",
    "conference", "primary_area", "decision", "labels", "content", "source", "position", "title_is_derived",
    "abstract_clean", "code_status", "", " ", "\u0000", "ABSTRACT", "abstract ", "a" * 300,
]  # fmt: skip
WORDS = [
    "we", "propose", "a", "new", "method", "for", "graph", "learning", "diffusion", "models", "language",
    "data", "benchmark", "results",
]  # fmt: skip
SLOW_PATTERNS = [
    b"[", b"{", b'"', b"\\", b'\\"', b"\n", b"\r", b"\n\n", b",", b'",', b"\t", b" ", b"word ", b"http://",
    b"github.com/", b"$", b"\\\\", b"**", b"_", b"(", b"[a](", b"<", b"&#", b"\xff", b"\x00", b"{\"a\":",
]  # fmt: skip
FORMATS = ["txt", "md", "", "json", "jsonl", "csv", "tsv", "parquet", "xlsx"]
FORMAT_WEIGHTS = [20, 6, 4, 20, 20, 14, 6, 2, 1]


# --------------------------------------------------------------------------------- generating inputs


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if roll < 0.45:
        parts = [rng.choice(WORDS) for _ in range(rng.randint(0, 30))]
        for _ in range(rng.randint(0, 3)):
            parts.insert(rng.randint(0, len(parts)), rng.choice(HOSTILE))
        return " ".join(parts)
    if roll < 0.55:
        return rng.choice(HOSTILE)
    if roll < 0.65:
        return rng.choice([0, -1, 2024, 1e308, -1e-308, 2**63, True, False, None, 1.5])
    if roll < 0.8 and depth < 4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 4:
        return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return ""


def _record(rng: random.Random) -> dict:
    record = {rng.choice(KEYS): _value(rng) for _ in range(rng.randint(0, 7))}
    if rng.random() < 0.6:
        record["abstract"] = _value(rng)
    if rng.random() < 0.1:  # OpenReview API v2 shape
        record = {"id": "n1", "forum": "n1", "content": {k: {"value": v} for k, v in record.items()}}
    return record


def _text_cell(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _document(rng: random.Random, fmt: str) -> bytes:
    records = [_record(rng) for _ in range(rng.randint(0, 12))]
    if fmt in ("txt", "md", ""):
        header = rng.choice(
            ["ICML 2026 Papers\n\n", "# NeurIPS 2024\n\n", "", "Papers\n", "ICLR 2025 论文列表\n\n"]
        )
        separators = ["\n\n", "\n\n\n", "\r\n\r\n", "\n \n", "\n"]
        return (
            header + "".join(_text_cell(r.get("abstract", r)) + rng.choice(separators) for r in records)
        ).encode("utf-8", "surrogatepass")
    if fmt == "json":
        shape = rng.random()
        document: object = (
            records if shape < 0.6 else {"papers": records} if shape < 0.8 else (records[:1] or {})
        )
        return json.dumps(document, default=str).encode("utf-8", "surrogatepass")
    if fmt == "jsonl":
        return "\n".join(json.dumps(r, default=str) for r in records).encode("utf-8", "surrogatepass")
    columns = sorted({k for r in records for k in r} | {"abstract"}, key=str)
    rows = [[_text_cell(r.get(c, "")) for c in columns] for r in records]
    if fmt in ("csv", "tsv"):
        import csv

        text = io.StringIO()
        writer = csv.writer(text, delimiter="\t" if fmt == "tsv" else rng.choice([",", ",", ";", "|"]))
        writer.writerow(columns)
        writer.writerows(rows)
        return text.getvalue().encode("utf-8", "surrogatepass")
    import pandas as pd

    safe = [[cell.encode("utf-8", "replace").decode("utf-8") for cell in row] for row in rows]
    frame = pd.DataFrame(safe, columns=[str(c) or "unnamed" for c in columns]).T.drop_duplicates().T
    from dashboard import export

    return export.to_bytes(frame, fmt)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.choice([0, 0, 1, 1, 2, 4, 8])):
        roll = rng.random()
        position = rng.randint(0, len(buffer)) if buffer else 0
        if roll < 0.3 and buffer:
            buffer[min(position, len(buffer) - 1)] = rng.randrange(256)
        elif roll < 0.5:
            buffer[position:position] = rng.choice(SLOW_PATTERNS) * rng.randint(1, 80)
        elif roll < 0.65:
            del buffer[position : position + rng.randint(1, 64)]
        elif roll < 0.8 and buffer:
            start = rng.randrange(len(buffer))
            buffer[position:position] = buffer[start : start + rng.randint(1, 200)] * rng.randint(1, 5)
        else:
            buffer = buffer[: rng.randint(0, len(buffer))]
    return bytes(buffer)


def _encode(rng: random.Random, data: bytes) -> bytes:
    roll = rng.random()
    if roll < 0.04:
        return data.decode("utf-8", "replace").encode("utf-16")
    if roll < 0.08:
        return data.decode("utf-8", "replace").encode("cp1252", "replace")
    if roll < 0.1:
        return b"\xef\xbb\xbf" + data
    return data


def _large(rng: random.Random) -> bytes:
    """100 kB - 2 MB of one slow pattern (or a few), the shapes that make parsers quadratic."""
    size = rng.randint(CHUNK, 2 << 20)
    patterns = [rng.choice(SLOW_PATTERNS) for _ in range(rng.randint(1, 3))]
    unit = b"".join(patterns)
    prefix = rng.choice([b"", b"[" * 65, b'{"a":' * 70, b"title,abstract\n", b"ICML 2026 Papers\n\n", b'"'])
    return prefix + unit * (size // max(len(unit), 1))


def make_input(rng: random.Random) -> tuple[str, bytes]:
    """One (file name, bytes) upload."""
    fmt = rng.choices(FORMATS, FORMAT_WEIGHTS)[0]
    name = "fuzz" + (f".{fmt}" if fmt else "")
    if rng.random() < 0.004:
        data = _large(rng)
    else:
        data = _encode(rng, _mutate(rng, _document(rng, fmt)))
        if rng.random() < 0.05:  # a file of another format under this name
            data = _document(rng, rng.choice(FORMATS)) + data
    if rng.random() < 0.08:
        data = gzip.compress(data, compresslevel=1)
        if rng.random() < 0.3:
            data = data[: rng.randint(0, len(data))]
        name += ".gz" if rng.random() < 0.8 else ""
    return name, data


# --------------------------------------------------------------------------------- running


@dataclass
class Figures:
    inputs: int = 0
    bytes: int = 0
    seconds: float = 0.0
    exceptions: int = 0
    worst_per_chunk: float = 0.0  # readers only: the target
    worst_input: str = ""
    worst_derived_per_chunk: float = 0.0  # readers and enrichment, reported beside it
    worst_derived_input: str = ""
    saved: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        self.inputs += other.inputs
        self.bytes += other.bytes
        self.seconds = max(self.seconds, other.seconds)
        self.exceptions += other.exceptions
        self.saved += other.saved
        if other.worst_per_chunk > self.worst_per_chunk:
            self.worst_per_chunk, self.worst_input = other.worst_per_chunk, other.worst_input
        if other.worst_derived_per_chunk > self.worst_derived_per_chunk:
            self.worst_derived_per_chunk = other.worst_derived_per_chunk
            self.worst_derived_input = other.worst_derived_input


def fuzz(seed: int, count: int, derive_every: int) -> Figures:
    """Run `count` inputs made from `seed`; never raises for an input (that is what it counts)."""
    from dashboard import corpus

    rng = random.Random(seed)
    figures = Figures()
    started = time.perf_counter()
    for n in range(count):
        name, data = "(not made)", b""
        derive = derive_every > 0 and n % derive_every == 0
        begin = time.perf_counter()
        try:
            # making an input runs the exporter (Parquet and Excel inputs are our own exports): fuzzed too
            name, data = make_input(rng)
            begin = time.perf_counter()
            result = corpus.load_uploads([(name, data)], derive=derive)
            if len(result.papers) != result.report.papers:
                raise AssertionError(f"{len(result.papers)} rows but the report says {result.report.papers}")
        except Exception:
            figures.exceptions += 1
            RESULTS.mkdir(parents=True, exist_ok=True)
            path = RESULTS / f"crash-{seed}-{n}-{name.replace('/', '_')}"
            path.write_bytes(data)
            path.with_suffix(path.suffix + ".txt").write_text(traceback.format_exc())
            figures.saved.append(str(path))
        elapsed = time.perf_counter() - begin
        per_chunk = elapsed / max(1, -(-content_size(data) // CHUNK))
        what = f"{name}, {len(data):,} bytes, {elapsed:.3f} s (seed {seed}, input {n})"
        if derive and per_chunk > figures.worst_derived_per_chunk:
            figures.worst_derived_per_chunk, figures.worst_derived_input = per_chunk, what
        elif not derive and per_chunk > figures.worst_per_chunk:
            figures.worst_per_chunk, figures.worst_input = per_chunk, what
        figures.inputs += 1
        figures.bytes += len(data)
    figures.seconds = time.perf_counter() - started
    return figures


def content_size(data: bytes) -> int:
    """Bytes the readers work on: a gzip file's decompressed size (at most what corpus accepts)."""
    if not data.startswith(b"\x1f\x8b"):
        return len(data)
    decompressor = zlib.decompressobj(wbits=47)  # gzip or zlib, first member only: a lower bound
    try:
        return max(len(data), len(decompressor.decompress(data, 64 << 20)))
    except zlib.error:
        return len(data)


def _worker(arguments: tuple[int, int, int]) -> Figures:
    return fuzz(*arguments)


def run(count: int, seed: int, workers: int, derive_every: int) -> Figures:
    # Small batches, so progress shows and the load spreads evenly over the workers.
    batch = 5_000
    jobs = [
        (seed * 1_000_003 + i, min(batch, count - i * batch), derive_every) for i in range(-(-count // batch))
    ]
    total = Figures()
    started = time.perf_counter()
    with multiprocessing.Pool(workers) as pool:
        for figures in pool.imap_unordered(_worker, jobs):
            total.add(figures)
            rate = total.inputs / (time.perf_counter() - started)
            print(
                f"  {total.inputs:>9,} inputs  {rate:7.0f}/s  exceptions {total.exceptions}  "
                f"worst {total.worst_per_chunk:.3f} s per 100 kB ({total.worst_input})",
                file=sys.stderr,
                flush=True,
            )
    total.seconds = time.perf_counter() - started
    return total


def run_atheris(argv: list[str]) -> None:  # pragma: no cover - optional, needs atheris
    import atheris

    with atheris.instrument_imports():
        from dashboard import corpus

    def one_input(data: bytes) -> None:
        provider = atheris.FuzzedDataProvider(data)
        fmt = FORMATS[provider.ConsumeIntInRange(0, len(FORMATS) - 1)]
        name = "fuzz" + (f".{fmt}" if fmt else "") + (".gz" if provider.ConsumeBool() else "")
        corpus.load_uploads([(name, provider.ConsumeBytes(provider.remaining_bytes()))], derive=False)

    atheris.Setup([sys.argv[0], *argv], one_input)
    atheris.Fuzz()


def _timed_call(call: object, text: str) -> float:
    started = time.process_time()
    call(text)  # type: ignore[operator]
    return time.process_time() - started


def _capped_call(call: object, text: str, cap: float) -> float:
    """CPU seconds of ``call(text)`` in a forked child, or ``inf`` when it ran past ``cap`` wall seconds."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=lambda: child.send(_timed_call(call, text)), daemon=True)
    process.start()
    if parent.poll(cap):
        seconds = parent.recv()
        process.join()
        return seconds
    process.kill()
    process.join()
    return float("inf")


def run_extractors(size: int, cap: float | None) -> int:
    """Print each extractor's and reader's slowest pathological text; 1 when one takes 1 s or more."""
    sys.path.insert(0, str(REPO / "tests"))
    import hostile_text

    texts = hostile_text.payloads(size)
    calls = dict(sorted(hostile_text.extractors().items()))
    for reader in hostile_text.READERS:
        calls[f"reader {reader}"] = lambda text, reader=reader: hostile_text.read_as(reader, text)
    print(f"{len(calls)} extractors and readers x {len(texts)} texts of {size:,} characters (CPU seconds)")
    worst_of_all = (0.0, "", "")
    for name, call in calls.items():
        call("warm up: lazy tables")
        worst = (0.0, "")
        for shape, text in texts.items():
            seconds = _capped_call(call, text, cap) if cap else _timed_call(call, text)
            worst = max(worst, (seconds, shape))
        shown = f"> {cap:g}" if worst[0] == float("inf") else f"{worst[0]:.3f}"
        print(f"  {name:<52} {shown:>7} s  {worst[1]}", flush=True)
        worst_of_all = max(worst_of_all, (worst[0], name, worst[1]))
    seconds, name, shape = worst_of_all
    shown = f"> {cap:g}" if seconds == float("inf") else f"{seconds:.3f}"
    print(f"worst                    {shown} s (target < {TARGET_SECONDS_PER_CHUNK}): {name} on {shape}")
    ok = seconds < TARGET_SECONDS_PER_CHUNK
    print("OK" if ok else "TARGET MISSED")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="generated inputs (1,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="processes (2: this machine's cores)")
    parser.add_argument("--derive-every", type=int, default=20, help="also enrich one input in N (20)")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided run with atheris instead")
    parser.add_argument("atheris_args", nargs="*", help="after --: libFuzzer flags for --atheris")
    parser.add_argument("--extractors", action="store_true", help="time every extractor on hostile texts")
    parser.add_argument("--size", type=int, default=100_000, help="--extractors: characters per text")
    parser.add_argument("--cap", type=float, default=None, help="--extractors: stop a call after N s")
    args = parser.parse_args()
    if args.extractors:
        return run_extractors(args.size, args.cap)
    if args.atheris:
        run_atheris(args.atheris_args)
        return 0
    print(f"fuzzing corpus.load_uploads: {args.count:,} inputs, seed {args.seed}, {args.workers} workers")
    figures = run(args.count, args.seed, args.workers, args.derive_every)
    ok = figures.exceptions == 0 and figures.worst_per_chunk < TARGET_SECONDS_PER_CHUNK
    print(f"inputs                   {figures.inputs:,} ({figures.bytes / 1e6:,.1f} MB)")
    print(f"inputs/s                 {figures.inputs / figures.seconds:,.0f} ({figures.seconds:.0f} s wall)")
    print(f"exceptions               {figures.exceptions} (target 0)")
    target = f"(target < {TARGET_SECONDS_PER_CHUNK})"
    print(f"max s per 100 kB         {figures.worst_per_chunk:.3f} {target}: {figures.worst_input}")
    print(
        f"  with enrichment        {figures.worst_derived_per_chunk:.3f} (one input in {args.derive_every}; "
        f"not a target): {figures.worst_derived_input}"
    )
    for path in figures.saved[:10]:
        print(f"  saved {path}")
    print("OK" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
