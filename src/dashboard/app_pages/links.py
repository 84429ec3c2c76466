"""Links & code: every link in the abstracts, code-release rates, and the papers to chase up."""

from collections.abc import Mapping
from typing import Any

import numpy as np
import streamlit as st

from dashboard.figures import charts
from dashboard.repocheck import hosts
from dashboard.schema import rows_of
from dashboard.ui import components, data, keys, repos, tables
from dashboard.ui.context import page_context
from dashboard.ui.timings import mark

view = page_context()
components.page_header("Links & code", view, "Who released code, and where the links go")
if components.empty_state(view, keys.LINKS_CLEAR):
    st.stop()

mark("context")
# Links, groups and repositories are worked out once per corpus (`dashboard.ui.data`); a filter
# change only selects with the mask, and builds the rows of the tables it shows.
papers, digest, k = view.papers, view.source.digest, view.filters.model
in_view = view.mask.to_numpy(dtype=bool)
is_released = data.released(digest, papers)
link_table = data.link_table(digest, papers)
link_rows = tables.links_in_view(link_table, in_view)

# Release rates by every grouping that has more than one group here; a single bar says nothing.
groupings: list[tuple[str, str, Mapping[Any, str] | None]] = [
    ("venue", "venue", None),
    ("year", "year", None),
]
sources_in_view = tables.values_in_view(data.groups(digest, k, "source", papers), in_view)
if tables.source_files_tell_something(sources_in_view):  # not the seeds' hashes, nor one file
    groupings.append(("source", "source file", view.source_names))
if view.analysis is not None:
    groupings.insert(0, ("topic", "topic", view.topic_names))
rates = tables.releases_in_view(  # counted together: one pass over the papers for all of them
    [(data.groups(digest, k, column, papers), labels) for column, _, labels in groupings],
    in_view,
    is_released,
)
# With no released code among these papers, every bar would read "0% of n": said once instead.
any_released = bool(is_released[in_view].any())
rate_charts = [
    charts.release_rate(rate, title=f"Code released, per {name}", group_title="")
    for rate, (_, name, _) in zip(rates, groupings, strict=True)
    if len(rate) > 1 and any_released
]
# The first grouping (topics, when there are any) has the most groups: it gets the full width below.
widest, others = (rate_charts[0], rate_charts[1:]) if rate_charts else (None, [])
statuses = tables.value_counts_in_view(data.groups(digest, k, "code_status", papers), in_view)
small = [charts.code_status_bars(statuses, title="Code status of the papers"), *others]
if not any_released:
    st.info(
        f"None of these {int(in_view.sum()):,} papers links its code, so there are no release rates to "
        "compare. The code status of each paper is below.",
        icon=":material/code_off:",
    )
pairs = st.container(key=keys.LINKS_STACK)  # stacked below 1280 px (see `markup.STYLE`)
for row in range(0, len(small), 2):
    for number, (column, figure) in enumerate(zip(pairs.columns(2), small[row : row + 2], strict=False)):
        with column:
            components.chart(figure, view, name=f"code-release-{row + number}")
if widest is not None:
    components.chart(widest, view, name="code-release-wide")

mark("release charts")
# Is the code there? Answers come from the repository cache at once; only the button asks the APIs.
st.header("Is the code there?")
repo_keys = data.repo_keys(digest, papers)
wanted = repos.keys_in_view(digest, papers, in_view)  # the targets themselves only for a check
n_pending, cache_problem = repos.pending(wanted)
st.caption(
    f"{len(wanted):,} repositories on {hosts.labels()} are linked by these papers; "
    f"{len(wanted) - n_pending:,} were checked in the last 7 days. A check asks each host's API about "
    "the repository: does it exist, does it hold more than a README, is it archived or moved."
)
if cache_problem:
    st.warning(cache_problem, icon=":material/warning:")
check_report, check_failed = st.session_state.pop(keys.LINKS_CHECK_REPORT, ("", False))
if check_report and check_failed:
    st.warning(check_report, icon=":material/warning:")
elif check_report:
    st.info(check_report, icon=":material/fact_check:")
