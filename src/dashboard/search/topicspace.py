"""The space a corpus's topics are found in, and the vectors it needs: one default for every caller.

The topic model (:mod:`dashboard.analytics.topics`) clusters the vectors it is given; the
sentence-embedding model (`dashboard.search.semantic`) lives in this layer, above analytics. So the rule
`representations.choose` (``auto``: the sentence embedding up to `representations.EMBEDDED_PAPERS`
papers, LSA above) is applied here, with whether the model is installed, by every caller that fits
topics: the app's sources (`dashboard.sources`), the upload worker, ``paper-dashboard analyze`` and
``report`` (all through `fit_topics`), and the index build (which encodes on its workers and stores the
vectors in ``semantic.npy``). That is what keeps one default across the app, the CLI and the index.

    >>> space, vectors = paper_vectors(pd.DataFrame({"title": ["a"], "abstract": ["b"]}), "lsa")
    >>> space, vectors
    ('lsa', None)

An operator can set the default for every corpus with ``PAPER_DASHBOARD_TOPIC_SPACE`` (`configured`:
``lsa``, ``minilm``, ``lsa+minilm`` or ``auto``): a server that takes many uploads on a small machine
may want ``lsa``, which never spends minutes encoding. An explicit ``--representation`` wins over it.

Encodings are kept per process (`encode`: the last `MEMO_CORPORA` corpora, keyed by their texts), so the
app's refits at other numbers of topics and a page's "papers like this" do not encode a corpus again;
with ``store=True`` also on disk, in the cache folder (`dashboard.system.cachedir`: ``embeddings/``, the
newest `STORED_CORPORA` corpora), so a server's next start does not either. Uploads are never written
to disk: the upload worker encodes without the store.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dashboard.analytics import representations
from dashboard.analytics.analysis import paper_texts
from dashboard.search import semantic
from dashboard.system import cachedir

if TYPE_CHECKING:
    from dashboard.analytics.analysis import Analysis

ENV_SPACE = "PAPER_DASHBOARD_TOPIC_SPACE"
MEMO_CORPORA = 8  # 2,000 papers x 384 float32 is 3 MB a corpus
STORED_CORPORA = 64  # on disk: at most about 200 MB
LOG = logging.getLogger(__name__)
_MEMO: OrderedDict[str, np.ndarray] = OrderedDict()
_LOCK = threading.Lock()  # one encoding at a time per process: each already uses every core
_ENCODER: list[semantic.Encoder] = []


def space_for(n_papers: int, requested: str = representations.AUTO, setting: str | None = None) -> str:
    """The space ``n_papers`` papers get when ``requested`` is asked for (`representations.choose`,
    with whether the embedding model is installed here). ``auto`` is the operator's ``setting``: as the
    caller read it (a worker process's environment may predate its server's), else `configured` here.
    """
    if requested == representations.AUTO:
        requested = setting if setting is not None else configured()
    return representations.choose(requested, n_papers, can_encode=semantic.available())


def configured(environ: Mapping[str, str] = os.environ) -> str:
    """The space an operator chose for every corpus (`ENV_SPACE`: ``lsa`` on a server that must never
    spend minutes encoding an upload, say), or ``auto``; a name that is no space is logged and ignored.

    >>> configured({ENV_SPACE: "lsa"}), configured({}), configured({ENV_SPACE: "bert"})
    ('lsa', 'auto', 'auto')
    """
    value = environ.get(ENV_SPACE, "").strip().lower()
    if value in representations.names():
        return value
    if value:
        known = ", ".join(representations.names())
        LOG.warning("%s=%r is not one of %s: using auto", ENV_SPACE, value, known)
    return representations.AUTO


def encode(texts: Sequence[str], store: bool = False) -> np.ndarray:
    """Every text's sentence embedding (`semantic.Encoder.encode`), kept per process by the texts, and
    with ``store`` on disk too (see the module docstring)."""
    key = _key(texts)
    with _LOCK:
        vectors = _kept(key, len(texts), store)
        if vectors is None:
            vectors = _encoder().encode(list(texts))
            if store and cachedir.enabled():
                _keep(_folder(), key, vectors)
            _remember(key, vectors)
        return vectors


def kept(texts: Sequence[str]) -> np.ndarray | None:
    """The vectors of ``texts`` where this process or the disk store has them, without encoding: the
    index build's encode map asks first, so the disk cache's build behind a small corpus's first page
    does not encode what the app's process has just encoded and stored."""
    key = _key(texts)
    with _LOCK:
        return _kept(key, len(texts), store=True)


