"""The stages of an index build, as its progress lines name them, and how far a build is.

`dashboard.index.build.build_index` says each stage as it starts (``progress("   12.3 s  reading
files")``, the seconds since the build started, then the stage's words); ``paper-dashboard index``
prints those lines, and the disk cache (`dashboard.index.diskcache.Build`) writes them to a file the
server reads while the build goes on. The build's words for each stage are defined here, once, and
`build_index` says them from here, so the parser below can never drift from what the build prints.

Each stage has a share of the progress bar (`Stage.weight`): roughly its share of a build's time (the
``phases`` of a built index's manifest, which names each stage's seconds by `Stage.phase`). Topic
fitting and term counting is the longest. The bar moves only when a build's own line says a stage
started, never on a guess of the time left.

>>> state = parse(["    0.0 s  reading files", "    5.8 s  counting terms of 27,179 papers"])
>>> state.step, state.steps, round(state.fraction, 2)
(2, 4, 0.15)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stage:
    """One stage of a build: the manifest's name for its seconds, the words its progress line starts
    with, and its share of the progress bar."""

    phase: str
    opening: str
    weight: float

    def says(self, message: str) -> bool:
        """Whether a progress line's message starts this stage."""
        return message.startswith(self.opening)


READ = Stage("read", "reading files", 0.15)
COUNT = Stage("count and fit", "counting terms", 0.50)
WRITE = Stage("assign and write", "assigning topics, writing the table, term counts and search index", 0.32)
CHECKSUMS = Stage("checksums", "checksums", 0.03)
STAGES = (READ, COUNT, WRITE, CHECKSUMS)
DONE = "done"  # the build's last stage line: every file written and checked

# "   12.3 s  reading files": the format `build_index` gives its progress callback.
LINE = re.compile(r"^\s*(\d+(?:\.\d+)?) s  (\S.*?)\s*$")


def stamp(seconds: float, message: str) -> str:
    """A progress line as `build_index` gives it (`LINE` reads it back).

    >>> stamp(12.34, "reading files")
    '   12.3 s  reading files'
    """
    return f"{seconds:7.1f} s  {message}"


@dataclass(frozen=True)
class BuildProgress:
    """How far a build is, from its progress lines: the stage it is in (``step`` of ``steps``, 0
    before its first line), that stage's words as the build said them, the build's seconds at that
    line, and the share of the bar done (the weights of the stages finished)."""

    step: int = 0
    steps: int = len(STAGES)
    message: str = ""
    seconds: float = 0.0
    fraction: float = 0.0
    done: bool = False

    def text(self, elapsed: float | None = None) -> str:
        """What a progress bar says, e.g. ``Step 2 of 4: counting terms of 100,000 papers (1 min 10 s
        so far)``; ``elapsed`` is the build's time so far (default: its time at the last line).

        >>> BuildProgress(1, 4, "reading files", 0.0, 0.0).text(70.4)
        'Step 1 of 4: reading files (1 min 10 s so far)'
        """
        so_far = f" ({duration(self.seconds if elapsed is None else elapsed)} so far)"
        if self.done:
            return f"Done in {duration(self.seconds)}"
        if self.step == 0:
            return f"Starting the build{so_far}"
        return f"Step {self.step} of {self.steps}: {self.message}{so_far}"


def parse(lines: Iterable[str]) -> BuildProgress:
    """The progress of a build from its output lines so far; lines that are no stage line (the
    build's other messages, a report, a traceback) are skipped."""
    state = BuildProgress()
    for line in lines:
        matched = LINE.match(line)
        if matched is None:
            continue
        seconds, message = float(matched.group(1)), matched.group(2)
        if message == DONE:
            state = BuildProgress(len(STAGES), len(STAGES), message, seconds, 1.0, done=True)
            continue
        for number, stage in enumerate(STAGES, start=1):
            if stage.says(message):
                finished = sum(s.weight for s in STAGES[: number - 1])
                state = BuildProgress(number, len(STAGES), message, seconds, finished)
                break
    return state


def read(path: Path) -> BuildProgress:
    """The progress written to ``path`` so far (the start, before the file exists or holds a line).
    A line the build is still writing is read as far as it goes; the next read sees it whole."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return BuildProgress()
    return parse(text.splitlines())


def duration(seconds: float) -> str:
    """Seconds in words for a person: ``45 s``, ``1 min 10 s``, ``1 h 2 min``.

    >>> [duration(s) for s in (4.6, 70.4, 3720)]
    ['5 s', '1 min 10 s', '1 h 2 min']
    """
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"
