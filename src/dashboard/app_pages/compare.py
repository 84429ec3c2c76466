"""Compare: two to four papers side by side, shared and distinctive terms, pairwise similarity."""

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.analytics import similarity
from dashboard.analytics.analysis import Analysis
from dashboard.figures import charts
from dashboard.search import lookup
from dashboard.ui import components, keys, tables
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context
from dashboard.ui.markup import chips_html, escape_markdown, marked_html, shortened, text_html
from dashboard.ui.url import write_query

MAX_PAPERS = components.COMPARE_AT_MOST
FOUND_SHOWN = 8
LETTERS = "ABCD"
# What the numbers are (`Analysis.similarity_matrix` and `most_similar` score tf-idf vectors).
# Two lines: the chart sits in a third of the page, where one line of this was cut at 1024 px.
SIMILARITY_TITLE = "Pairwise similarity of the words"
SIMILARITY_SUBTITLE = "1 = the same words, 0 = none shared"
SIMILARITY_NOTE = (
    "Cosine similarity of the abstracts' tf-idf word weights: 1 = the same words in the same "
    "proportions, 0 = no word in common. The similar papers beside are scored the same way."
)

# The facts put side by side: column -> the row's name (those the corpus has).
FACTS = {
    "venue": "Venue",
    "year": "Year",
    "authors": "Authors",
    "code_status": "Code",
    "code_url": "Repository",
    "repo_state": "Repository state",
    "datasets": "Datasets",
    "method_names": "Method names",
    "topic_label": "Topic",
}


@st.cache_resource(show_spinner=False, max_entries=4)
def _corpus_frequencies(digest: str, model: str, _analysis: Analysis) -> similarity.CorpusFrequencies | None:
    """Papers per term of the topic model's vocabulary (words and phrases): made once per corpus."""
    terms, matrix = getattr(_analysis.model, "terms_", None), getattr(_analysis.model, "tfidf_", None)
    if terms is None or matrix is None or not len(terms):
        return None
    return similarity.corpus_frequencies([str(t) for t in terms], matrix)


def _fact(value: object) -> str:
    if isinstance(value, list | tuple | np.ndarray):
        items = [str(v) for v in value]
        return ", ".join(items[:8]) + (f" (+{len(items) - 8})" if len(items) > 8 else "") if items else "—"
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    text = str(value).replace("_", " ") if value != "" else "—"
    return text


def side_by_side(papers: pd.DataFrame, letters: str) -> pd.DataFrame:
    """The picked papers' facts as a table: one row per fact (`FACTS`), one column per paper (its letter
    and the start of its title). The venue, year and topic said here are not repeated under each title."""
    facts = [c for c in FACTS if c in papers.columns]
    table = pd.DataFrame(
        {
            f"{letter}. {shortened(str(papers.iloc[n]['title']), 40)}": [
                _fact(papers.iloc[n][c]) for c in facts
            ]
            for n, letter in zip(range(len(papers)), letters, strict=False)
        },
        index=[FACTS[c] for c in facts],
    )
    if "year" in facts:
        table.loc[FACTS["year"]] = [
            str(int(y)) if not pd.isna(y) else "—" for y in papers["year"].tolist()[: len(table.columns)]
        ]
    return table


view = page_context()
components.page_header("Compare", view, "Two to four papers side by side")

picked_rows = components.positions_of(view, st.query_params.get_all(keys.URL_COMPARE))
picked = list(picked_rows)[:MAX_PAPERS]
titles = dict(
    zip(picked, view.papers["title"].iloc[[picked_rows[p] for p in picked]].astype("str"), strict=True)
)


def _add(paper_id: str) -> None:
    write_query({keys.URL_COMPARE: [*picked, paper_id][:MAX_PAPERS]})
    st.session_state[keys.COMPARE_FIND] = ""  # the matches made their point: the comparison comes next


def _remove(paper_id: str) -> None:
    write_query({keys.URL_COMPARE: [p for p in picked if p != paper_id]})


def _paper_line(row: int) -> str:
    """Title · venue and year · first authors: enough to tell two papers of the same name apart."""
    paper = view.papers.iloc[row]
    facts = [str(paper["title"]), tables.venue_year(view.papers.iloc[[row]]).iloc[0]]
    if "authors" in view.papers.columns:
        facts.append(components.joined(paper["authors"], limit=3))
    return " · ".join(f for f in facts if f)


for n, paper_id in enumerate(picked):
    line, button = st.columns([6, 1], vertical_alignment="center")
    line.markdown(f"**{LETTERS[n]}.** " + escape_markdown(_paper_line(picked_rows[paper_id])[:160]))
    button.button(
        "Remove", key=f"{keys.COMPARE_REMOVE_PREFIX}.{paper_id}", on_click=_remove, args=(paper_id,),
        icon=":material/close:", type="tertiary",
    )  # fmt: skip

# The whole corpus is searched on the server (a list of every title cannot go to the browser at a
# million papers), by title, author or id, whatever the filters.
query = st.text_input(
    "Find a paper to add",
    key=keys.COMPARE_FIND,
    placeholder="Part of its title, an author or its id (searches the whole corpus)",
    disabled=len(picked) >= MAX_PAPERS,
    help=f"Compare takes {MAX_PAPERS} papers at most; remove one to add another.",
)
if len(picked) >= MAX_PAPERS:
    st.caption(f"{MAX_PAPERS} papers picked, the most Compare takes: remove one to add another.")
