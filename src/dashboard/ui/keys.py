"""Every session-state key and every URL key of the app, in one place.

Session-state keys of widgets carry the part of the app they belong to (``sidebar.``, ``papers.``...)
so two pages never share a key by accident. URL keys are the query parameters a link carries: the
filters (see `dashboard.filters`) plus a few page settings.
"""

from __future__ import annotations

from typing import Final

# --- session state: the corpus --------------------------------------------------------------------
UPLOADS: Final = "corpus.uploads"  # data.HeldUpload: the digest, names, sizes of this session's upload
UPLOAD_WIDGET: Final = "corpus.upload_widget"  # the file_uploader; its value is copied to UPLOADS
CORPUS_PROBLEMS: Final = "corpus.problems"  # the popover listing every problem of the load report
UPLOAD_NOTICE: Final = "corpus.upload_notice"  # message about the last upload, shown once
CORPUS_CHOICE: Final = "corpus.choice"  # "bundled" or "uploaded"
UPLOAD_LINK_DISMISS: Final = "corpus.upload_link_dismiss"  # "Dismiss" under "this link was for an upload"

# --- session state: navigation (dashboard.ui.navigation) ------------------------------------------
NAV_CURRENT: Final = "nav.current"  # the stem of the page this run shows ("papers")
NAV_REMEMBERED: Final = "nav.remembered"  # {page stem: its own URL settings as it last had them}
NAV_NEWEST_URL: Final = "nav.newest_url"  # (page, the newest URL it was given, its older ones): url.py
OPEN_PAPERS: Final = "header.open_papers"  # "Open these N papers" under a counting page's title

# --- session state: sidebar filter widgets (their values mirror the URL) --------------------------
FILTER_WIDGET_PREFIX: Final = "sidebar.filter."
SEARCH: Final = FILTER_WIDGET_PREFIX + "q"
TOPIC: Final = FILTER_WIDGET_PREFIX + "topic"
AREA: Final = FILTER_WIDGET_PREFIX + "area"
VENUE: Final = FILTER_WIDGET_PREFIX + "venue"
YEAR: Final = FILTER_WIDGET_PREFIX + "year"
SOURCE: Final = FILTER_WIDGET_PREFIX + "source"
CODE: Final = FILTER_WIDGET_PREFIX + "code"
LINK: Final = FILTER_WIDGET_PREFIX + "link"
DATASET: Final = FILTER_WIDGET_PREFIX + "dataset"
AUTHOR: Final = FILTER_WIDGET_PREFIX + "author"
INSTITUTION: Final = FILTER_WIDGET_PREFIX + "institution"
COUNTRY: Final = FILTER_WIDGET_PREFIX + "country"
DECISION: Final = FILTER_WIDGET_PREFIX + "decision"
REPO: Final = FILTER_WIDGET_PREFIX + "repo"
WORDS: Final = FILTER_WIDGET_PREFIX + "words"
WORDS_BOUNDS: Final = "sidebar.words_bounds"  # (shortest, longest) abstract: the slider's ends
N_TOPICS: Final = "topics.n_topics"
CLEAR_FILTERS: Final = "sidebar.clear_filters"

