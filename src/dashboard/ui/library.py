"""The library in the app: the store of this server (or session), the ``list`` filter, the add-to-list
controls the pages call, and the Library page's sections.

The store comes from ``--library none|session|FILE`` after ``--`` on the command line, else
``PAPER_DASHBOARD_LIBRARY``, else the default file (see `dashboard.library.store`). A file is opened once
per server (`st.cache_resource`; the `Library` serialises its own writes) and shared by every session;
``session`` gives each browser session its own in-memory library. A library that cannot be opened
(corrupt, locked, newer) switches the feature off with a message: every other page works as before.

Where corpus rows meet library papers (`dashboard.library.store.resolve`) is cached per corpus digest and
library revision, so the ``list`` filter costs a dictionary look-up per run until someone writes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.filters import Filters
from dashboard.library import store as library
from dashboard.library.store import Library, LibraryError, Location
from dashboard.server import uploads, worker
from dashboard.ui import keys
from dashboard.ui.markup import escape_markdown
from dashboard.ui.url import update_filters

if TYPE_CHECKING:
    from dashboard.ui.view import View

CONFIRM_ABOVE = 300  # adding more papers than this at once asks for a tick first
EAGER_EXPORT_ENTRIES = 250  # a longer list's export file is made when the button is pressed
NEW_LIST = "New list…"
EXPORT_LABELS: dict[str, str] = {"BibTeX": "bibtex", "CSV": "csv", "RIS": "ris", "Markdown": "md"}


@dataclass(frozen=True)
class Store:
    """The library this run uses, where it is, and why it is missing when it is."""

    library: Library | None
    location: Location
    problem: str = ""

    @property
    def cache_key(self) -> str:
        """Tells two libraries apart in caches (a session library has no path)."""
        if self.library is None:
            return "none"
        return str(self.library.path) if self.library.path else f"session-{id(self.library)}"


def for_visitors(error: object) -> str:
    """A library message as a visitor may read it: the server's file path (as given and resolved, and
    its folder) replaced by "the library file", which is all a visitor needs to know."""
    text = str(error)
    where = location()
    if where.path is not None:
        for shown in sorted({str(where.path), str(where.path.expanduser().resolve())}, key=len, reverse=True):
            text = text.replace(shown, "the library file")
        for folder in {str(where.path.parent), str(where.path.expanduser().resolve().parent)}:
            if len(folder) > 1:
                text = text.replace(folder, "the library's folder")
    return text.replace("the library the library file", "the library file")


def where_kept(where: Location) -> str:
    """Where the lists are kept, for the page: never the server's path."""
    if where.mode == "session":
        return "Kept for this browser session only."
    return "Kept on this server, between visits."


def location() -> Location:
    """Where this server keeps the library (command line, environment, default)."""
    return library.location_from(sys.argv[1:], os.environ)


@st.cache_resource(show_spinner=False, max_entries=4)
def _open_file(path: str) -> Library:
    # A failed open raises, and Streamlit does not cache a raise: the next run tries again.
    return Library.open(path, timeout=5.0)


def store() -> Store:
    """The library of this run: the server's file, this session's in-memory one, or none (with why)."""
    where = location()
    if where.mode == "off":
        return Store(None, where, "The library is switched off on this server (`--library none`).")
    if where.mode == "session":
        lib = st.session_state.get(keys.LIBRARY_SESSION)
        if lib is None:
            lib = Library.open(":memory:")
            st.session_state[keys.LIBRARY_SESSION] = lib
        return Store(lib, where)
    try:
        return Store(_open_file(str(where.path)), where)
    except LibraryError as error:
        return Store(
            None,
            where,
            f"The library is not available: {for_visitors(error)}. Lists cannot be shown or changed until "
            "it is fixed; every other page works.",
        )


def _done(action: Callable[[], object]) -> bool:
    """Run a library call for its effect; False (the message kept for the page) when it failed."""
    try:
        action()
    except LibraryError as error:
        st.session_state[keys.LIBRARY_NOTICE] = f"The library could not do that: {for_visitors(error)}"
        return False
    return True


