"""Terms: the words and phrases of the filtered papers, what sets them apart, and where they occur."""

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.analytics import terms
from dashboard.figures import charts
from dashboard.figures import images as figures
from dashboard.server import worker
from dashboard.ui import components, data, keys, tables
from dashboard.ui.context import page_context
from dashboard.ui.markup import escape_markdown
from dashboard.ui.timings import mark
from dashboard.ui.url import param, setting, sync_widget, write_query

NGRAMS = {"1": "Words", "2": "Two-word phrases", "3": "Three-word phrases"}
GROUPS = {"topic": "Topic", "area": "Research area", "venue": "Venue", "source": "Source file"}
CLOUD_TERMS = 150  # the chart, the cloud and the default term come from the most frequent terms
KWIC_SHOWN = 500  # lines of keyword in context: more than anyone reads, and the scan stops there
# Characters of context either side, read from the abstract; each side is then fitted to its column's
# width at its narrowest (`KWIC_COLUMNS` fitted to 1024 px), cut at a word with an ellipsis
# (`terms.fit_width`): cut to 36 characters, a Before text of wide letters overflowed its right-aligned
# cell into the Paper column, and After texts were clipped at the cell's edge.
KWIC_WINDOW = 60
KWIC_COLUMNS = {"title": 190, "left": 270, "match": 90, "right": 270}
KWIC_WITHIN_PX = components.PAGE_WIDTH_PX - components.EXPANDER_INSET_PX  # the table is in an expander
CELL_PADDING_PX = 18  # the grid's padding either side of a cell's text, and a pixel to spare
KWIC_ORDERS = {"corpus": "Corpus order", "before": "Word before", "after": "Word after"}
GROUP_SAMPLE = 50_000  # papers the group comparison counts at most (a seeded sample above that)
CLOUDS = {"distinctive": "Distinctive words", "frequent": "Most frequent"}
CLOUD_PER_TOPIC = 8  # with no filter, the cloud shows each topic's this many most distinctive terms

view = page_context()
components.page_header("Terms", view, "The words these papers use")
if components.empty_state(view, keys.TERMS_CLEAR):
    st.stop()

mark("context")
ngram = setting(keys.URL_NGRAM, NGRAMS, default="1")
keep_stop_words = setting(keys.URL_STOP_WORDS, ("on", "off"), default="off") == "on"


def _on_setting(widget_key: str, url_key: str, to_url: Callable[[Any], str | None]) -> None:
    write_query({url_key: to_url(st.session_state.get(widget_key))})


left, middle = st.columns([3, 2], vertical_alignment="bottom")
with left:
    sync_widget(keys.TERMS_NGRAM, ngram)
    st.segmented_control(
        "Terms",
        list(NGRAMS),
        format_func=lambda n: NGRAMS[n],
        key=keys.TERMS_NGRAM,
        on_change=_on_setting,
        args=(keys.TERMS_NGRAM, keys.URL_NGRAM, lambda v: None if v in (None, "1") else v),
    )
with middle:
    sync_widget(keys.TERMS_STOP_WORDS, keep_stop_words)
    st.toggle(
        "Keep stop words",
        key=keys.TERMS_STOP_WORDS,
        on_change=_on_setting,
        args=(keys.TERMS_STOP_WORDS, keys.URL_STOP_WORDS, lambda v: "on" if v else None),
        help="Stop words are very common words (the, of, we) and abstract boilerplate (propose, method).",
    )

with st.spinner("Counting terms (once per corpus and setting)…"):
    counts = data.term_counts(view.source.digest, int(ngram), keep_stop_words, view.papers)
frequencies = counts.term_frequencies(view.mask.to_numpy(), top=CLOUD_TERMS, doc_freq=False)
cloud_kind = setting(keys.URL_CLOUD, CLOUDS, default="distinctive")