# The button as wide as its label (a third of the page cut it at 1024 px), the limits beside it.
check_row = st.container(horizontal=True, gap="medium", vertical_alignment="center")
clicked = False
with check_row:
    if repos.enabled():
        clicked = st.button(
            f"Check repositories ({n_pending:,} to check)",
            key=keys.LINKS_CHECK,
            disabled=n_pending == 0,
            icon=":material/fact_check:",
            help=f"Asks at most {repos.MAX_REQUESTS_PER_CLICK:,} requests a click; click again to go on.",
        )
    else:
        st.caption("Checking is switched off on this server: cached answers only.")
    st.caption(repos.stored_limits())
if clicked:
    summary, reasons, run_problem = repos.run_check(repos.targets_in_view(digest, papers, in_view))
    st.session_state[keys.LINKS_CHECK_REPORT] = (
        repos.report(summary, reasons) if summary else (run_problem, True)
    )
    st.rerun()

mark("check")
# Counted from codes made once per corpus and cache change (a crosstab of the strings of 180,000
# papers with a repository took a tenth of a second a run at a million papers).
repo_groupings = ["topic", "venue", "year"] if view.analysis is not None else ["venue", "year"]
group_by = st.segmented_control(
    "Repository states per", repo_groupings, default=repo_groupings[0], key=keys.LINKS_REPO_GROUP
)
grouped = group_by or "venue"
generation = view.repo_generation  # read once per run, by the page context
state_table = tables.crosstab_in_view(
    data.groups(digest, k, grouped, papers),
    data.repo_states(digest, generation, papers),
    in_view,
    view.topic_names if grouped == "topic" else None,
)
checked_any = len(state_table) and set(state_table.columns) != {"not_checked"}
if len(state_table) and not checked_any:
    # One grey "not checked" bar per group says nothing: say so and leave the chart out.
    st.caption(
        "Not checked yet: the chart of repository states appears once a check has answered "
        "(the button above)."
    )
elif len(state_table):
    components.chart(
        charts.repo_states(state_table, title=f"Repository states, per {grouped}"),
        view,
        name="repository-states",
    )
# The tables below are drawn only while their expanders are open: drawn with every switch to the page,
# out of sight below the charts, their grids were most of what the browser did to show the page. Each
# label says what it holds and how many rows; the downloads stay beside them, open or not.
INSIDE_PX = components.PAGE_WIDTH_PX - components.EXPANDER_INSET_PX  # a table's room in an expander
HALF_INSIDE_PX = components.HALF_WIDTH_PX - components.EXPANDER_INSET_PX


def repository_table(with_repo: np.ndarray, rows_are: str) -> None:
    """One page of the papers with a repository, with the repository's state (and, once checked, more)."""
    pager = f"{keys.LINKS_REPOS_FORMAT}.page.{view.filters.slug()}"
    shown_repos = components.page_of(with_repo, pager, rows_are)
    repo_rows = repos.repository_rows(papers, shown_repos, repo_keys)
    if not checked_any:  # the check's columns stay empty until a check answers: left out till then
        repo_rows = repo_rows.drop(columns=[c for c in repos.CHECK_COLUMNS if c != "repo_state"])
    components.show_table(
        repo_rows.drop(columns="id").assign(
            repository=components.safe_links(repo_rows["repository"]),
            repo_state=repo_rows["repo_state"].str.replace("_", " "),
        ),
        {
            "title": st.column_config.TextColumn("Paper", width=260),
            "year": st.column_config.NumberColumn("Year", width=55, format="%d"),
            "repository": st.column_config.LinkColumn(
                "Repository", width=200, display_text=components.REPO_DISPLAY
            ),
            "repo_state": st.column_config.TextColumn("State", width=95),
            "repo_stars": st.column_config.NumberColumn("Stars", width=60),
            "repo_license": st.column_config.TextColumn("Licence", width=80),
            "repo_pushed_at": st.column_config.TextColumn("Last push", width=90),
            # A short header: the eight columns share 676 px at 1024 px, where the long one was cut.
            "days_after_year": st.column_config.NumberColumn(
                "Days",
                width=60,
                help="Days from the start of the paper's year to the repository's last push",
            ),
        },
        visible=10,
        wrapped=True,
        within=INSIDE_PX,
    )