def _safely(action: Callable[[], Any], fallback: Any = None) -> Any:
    """Run a library call; on failure keep the message for the page and return ``fallback``."""
    try:
        return action()
    except LibraryError as error:
        st.session_state[keys.LIBRARY_NOTICE] = f"The library could not do that: {for_visitors(error)}"
        return fallback


# --------------------------------------------------------------------- corpus rows and library papers


def corpus_key(view_or_label: Any) -> str:
    """The name topic names are kept under: the corpus's label (an index and its files share it)."""
    label = view_or_label if isinstance(view_or_label, str) else view_or_label.source.label
    return label.removesuffix(" (index)")


@st.cache_resource(show_spinner=False, max_entries=8)
def _lookup(digest: str, _papers: pd.DataFrame, _positions: Any) -> library.CorpusLookup:
    return library.CorpusLookup(_papers, _positions)


@st.cache_resource(show_spinner=False, max_entries=32)
def _resolved(
    digest: str, where: str, revision: int, _lib: Library, _lookup: library.CorpusLookup
) -> pd.DataFrame:
    return library.resolve(_lib.entries(), _lookup, _lib.corpus_ids())


def resolved(current: Store, digest: str, papers: pd.DataFrame, analysis: Any = None) -> pd.DataFrame | None:
    """Every list entry with its row in this corpus (-1: not in this corpus); None without a library."""
    lib = current.library
    if lib is None:
        return None
    positions = analysis.positions if analysis is not None else None
    try:
        return _resolved(digest, current.cache_key, lib.revision(), lib, _lookup(digest, papers, positions))
    except LibraryError as error:
        st.session_state[keys.LIBRARY_NOTICE] = f"The library could not be read: {for_visitors(error)}"
        return None


def list_mask(
    filters: Filters, digest: str, papers: pd.DataFrame, analysis: Any = None
) -> tuple[np.ndarray | None, list[str]]:
    """The rows in the chosen lists (None when no list is chosen) and notices about the choice."""
    if not filters.list:
        return None, []
    current = store()
    entries = resolved(current, digest, papers, analysis)
    if entries is None:
        return np.zeros(len(papers), dtype=bool), [
            "reading list: the library is not available, so no paper is in a list"
        ]
    notices = []
    known = set(entries["list"])
    names = current.library.list_names() if current.library is not None else []
    for name in filters.list:
        if name not in known and name not in names:
            notices.append(f'reading list: no "{name}" in the library')
    chosen = entries[entries["list"].isin(list(filters.list))]
    missing = int((chosen["row"] < 0).sum())
    if missing:
        notices.append(
            f"reading list: {missing:,} of its papers are not in this corpus (see the Library page)"
        )
    return library.member_mask(len(papers), chosen["row"]), notices


def topic_names(view_label: str, analysis: Any) -> tuple[dict[int, str], list[str]]:
    """User names for this fit's topics and the kept names no topic matched (no library: none)."""
    lib = store().library
    if lib is None or analysis is None:
        return {}, []
    topics = {
        int(t): [str(term) for term, _ in terms]
        for t, terms in zip(analysis.topics["topic"], analysis.topics["top_terms"], strict=True)
    }
    return _safely(lambda: lib.apply_topic_names(corpus_key(view_label), topics), ({}, []))


# --------------------------------------------------------------------- adding papers


def _list_choice(lib: Library, key: str) -> str:
    """A list picked from the existing ones or a new name typed; the name (may be blank)."""
    names = _safely(lib.list_names, [])
    options = [*names, NEW_LIST]
    default = names.index(library.DEFAULT_LIST) if library.DEFAULT_LIST in names else 0
    choice = st.selectbox("List", options, index=default, key=f"{key}.list")
    if choice != NEW_LIST:
        return str(choice)
    typed = st.text_input(
        "Name of the new list", value="" if names else library.DEFAULT_LIST, key=f"{key}.new", max_chars=100
    )
    return typed


