"""What every page starts with: the corpus, its analysis, the filters from the URL, and the sidebar.

`page_context()` runs once per script run (each run shows one page) and returns a frozen `View`;
the page reads the papers, the mask and the filters from it, so the table, the charts and every
download agree. Heavy steps are cached in `dashboard.ui.data`; here they only show progress.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.filters import facet_counts
from dashboard.index import diskcache
from dashboard.readers import registry
from dashboard.schema import OUTLIER_TOPIC
from dashboard.screen import visible_frame
from dashboard.ui import data, keys, ranked, sidebar
from dashboard.ui import library as library_ui
from dashboard.ui.components import lazy_popover, max_topics, report_button
from dashboard.ui.markup import STYLE, escape_markdown
from dashboard.ui.url import param, read_filters, settle_query, write_query
from dashboard.ui.view import View

LOG = logging.getLogger(__name__)


def _current_source() -> data.ChosenCorpus:
    held = st.session_state.get(keys.UPLOADS)
    chosen = st.session_state.get(keys.CORPUS_CHOICE, "uploaded")
    if isinstance(held, data.HeldUpload) and chosen == "uploaded":
        return data.upload_source(held, lambda: _held_files(held))
    return data.default_source()


def _held_files(held: data.HeldUpload) -> list[tuple[str, bytes]]:
    """The (name, bytes) of a session's held upload, from the uploader (which keeps the files)."""
    by_id = {str(f.file_id): f for f in st.session_state.get(keys.UPLOAD_WIDGET) or []}
    files = [by_id[i] for i in held.file_ids if i in by_id]
    return read_uploads(files) if len(files) == len(held.file_ids) else []


def _topic_names(analysis: Any) -> dict[int, str]:
    topics = analysis.topics
    names = {}
    for topic, label in zip(topics["topic"], topics["label"], strict=True):
        names[int(topic)] = label if int(topic) == OUTLIER_TOPIC else f"{int(topic)}: {label}"
    return names


def _analyse(
    source: data.ChosenCorpus, papers: pd.DataFrame, n_topics: int | str, refit: bool = False
) -> tuple[Any, str]:
    if len(papers) < 2:
        return None, "Topics need at least two papers."
    try:
        with st.spinner(f"Finding topics, areas and the map for {len(papers):,} papers (once per corpus)…"):
            return data.analyze(source.digest, n_topics, papers, refit), ""
    except data.AnalysisFailed as failed:
        return None, str(failed)
    except Exception as error:  # a failure in one step must not take the whole dashboard down
        LOG.exception("analysis failed")
        return None, f"Topics could not be computed for this corpus ({type(error).__name__}: {error})."