def _sampled(mask: np.ndarray) -> tuple[np.ndarray, int]:
    """``mask``, or above GROUP_SAMPLE papers a seeded sample of them (the first in the corpus's
    sample order, as the paper map's: read from the head of that order, not drawn from a list of every
    filtered paper, 10 ms a run at a million); and how many papers ``mask`` holds."""
    n_masked = int(np.count_nonzero(mask))
    if n_masked <= GROUP_SAMPLE:
        return mask, n_masked
    drawn = charts.sample_in_order(mask, data.sample_order(view.source.digest, view.papers), GROUP_SAMPLE)
    sample = np.zeros(len(mask), dtype=bool)
    sample[drawn] = True
    return sample, n_masked


# By default the cloud shows what sets the filtered papers apart from the rest of the corpus: the most
# frequent words of any large set of abstracts are the same generic ones (time, space, large, process).
# With no filter there is no rest: it shows what sets each topic apart from the others.
filtered = view.mask.to_numpy(dtype=bool)
everything = bool(filtered.all())
cloud_note = f"The {CLOUD_TERMS} most frequent {NGRAMS[ngram].lower()} of the filtered papers."
cloud_terms: dict[str, float] = {}
if cloud_kind == "distinctive":
    topics_known = view.analysis is not None
    keywords = counts.keywords(
        filtered,
        sample=_sampled(filtered)[0] if everything else None,
        groups=view.papers["topic"].where(view.papers["topic"] >= 0) if topics_known else None,
        top=CLOUD_TERMS,
        per_group=CLOUD_PER_TOPIC,
    )
    cloud_terms = dict(zip(keywords["term"], keywords["weight"], strict=True))
    if cloud_terms and not everything:
        cloud_note = (
            f"The {NGRAMS[ngram].lower()} that set the filtered papers apart from the rest of the corpus "
            "(weighted log-odds against it): the larger, the more distinctive."
        )
    elif cloud_terms:
        cloud_note = (
            f"No filter, so nothing to set apart from the rest: each topic's {CLOUD_PER_TOPIC} most "
            "distinctive terms against the other topics. Filter the papers to see what sets them apart."
        )
    else:
        cloud_note = "Nothing sets these papers apart here: " + cloud_note[0].lower() + cloud_note[1:]
if not cloud_terms:
    cloud_terms = dict(zip(frequencies["term"], frequencies["count"].astype(float), strict=True))
# Drawn while this page goes on, shown at its end: in the server's helper process once it is ready
# (`data.word_cloud`), before that in a thread here. The helper's first call starts it, and that start
# (a forkserver importing the readers and the analysis, then the helper) held a first visit to this
# page for a second or more; the server starts it itself once visits pause (`warmup.start_helper_after`).
theme = figures.theme_name(st.context.theme.type)
if worker.helper_ready():
    cloud = data.word_cloud(tuple(cloud_terms.items()), theme)
else:
    cloud = data.in_background(charts.word_cloud_png, dict(cloud_terms), theme=theme)

mark("frequencies")
left, right = st.container(key=keys.TERMS_STACK).columns([2, 3])  # stacked below 1280 px
with left:
    if frequencies.empty:
        st.caption("No terms to count in these papers with this setting.")
    else:
        top = frequencies.set_index("term")["count"]
        components.chart(
            charts.top_counts(
                top, title=f"Most frequent {NGRAMS[ngram].lower()}", x_title="Occurrences", limit=25
            ),
            view,
            name="frequent-terms",
        )
with right:
    sync_widget(keys.TERMS_CLOUD, cloud_kind)
    st.segmented_control(
        "Word cloud",
        list(CLOUDS),
        format_func=lambda c: CLOUDS[c],
        key=keys.TERMS_CLOUD,
        on_change=_on_setting,
        args=(keys.TERMS_CLOUD, keys.URL_CLOUD, lambda v: None if v in (None, "distinctive") else v),
        help="Distinctive: the words that set the filtered papers apart from the rest of the corpus. "
        "Most frequent: the words they use most, which in any large set of abstracts are much the same.",
    )
    st.caption(escape_markdown(cloud_note))
cloud_place = right.container()  # filled once the cloud is drawn, below

