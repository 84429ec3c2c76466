"""What a new user saw and a reviewer would not sign off, headless (AppTest) on the seeds: empty charts
said in words, raw file names, the upload control hidden, and one count for "papers like"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.apptest import app, assert_no_exception, count_line

from dashboard.ui import keys, repos, tables


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def chart_titles(at: object) -> list[str]:
    titles = []
    for element in at.get("plotly_chart"):  # type: ignore[attr-defined]
        spec = json.loads(element.proto.spec)
        titles.append(str(spec.get("layout", {}).get("title", {}).get("text", "")))
    return titles


def texts(at: object) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.info])  # type: ignore[attr-defined]


def test_repository_states_before_any_check_are_said_not_drawn() -> None:
    at = app("links")
    assert_no_exception(at)
    assert not any(t.startswith("Repository states") for t in chart_titles(at))
    assert "Not checked yet" in texts(at)
    at.session_state[keys.LINKS_REPOS_OPEN] = True  # the table is drawn once its expander is opened
    at.run()
    repo_tables = [df.value for df in at.main.dataframe if "repository" in df.value.columns]
    assert repo_tables, "the repository table is shown"
    assert not {"repo_stars", "repo_license", "repo_pushed_at", "days_after_year"} & set(
        repo_tables[0].columns
    )


def test_no_released_code_is_said_once_not_drawn_as_zero_bars() -> None:
    at = app("links", {"code": "none"})
    assert_no_exception(at)
    assert "links its code" in texts(at)
    assert not any(t.startswith("Code released, per") for t in chart_titles(at))


def test_sources_are_named_by_venue_and_year_not_by_hash() -> None:
    at = app("papers", {"paper": "000_f074a6e2e82fdcc8-1"})
    assert_no_exception(at)
    options = at.sidebar.multiselect(key=keys.SOURCE).options
    assert options and all("ICML 2026 · part" in o for o in options), options
    shown = " ".join(str(e.proto.body) for e in at.get("html"))
    assert "part 1 of 3" in shown
    assert "f074a6e2e82fdcc8.txt" not in shown


def test_the_upload_control_is_in_sight() -> None:
    at = app("overview")
    uploaders = at.sidebar.get("file_uploader")
    assert uploaders and uploaders[0].proto.label == "Your own abstracts"
    for expander in at.sidebar.expander:
        assert not expander.get("file_uploader"), "the uploader is hidden in a closed box"


def test_papers_like_a_text_is_one_count_for_the_line_the_list_and_the_download() -> None:
    at = app("papers", {"liketext": "diffusion models for image generation"})
    assert_no_exception(at)
    shown, total = count_line(at)
    assert 0 < shown < total
    assert len(at.main.dataframe[0].value) == shown
    labels = [d.proto.label for d in at.get("download_button")]
    assert any(f"Download {shown:,} papers" in label for label in labels), labels


def test_a_failed_check_says_why_as_a_warning() -> None:
    """Every API is a closed local port here (conftest): each repository fails for the same reason."""
    at = app("links")
    at.button(key=keys.LINKS_CHECK).click().run()
    assert_no_exception(at)
    warnings = [str(w.value) for w in at.warning]
    assert any("could not be checked: host unreachable" in w for w in warnings), warnings
    assert not any(re.search(r"\d error\b", w) for w in warnings)
    assert not [i.value for i in at.info if "Checked" in str(i.value)]


@pytest.mark.parametrize(
    ("detail", "reason"),
    [
        ("connection failed (ConnectionRefusedError)", "host unreachable"),
        ("timed out after 10 s", "host unreachable"),
        ("HTTP 401: Bad credentials", "token refused"),
        ("rate limit of api.github.com reached", "rate limit reached"),
        ("HTTP 503: unavailable", "the host answered with a server error"),
        ("malformed answer (stars)", "the host's answer could not be read"),
    ],
)
def test_failure_reasons(detail: str, reason: str) -> None:
    assert repos.failure_reason(detail) == reason


@pytest.mark.corpora
def test_a_corpus_sorted_by_citations_shows_them(corpora_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Paper Copilot's files count citations: the table sorted by them has a Citations column."""
    icml = corpora_dir / "papercopilot-iccv2019-icml2019" / "icml2019.json"
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(icml)])
    at = app("papers", {"sort": "-citations"})
    assert_no_exception(at)
    table = at.main.dataframe[0].value
    assert "citations" in table.columns
    cited = table["citations"].dropna()
    assert len(cited) >= 100 and cited.is_monotonic_decreasing  # the first page: 100 rows


def test_wrapped_tables_cut_long_names_at_a_word_not_inside_it() -> None:
    """The grid breaks a word longer than its column mid-word ("Seunghyeok071 / 5/CLAMP"): every wrapped
    table's text columns are cut to their cells, with "…", before the grid sees them."""
    at = app("links")
    at.session_state[keys.LINKS_ALL_OPEN] = True
    at.run()
    assert_no_exception(at)
    links = next(df.value for df in at.main.dataframe if "host" in df.value.columns)
    room = (120 - tables.CELL_PADDING_PX) * 0.92  # "Host", 120 px: the narrowest text column
    words = [word for value in links["host"] if isinstance(value, str) for word in value.split()]
    assert words and all(tables.text_px(word) <= room for word in words), words
    assert "title" in links.columns  # a paper's title stays whole (what the table goes by)