def _key(texts: Sequence[str]) -> str:
    digest = hashlib.sha256(semantic.MODEL_ID.encode())
    for text in texts:
        digest.update(str(text).encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _folder() -> Path:
    return cachedir.cache_root() / "embeddings"


def _kept(key: str, rows: int, store: bool) -> np.ndarray | None:
    """The memo's vectors for ``key``, else (with ``store``, the disk cache on) the stored ones."""
    if key in _MEMO:
        _MEMO.move_to_end(key)
        return _MEMO[key]
    vectors = _stored(_folder() / f"{key}.npy", rows) if store and cachedir.enabled() else None
    if vectors is not None:
        _remember(key, vectors)
    return vectors


def _remember(key: str, vectors: np.ndarray) -> None:
    vectors.setflags(write=False)  # shared by every caller that asks for these texts
    _MEMO[key] = vectors
    while len(_MEMO) > MEMO_CORPORA:
        _MEMO.popitem(last=False)


def _encoder() -> semantic.Encoder:
    """The process's encoder (its model loads once: about half a second)."""
    if not _ENCODER or not isinstance(_ENCODER[0], semantic.Encoder):
        _ENCODER[:] = [semantic.Encoder()]
    return _ENCODER[0]


def _stored(path: Path, rows: int) -> np.ndarray | None:
    """The vectors kept at ``path``, when they read and have the expected shape; None otherwise (a
    damaged file is encoded again and replaced)."""
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if vectors.shape != (rows, semantic.DIMENSIONS) or vectors.dtype != np.float32:
        return None
    if not np.isfinite(vectors).all():
        return None
    os.utime(path)  # the newest are kept
    return vectors


def _keep(folder: Path, key: str, vectors: np.ndarray) -> None:
    """Write ``vectors`` for ``key`` (atomically: a reader never sees half a file), then drop all but the
    newest `STORED_CORPORA` files. A folder that cannot be written only costs the next start an encoding."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{key}.{uuid.uuid4().hex}.partial"
        with partial.open("wb") as out:
            np.save(out, vectors, allow_pickle=False)
        partial.replace(folder / f"{key}.npy")
        kept = sorted(folder.glob("*.npy"), key=lambda file: file.stat().st_mtime, reverse=True)
        for old in kept[STORED_CORPORA:]:
            old.unlink(missing_ok=True)
    except OSError as error:
        LOG.warning("could not keep the embeddings in %s: %s", folder, error)


def paper_vectors(
    papers: pd.DataFrame,
    requested: str = representations.AUTO,
    store: bool = False,
    setting: str | None = None,
) -> tuple[str, np.ndarray | None]:
    """The space ``papers`` get (`space_for`) and their vectors when that space needs embeddings
    (`encode`, on disk too with ``store``). Where the default's encoding fails (a damaged model file,
    say), the failure is logged and the topics are found in LSA; a space asked for by name raises."""
    space = space_for(len(papers), requested, setting)
    if not representations.get(space).external:
        return space, None
    try:
        return space, encode(paper_texts(papers), store)
    except Exception as error:  # a broken model install: the default's topics in LSA beat no topics
        if requested != representations.AUTO:
            raise
        LOG.warning("the sentence embedding failed (%s: %s): topics in LSA", type(error).__name__, error)
        return representations.BASE_REPRESENTATION, None


def fit_topics(
    papers: pd.DataFrame,
    n_topics: int | str = "auto",
    representation: str = representations.AUTO,
    vectors: np.ndarray | None = None,
    store: bool = False,
    setting: str | None = None,
    **options: Any,
) -> Analysis:
    """`analysis.analyze` in the space `space_for` chooses for ``papers``, with their embeddings encoded
    when that space needs them (``vectors``: already encoded, from a first fit; ``store``: kept on disk;
    ``setting``: the operator's, as read by a server for its worker). What every source, the upload
    worker, ``paper-dashboard analyze`` and ``report`` fit, so they share one default."""
    from dashboard.analytics.analysis import analyze  # scikit-learn loads only when topics are fitted

    if vectors is None:
        space, vectors = paper_vectors(papers, representation, store, setting)
    else:
        space = space_for(len(papers), representation, setting)
    return analyze(papers, n_topics=n_topics, representation=space, vectors=vectors, **options)