# --- session state: page widgets -------------------------------------------------------------------
SAVE_CHART: Final = "chart.save"  # + the chart's name (its popover) and format (its PNG/SVG buttons)
SHOW_DATA: Final = "chart.data"  # + the chart's name: its "Show the data" popover
REPORT: Final = "sidebar.report"  # the "Download report" button
PAPERS_TABLE: Final = "papers.table"  # + the filters' slug: a new selection per view
PAPERS_CLEAR: Final = "papers.clear_filters"
PAPERS_FORMAT: Final = "papers.download_format"
PAPERS_SORT: Final = "papers.sort"  # the column the table is sorted by ("" = corpus order)
PAPERS_SORT_DESCENDING: Final = "papers.sort_direction"  # "asc" or "desc"
PAPERS_SHOWN: Final = "papers.shown"  # + filters and order: how many rows "Show more" has shown
PAPERS_COMPARE: Final = "papers.compare"  # + ids: compare the ticked rows / the opened paper
PAPERS_COPY_LINK: Final = "papers.copy_link"
PAPERS_LIKE_TEXT: Final = "papers.like_text"  # the text box of "papers like a text of yours"
PAPERS_LIKE_FIND: Final = "papers.like_find"
PAPERS_LIKE_CLEAR: Final = "papers.like_clear"
PAPERS_MORE_LIKE: Final = "papers.more_like"  # + paper id: "More like this" on the opened paper
PAPERS_RECOMMEND: Final = "papers.recommend"  # the "Recommended for" list chooser
PAPERS_RECOMMEND_CLEAR: Final = "papers.recommend_clear"
TOPICS_BARS: Final = "topics.bars"  # + View.model_key (so are the other topic widgets)
TOPICS_MAP: Final = "topics.map"
TOPICS_MAP_COLOUR: Final = "topics.map_colour"  # the field the map's points are coloured by
TOPICS_MAP_FIND: Final = "topics.map_find"  # the text that narrows the list of the map's topics
TOPICS_MAP_VIEW: Final = "topics.map_view"  # the map as a picture or interactive (mirrors URL_MAP_VIEW)
MAP_REGION: Final = "topics.map.region"  # + ".x" / ".y" / ".apply": the keyboard's way to pick a box
OVERVIEW_BARS: Final = "overview.topic_bars"
OVERVIEW_AUTHORS: Final = "overview.author_bars"
OVERVIEW_INSTITUTIONS: Final = "overview.institution_bars"
OVERVIEW_COUNTRIES: Final = "overview.country_bars"
OVERVIEW_DECISIONS: Final = "overview.decision_bars"
OVERVIEW_METHODS: Final = "overview.all_method_names"
TOPICS_NOTICE: Final = "topics.notice"  # message about the last map selection, shown once
TOPICS_FOCUS: Final = "topics.focus"  # + View.model_key: the topic looked at in detail
TOPICS_DETAIL: Final = "topics.detail"  # + ".open": "One topic in detail" is open
TOPICS_CLEAR: Final = "topics.clear_filters"
TOPICS_FORGET_PICKED: Final = "topics.forget_picked"
TOPICS_REFIT: Final = "topics.refit"  # refit at k instead of the tree's cut
TOPICS_CUT: Final = "topics.back_to_cut"  # back from a refit to the tree's cut
TOPICS_TREE: Final = "topics.tree"  # + View.model_key: the tree of the fitted topics
TERMS_NGRAM: Final = "terms.ngram"
TERMS_CLOUD: Final = "terms.cloud"  # what the word cloud shows: distinctive (default) or frequent words
TERMS_STOP_WORDS: Final = "terms.stop_words"
TERMS_GROUP_BY: Final = "terms.group_by"
TERMS_KWIC: Final = "terms.kwic"
TERMS_KWIC_ORDER: Final = "terms.kwic_order"
LINKS_FORMAT: Final = "links.download_format"
LINKS_CLEAR: Final = "links.clear_filters"
LINKS_CHECK: Final = "links.check_repositories"  # the "Check repositories" button
LINKS_CHECK_REPORT: Final = "links.check_report"  # what the last check in this session did, shown once
LINKS_REPOS_FORMAT: Final = "links.repositories_download_format"
LINKS_REPO_GROUP: Final = "links.repository_states_per"  # topic, venue or year
LINKS_WAITING_PAGE: Final = "links.waiting_for_code.page"  # page of the "code promised" table, per filters
LINKS_PROMISED_PAGE: Final = "links.code_promised.page"  # page of the "code promised, no link" table
LINKS_SHARED_PAGE: Final = "links.shared_repositories.page"  # page of the shared repositories, per filters
TERMS_CLEAR: Final = "terms.clear_filters"
COMPARE_CLEAR: Final = "compare.clear_filters"
COMPARE_FIND: Final = "compare.find"  # the search box that finds a paper to add
COMPARE_REMOVE_PREFIX: Final = "compare.remove"  # + id: one "Remove" button per picked paper
COMPARE_ADD_PREFIX: Final = "compare.add"  # + ids: one "Add" button per suggested paper
TOPICS_REPRESENTATIVE_PREFIX: Final = "topics.representative"  # + topic and paper id
PAPERS_SIMILAR_PREFIX: Final = "papers.similar"  # + paper ids: one button per similar paper
OVERVIEW_CLEAR: Final = "overview.clear_filters"
# Containers whose st.columns stack below 1280 px (see `markup.STYLE`); the prefix is what the CSS matches.
STACK_NARROW_PREFIX: Final = "stack-narrow"
OVERVIEW_STACK: Final = STACK_NARROW_PREFIX + "-overview"
LINKS_STACK: Final = STACK_NARROW_PREFIX + "-links"
LINKS_STACK_TABLES: Final = STACK_NARROW_PREFIX + "-links-tables"
TOPICS_STACK: Final = STACK_NARROW_PREFIX + "-topics"
TOPICS_STACK_DETAIL: Final = STACK_NARROW_PREFIX + "-topics-detail"
TERMS_STACK: Final = STACK_NARROW_PREFIX + "-terms"
TERMS_STACK_GROUPS: Final = STACK_NARROW_PREFIX + "-terms-groups"
TRENDS_STACK_CHANGES: Final = STACK_NARROW_PREFIX + "-trends-changes"  # rising and falling terms, topics
TRENDS_STACK_DECISIONS: Final = STACK_NARROW_PREFIX + "-trends-decisions"  # acceptance per topic, area