def _add(key: str, papers: pd.DataFrame, rows: np.ndarray) -> None:
    lib = store().library
    if lib is None:
        return
    choice = st.session_state.get(f"{key}.list")
    name = st.session_state.get(f"{key}.new", "") if choice in (None, NEW_LIST) else choice
    if not str(name or "").strip():
        name = library.DEFAULT_LIST
    added = _safely(lambda: lib.add(str(name), papers.iloc[rows]))
    if added is not None:
        already = len(rows) - added
        st.session_state[keys.LIBRARY_NOTICE] = (
            f'Added {added:,} papers to "{" ".join(str(name).split())}"'
            + (f" ({already:,} were in it already)." if already else ".")
        )
    st.session_state.pop(f"{key}.confirm", None)


def add_to_list(view: View, rows: Sequence[int] | np.ndarray, *, key: str, what: str = "papers") -> None:
    """A button with a small form: pick or name a list and add these corpus rows to it.

    More than `CONFIRM_ABOVE` papers at once need a tick first. Nothing is shown without a library
    (a switched-off library says so on the Library page only).
    """
    current = store()
    positions = np.asarray(rows, dtype=np.int64)
    if current.library is None or len(positions) == 0:
        return
    n = len(positions)
    with st.popover(
        f"Add {n:,} {what} to a list" if n > 1 else "Add to a list", icon=":material/bookmark_add:"
    ):
        _list_choice(current.library, key)
        confirmed = True
        if n > CONFIRM_ABOVE:
            confirmed = st.checkbox(f"Yes, add all {n:,} papers", key=f"{key}.confirm")
        st.button(
            "Add",
            key=f"{key}.add",
            on_click=_add,
            args=(key, view.papers, positions),
            disabled=not confirmed,
            type="primary",
            icon=":material/bookmark_add:",
        )
    notice()


def add_filtered(view: View, key: str, rows: np.ndarray | None = None) -> None:
    """Add every paper the filters select (the papers picked on the map, when some are), or where a
    page shows a ranking (a search, "papers like", a reading list's recommendations), its ``rows``: the
    papers its table and download hold (a list's recommendations leave out the list's own papers)."""
    if rows is not None:
        add_to_list(view, rows, key=key, what="papers shown")
        return
    picked = view.filters.id or view.filters.box
    what = "picked papers" if picked else ("papers" if view.filters.is_empty else "filtered papers")
    add_to_list(view, np.flatnonzero(view.mask.to_numpy()), key=key, what=what)


def notice() -> None:
    """The message of the last library action, shown once."""
    message = st.session_state.pop(keys.LIBRARY_NOTICE, "")
    if message:
        st.caption(":material/bookmark: " + escape_markdown(message))


def paper_controls(view: View, row: int) -> None:
    """For the opened paper: add it to a list; when in the library, its lists, note, tags, read mark."""
    current = store()
    lib = current.library
    if lib is None:
        return
    paper = view.papers.iloc[row]
    entries = resolved(current, view.source.digest, view.papers, view.analysis)
    mine = entries[entries["row"] == row] if entries is not None else pd.DataFrame()
    key = f"{keys.PAPER_LIBRARY_PREFIX}.{paper['id']}"
    add_to_list(view, [row], key=key)
    if mine.empty:
        return
    first = mine.iloc[0]
    fingerprint = str(first["fingerprint"])
    st.caption("In your lists: " + escape_markdown(", ".join(mine["list"])))
    with st.expander("Note, tags and read mark", icon=":material/edit_note:"):
        st.text_area("Note", value=str(first["note"]), key=f"{key}.note", max_chars=library.MAX_NOTE_CHARS)
        st.text_input("Tags (comma-separated)", value=", ".join(first["tags"]), key=f"{key}.tags")
        st.checkbox("Read", value=bool(first["read"]), key=f"{key}.read")
        st.button("Save", key=f"{key}.save", on_click=_save_paper, args=(key, fingerprint))


def _save_paper(key: str, fingerprint: str) -> None:
    lib = store().library
    if lib is None:
        return
    note = str(st.session_state.get(f"{key}.note", ""))
    tags = [t for t in str(st.session_state.get(f"{key}.tags", "")).split(",") if t.strip()]
    read = bool(st.session_state.get(f"{key}.read", False))

    def save() -> None:
        lib.set_note(fingerprint, note)
        lib.set_tags(fingerprint, tags)
        lib.set_read(fingerprint, read)

    if _done(save):
        st.session_state[keys.LIBRARY_NOTICE] = "Saved."