mark("chart")
st.header("Distinctive terms")
left, right = st.container(key=keys.TERMS_STACK_GROUPS).columns(2)
with left:
    if view.filters.is_empty:
        st.caption(
            "Filter the papers (sidebar) to see which terms set them apart from the rest of the corpus."
        )
    elif view.mask.all():
        st.caption("The filters keep every paper, so there is no rest to compare with.")
    else:
        distinctive = counts.distinctive_terms(view.mask.to_numpy())
        components.chart(
            charts.distinctive_terms(distinctive, title="The filtered papers against the rest", limit=30),
            view,
            name="distinctive-terms",
        )
with right:
    # Topics and areas come from the analysis; without it only the corpus's own groups are left.
    group_options: list[str] = [g for g in GROUPS if g in ("venue", "source") or view.analysis is not None]
    group = setting(keys.URL_GROUP_BY, group_options, default=group_options[0])
    sync_widget(keys.TERMS_GROUP_BY, group)
    st.selectbox(
        "Each group against the others",
        group_options,
        format_func=lambda g: GROUPS[g],
        key=keys.TERMS_GROUP_BY,
        on_change=_on_setting,
        args=(keys.TERMS_GROUP_BY, keys.URL_GROUP_BY, lambda v: None if v == group_options[0] else v),
    )
    column = {"topic": "topic", "area": "areas", "venue": "venue", "source": "source"}[group]
    groups = view.papers[column]
    # Above GROUP_SAMPLE filtered papers the groups are compared on a seeded sample of them: the
    # counts of every filtered paper were most of a run at a million papers.
    sample, n_filtered = _sampled(filtered)
    if n_filtered > GROUP_SAMPLE:
        st.caption(f"Estimated from a seeded sample of {GROUP_SAMPLE:,} of the {n_filtered:,} papers.")
    by_group = counts.group_distinctive_terms(groups, mask=sample)
    if group == "topic":  # named in the table, not in the papers (a million papers' topics to map)
        by_group["group"] = by_group["group"].map(lambda g: view.topic_names.get(int(g), g))
    if by_group.empty:
        st.caption("The filtered papers fall in fewer than two groups: nothing to set apart.")
    else:
        summary = (
            by_group.groupby("group", sort=True)["term"].apply(lambda t: ", ".join(t.head(8))).reset_index()
        )
        if group == "topic":  # as the topic list is everywhere: largest first, outliers last
            rank = {view.topic_names.get(t, str(t)): n for n, t in enumerate(view.topic_order)}
            summary = summary.sort_values("group", key=lambda g: g.map(rank).fillna(len(rank)), kind="stable")
        components.show_table(
            summary,
            {
                "group": st.column_config.TextColumn(GROUPS[group], width=200),
                "term": st.column_config.TextColumn("Most distinctive terms", width=420),
            },
            visible=10,
            within=components.HALF_WIDTH_PX,
            wrapped=True,  # eight terms each: one line of half a page showed three or four
        )