def waiting_table(waiting_rows: np.ndarray, placeholder: np.ndarray) -> None:
    """One page of the papers that promise code or link a repository without code yet, oldest first."""
    st.caption("Oldest papers first: the longer ago, the less likely the code is still coming.")
    shown_waiting = components.page_of(
        waiting_rows, f"{keys.LINKS_WAITING_PAGE}.{view.filters.slug()}", has_download=False
    )
    waiting = repos.waiting_for_code(papers, shown_waiting, placeholder, repo_keys)
    components.show_table(
        waiting.assign(repository=components.safe_links(waiting["repository"])),
        {
            "title": st.column_config.TextColumn("Paper", width=280),
            "venue": st.column_config.TextColumn("Venue", width=70),
            "year": st.column_config.NumberColumn("Year", width=55, format="%d"),
            "years_ago": st.column_config.NumberColumn("Years ago", width=60),
            "what": st.column_config.TextColumn("What there is", width=170),
            "repository": st.column_config.LinkColumn(
                "Repository", width=180, display_text=components.REPO_DISPLAY
            ),
        },
        visible=8,
        wrapped=True,
        within=INSIDE_PX,
    )


def links_table() -> None:
    """One page of every link in these abstracts."""
    # Only the page shown is built and sent; the download makes every row, on click when long.
    page = components.page_rows(len(link_rows), f"{keys.LINKS_FORMAT}.page.{view.filters.slug()}", "links")
    tracker = tables.tracker_rows(link_table, papers, link_rows[page])
    shown = tracker.assign(
        url=components.safe_links(tracker["url"]),
        kind=tracker["kind"].str.replace("_", " "),  # "project page", as everywhere else
        code_status=tracker["code_status"].str.replace("_", " "),
    )
    components.show_table(
        shown.drop(columns="id"),
        {
            # The paper's title gets what the others leave at 1024 px (they were all cut to a sixth of
            # the grid, and the titles broke every few words, some mid-word); the link is cut anyway.
            "title": st.column_config.TextColumn("Paper", width=300),
            "url": st.column_config.LinkColumn("URL", width=110),
            "kind": st.column_config.TextColumn("Kind", width=60),
            "host": st.column_config.TextColumn("Host", width=90),
            "repo": st.column_config.TextColumn("Owner/repo", width=110),
            # "Paper's code status" was cut at 1024 px.
            "code_status": st.column_config.TextColumn(
                "Code status", width=90, help="The code status of the paper the link is in"
            ),
        },
        wrapped=True,
        within=INSIDE_PX,
    )


def accounts_table(account_only: np.ndarray) -> None:
    """The account or organisation links of the papers that link no repository."""
    st.caption(
        "The paper links a user or organisation page but no repository (below: such links in the abstracts)."
    )
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
        wrapped=True,
        within=HALF_INSIDE_PX,
    )


def promised_table(promised_rows: np.ndarray) -> None:
    """One page of the papers whose abstract promises code without a link."""
    st.caption('The abstract says code "will be released" (or similar) but gives no link.')
    columns = ["title", "source"] if len(sources_in_view) > 1 else ["title"]  # one file: no column
    shown_promised = components.page_of(
        promised_rows, f"{keys.LINKS_PROMISED_PAGE}.{view.filters.slug()}", has_download=False
    )
    promised = rows_of(papers, shown_promised, columns)
    if "source" in promised.columns:
        promised["source"] = promised["source"].astype(str).map(view.source_names)
    components.show_table(
        promised,
        {
            "title": st.column_config.TextColumn("Paper", width=340),
            "source": st.column_config.TextColumn("Source", width=150),
        },
        visible=8,
        wrapped=True,
        within=HALF_INSIDE_PX,
    )