# --------------------------------------------------------------------- the Library page


def show_list_everywhere(name: str) -> None:
    """Callback: make the list a filter of every page (URL key ``list``)."""
    update_filters(lambda f: replace(f, list=(name,)))


def lists_section(view: View, lib: Library) -> str | None:
    """The lists with their sizes; the chosen one's rename, merge, delete. Returns the chosen name."""
    summaries = _safely(lib.lists, [])
    if not summaries:
        st.info(
            "No lists yet. Add papers from the Papers table, the opened paper, a map selection on Topics "
            "or Compare (the **Add to a list** buttons), or import a BibTeX file below.",
            icon=":material/bookmarks:",
        )
        return None
    sizes = {s.name: s.size for s in summaries}
    names = list(sizes)
    default = view.filters.list[0] if view.filters.list and view.filters.list[0] in sizes else names[0]
    chosen = st.selectbox(
        "List",
        names,
        index=names.index(default),
        format_func=lambda n: f"{n} ({sizes[n]:,} papers)",
        key=keys.LIBRARY_LIST,
    )
    with st.expander("Rename, merge or delete this list", icon=":material/edit:"):
        st.text_input("New name", value=chosen, key=keys.LIBRARY_RENAME, max_chars=100)
        st.button("Rename", key=keys.LIBRARY_RENAME + ".button", on_click=_rename, args=(chosen,))
        others = [n for n in names if n != chosen]
        if others:
            st.multiselect("Merge these lists into it", others, key=keys.LIBRARY_MERGE)
            st.button("Merge", key=keys.LIBRARY_MERGE + ".button", on_click=_merge, args=(chosen,))
        st.checkbox("Yes, delete this list", key=keys.LIBRARY_DELETE_CONFIRM)
        st.button(
            "Delete the list",
            key=keys.LIBRARY_DELETE,
            on_click=_delete,
            args=(chosen,),
            disabled=not st.session_state.get(keys.LIBRARY_DELETE_CONFIRM, False),
        )
    return str(chosen)


def _rename(old: str) -> None:
    lib = store().library
    new = str(st.session_state.get(keys.LIBRARY_RENAME, ""))
    if lib is not None and _safely(lambda: lib.rename_list(old, new)):
        st.session_state[keys.LIBRARY_LIST] = " ".join(new.split())
        st.session_state[keys.LIBRARY_NOTICE] = f'Renamed "{old}" to "{" ".join(new.split())}".'


def _merge(into: str) -> None:
    lib = store().library
    sources = list(st.session_state.get(keys.LIBRARY_MERGE) or [])
    if lib is not None and sources:
        added = _safely(lambda: lib.merge_lists(sources, into))
        if added is not None:
            st.session_state[keys.LIBRARY_NOTICE] = (
                f'Merged {len(sources)} lists into "{into}" ({added:,} new papers).'
            )
            st.session_state[keys.LIBRARY_MERGE] = []


def _delete(name: str) -> None:
    lib = store().library
    if lib is not None and _done(partial(lib.delete_list, name)):
        st.session_state[keys.LIBRARY_NOTICE] = f'Deleted the list "{name}".'
        st.session_state.pop(keys.LIBRARY_LIST, None)
    st.session_state[keys.LIBRARY_DELETE_CONFIRM] = False