# --- session state: the library (dashboard.ui.library) ---------------------------------------------
LIBRARY_SESSION: Final = "library.session"  # Library: this session's in-memory library (--library session)
LIBRARY_NOTICE: Final = "library.notice"  # message about the last library action, shown once
PAPERS_ADD: Final = "papers.add_to_list"  # add every filtered paper
TOPICS_ADD: Final = "topics.add_to_list"  # add the picked (or filtered) papers
COMPARE_ADD_LIST: Final = "compare.add_to_list"  # add the compared papers
PAPER_LIBRARY_PREFIX: Final = "paper.library"  # + paper id: the opened paper's list, note, tags
LIBRARY_LIST: Final = "library.list"
LIBRARY_RENAME: Final = "library.rename"
LIBRARY_MERGE: Final = "library.merge"
LIBRARY_DELETE: Final = "library.delete"
LIBRARY_DELETE_CONFIRM: Final = "library.delete_confirm"
LIBRARY_TAG: Final = "library.tag"
LIBRARY_TABLE: Final = "library.table"  # + list, tag and library revision
LIBRARY_SHOW_EVERYWHERE: Final = "library.show_everywhere"
LIBRARY_REMOVE: Final = "library.remove"
LIBRARY_MOVE_TO: Final = "library.move_to"
LIBRARY_MOVE: Final = "library.move"
LIBRARY_ADD_TAG: Final = "library.add_tag"
LIBRARY_TAG_BUTTON: Final = "library.tag_button"
LIBRARY_EDIT_PREFIX: Final = "library.edit"  # + fingerprint
LIBRARY_FORMAT: Final = "library.format"
LIBRARY_DOWNLOAD: Final = "library.download"
LIBRARY_IMPORT_FILE: Final = "library.import_file"
LIBRARY_IMPORT_LIST: Final = "library.import_list"
LIBRARY_IMPORT: Final = "library.import"
LIBRARY_IMPORT_REPORT: Final = "library.import_report"
LIBRARY_IMPORTED: Final = "library.imported"  # uploads.SessionTotals: BibTeX imported this session
LIBRARY_TOPICS: Final = "library.topics"
LIBRARY_TOPIC_NAME: Final = "library.topic_name"
LIBRARY_TOPIC_RENAME: Final = "library.topic_rename"
LIBRARY_TOPIC_FORGET: Final = "library.topic_forget"  # + name
LIBRARY_CLEAR: Final = "library.clear_filters"
LIBRARY_SEARCH_NAME: Final = "library.search_name"  # Library: the name to save the current filters under
LIBRARY_SEARCH_SAVE: Final = "library.search_save"
LIBRARY_SEARCH_OPEN: Final = "library.search_open"  # + saved search name
LIBRARY_SEARCH_DELETE: Final = "library.search_delete"  # + saved search name
LIBRARY_NEW_SINCE: Final = "library-new-since"  # the "New since" container (a CSS class: no dots)
LIBRARY_NEW_SINCE_DOWNLOAD: Final = "library.new_since_download"
LIBRARY_MARK_SEEN: Final = "library.mark_seen"

