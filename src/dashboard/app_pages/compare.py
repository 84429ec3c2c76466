"""Compare: two to four papers side by side, shared and distinctive terms, pairwise similarity."""

from functools import partial

import streamlit as st

from dashboard import charts, similarity
from dashboard.ui import components, keys
from dashboard.ui.context import page_context
from dashboard.ui.markup import chips_html, escape_markdown, marked_html, text_html
from dashboard.ui.url import sync_widget, write_query

MAX_PAPERS = 4
LETTERS = "ABCD"

view = page_context()
components.page_header("Compare", view, "Two to four papers side by side")

titles = view.papers.set_index("id")["title"].astype("str")
picked = [i for i in dict.fromkeys(st.query_params.get_all(keys.URL_COMPARE)) if i in titles.index][
    :MAX_PAPERS
]
candidates = list(dict.fromkeys([*picked, *view.shown["id"]]))


def _on_pick() -> None:
    write_query({keys.URL_COMPARE: list(st.session_state.get(keys.COMPARE_PICK) or [])})


def _add(paper_id: str) -> None:
    write_query({keys.URL_COMPARE: [*picked, paper_id][:MAX_PAPERS]})


sync_widget(keys.COMPARE_PICK, picked)
st.multiselect(
    "Papers to compare",
    candidates,
    key=keys.COMPARE_PICK,
    on_change=_on_pick,
    max_selections=MAX_PAPERS,
    format_func=lambda paper_id: titles.get(paper_id, paper_id),
    placeholder="Type part of a title (the sidebar filters narrow the list)",
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
    table_key = f"{keys.COMPARE_TABLE}.{view.filters.slug()}"
    st.dataframe(
        components.papers_table(view.shown, columns=("title", "topic", "code_status")).assign(
            code_status=view.shown["code_status"].str.replace("_", " "),
            topic=view.shown["topic"].map(lambda t: view.topic_names.get(int(t), str(t)))
            if view.analysis is not None
            else "",
        ),
        key=table_key,
        on_select=partial(_on_table_pick, table_key, tuple(view.shown["id"])),
        selection_mode="multi-row",
        hide_index=True,
        width="stretch",
        height=components.table_height(len(view.shown), visible=10),
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


papers = view.papers.set_index("id").loc[picked]
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

if view.analysis is not None:
    st.divider()
    left, right = st.columns([2, 3])
    with left:
        matrix = view.analysis.similarity_matrix(picked)
        st.plotly_chart(
            charts.similarity_heatmap(
                matrix,
                list(LETTERS[: len(picked)]),
                titles=[titles[p] for p in picked],
                title="Pairwise similarity (1 = same words)",
            ),
            config={"displayModeBar": False},
        )
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