def entries_section(view: View, lib: Library, name: str) -> pd.DataFrame:
    """The list's papers (filtered by a tag), selectable; remove, move, tag the selected. Returns them."""
    tags = _safely(lib.tags, [])
    tag = st.selectbox("Tag", ["Any", *tags], key=keys.LIBRARY_TAG) if tags else "Any"
    entries = resolved(store(), view.source.digest, view.papers, view.analysis)
    if entries is None:
        return pd.DataFrame(columns=list(library.ENTRY_COLUMNS))
    shown = entries[entries["list"] == name]
    if tag != "Any":
        shown = shown[shown["tags"].map(lambda t: tag in t)]
    shown = shown.reset_index(drop=True)
    missing = int((shown["row"] < 0).sum())
    st.caption(
        f"{len(shown):,} papers"
        + (f", {missing:,} of them not in this corpus (kept, and exported)" if missing else "")
    )
    st.button(
        "Show this list on every page",
        key=keys.LIBRARY_SHOW_EVERYWHERE,
        on_click=show_list_everywhere,
        args=(name,),
        icon=":material/filter_alt:",
        help="Filters every page and download to the papers of this list (URL key `list`).",
    )
    table = pd.DataFrame(
        {
            "title": shown["title"],
            "venue": [
                " ".join(p for p in (str(v), library.year_of(y)) if p)
                for v, y in zip(shown["venue"], shown["year"], strict=True)
            ],
            "tags": shown["tags"].map(", ".join),
            "note": shown["note"],
            "read": shown["read"],
            "corpus": np.where(shown["row"] < 0, "not in this corpus", ""),
        }
    )
    table_key = f"{keys.LIBRARY_TABLE}.{name}.{tag}.{lib.revision()}"
    state = st.dataframe(
        table,
        key=table_key,
        on_select="rerun",
        selection_mode="multi-row",
        hide_index=True,
        width="stretch",
        column_config={
            "title": st.column_config.TextColumn("Title", width=330),
            "venue": st.column_config.TextColumn("Venue", width=90),
            "tags": st.column_config.TextColumn("Tags", width=100),
            "note": st.column_config.TextColumn("Note", width=160),
            "read": st.column_config.CheckboxColumn("Read", width=50),
            "corpus": st.column_config.TextColumn("", width=120),
        },
    )
    selected = [r for r in state.selection.rows if 0 <= r < len(shown)] if state is not None else []
    prints = [str(shown["fingerprint"].iat[r]) for r in selected]
    if prints:
        _selection_actions(lib, name, prints, shown.iloc[selected])
    else:
        st.caption("Select papers in the table to remove, move or tag them, or to edit a note.")
    return shown


def _selection_actions(lib: Library, name: str, prints: list[str], chosen: pd.DataFrame) -> None:
    left, middle, right = st.columns(3, vertical_alignment="bottom")
    with left:
        st.button(
            f"Remove {len(prints)} from the list",
            key=keys.LIBRARY_REMOVE,
            on_click=_act,
            args=(lambda: lib.remove(name, prints), f'Removed {len(prints)} papers from "{name}".'),
            icon=":material/bookmark_remove:",
        )
    with middle:
        target = st.text_input("Move to list", key=keys.LIBRARY_MOVE_TO, placeholder="a list name")
        st.button(
            "Move",
            key=keys.LIBRARY_MOVE,
            disabled=not str(target).strip(),
            on_click=_act,
            args=(
                lambda: lib.move(prints, name, str(st.session_state.get(keys.LIBRARY_MOVE_TO, ""))),
                f"Moved {len(prints)} papers.",
            ),
        )
    with right:
        st.text_input("Add a tag", key=keys.LIBRARY_ADD_TAG, placeholder="e.g. to cite")
        st.button(
            "Tag",
            key=keys.LIBRARY_TAG_BUTTON,
            on_click=_act,
            args=(lambda: lib.tag(prints, str(st.session_state.get(keys.LIBRARY_ADD_TAG, ""))), "Tagged."),
        )
    if len(prints) == 1:
        row = chosen.iloc[0]
        key = f"{keys.LIBRARY_EDIT_PREFIX}.{prints[0]}"
        st.text_area("Note", value=str(row["note"]), key=f"{key}.note", max_chars=library.MAX_NOTE_CHARS)
        st.text_input("Tags (comma-separated)", value=", ".join(row["tags"]), key=f"{key}.tags")
        st.checkbox("Read", value=bool(row["read"]), key=f"{key}.read")
        st.button("Save", key=f"{key}.save", on_click=_save_paper, args=(key, prints[0]))


def _act(action: Callable[[], Any], done: str) -> None:
    if _done(action):
        st.session_state[keys.LIBRARY_NOTICE] = done


