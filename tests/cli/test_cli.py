"""The paper-dashboard command line: exit codes 0/1/2, output files, the report on stderr, --help."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard import corpus
from dashboard.cli import common as cli_common
from dashboard.cli import main as cli

ABSTRACTS = (
    "ICML 2026 Papers\n\n"
    "We propose Alpha, a graph method. Code: https://github.com/a/alpha\n\n"
    "Beta is studied.\n"
)


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "icml.txt"
    path.write_text(ABSTRACTS)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse: --help and usage errors
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl", ".parquet", ".xlsx"])
def test_parse_writes_every_format(suffix: str, corpus_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / f"papers{suffix}"
    code, _, err = run(["parse", str(corpus_file), "--out", str(out)], capsys)
    assert code == cli_common.EXIT_OK
    assert "2 papers from 1 file" in err and f"wrote 2 papers to {out}" in err
    back = corpus.load([out])
    assert back.papers["abstract"].tolist() == [
        "We propose Alpha, a graph method. Code: https://github.com/a/alpha",
        "Beta is studied.",
    ]
    assert back.papers["source"].tolist() == ["icml.txt", "icml.txt"]  # our export keeps its provenance


def test_parse_with_skipped_input_exits_1_and_still_writes(corpus_file: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    out = tmp_path / "out.csv"
    code, _, err = run(
        ["parse", str(corpus_file), str(bad), str(tmp_path / "missing.txt"), "--out", str(out)], capsys
    )
    assert code == cli_common.EXIT_SKIPPED
    assert "  skipped: bad.json: JSON holds a list of 2 values" in err
    assert "  skipped: missing.txt: no such file or folder" in err
    assert len(corpus.load([out]).papers) == 2


def test_parse_raw_keeps_formula_like_cells(tmp_path: Path, capsys) -> None:
    source = tmp_path / "f.jsonl"
    source.write_text(json.dumps({"title": "=1+1", "abstract": "-based methods."}) + "\n")
    quoted, raw = tmp_path / "quoted.csv", tmp_path / "raw.csv"
    assert run(["parse", str(source), "--out", str(quoted)], capsys)[0] == 0
    assert run(["parse", str(source), "--out", str(raw), "--raw"], capsys)[0] == 0
    assert "'=1+1" in quoted.read_text("utf-8-sig") and "'-based methods." in quoted.read_text("utf-8-sig")
    assert "'=1+1" not in raw.read_text("utf-8-sig") and ",=1+1," in raw.read_text("utf-8-sig")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["parse", "x.txt", "--out", "out.docx"], "cannot tell the format"),
        (["parse", "x.txt"], "the following arguments are required: --out"),
        (["parse", "--out", "out.csv"], "the following arguments are required: PATH"),
        (["stats"], "the following arguments are required: PATH"),
        (["stats", "x.txt", "--top", "many"], "invalid int value"),
        (["frobnicate", "x.txt"], "invalid choice"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], words: str, capsys) -> None:
    code, _, err = run(argv, capsys)
    assert code == cli_common.EXIT_USAGE
    assert words in err


def test_unwritable_output_exits_2(corpus_file: Path, tmp_path: Path, capsys) -> None:
    code, _, err = run(
        ["parse", str(corpus_file), "--out", str(tmp_path / "no" / "such" / "dir.csv")], capsys
    )
    assert code == cli_common.EXIT_USAGE
    assert "cannot write" in err


@pytest.mark.parametrize("argv", [["--help"], ["parse", "--help"], ["stats", "--help"]])
def test_help(argv: list[str], capsys) -> None:
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert out.startswith("usage: paper-dashboard")


def test_stats_text_and_json(seeds_dir: Path, capsys) -> None:
    code, out, err = run(["stats", str(seeds_dir)], capsys)
    assert code == 0
    assert "57 papers from 3 files" in err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["papers", "venues", "code", "links", "top", "top"]
    assert lines[0].split() == ["papers", "57", "from", "3", "files"]
    assert "ICML 2026 (57)" in lines[1]
    code, out, _ = run(["stats", str(seeds_dir), "--json", "--top", "3"], capsys)
    figures = json.loads(out)
    assert figures["papers"] == 57 and figures["files"] == 3
    assert figures["venues"] == {"ICML 2026": 57}
    assert sum(figures["code_status"].values()) == 57
    assert figures["code_release_rate"] == round(figures["code_released"] / 57, 4)
    assert figures["links"] == sum(figures["link_kinds"].values()) > 0
    assert len(figures["top_datasets"]) <= 3 and len(figures["top_method_names"]) <= 3


def test_stats_of_a_corpus_with_code(corpus_file: Path, capsys) -> None:
    figures = json.loads(run(["stats", str(corpus_file), "--json"], capsys)[1])
    assert figures["code_released"] == 1 and figures["code_release_rate"] == 0.5
    assert figures["link_kinds"].get("code") == 1


def test_a_new_command_registers_with_one_function(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def add_hello_command(subparsers) -> None:
        parser = subparsers.add_parser("hello", help="say hello")
        cli_common.add_input_arguments(parser)
        parser.set_defaults(run=lambda args: print(f"hello {len(args.paths)}") or 0)

    monkeypatch.setattr(cli, "SUBCOMMANDS", [*cli.SUBCOMMANDS, add_hello_command])
    assert run(["hello", "a", "b"], capsys)[:2] == (0, "hello 2\n")
    assert isinstance(cli.build_parser(), argparse.ArgumentParser)


def test_console_entry_point_in_a_subprocess(corpus_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    bad = tmp_path / "empty.txt"
    bad.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli.main", "parse", str(corpus_file), str(bad), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "skipped: empty.txt: empty file" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(out.read_text().splitlines()) == 2