def page_context() -> View:
    """Load (cached), read the filters from the URL, analyse (cached), draw the sidebar."""
    st.html(STYLE)
    corpus_box = st.sidebar.container()
    source = _current_source()
    asked, _ = read_filters()
    # The build's progress shows while the papers are read: a still bar here, the live one (a fragment
    # that reruns itself) once the read is done. A fragment's timer running beside a long first run
    # left pages blank in the twenty-session test (a tick for a fragment of a run not yet finished).
    bar = st.empty()
    if source.building is not None:
        build_bar(bar, source.building)
    reading = f"Reading {source.label}" + (" in a separate process" if source.is_upload else "")
    with st.spinner(reading + "…"):
        result = data.load(source, asked.k if asked.k is not None else "auto")
    bar.empty()
    with corpus_box:
        corpus_section(source, result.report, len(result.papers))
    _say_if_the_link_was_for_an_upload(source, len(result.papers))
    if len(result.papers) == 0:
        st.error(
            "No papers could be read from this corpus. The load report below (also in the sidebar) "
            "says why; upload other files or switch back to the bundled corpus.",
            icon=":material/error:",
        )
        problems = visible_frame(result.report.to_frame())
        if len(problems):
            # A table, not a grid: every reason is shown whole, wrapped, however long.
            st.table(problems.rename(columns=str.capitalize).set_index("Source"))
        st.stop()

    filters, notices = read_filters()
    most = max_topics(len(result.papers))
    if filters.k is not None and filters.k > most:
        notices.append(
            f"number of topics: {filters.k} is more than this corpus supports (at most {most}); using auto"
        )
        filters = replace(filters, k=None, topic=())
    n_topics = filters.k if filters.k is not None else "auto"
    # The count is known before the topics are: say it at once (the first analysis of raw files takes
    # seconds); the sidebar below replaces it.
    early_count = st.sidebar.empty()
    if filters.is_empty and not data.source_of(source.digest).is_index:
        early_count.markdown(f"**{sidebar.count_line(len(result.papers), len(result.papers))}**")
    if source.building is not None:  # its topics come from the disk cache's build, not from a fit here
        build_progress(source.building)
        analysis, problem = None, ""
    else:
        analysis, problem = _analyse(source, result.papers, n_topics, filters.refit)
    early_count.empty()
    papers = analysis.papers if analysis is not None else result.papers
    # Repository answers come from the cache only (never the network): every page shows them at once.
    cache_path = data.repo_cache_path()
    n_answers, latest, repo_problem = data.repo_generation(cache_path)
    generation = (n_answers, latest)
    papers = data.with_repo_columns(source.digest, filters.model, generation, str(cache_path), papers)
    facets = _facets(source.digest, filters.model, papers)
    repo_counts = data.repo_state_counts(source.digest, generation, papers["repo_state"])
    if len(repo_counts):
        facets = {**facets, "repo": repo_counts}
    if repo_problem:
        notices.append(repo_problem)
    # Only the filters that name values are checked: a set of every author name cost each run time.
    filters, restricted = filters.restrict(
        {key: set(values.index) for key, values in facets.items() if getattr(filters, key, ())}
    )
    # The reading lists live in the library, not the table: their rows are found apart and cached on
    # the library's revision; the rest of the mask keeps its cache.
    in_lists, list_notices = library_ui.list_mask(filters, source.digest, papers, analysis)
    restricted += list_notices
    mask = data.mask(source.digest, filters.without("list"), papers)
    names = _topic_names(analysis) if analysis is not None else {}
    names.update(
        {
            t: f"{t}: {name}"
            for t, name in library_ui.topic_names(source.label, analysis)[0].items()
            if t in names
        }
    )
    view = View(
        source=source,
        report=result.report,
        papers=papers,
        filters=filters,
        mask=mask if in_lists is None else mask & in_lists,
        facets=facets,
        analysis=analysis,
        analysis_problem=problem,
        topic_names=names,
        list_mask=in_lists,
        repo_generation=generation,
    )
    liked = ranked.liked_mask(view)
    if liked is not None:
        view = replace(view, mask=view.mask & liked, like_mask=liked)
    sidebar.render(view, [*notices, *restricted])
    with st.sidebar:
        report_button(view)
    if problem:
        st.warning(escape_markdown(problem) + " The other pages still work.", icon=":material/warning:")
    if source.cache_problem:
        st.info(source.cache_problem, icon=":material/info:")
    return view


BUILD_POLL_S = 2.0  # how often the build's progress bar reads its progress (a fragment: nothing else reruns)
BUILD_NOTE = (
    "Topics, areas and the map of this corpus are being computed, once: the result is kept on disk, so "
    "the next start opens it at once. Meanwhile every page answers filters on its papers; topics "
    "appear when the bar is full."
)


@st.fragment(run_every=BUILD_POLL_S)
def build_progress(build: diskcache.Build) -> None:
    """The disk cache's build of this corpus: a bar with its stage in words and how long it has run,
    read from the build's own progress lines (`diskcache.Build.progress`). Once the build has ended
    the whole page runs again, which opens the built index (the filters stay: they are in the URL)."""
    if build.done:
        settle_query()  # this tick may carry a URL older than the last change (`settle_query`)
        st.rerun(scope="app")
    build_bar(st.container(), build)


def build_bar(where: Any, build: diskcache.Build) -> None:
    """The build's bar and note, drawn once in ``where`` (a container or placeholder)."""
    state = build.progress()
    with where.container():
        st.progress(state.fraction, text=escape_markdown(state.text(build.elapsed())))
        st.caption(BUILD_NOTE)


def topics_unavailable(view: View) -> None:
    """The Topics page without topics: they are being computed (the bar above says how far), or
    they cannot be for this corpus."""
    if view.source.building is not None:
        st.info(
            "Topics are being computed for this corpus (the bar above says how far); this page shows "
            "them as soon as they are ready. The other pages already answer filters on its papers.",
            icon=":material/hourglass_top:",
        )
    else:
        st.info(
            "Topics are not available for this corpus; the other pages still work.", icon=":material/info:"
        )