def export_section(view: View, name: str, shown: pd.DataFrame) -> None:
    """Download the shown papers of the list as BibTeX, CSV, RIS or Markdown."""
    if shown.empty:
        return
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    with left:
        label = st.segmented_control(
            "Export as", list(EXPORT_LABELS), default="BibTeX", key=keys.LIBRARY_FORMAT
        )
    fmt = EXPORT_LABELS.get(label or "BibTeX", "bibtex")
    entries = shown[list(library.ENTRY_COLUMNS)]
    slug = "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split()) or "list"
    with right:
        st.download_button(
            f"Download {len(shown):,} papers as {label or 'BibTeX'}",
            # A long list is written on click only (10,000 entries of BibTeX take about a second).
            data=library.export_list(entries, fmt)
            if len(entries) <= EAGER_EXPORT_ENTRIES
            else partial(_export, entries, fmt),
            file_name=f"{slug}.{library.EXPORT_FORMATS[fmt]}",
            mime=library.EXPORT_MIME_TYPES[fmt],
            icon=":material/download:",
            on_click="ignore",
            key=keys.LIBRARY_DOWNLOAD,
        )


def _export(entries: pd.DataFrame, fmt: str) -> str:
    return library.export_list(entries, fmt)


def import_section(view: View, lib: Library, name: str | None) -> None:
    """Import a BibTeX file into a list, matched to this corpus by title; the unmatched are listed."""
    with st.expander("Import a BibTeX file", icon=":material/upload_file:"):
        st.file_uploader("BibTeX file", type=["bib", "bibtex", "txt"], key=keys.LIBRARY_IMPORT_FILE)
        st.text_input("Into the list", value=name or library.DEFAULT_LIST, key=keys.LIBRARY_IMPORT_LIST)
        st.button(
            "Import",
            key=keys.LIBRARY_IMPORT,
            on_click=_import,
            args=(view.source.digest, view.papers, view.analysis),
            disabled=st.session_state.get(keys.LIBRARY_IMPORT_FILE) is None,
        )
        report = st.session_state.get(keys.LIBRARY_IMPORT_REPORT)
        if report:
            st.caption(escape_markdown(report["summary"]))
            if report["unmatched"]:
                st.caption("Not in this corpus (kept in the list all the same):")
                st.dataframe(pd.DataFrame({"title": report["unmatched"]}), hide_index=True, width="stretch")
            for problem in report["problems"]:
                st.caption(":material/warning: " + escape_markdown(problem))


def _import(digest: str, papers: pd.DataFrame, analysis: Any) -> None:
    lib = store().library
    upload = st.session_state.get(keys.LIBRARY_IMPORT_FILE)
    if lib is None or upload is None:
        return
    target = str(st.session_state.get(keys.LIBRARY_IMPORT_LIST) or library.DEFAULT_LIST)
    # Read like a corpus upload: in the upload worker, within its limits of bytes, entries, time and
    # memory, and off the server's interpreter; only the matching and the write happen here. Its bytes
    # and entries count against the session's totals, with its corpus files and earlier imports.
    content = bytes(upload.getvalue())
    imported = st.session_state.get(keys.LIBRARY_IMPORTED) or uploads.SessionTotals()
    try:
        read, _ = worker.run(
            library.read_bibtex_upload,
            str(upload.name),
            content,
            uploads.current_settings(),
            imported.plus(_uploaded_totals()),
            timeout=uploads.PARSE_TIMEOUT_SECONDS,
            memory_bytes=uploads.PARSE_MEMORY_BYTES,
        )
    except worker.WorkerError as error:
        st.session_state[keys.LIBRARY_NOTICE] = (
            f"{upload.name} was not imported: reading {error} "
            "(dashboard.server.uploads.PARSE_TIMEOUT_SECONDS, "
            "PARSE_MEMORY_BYTES); import a smaller file"
        )
        return
    if read.refused:
        st.session_state[keys.LIBRARY_NOTICE] = f"The file was not imported: {read.refused}"
        return
    st.session_state[keys.LIBRARY_IMPORTED] = imported.plus(
        uploads.SessionTotals(len(content), len(read.records))
    )
    del content
    lookup = _lookup(digest, papers, analysis.positions if analysis is not None else None)
    result = _safely(lambda: library.import_records(lib, read.records, read.problems, target, lookup))
    if result is None:
        return
    shown = list(result.unmatched[: library.MAX_UNMATCHED_LISTED])
    more = len(result.unmatched) - len(shown)
    problems = list(result.problems[: library.MAX_UNMATCHED_LISTED])
    if len(result.problems) > len(problems):
        problems.append(f"... and {len(result.problems) - len(problems):,} more problems")
    st.session_state[keys.LIBRARY_IMPORT_REPORT] = {
        "summary": f'Imported {result.added:,} papers into "{target}": '
        f"{result.matched:,} matched to this corpus, {len(result.unmatched):,} not"
        + (f" (the first {len(shown):,} listed)." if more else "."),
        "unmatched": shown,
        "problems": problems,
    }
    st.session_state[keys.LIBRARY_LIST] = " ".join(target.split())


