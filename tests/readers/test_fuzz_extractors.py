"""Every extractor of abstract text and every reader over 100 kB pathological texts (issue 56, item 1).

A regex that backtracks over a long run (capitals, digits, brackets, ``$``, ``\\``, dots, whitespace)
turns one hostile upload into minutes of a worker's time: `datasets("benchmark " + "A" * 20000)` took
24 s. Each call here must take less than `LIMIT` seconds of CPU on 100,000 characters; the extractors
are found by walking the modules (`hostile_text.extractors`), so a new one is fuzzed without being
listed. The issue asks for this bound in time; CPU time (`time.process_time`), not wall time, so a
busy machine does not fail it, and a limit several times what the slowest call takes.
`bench/fuzz.py --extractors` prints the figures.

The per-record time budget of uploads (`enrich.add_derived_columns_within`, `uploads.RECORD_SECONDS`)
is tested with a stand-in extractor that stalls in the regex engine the way the old one did.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from support.hostile_text import (
    PAYLOADS,
    READERS,
    STALLING_ABSTRACT,
    extractors,
    prepare_with_stalling_datasets,
    read_as,
    stalling_datasets,
    unclassified,
)

from dashboard import corpus
from dashboard.server import uploads, worker
from dashboard.text import enrich
from dashboard.text.extract import datasets

LIMIT = 1.0  # CPU seconds per call on 100,000 characters

EXTRACTORS = extractors()


def _cpu_seconds(call: object, text: str) -> float:
    started = time.process_time()
    call(text)  # type: ignore[operator]
    return time.process_time() - started


def _cases() -> list[object]:
    cases = []
    for name in sorted(EXTRACTORS):
        for shape in PAYLOADS:
            cases.append(pytest.param(name, shape, id=f"{name.removeprefix('dashboard.')}-{shape}"))
    return cases


@pytest.mark.parametrize(("name", "shape"), _cases())
def test_every_extractor_takes_under_a_second_on_100_kb_of_hostile_text(name: str, shape: str) -> None:
    call = EXTRACTORS[name]
    call("warm up: lazy tables such as the dataset list are built on first use")
    seconds = _cpu_seconds(call, PAYLOADS[shape])
    assert seconds < LIMIT, (
        f"{name} took {seconds:.2f} s of CPU on {shape!r} ({len(PAYLOADS[shape]):,} chars)"
    )


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("shape", list(PAYLOADS))
def test_every_reader_takes_under_a_second_on_a_file_of_hostile_text(reader: str, shape: str) -> None:
    seconds = _cpu_seconds(lambda text: read_as(reader, text), PAYLOADS[shape])
    assert seconds < LIMIT, f"reading {reader} took {seconds:.2f} s of CPU on {shape!r}"


def test_the_extractors_are_found_by_walking_the_modules() -> None:
    assert unclassified() == [], "classify these in tests/hostile_text.py (NOT_TEXT or ARGUMENTS)"
    for expected in (
        "dashboard.text.extract.datasets",
        "dashboard.text.extract.method_names",
        "dashboard.text.extract.derived_title",
        "dashboard.text.clean.clean_markup",
        "dashboard.text.tokens.scan",
        "dashboard.text.links.find_urls",
        "dashboard.text.enrich.derive_fields",
        "dashboard.screen.visible",
    ):
        assert expected in EXTRACTORS
    assert all(len(text) >= 99_990 for text in PAYLOADS.values())


# --------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("prefix", ["benchmark ", "QA ", "Eval ", "Bench "])
def test_datasets_reads_a_run_of_capitals_once(prefix: str) -> None:
    """The issue's payloads: 24 s ("benchmark ") and 20.8 s ("QA ") at 20,000 capitals."""
    text = prefix + "A" * 20_000
    seconds = _cpu_seconds(datasets, text)
    assert seconds < LIMIT, f"datasets({prefix!r} + 'A' * 20000) took {seconds:.2f} s of CPU"
    assert datasets(text) == []


def test_datasets_still_finds_names_around_a_long_run() -> None:
    text = "We test on MJ-Bench-Video, SWE-bench, HotpotQA and HumanEval; " + "A" * 20_000 + " then FooBench."
    assert datasets(text) == ["MJ-Bench-Video", "SWE-bench", "HotpotQA", "HumanEval", "FooBench"]
    # a name inside a longer word is no name, as before
    assert datasets("xFooBench FooBench_x Foo-QA-x") == []


# --------------------------------------------------------------------------- the time budget per record


def _files(*abstracts: str) -> list[tuple[str, bytes]]:
    records = [{"title": f"Paper {i}", "abstract": text} for i, text in enumerate(abstracts, start=1)]
    return [("hostile.jsonl", "\n".join(json.dumps(record) for record in records).encode())]


FINE = "We propose FooNet, a model, evaluated on HotpotQA. Code: https://github.com/a/foonet"


def test_a_record_over_its_time_budget_is_stopped_reported_and_kept_without_derived_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(enrich, "datasets", stalling_datasets)  # minutes on STALLING_ABSTRACT
    monkeypatch.setattr(uploads, "RECORD_SECONDS", 0.3)
    started = time.monotonic()
    prepared = uploads.prepare(_files(FINE, STALLING_ABSTRACT, FINE + " Again."), [0], "auto")
    assert time.monotonic() - started < 120  # stopped by the budget, not after the stall's minutes
    papers = prepared.result.papers
    assert len(papers) == 3 and prepared.refused == ""
    assert papers["method_names"].tolist() == [["FooNet"], [], ["FooNet"]]
    assert papers["code_status"].tolist() == ["released", "none", "released"]
    assert papers["abstract_clean"].iloc[1] == STALLING_ABSTRACT and papers["title"].iloc[1] == "Paper 2"
    [warning] = prepared.result.report.warnings
    assert (warning.source, warning.place) == ("hostile.jsonl", "record 2")
    assert "RECORD_SECONDS" in warning.message and papers["id"].iloc[1] in warning.message


def test_records_within_the_budget_are_derived_as_without_one() -> None:
    raw = corpus.load_uploads(
        _files(FINE, "Graph networks on **PIAA** (see $x^2$).", ""), derive=False
    ).papers
    table, over = enrich.add_derived_columns_within(raw, 30.0)
    assert over == []
    assert table.equals(enrich.add_derived_columns(raw))


def test_outside_the_main_thread_a_slow_record_is_found_when_it_is_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow_datasets(text: str, **_: object) -> list[str]:
        if "slow" in text:
            started = time.process_time()
            while time.process_time() - started < 0.3:
                pass
        return []

    monkeypatch.setattr(enrich, "datasets", slow_datasets)
    raw = corpus.load_uploads(_files(FINE, "A slow one."), derive=False).papers
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(enrich.add_derived_columns_within(raw, 0.1)))
    thread.start()
    thread.join()
    table, over = outcome[0]  # type: ignore[misc]
    assert over == [1] and table["method_names"].tolist() == [["FooNet"], []]


def test_the_upload_worker_is_not_held_by_a_stalling_record() -> None:
    """The real worker process: the budget stops the record there, the job finishes, the report says so."""
    started = time.monotonic()
    prepared, _ = worker.run(
        prepare_with_stalling_datasets,
        _files(FINE, STALLING_ABSTRACT),
        0.3,
        timeout=300,
        memory_bytes=2 << 30,
    )
    assert time.monotonic() - started < 120
    assert [p.place for p in prepared.result.report.warnings] == ["record 2"]
    assert prepared.result.papers["datasets"].tolist() == [[], []]  # the stand-in finds none in FINE