# Shared, never copied: `st.cache_data` unpickled every name's count (hundreds of thousands of authors at a
# million papers) in each run of every page. The pages only read them.
@st.cache_resource(show_spinner=False, max_entries=16)
def _facets(digest: str, model: str, _papers: pd.DataFrame) -> dict[str, pd.Series]:
    # a prebuilt index keeps them (counting takes seconds at a million papers)
    stored = data.source_of(digest).stored_facets(model)
    if stored is not None:
        return stored
    # Another topic model changes the topic counts only: the others are counted once per corpus.
    topics = _papers["topic"].dropna().value_counts() if "topic" in _papers.columns else None
    others = _facets_but_topics(digest, _papers)
    if topics is None:
        return others
    topics.index.name = "topic"
    return {"topic": topics.rename("papers"), **others}


@st.cache_resource(show_spinner=False, max_entries=8)
def _facets_but_topics(digest: str, _papers: pd.DataFrame) -> dict[str, pd.Series]:
    stored = data.source_of(digest).stored_facets("auto")
    counts = stored if stored is not None else facet_counts(_papers.drop(columns=["topic"], errors="ignore"))
    return {key: values for key, values in counts.items() if key != "topic"}


PROBLEMS_AS_TEXT = 10  # problems listed as wrapped text in the sidebar; more are also in a grid


def plural(n: int, noun: str) -> str:
    """``1 paper``, ``2 papers``, ``1,024 records`` (nouns that take an ``s``)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def upload_marker(digest: str) -> str:
    """The URL's mark of an uploaded corpus: the first 12 hex digits of its digest."""
    return digest[:12]


def _say_if_the_link_was_for_an_upload(source: data.ChosenCorpus, n_papers: int) -> None:
    """Keep ``uploaded=`` in the URL while an upload is shown; if a link carries it but this session
    does not hold that upload (after a reload, in a new tab), say plainly that the corpus changed."""
    marked = param(keys.URL_UPLOADED)
    if source.is_upload:
        write_query({keys.URL_UPLOADED: upload_marker(source.digest)})
        return
    if not marked:
        return
    st.warning(
        "This link was made for an uploaded corpus, which this browser session does not hold: "
        "uploaded files are kept only while the tab stays open, and a reload or a new tab starts a "
        f"new session. You are looking at {escape_markdown(source.label)} ({n_papers:,} papers) "
        "with the link's filters. Upload the files again to see them.",
        icon=":material/swap_horiz:",
    )
    forget = {keys.URL_UPLOADED: None}
    st.button("Dismiss", key=keys.UPLOAD_LINK_DISMISS, on_click=write_query, args=(forget,))


@st.cache_resource(show_spinner=False, max_entries=16)
def _problems(digest: str, _report: Any) -> pd.DataFrame:
    """The load report's problems as a table, once per corpus (shared read-only; 4 ms a run at 1M)."""
    return visible_frame(_report.to_frame())


def corpus_section(source: data.ChosenCorpus, report: Any, n_papers: int) -> None:
    """Sidebar: which corpus is shown, its load report, and uploading other files."""
    problems = _problems(source.digest, report)
    # Open where the report explains a failure: nothing read, or an upload with records skipped.
    failed = n_papers == 0 or (source.is_upload and (problems["severity"] == "skipped").any())
    with st.expander(
        f"Corpus: {escape_markdown(source.label)} · {plural(n_papers, 'paper')}",
        icon=":material/dataset:",
        expanded=bool(failed),
    ):
        st.caption(escape_markdown(report.summary()))
        if line := report.venue_year_line():
            st.caption(escape_markdown(line))
        if len(problems):
            st.caption(
                f"{plural(len(problems), 'problem')} (records or files skipped, or read with a warning):"
            )
            # Each reason whole, as text that wraps (a grid in the sidebar cut it to a few letters).
            for row in problems.head(PROBLEMS_AS_TEXT).itertuples(index=False):
                where = f"{row.source}{', ' + row.place if row.place else ''} · {row.severity}"
                st.caption(f"**{escape_markdown(where)}**: {escape_markdown(row.message)}")
            if len(problems) > PROBLEMS_AS_TEXT:  # a grid of them all, made when opened (2,021 at 1M)
                listed = lazy_popover(
                    st, f"All {len(problems):,} of them", key=keys.CORPUS_PROBLEMS, icon=":material/list:",
                    help="Every problem of the load report, in a table",
                )  # fmt: skip
                if listed.open:
                    with listed:
                        st.dataframe(
                            problems, hide_index=True, width=720, height=min(400, 36 + 35 * len(problems))
                        )
        message = st.session_state.get(keys.UPLOAD_NOTICE)
        if message:
            st.caption(escape_markdown(message))
        if st.session_state.get(keys.UPLOADS):
            choice = st.session_state.get(keys.CORPUS_CHOICE, "uploaded")
            if choice == "uploaded":
                st.button(
                    "Back to the bundled corpus", on_click=_choose_corpus, args=("bundled",), width="stretch"
                )
            else:
                st.button(
                    "Show the uploaded files", on_click=_choose_corpus, args=("uploaded",), width="stretch"
                )
    # Outside the corpus box, which is closed: a first-time visitor sees at once how to bring their own.
    st.file_uploader(
        "Your own abstracts",
        accept_multiple_files=True,
        key=keys.UPLOAD_WIDGET,
        on_change=on_upload,
        help=upload_help(),
    )


