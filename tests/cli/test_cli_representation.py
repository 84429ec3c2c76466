"""``analyze --representation``: topics in the sentence-embedding space when its model is installed, in LSA
(said on stderr) when it is not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.cli import main as cli
from dashboard.search import semantic

TEXTS = [
    "Graph networks for molecules and proteins.",
    "Diffusion models sample images from noise.",
    "Message passing graph networks on molecules.",
    "Image diffusion with a learned denoiser.",
    "Graph neural networks predict molecule properties.",
    "Denoising diffusion for image synthesis.",
]


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "papers.csv"
    pd.DataFrame({"title": [f"Paper {i}" for i in range(len(TEXTS))], "abstract": TEXTS}).to_csv(
        path, index=False
    )
    return path


class SplitByPosition:
    """A stand-in encoder whose vectors group papers 0, 1, 2 against 3, 4, 5, whatever their words say."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if i < 3 else [0.0, 1.0] for i in range(len(texts))], dtype=np.float32)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_minilm_topics_follow_the_embeddings(
    corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "available", lambda: True)
    monkeypatch.setattr(semantic, "Encoder", SplitByPosition)
    out = tmp_path / "out.csv"
    argv = ["analyze", str(corpus_file), "--out", str(out), "--topics", "2", "--representation", "minilm"]
    code, _, err = run(argv, capsys)
    assert code == 0 and "embedding model" not in err
    topics = pd.read_csv(out)["topic"].tolist()
    assert len(set(topics[:3])) == 1 and len(set(topics[3:])) == 1 and topics[0] != topics[3]


def test_without_the_extra_it_says_so_and_uses_lsa(
    corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "available", lambda: False)
    out = tmp_path / "out.csv"
    argv = ["analyze", str(corpus_file), "--out", str(out), "--topics", "2", "--representation", "minilm"]
    code, _, err = run(argv, capsys)
    assert code == 0
    assert "needs the embedding model" in err and "finding topics in lsa" in err
    assert semantic.EXTRA_HINT in err  # how to install it
    topics = pd.read_csv(out)["topic"].tolist()
    # In LSA the words decide: graph papers (0, 2, 4) against diffusion papers (1, 3, 5).
    assert topics[0] == topics[2] == topics[4] and topics[1] == topics[3] == topics[5]
