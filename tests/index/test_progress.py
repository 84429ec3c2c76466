"""An index build's progress: the stages its lines name, read back by the disk cache's progress bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SEEDS_DIR

from dashboard import corpus
from dashboard.index import build_index, diskcache, read_manifest
from dashboard.index import progress as stages


@pytest.fixture(scope="module")
def build_lines(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """The progress lines of a real build of the seeds, and the index it wrote."""
    lines: list[str] = []
    out = tmp_path_factory.mktemp("progress") / "index"
    build_index([str(SEEDS_DIR)], out, workers=1, progress=lines.append)
    return lines, out


def test_every_stage_of_a_real_build_is_read_in_order(build_lines: tuple[list[str], Path]) -> None:
    lines, _ = build_lines
    seen = [stages.parse(lines[: n + 1]) for n in range(len(lines))]
    steps = [state.step for state in seen]
    assert steps == sorted(steps), "the bar never goes back"
    # Each stage is seen, with the build's own words, then "done" fills the bar.
    started = {state.step: state.message for state in seen if not state.done}
    assert sorted(started) == [1, 2, 3, 4]
    assert started[1] == "reading files"
    assert started[2].startswith("counting terms of 57 papers; fitting topics on 57")
    last = seen[-1]
    assert last.done and last.fraction == 1.0 and last.step == last.steps == len(stages.STAGES)


def test_the_stages_are_the_phases_the_manifest_times(build_lines: tuple[list[str], Path]) -> None:
    _, out = build_lines
    assert list(read_manifest(out)["phases"]) == [stage.phase for stage in stages.STAGES]


def test_the_bar_holds_the_weights_of_the_stages_finished() -> None:
    assert sum(stage.weight for stage in stages.STAGES) == pytest.approx(1.0)
    lines = [stages.stamp(0.0, "reading files"), stages.stamp(5.8, "counting terms of 9 papers")]
    assert stages.parse(lines[:1]).fraction == 0.0
    assert stages.parse(lines).fraction == pytest.approx(stages.READ.weight)
    write = stages.parse([*lines, stages.stamp(30.0, stages.WRITE.opening)])
    assert write.step == 3 and write.seconds == 30.0
    assert write.fraction == pytest.approx(stages.READ.weight + stages.COUNT.weight)


@pytest.mark.parametrize(
    "noise",
    [
        "1,234 papers, 20 topics (fitted on 1,234), 3.2 MB in /srv/cache/index-x, built in 9.9 s",
        "    9.9 s  index written to /srv/cache/.building-index-x",  # a path never becomes the stage
        "Traceback (most recent call last):",
        "    9.9 s  encoded 3/10 partitions",
        "   10.",  # a line the build is still writing
        "",
    ],
)
def test_lines_that_start_no_stage_leave_the_stage_as_it_was(noise: str) -> None:
    counting = stages.stamp(5.8, "counting terms of 9 papers; fitting topics on 9 of them")
    before = stages.parse([stages.stamp(0, "reading files"), counting])
    assert stages.parse([stages.stamp(0, "reading files"), counting, noise]) == before


def test_what_the_bar_says() -> None:
    counting = stages.parse([stages.stamp(5.8, "counting terms of 100,000 papers")])
    assert counting.text(70.4) == "Step 2 of 4: counting terms of 100,000 papers (1 min 10 s so far)"
    assert counting.text() == "Step 2 of 4: counting terms of 100,000 papers (6 s so far)"
    assert stages.BuildProgress().text(3) == "Starting the build (3 s so far)"
    assert stages.parse([stages.stamp(46.2, stages.DONE)]).text(50) == "Done in 46 s"
    assert stages.duration(3 * 3600 + 59) == "3 h 0 min"


def test_a_missing_or_empty_file_is_the_start(tmp_path: Path) -> None:
    assert stages.read(tmp_path / "none.log") == stages.BuildProgress()
    (tmp_path / "empty.log").write_text("")
    assert stages.read(tmp_path / "empty.log").step == 0


def test_a_build_in_the_background_reports_its_stages_then_its_entry(tmp_path: Path) -> None:
    digest = corpus.digest_paths([str(SEEDS_DIR)])
    build = diskcache.Build.start([str(SEEDS_DIR)], digest, root=tmp_path)
    seen: list[int] = []
    while not build.wait(0.05):
        seen.append(build.progress().step)
    assert build.entry is not None and diskcache.is_valid(build.entry, digest) and not build.problem
    assert seen == sorted(seen)
    assert build.progress().done and build.elapsed() == build.seconds
    # The log went with the build; only the entry is left.
    assert [p.name for p in tmp_path.iterdir()] == [build.entry.name]
    again = diskcache.Build.start([str(SEEDS_DIR)], digest, root=tmp_path)
    assert again.done and again.entry == build.entry  # found: nothing built


def test_a_failed_build_says_why_and_gives_no_entry(tmp_path: Path) -> None:
    digest = corpus.digest_paths([str(SEEDS_DIR)])
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # the cache directory cannot be made
    build = diskcache.Build.start([str(SEEDS_DIR)], digest, root=blocked / "cache")
    assert build.wait(60)
    assert build.entry is None and build.problem