# --- URL keys of page settings (the filter keys are in dashboard.filters.URL_KEYS) ----------------
URL_PAPER: Final = "paper"  # Papers: the paper opened below the table
URL_NGRAM: Final = "ngram"  # Terms: 1, 2 or 3
URL_MAP_VIEW: Final = "map"  # Topics: the map as a "picture" or "interactive" (default: by its size)
URL_CLOUD: Final = "cloud"  # Terms: "frequent" draws the word cloud by frequency, not distinctiveness
URL_STOP_WORDS: Final = "stop"  # Terms: "on" keeps stop words
URL_GROUP_BY: Final = "group"  # Terms: topic, area, venue or source
URL_KWIC: Final = "term"  # Terms: keyword in context
URL_KWIC_ORDER: Final = "kwic"  # Terms: keyword in context sorted by the word "before" or "after"
URL_COMPARE: Final = "cmp"  # Compare: the 2-4 paper ids
URL_UPLOADED: Final = "uploaded"  # the shown corpus is an upload: its digest's first 12 hex digits

# --- Trends page -------------------------------------------------------------------------------------
TRENDS_BY: Final = "trends.by"
TRENDS_SCALE: Final = "trends.scale"
TRENDS_FROM: Final = "trends.from"
TRENDS_TO: Final = "trends.to"
TRENDS_NGRAM: Final = "trends.ngram"
TRENDS_SHARES: Final = "trends.shares"
TRENDS_CLEAR: Final = "trends.clear_filters"
TRENDS_CHART_PREFIX: Final = "trends.chart"  # + the chart's name: one selection state per chart

TRENDS_OPEN_PAPERS: Final = "trends.open_papers"
# Sections drawn only while their expander is open (issue 49: a page switch draws what is in sight)
TRENDS_VENUES_OPEN: Final = "trends.venues.open"  # topic by venue
TRENDS_CODE_OPEN: Final = "trends.code_release.open"
TRENDS_DECISIONS_OPEN: Final = "trends.decisions.open"
TRENDS_PAPERS_OPEN: Final = "trends.papers.open"  # the list of the papers behind a click
LINKS_REPOS_OPEN: Final = "links.repositories.open"  # the papers with a repository and its state
LINKS_WAITING_OPEN: Final = "links.waiting_for_code.open"
LINKS_ALL_OPEN: Final = "links.all_links.open"
LINKS_ACCOUNTS_OPEN: Final = "links.accounts.open"
LINKS_PROMISED_OPEN: Final = "links.code_promised.open"
LINKS_SHARED_OPEN: Final = "links.shared_repositories.open"
TERMS_KWIC_OPEN: Final = "terms.kwic.open"  # keyword in context (open on arrival when the URL names a term)
URL_TRENDS_BY: Final = "by"  # Trends: year (all venues together) or venue,year (each venue apart)
URL_TRENDS_SCALE: Final = "scale"  # Trends: share (default) or papers
URL_TRENDS_FROM: Final = "from"  # Trends: the earlier year compared (default: the first half of the span)
URL_TRENDS_TO: Final = "to"  # Trends: the later year compared (default: the last half of the span)
URL_TRENDS_NGRAM: Final = "tngram"  # Trends: 1 (words) or 2 (two-word phrases)
URL_TRENDS_SHARES: Final = "shares"  # Trends: venues (within venues, default) or pooled
URL_SORT: Final = "sort"  # Papers: the table's order, a column ("title") or "-" and a column ("-n_words")
URL_RECOMMEND: Final = "rec"  # Papers: order by "Recommended for" this reading list (its name)

# --- session state: the Reviews page and its sidebar filters (issue 54) ---------------------------
RATING: Final = FILTER_WIDGET_PREFIX + "rating"
SPREAD: Final = FILTER_WIDGET_PREFIX + "spread"
REVIEWS: Final = FILTER_WIDGET_PREFIX + "reviews"
SCORE_BOUNDS: Final = "sidebar.score_bounds"  # {field: (lowest, highest)}: each score slider's ends
REVIEWS_CLEAR: Final = "reviews.clear_filters"
REVIEWS_CHART_PREFIX: Final = "reviews.chart"  # + the chart's name
REVIEWS_TABLE_PREFIX: Final = "reviews.table"  # + the table's name and the filters' slug
REVIEWS_OPEN_PAPERS: Final = "reviews.open_papers"
REVIEWS_STACK: Final = STACK_NARROW_PREFIX + "-reviews"  # topic and area charts: stacked below 1280 px
