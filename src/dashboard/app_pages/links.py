"""Links & code: every link in the abstracts, code-release rates, and the papers to chase up."""

import streamlit as st

from dashboard import charts
from dashboard.ui import components, data, keys, tables
from dashboard.ui.context import page_context

view = page_context()
components.page_header("Links & code", view, "Who released code, and where the links go")
if components.empty_state(view, keys.LINKS_CLEAR):
    st.stop()

# Links, groups and repositories are worked out once per corpus (`dashboard.ui.data`); a filter
# change only selects with the mask, and builds the rows of the tables it shows.
papers, digest, k = view.papers, view.source.digest, view.filters.k
in_view = view.mask.to_numpy(dtype=bool)
is_released = data.released(digest, papers)
link_table = data.link_table(digest, papers)
link_rows = tables.links_in_view(link_table, in_view)

# Release rates by every grouping that has more than one group here; a single bar says nothing.
groupings: list[tuple[str, str, dict[int, str] | None]] = [
    ("venue", "venue", None),
    ("year", "year", None),
    ("source", "source file", None),
]
if view.analysis is not None:
    groupings.insert(0, ("topic", "topic", view.topic_names))
rates = [
    (tables.release_in_view(data.groups(digest, k, column, papers), in_view, is_released, labels), name)
    for column, name, labels in groupings
]
rate_charts = [
    charts.release_rate(rate, title=f"Code released, per {name}", group_title="")
    for rate, name in rates
    if len(rate) > 1
]
# The first grouping (topics, when there are any) has the most groups: it gets the full width below.
widest, others = (rate_charts[0], rate_charts[1:]) if rate_charts else (None, [])
statuses = tables.categories_in_view(data.groups(digest, k, "code_status", papers), in_view)
small = [charts.code_status_bars(statuses, title="Code status of the papers"), *others]
for row in range(0, len(small), 2):
    for column, figure in zip(st.columns(2), small[row : row + 2], strict=False):
        column.plotly_chart(figure, config={"displayModeBar": False})
if widest is not None:
    st.plotly_chart(widest, config={"displayModeBar": False})

st.subheader(f"All links ({len(link_rows):,})")
if not len(link_rows):
    st.caption("These abstracts contain no links.")
else:
    # Only the page shown is built and sent; the download makes every row, on click when long.
    page = components.page_rows(len(link_rows), f"{keys.LINKS_FORMAT}.page.{view.filters.slug()}", "links")
    tracker = tables.tracker_rows(link_table, papers, link_rows[page])
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
    components.download(
        lambda: tables.tracker_rows(link_table, papers, link_rows),
        view,
        stem="links",
        key=keys.LINKS_FORMAT,
        what="links",
        n_rows=len(link_rows),
    )

left, right = st.columns(2)
with left:
    account_only = in_view & papers["code_status"].eq("account_only").to_numpy(dtype=bool, na_value=False)
    st.subheader(f"Account or organisation only ({int(account_only.sum()):,})")
    st.caption("The abstract links a user or organisation page but no repository.")
    if account_only.any():
        account_links = link_rows[
            (link_table["kind"].to_numpy()[link_rows] == "account")
            & account_only[link_table["row"].to_numpy()[link_rows]]
        ]
        accounts = tables.tracker_rows(link_table, papers, account_links)
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
    is_promised = in_view & papers["code_status"].eq("promised").to_numpy(dtype=bool, na_value=False)
    promised = papers.loc[is_promised, ["title", "source"]]
    st.subheader(f"Code promised, no link ({len(promised):,})")
    st.caption('The abstract says code "will be released" (or similar) but gives no link.')
    if len(promised):
        components.show_table(
            promised,
            {
                "title": st.column_config.TextColumn("Paper", width=340),
                "source": st.column_config.TextColumn("Source file", width=150),
            },
            visible=8,
            within=components.HALF_WIDTH_PX,
        )

shared = tables.shared_repos_in_view(data.repo_groups(digest, papers), in_view)
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