def read_uploads(files: list[Any] | None) -> list[tuple[str, bytes]]:
    """(name, bytes) of each uploaded file, in upload order; empty files are kept (the report says so)."""
    return [(str(f.name), bytes(f.getvalue())) for f in files or []]


def upload_help() -> str:
    """What the uploader takes: the formats (from the readers' registry) and the limits."""
    return (
        f"{registry.format_names_sentence()}; .gz works too. Several files make one corpus. "
        f"{upload_limits_text()} Uploads are kept while this tab stays open; a reload starts a new "
        "session without them."
    )


def upload_limits_text() -> str:
    """The upload limits in one sentence, for the uploader's help."""
    from dashboard.server.uploads import (
        MAX_SESSION_BYTES,
        MAX_SESSION_FILES,
        MAX_SESSION_PAPERS,
        MAX_UPLOAD_BYTES,
        MAX_UPLOAD_FILES,
        MAX_UPLOAD_PAPERS,
    )

    mib = 1 << 20
    return (
        f"At most {MAX_UPLOAD_FILES} files and {MAX_UPLOAD_BYTES // mib} MB ({MAX_UPLOAD_PAPERS:,} papers) "
        f"at a time, {MAX_SESSION_FILES} files and {MAX_SESSION_BYTES // mib} MB "
        f"({MAX_SESSION_PAPERS:,} papers) in all."
    )


def on_upload() -> None:
    """Callback of the uploader: check the upload limits, keep the files' digest for the session
    (the bytes stay in the uploader) and switch the view to them."""
    from dashboard import corpus
    from dashboard.server import uploads

    widget_files = list(st.session_state.get(keys.UPLOAD_WIDGET) or [])
    previous = st.session_state.get(keys.UPLOADS)
    store = data.upload_store()
    if not widget_files:
        if isinstance(previous, data.HeldUpload):
            store.let_go(previous.digest, data.session_id())
        st.session_state.pop(keys.UPLOADS, None)
        st.session_state[keys.CORPUS_CHOICE] = "bundled"
        st.session_state[keys.UPLOAD_NOTICE] = ""
        write_query({keys.URL_UPLOADED: None})
        return
    seen = set(previous.file_ids) if isinstance(previous, data.HeldUpload) else set()
    new = tuple(i for i, f in enumerate(widget_files) if str(f.file_id) not in seen)
    sizes = [(str(f.name), int(f.size)) for f in widget_files]
    refused = uploads.check_files(sizes, new, st.session_state.get(keys.LIBRARY_IMPORTED))
    if refused:
        st.session_state[keys.UPLOAD_NOTICE] = "Not loaded: " + refused + " (the × beside a file removes it)."
        return
    files = read_uploads(widget_files)
    held = data.HeldUpload(
        digest=corpus.digest_uploads(files),
        names=tuple(name for name, _ in files),
        sizes=tuple(len(content) for _, content in files),
        file_ids=tuple(str(f.file_id) for f in widget_files),
        new=new,
    )
    if isinstance(previous, data.HeldUpload) and previous.digest != held.digest:
        store.let_go(previous.digest, data.session_id())
    st.session_state[keys.UPLOADS] = held
    st.session_state[keys.CORPUS_CHOICE] = "uploaded"
    st.session_state[keys.UPLOAD_NOTICE] = (
        "Showing the uploaded file." if len(files) == 1 else f"Showing the {len(files)} uploaded files."
    )


def _choose_corpus(choice: str) -> None:
    st.session_state[keys.CORPUS_CHOICE] = choice
    st.session_state[keys.UPLOAD_NOTICE] = ""
    if choice == "bundled":
        write_query({keys.URL_UPLOADED: None})