def _uploaded_totals() -> uploads.SessionTotals:
    """The bytes and papers of the corpus files this session holds now (papers once they were read)."""
    from dashboard.ui import data

    held = st.session_state.get(keys.UPLOADS)
    if not isinstance(held, data.HeldUpload):
        return uploads.SessionTotals()
    loaded = data.upload_store().get(held.digest, "load")
    papers = getattr(loaded, "papers", None)
    return uploads.SessionTotals(sum(held.sizes), len(papers) if papers is not None else 0)


def topic_names_section(view: View, lib: Library) -> None:
    """Rename a topic or give several one name; kept names that match no topic now are reported."""
    if view.analysis is None:
        return
    st.header("Topic names")
    corpus = corpus_key(view)
    topics = view.analysis.topics
    terms = {
        int(t): [str(term) for term, _ in tt]
        for t, tt in zip(topics["topic"], topics["top_terms"], strict=True)
    }
    numbers = [t for t in view.topic_order if t in terms and t >= 0]
    st.caption(
        "Your names replace the topics' term labels on every page, and come back on the next fit of this "
        "corpus (matched on the topics' top terms)."
    )
    left, right = st.columns(2)
    with left:
        st.multiselect(
            "Topics (one to rename, several to merge under one name)",
            numbers,
            format_func=lambda t: view.topic_names.get(t, str(t)),
            key=keys.LIBRARY_TOPICS,
        )
    with right:
        st.text_input("Name", key=keys.LIBRARY_TOPIC_NAME, max_chars=100)
    chosen = list(st.session_state.get(keys.LIBRARY_TOPICS) or [])
    st.button(
        "Merge under this name" if len(chosen) > 1 else "Rename",
        key=keys.LIBRARY_TOPIC_RENAME,
        on_click=_name_topics,
        args=(corpus, [terms[t] for t in chosen if t in terms]),
        disabled=not chosen or not str(st.session_state.get(keys.LIBRARY_TOPIC_NAME, "")).strip(),
    )
    kept = _safely(lambda: lib.topic_names(corpus), [])
    _, missing = topic_names(view.source.label, view.analysis)
    for name in missing:
        cols = st.columns([4, 1], vertical_alignment="center")
        cols[0].warning(
            escape_markdown(
                f'The topic you named "{name}" is not among this fit\'s topics (no topic has its terms).'
            ),
            icon=":material/help:",
        )
        cols[1].button(
            "Forget it",
            key=f"{keys.LIBRARY_TOPIC_FORGET}.{name}",
            on_click=_act,
            args=(lambda n=name: lib.forget_topic_name(corpus, n), f'Forgot the topic name "{name}".'),
        )
    if kept and not missing:
        st.caption(f"{len({n for n, _ in kept})} topic names kept for this corpus, every one matched.")


def _name_topics(corpus: str, topic_terms: list[list[str]]) -> None:
    lib = store().library
    name = str(st.session_state.get(keys.LIBRARY_TOPIC_NAME, ""))
    if lib is None or not topic_terms:
        return
    if _done(partial(lib.merge_topics, corpus, topic_terms, name)):
        st.session_state[keys.LIBRARY_NOTICE] = (
            f'Named {len(topic_terms)} topic(s) "{" ".join(name.split())}".'
        )
        st.session_state[keys.LIBRARY_TOPICS] = []


def unavailable(current: Store) -> None:
    """Why the library cannot be used here, and what still works."""
    icon = ":material/block:" if current.location.mode == "off" else ":material/error:"
    st.warning(
        escape_markdown(current.problem) if current.location.mode != "off" else current.problem, icon=icon
    )