def shared_table(shared: tables.SharedRepos) -> None:
    """One page of the repositories given as the code of several papers, with a few of their titles."""
    # One page, and a few titles a repository: at a million papers 4,700 repositories with 22 titles
    # each were 10 MB of text a run.
    pager = f"{keys.LINKS_SHARED_PAGE}.{view.filters.slug()}"
    shown = shared.table(components.page_rows(len(shared), pager, "repositories", has_download=False))
    components.show_table(
        shown.assign(titles=shown["titles"].map(tables.titles_text)).drop(columns="ids"),
        {
            "repo": st.column_config.TextColumn("Repository", width=200),
            "papers": st.column_config.NumberColumn("Papers", width=60),
            "titles": st.column_config.TextColumn("Their titles", width=600),
        },
        visible=8,
        wrapped=True,
        within=INSIDE_PX,
    )


# One page of the repositories is built and sent (a million papers link 180,000); the download has all.
with_repo = np.flatnonzero(in_view & data.with_repository(digest, papers))
if len(with_repo):
    # A row per paper (papers sharing a repository have a row each): counted as papers, not repositories.
    rows_are = "papers with their repository"
    box = components.lazy_section(
        f"Papers with their repository ({len(with_repo):,})"
        + ("" if checked_any else ": the state of each once checked"),
        keys.LINKS_REPOS_OPEN,
        ":material/folder_open:",
    )
    if box.open:
        with box:
            repository_table(with_repo, rows_are)
    components.download(
        lambda: repos.repository_rows(papers, with_repo, repo_keys),
        view,
        stem="repositories",
        key=keys.LINKS_REPOS_FORMAT,
        what=rows_are,
        n_rows=len(with_repo),
    )
mark("repositories")
waiting_rows, placeholder = repos.waiting_order(digest, generation, papers)
waiting_rows = waiting_rows[in_view[waiting_rows]]
st.header("Where the code is still to come, and where the links go")
waiting_label = f"Code promised, or a repository without code yet ({len(waiting_rows):,})"
if len(waiting_rows):
    box = components.lazy_section(waiting_label, keys.LINKS_WAITING_OPEN, ":material/hourglass:")
    if box.open:
        with box:
            waiting_table(waiting_rows, placeholder)
else:
    st.caption(f"{waiting_label}: none among these papers.")

mark("waiting")
if not len(link_rows):
    st.caption("All links (0): these abstracts contain no links.")
else:
    box = components.lazy_section(f"All links ({len(link_rows):,})", keys.LINKS_ALL_OPEN, ":material/link:")
    if box.open:
        with box:
            links_table()
    components.download(
        lambda: tables.tracker_rows(link_table, papers, link_rows),
        view,
        stem="links",
        key=keys.LINKS_FORMAT,
        what="links",
        n_rows=len(link_rows),
    )

mark("links")
left, right = st.container(key=keys.LINKS_STACK_TABLES).columns(2)
with left:
    account_only = in_view & data.has_code_status(digest, "account_only", papers)
    account_label = f"Account or organisation only ({int(account_only.sum()):,})"
    if account_only.any():
        box = components.lazy_section(account_label, keys.LINKS_ACCOUNTS_OPEN, ":material/person:")
        if box.open:
            with box:
                accounts_table(account_only)
    else:
        st.caption(f"{account_label}: no paper links only a user or organisation page.")
with right:
    promised_rows = np.flatnonzero(in_view & data.has_code_status(digest, "promised", papers))
    promised_label = f"Code promised, no link ({len(promised_rows):,})"
    if len(promised_rows):
        box = components.lazy_section(promised_label, keys.LINKS_PROMISED_OPEN, ":material/schedule:")
        if box.open:
            with box:
                promised_table(promised_rows)
    else:
        st.caption(f'{promised_label}: no abstract says code "will be released" without a link.')

mark("accounts and promised")
shared = tables.shared_repos_in_view(data.repo_groups(digest, papers), in_view)
shared_label = f"Repositories shared by several papers ({len(shared):,})"
if not len(shared):
    st.caption(f"{shared_label}: no repository is given as the code of more than one of these papers.")
else:
    box = components.lazy_section(shared_label, keys.LINKS_SHARED_OPEN, ":material/share:")
    if box.open:
        with box:
            shared_table(shared)
