"""Links & code: every link in the abstracts, code-release rates, and the papers to chase up."""

import streamlit as st

from dashboard import charts, links
from dashboard.ui import components, keys, tables
from dashboard.ui.context import page_context

view = page_context()
components.page_header("Links & code", view, "Who released code, and where the links go")
if components.empty_state(view, keys.LINKS_CLEAR):
    st.stop()

papers = view.shown
tracker = tables.link_tracker(papers, links.url_host, links.repo_of)

# Release rates by every grouping that has more than one group here; a single bar says nothing.
groupings: list[tuple[str, str, dict[int, str] | None]] = [
    ("venue", "venue", None),
    ("year", "year", None),
    ("source", "source file", None),
]
if view.analysis is not None:
    groupings.insert(0, ("topic", "topic", view.topic_names))
rate_charts = [
    charts.release_rate(
        tables.release_by(papers, column, labels=labels), title=f"Code released, per {name}", group_title=""
    )
    for column, name, labels in groupings
    if papers[column].nunique(dropna=True) > 1
]
# The first grouping (topics, when there are any) has the most groups: it gets the full width below.
widest, others = (rate_charts[0], rate_charts[1:]) if rate_charts else (None, [])
small = [charts.code_status_bars(papers["code_status"], title="Code status of the papers"), *others]
for row in range(0, len(small), 2):
    for column, figure in zip(st.columns(2), small[row : row + 2], strict=False):
        column.plotly_chart(figure, config={"displayModeBar": False})
if widest is not None:
    st.plotly_chart(widest, config={"displayModeBar": False})

st.subheader(f"All links ({len(tracker):,})")
if tracker.empty:
    st.caption("These abstracts contain no links.")
else:
    shown = tracker.assign(
        url=components.safe_links(tracker["url"]), code_status=tracker["code_status"].str.replace("_", " ")
    )
    components.show_table(
        shown.drop(columns="id"),
        {
            "title": st.column_config.TextColumn("Paper", width=300),
            "url": st.column_config.LinkColumn("URL", width=300),
            "kind": st.column_config.TextColumn("Kind", width=90),
            "host": st.column_config.TextColumn("Host", width=120),
            "repo": st.column_config.TextColumn("Owner/repo", width=160),
            "code_status": st.column_config.TextColumn("Paper's code status", width=120),
        },
    )
    components.download(tracker, view, stem="links", key=keys.LINKS_FORMAT, what="links")

left, right = st.columns(2)
with left:
    account_only = papers[papers["code_status"] == "account_only"]
    st.subheader(f"Account or organisation only ({len(account_only):,})")
    st.caption("The abstract links a user or organisation page but no repository.")
    if len(account_only):
        accounts = tracker[(tracker["kind"] == "account") & tracker["id"].isin(account_only["id"])]
        components.show_table(
            accounts[["title", "url"]].assign(url=components.safe_links(accounts["url"])),
            {
                "title": st.column_config.TextColumn("Paper", width=300),
                "url": st.column_config.LinkColumn("Account", width=200),
            },
            visible=8,
            within=components.HALF_WIDTH_PX,
        )
with right:
    promised = papers[papers["code_status"] == "promised"]
    st.subheader(f"Code promised, no link ({len(promised):,})")
    st.caption('The abstract says code "will be released" (or similar) but gives no link.')
    if len(promised):
        components.show_table(
            promised[["title", "source"]],
            {
                "title": st.column_config.TextColumn("Paper", width=340),
                "source": st.column_config.TextColumn("Source file", width=150),
            },
            visible=8,
            within=components.HALF_WIDTH_PX,
        )

shared = tables.shared_repos(papers)
st.subheader(f"Repositories shared by several papers ({len(shared):,})")
if shared.empty:
    st.caption("No repository is given as the code of more than one of these papers.")
else:
    components.show_table(
        shared.assign(titles=shared["titles"].map(lambda t: " | ".join(map(str, t)))).drop(columns="ids"),
        {
            "repo": st.column_config.TextColumn("Repository", width=200),
            "papers": st.column_config.NumberColumn("Papers", width=60),
            "titles": st.column_config.TextColumn("Their titles", width=600),
        },
        visible=8,
    )