mark("groups")
# Drawn only while open (a page switch drew its table of 500 lines below the fold), and open on
# arrival when the URL names a term: a shared link to a term's lines shows them.
default_term = str(frequencies["term"].iloc[0]) if not frequencies.empty else ""
term = param(keys.URL_KWIC)
kwic_shown = (term or default_term).strip()[:60]
kwic_box = components.lazy_section(
    "Keyword in context: every occurrence of "
    + (f"“{escape_markdown(kwic_shown)}” (or another term)" if kwic_shown else "a term")
    + ", with the words around it",
    keys.TERMS_KWIC_OPEN,
    ":material/format_quote:",
    expanded=bool(term or param(keys.URL_KWIC_ORDER)),
)
if kwic_box.open:
    with kwic_box:
        sync_widget(keys.TERMS_KWIC, term)
        order = setting(keys.URL_KWIC_ORDER, KWIC_ORDERS, default="corpus")
        sync_widget(keys.TERMS_KWIC_ORDER, order)
        # A row that wraps, not two columns: at 1024 px a fixed share was too narrow for the three orders.
        kwic_row = st.container(horizontal=True, vertical_alignment="bottom")
        kwic_row.text_input(
            "Term or phrase",
            key=keys.TERMS_KWIC,
            on_change=_on_setting,
            args=(keys.TERMS_KWIC, keys.URL_KWIC, lambda v: (v or "").strip()[:200] or None),
            placeholder=default_term,
        )
        kwic_row.segmented_control(
            "Sort by",
            list(KWIC_ORDERS),
            format_func=lambda o: KWIC_ORDERS[o],
            key=keys.TERMS_KWIC_ORDER,
            on_change=_on_setting,
            args=(keys.TERMS_KWIC_ORDER, keys.URL_KWIC_ORDER, lambda v: None if v in (None, "corpus") else v),
            width="content",
        )
        term = (term or default_term).strip()
        if term:
            # Abstracts are read in corpus order only until the lines to show are found (one more says
            # whether there are others): copying every filtered abstract took seconds at a million papers.
            found = terms.keyword_in_context(
                terms.texts_at(view.papers["abstract_clean"], view.mask.to_numpy()),
                term,
                width=KWIC_WINDOW,
                limit=KWIC_SHOWN + 1,
            )
            lines = terms.kwic_sorted(found.head(KWIC_SHOWN), order)
            sorted_by = (
                "in corpus order" if order == "corpus" else f"sorted by the {KWIC_ORDERS[order].lower()}"
            )
            if len(found) > KWIC_SHOWN:
                # "The first" are always the first in corpus order: said once, where another order sorts them.
                first = "" if order == "corpus" else " (the first in corpus order)"
                st.caption(
                    escape_markdown(
                        f'The first {KWIC_SHOWN:,} of more than {KWIC_SHOWN:,} occurrences of "{term}" '
                        f"in the filtered papers{first}, {sorted_by}"
                    )
                )
            else:
                st.caption(
                    escape_markdown(
                        f'{len(lines):,} occurrences of "{term}" in the filtered papers, {sorted_by}'
                    )
                )
            if len(lines):
                room = {
                    name: width - CELL_PADDING_PX
                    for name, width in tables.fit_widths(KWIC_COLUMNS, KWIC_WITHIN_PX).items()
                }
                titles = view.papers["title"].iloc[lines["id"].to_numpy()].astype(str)
                fitted = pd.DataFrame(
                    {
                        "title": [terms.fit_width(t, room["title"]) for t in titles],
                        "left": [terms.fit_width(t, room["left"], keep="end") for t in lines["left"]],
                        "match": lines["match"].to_numpy(),
                        "right": [terms.fit_width(t, room["right"]) for t in lines["right"]],
                    }
                )
                components.show_table(
                    fitted,
                    {
                        "title": st.column_config.TextColumn("Paper", width=KWIC_COLUMNS["title"]),
                        "left": st.column_config.TextColumn(
                            "Before", width=KWIC_COLUMNS["left"], alignment="right"
                        ),
                        "match": st.column_config.TextColumn(
                            "Term", width=KWIC_COLUMNS["match"], alignment="center"
                        ),
                        "right": st.column_config.TextColumn("After", width=KWIC_COLUMNS["right"]),
                    },
                    within=KWIC_WITHIN_PX,
                )

mark("keyword in context")
# The cloud last: its place is beside the chart, and the helper process drawing it (`data.word_cloud`)
# has had the whole page to finish.
with cloud_place:
    try:
        biggest = ", ".join(list(cloud_terms)[:10])
        shows = "most frequent" if cloud_kind == "frequent" else "most distinctive"
        st.image(
            cloud.result(),
            output_format="PNG",  # as drawn: "auto" would encode it anew as a JPEG on every run
            caption=f"Word cloud: the {shows} terms",
            alt=f"Word cloud of the {len(cloud_terms)} {shows} terms, the largest: {biggest}.",
        )
    except ValueError:
        st.caption("No term here can be drawn as a word cloud (the font covers Latin, Greek and Cyrillic).")
    undrawable = [t for t in cloud_terms if not charts.cloud_drawable(t)]
    if undrawable:
        st.caption(f"{len(undrawable)} terms in other scripts are in the chart but not in the cloud.")

mark("cloud")
