"""Compare: two to four papers side by side, shared and distinctive terms, pairwise similarity."""

from functools import partial

import numpy as np
import streamlit as st

from dashboard import charts, similarity
from dashboard.ui import components, keys
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context
from dashboard.ui.markup import chips_html, escape_markdown, marked_html, text_html
from dashboard.ui.url import sync_widget, write_query

MAX_PAPERS = 4
LETTERS = "ABCD"
# What the numbers are (`Analysis.similarity_matrix` and `most_similar` score tf-idf vectors).
SIMILARITY_TITLE = "Pairwise similarity of the words (1 = same, 0 = none shared)"
SIMILARITY_NOTE = (
    "Cosine similarity of the abstracts' tf-idf word weights: 1 = the same words in the same "
    "proportions, 0 = no word in common. The similar papers beside are scored the same way."
)

view = page_context()
components.page_header("Compare", view, "Two to four papers side by side")

picked_rows = components.positions_of(view, st.query_params.get_all(keys.URL_COMPARE))
picked = list(picked_rows)[:MAX_PAPERS]
filtered_rows = np.flatnonzero(view.mask.to_numpy())
candidate_rows = {paper_id: picked_rows[paper_id] for paper_id in picked}
# The picker offers the first filtered papers only (every option goes to the browser: a million cost
# 9 s a run); the sidebar search narrows the filtered papers down to the one wanted.
first_rows = filtered_rows[: components.PICKER_OPTIONS].tolist()
for paper_id, row in zip(view.papers["id"].iloc[first_rows].astype("str"), first_rows, strict=True):
    candidate_rows.setdefault(paper_id, row)
titles = dict(
    zip(
        candidate_rows,
        view.papers["title"].iloc[list(candidate_rows.values())].astype("str"),
        strict=True,
    )
)


def _on_pick() -> None:
    write_query({keys.URL_COMPARE: list(st.session_state.get(keys.COMPARE_PICK) or [])})


def _add(paper_id: str) -> None:
    write_query({keys.URL_COMPARE: [*picked, paper_id][:MAX_PAPERS]})


sync_widget(keys.COMPARE_PICK, picked)
st.multiselect(
    "Papers to compare",
    list(titles),
    key=keys.COMPARE_PICK,
    on_change=_on_pick,
    max_selections=MAX_PAPERS,
    format_func=lambda paper_id: titles.get(paper_id, paper_id),
    placeholder="Type part of a title (the sidebar filters narrow the list)"
    if len(filtered_rows) <= components.PICKER_OPTIONS
    else f"Type part of a title (the first {components.PICKER_OPTIONS:,} of {len(filtered_rows):,} papers: "
    "search in the sidebar to narrow them)",
)


def _on_table_pick(table_key: str, ids: tuple[str, ...]) -> None:
    rows = st.session_state[table_key]["selection"]["rows"]
    write_query({keys.URL_COMPARE: [ids[r] for r in rows if 0 <= r < len(ids)][:MAX_PAPERS]})


if len(picked) < 2:
    st.info(
        "Pick two to four papers: type part of a title above, or tick them in the table below "
        "(the sidebar filters narrow both).",
        icon=":material/compare:",
    )
    # One page of rows at a time, like the Papers page: st.dataframe sends every row it is given.
    page = components.page_rows(
        len(filtered_rows), f"{keys.COMPARE_TABLE}.page.{view.filters.slug()}", has_download=False
    )
    rows = components.rows_of(view.papers, filtered_rows[page], ("id", "title", "topic", "code_status"))
    # A key per filter state and page, so a stale row number never picks the wrong paper.
    table_key = f"{keys.COMPARE_TABLE}.{view.filters.slug()}.{page.start}"
    st.dataframe(
        components.papers_table(rows, columns=("title", "topic", "code_status")).assign(
            code_status=rows["code_status"].str.replace("_", " "),
            topic=rows["topic"].map(lambda t: view.topic_names.get(int(t), str(t)))
            if view.analysis is not None
            else "",
        ),
        key=table_key,
        on_select=partial(_on_table_pick, table_key, tuple(rows["id"].astype("str"))),
        selection_mode="multi-row",
        hide_index=True,
        width="stretch",
        height=components.table_height(len(rows), visible=10),
        column_config={  # fits the 820 px a 1280 px window leaves; wider windows stretch the columns
            "title": st.column_config.TextColumn("Title", width=450),
            "topic": st.column_config.TextColumn("Topic", width=200),
            "code_status": st.column_config.TextColumn("Code status", width=110),
        },
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
components.html(html_legend)
columns = st.columns(len(picked))
for n, (column, paper_id) in enumerate(zip(columns, picked, strict=True)):
    text = str(papers.loc[paper_id, "abstract_clean"])
    others = " \n".join(str(papers.loc[o, "abstract_clean"]) for o in picked if o != paper_id)
    terms = similarity.compare_terms(text, others)
    with column:
        components.html(f"<div class='pd-title'>{LETTERS[n]}. {text_html(titles[paper_id])}</div>")
        facts = [str(papers.loc[paper_id, "venue"] or ""), str(papers.loc[paper_id, "source"])]
        if view.analysis is not None:
            facts.append(view.topic_names.get(int(papers.loc[paper_id, "topic"]), ""))
        components.html("<div class='pd-meta'>" + text_html(" · ".join(f for f in facts if f)) + "</div>")
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
            ),
            view,
            name="similarity",
        )
        st.caption(SIMILARITY_NOTE)
    with right:
        st.markdown("**Most similar to each picked paper**")
        for n, paper_id in enumerate(picked):
            with st.expander(f"{LETTERS[n]}. " + escape_markdown(str(titles[paper_id])[:90])):
                nearest = view.analysis.most_similar(paper_id, n=5)
                for row in nearest.itertuples(index=False):
                    if len(picked) < MAX_PAPERS and str(row.id) not in picked:
                        st.button(
                            f"Add · {float(row.similarity):.2f} · " + escape_markdown(str(row.title)[:100]),
                            key=f"{keys.COMPARE_ADD_PREFIX}.{paper_id}.{row.id}",
                            on_click=_add,
                            args=(str(row.id),),
                            type="tertiary",
                        )
                    else:
                        st.caption(f"{float(row.similarity):.2f} · " + escape_markdown(str(row.title)[:100]))