elif query.strip():
    found = lookup.find_papers(components.lookup_text(view), view.papers["id"], query, limit=FOUND_SHOWN + 1)
    if not len(found):
        st.caption(
            escape_markdown(f'No paper of the corpus has "{query.strip()}" in its title, authors or id.')
        )
    for row in found[:FOUND_SHOWN]:
        paper_id = str(view.papers["id"].iloc[row])
        st.button(
            "Add · " + escape_markdown(_paper_line(int(row))[:150]),
            key=f"{keys.COMPARE_ADD_PREFIX}.found.{paper_id}",
            on_click=_add,
            args=(paper_id,),
            disabled=paper_id in picked,
            type="tertiary",
        )
    if len(found) > FOUND_SHOWN:
        st.caption(
            f"The first {FOUND_SHOWN} matches, in corpus order: type more of the title to narrow them."
        )

if len(picked) < 2:
    st.info(
        "Pick two to four papers: find them above, or tick them on the Papers page and press "
        '"Compare the ticked papers" (or "Compare with…" under an opened paper).',
        icon=":material/compare:",
    )
    if len(picked) == 1 and view.analysis is not None:
        nearest = view.analysis.most_similar(picked[0], n=6)
        st.markdown("**Most similar to the paper you picked**")
        for row in nearest.itertuples(index=False):
            st.button(
                f"Add · {float(row.similarity):.2f} · " + escape_markdown(str(row.title)[:110]),
                key=f"{keys.COMPARE_ADD_PREFIX}.{row.id}",
                on_click=_add,
                args=(str(row.id),),
                type="tertiary",
            )
    st.stop()

DISTINCT_SHOWN = 12


def _marked_spans(text: str, terms: similarity.TermComparison) -> list[tuple[int, int, str]]:
    """Every shared term, but only the top distinctive ones (all of them would mark half the text)."""
    top = tuple(t.lower() for t in terms.only_a[:DISTINCT_SHOWN])
    return [
        (start, end, kind)
        for start, end, kind in terms.spans_a
        if kind == "shared" or text[start:end].lower().startswith(top)
    ]


papers = components.rows_of(view.papers, [picked_rows[p] for p in picked], view.papers.columns).set_axis(
    picked
)
html_legend = (
    "<div class='pd-legend pd-meta'><mark class='shared'>shared with another picked paper</mark> "
    "<mark class='distinct'>distinctive of this paper</mark></div>"
)
st.markdown("**Side by side**")
st.table(side_by_side(papers, LETTERS[: len(picked)]))
components.html(html_legend)
frequencies = (
    _corpus_frequencies(view.source.digest, view.model_key, view.analysis)
    if view.analysis is not None
    else None
)
columns = st.columns(len(picked))
for n, (column, paper_id) in enumerate(zip(columns, picked, strict=True)):
    text = str(papers.loc[paper_id, "abstract_clean"])
    others = " \n".join(str(papers.loc[o, "abstract_clean"]) for o in picked if o != paper_id)
    terms = similarity.compare_terms(text, others, frequencies)
    with column:
        components.html(f"<div class='pd-title'>{LETTERS[n]}. {text_html(titles[paper_id])}</div>")
        components.html(f"<div class='pd-compare'>{marked_html(text, _marked_spans(text, terms))}</div>")
        if terms.only_a:
            components.html(
                "<div class='pd-meta'>Distinctive: " + chips_html(list(terms.only_a)[:12]) + "</div>"
            )
        if terms.shared:
            components.html("<div class='pd-meta'>Shared: " + chips_html(list(terms.shared)[:12]) + "</div>")

library_ui.add_to_list(
    view, [picked_rows[p] for p in picked], key=keys.COMPARE_ADD_LIST, what="compared papers"
)

if view.analysis is not None:
    st.divider()
    left, right = st.columns([2, 3])
    with left:
        matrix = view.analysis.similarity_matrix(picked)
        components.chart(
            charts.similarity_heatmap(
                matrix,
                list(LETTERS[: len(picked)]),
                titles=[titles[p] for p in picked],
                title=SIMILARITY_TITLE,
                subtitle=SIMILARITY_SUBTITLE,
            ),
            view,
            name="similarity",
        )
        st.caption(SIMILARITY_NOTE)
    with right:
        st.markdown("**Most similar to each picked paper**")
        for n, paper_id in enumerate(picked):
            with st.expander(f"{LETTERS[n]}. " + escape_markdown(shortened(titles[paper_id], 90))):
                nearest = view.analysis.most_similar(paper_id, n=5)
                for row in nearest.itertuples(index=False):
                    title = escape_markdown(shortened(row.title, 100))
                    if len(picked) < MAX_PAPERS and str(row.id) not in picked:
                        st.button(
                            f"Add · {float(row.similarity):.2f} · {title}",
                            key=f"{keys.COMPARE_ADD_PREFIX}.{paper_id}.{row.id}",
                            on_click=_add,
                            args=(str(row.id),),
                            type="tertiary",
                        )
                    else:
                        st.caption(f"{float(row.similarity):.2f} · {title}")
