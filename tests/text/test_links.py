"""URL extraction, normalisation, link kinds and code-release status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.schema import CODE_STATUSES, LINK_KINDS
from dashboard.text.clean import clean_markup
from dashboard.text.links import (
    code_release,
    extract_links,
    find_urls,
    link_kind,
    normalize_url,
    repo_of,
    url_host,
)

# Every link form in the seeds, then forms sampled from the real corpora (ICML/NeurIPS/CVPR/ICLR).
LINK_FORMS = [
    # seeds
    ("Our project page is at https://egotactile.github.io/.", ["https://egotactile.github.io"]),
    (
        "Code is available at https://github.com/Seunghyeok0715/CLAMP",
        ["https://github.com/Seunghyeok0715/CLAMP"],
    ),
    (
        r"Code is available at \url{https://github.com/Gwangho99/mem-curv-diff}.",
        ["https://github.com/Gwangho99/mem-curv-diff"],
    ),
    ("Code: https://github.com/AlanBaade/LatentForcing", ["https://github.com/AlanBaade/LatentForcing"]),
    (
        "available at: https://github.com/jkz-338/Robust-ToM-RL.git",
        ["https://github.com/jkz-338/Robust-ToM-RL"],
    ),
    ("at https://github.com/yazhengliu/MemExplainer.", ["https://github.com/yazhengliu/MemExplainer"]),
    (
        "page: https://zju-xyc.github.io/VIA-SD-Project-Page/",
        ["https://zju-xyc.github.io/VIA-SD-Project-Page"],
    ),
    (
        "at https://github.com/MedARC-AI/CortexMAE and https://github.com/MedARC-AI/Brainmarks.",
        ["https://github.com/MedARC-AI/CortexMAE", "https://github.com/MedARC-AI/Brainmarks"],
    ),
    (
        "at [https://github.com/generaldi/NaRA](https://github.com/generaldi/NaRA).",
        ["https://github.com/generaldi/NaRA"],
    ),
    ("Code is available at: https://github.com/ZhangQuan-hub.", ["https://github.com/ZhangQuan-hub"]),
    # LaTeX and markdown wrappers
    (
        r"\href{https://github.com/SCLBD/BackdoorBench}{https://github.com/SCLBD/BackdoorBench} (PyTorch)",
        ["https://github.com/SCLBD/BackdoorBench"],
    ),
    (
        r"in our \href{https://github.com/vvoracek/Provably}{repository}.",
        ["https://github.com/vvoracek/Provably"],
    ),
    (
        "The code is available [here](https://github.com/GGchen1997/BDI).",
        ["https://github.com/GGchen1997/BDI"],
    ),
    (
        "Our measurements ([code](https://colab.research.google.com/drive/1yKj?usp=sharing)) reveal",
        ["https://colab.research.google.com/drive/1yKj?usp=sharing"],
    ),
    (
        r"codes are available on $\url{https://github.com/LMBDA-design/RGMIL}$.",
        ["https://github.com/LMBDA-design/RGMIL"],
    ),
    (
        r"Code is released\footnote{\url{https://github.com/fb/lm/tree/master/ssl}}.",
        ["https://github.com/fb/lm/tree/master/ssl"],
    ),
    (
        r"available at: {\small\url{https://github.com/VITA-Group/SparseADV_Homotopy}}.",
        ["https://github.com/VITA-Group/SparseADV_Homotopy"],
    ),
    (
        r"The code is available at \url{https://github.com/h305142/WDRO\_coreset}.",
        ["https://github.com/h305142/WDRO_coreset"],
    ),
    (
        r"from https://github.com/fuzihaofzh/AnalyzeParameterEff\/icientFinetune .",
        ["https://github.com/fuzihaofzh/AnalyzeParameterEfficientFinetune"],
    ),
    (
        r"*Code can be found at \url{https://github.com/ralphc1212/ram-mil*.",
        ["https://github.com/ralphc1212/ram-mil"],
    ),
    ("Our code is available at *https://github.com/ML-GSAI/DPT*.", ["https://github.com/ML-GSAI/DPT"]),
    ("see <https://github.com/a/b>", ["https://github.com/a/b"]),
    # brackets, quotes, punctuation
    ("part of the DIG package (https://github.com/divelab/DIG).", ["https://github.com/divelab/DIG"]),
    ("Code is available at “https://github.com/BIT-DA/DCG”.", ["https://github.com/BIT-DA/DCG"]),
    (
        "the mean (https://en.wikipedia.org/wiki/Mean_(statistics)) is",
        ["https://en.wikipedia.org/wiki/Mean_(statistics)"],
    ),
    (
        "[Loreggia et al. 2015, https://dl.acm.org/doi/10.5555/2772879.2773411] for",
        ["https://dl.acm.org/doi/10.5555/2772879.2773411"],
    ),
    ("代码见https://github.com/a/b。谢谢", ["https://github.com/a/b"]),
    # scheme-less forms
    ("Code is available at github.com/microsoft/SPACH.", ["https://github.com/microsoft/SPACH"]),
    (
        "code is publicly available at www.github.com/merlresearch/partial_gcnn .",
        ["https://github.com/merlresearch/partial_gcnn"],
    ),
    ("The codebase can be found www.scenegraphmemory.com.", ["https://www.scenegraphmemory.com"]),
    ("Project page: viser-shape.github.io.", ["https://viser-shape.github.io"]),
    (
        "Project page: sites.google.com/view/wancyuanfan/projects/cmanigan.",
        ["https://sites.google.com/view/wancyuanfan/projects/cmanigan"],
    ),
    ("available at lidarhumanmotion.net/hsc4d.", ["https://lidarhumanmotion.net/hsc4d"]),
    ("Code is available at https:// github.com/Alibaba/LORE-TSR.", ["https://github.com/Alibaba/LORE-TSR"]),
    # paths, queries and fragments
    (
        "Code and data: https://www.cis.upenn.edu/~leijh/projects/EFEM",
        ["https://www.cis.upenn.edu/~leijh/projects/EFEM"],
    ),
    (
        "https://www.synapse.org/#!Synapse:syn3193805/wiki/217785/ datasets.",
        ["https://www.synapse.org/#!Synapse:syn3193805/wiki/217785/"],
    ),
    (
        "Code: https://github.com/wy/CoachAI/tree/main/Strategic%20Environment.",
        ["https://github.com/wy/CoachAI/tree/main/Strategic%20Environment"],
    ),
    ("https://foo.org/x?utm_source=tw&id=3", ["https://foo.org/x?id=3"]),
    ("https://github.com/a/b#readme", ["https://github.com/a/b"]),
    ("https://x.org/#/data-sets.", ["https://x.org/#/data-sets"]),
    (
        "https://competitions.codalab.org/competitions/20331#results (single",
        ["https://competitions.codalab.org/competitions/20331#results"],
    ),
    # de-duplication: scheme, host case, www., .git, trailing slash
    (
        "https://github.com/a/b.git and HTTP://GitHub.com/A/B/ and github.com/a/b and www.github.com/a/b/",
        ["https://github.com/a/b"],
    ),
    ("http://x.org/p and https://x.org/p/ and https://www.x.org/p", ["http://x.org/p"]),
    # not links
    (
        '<sup xmlns:mml="http://www.w3.org/1998/Math/MathML">1</sup>\nhttps://github.com/G/P',
        ["https://github.com/G/P"],
    ),
    ("[click](javascript:alert(1)) and data:text/html,<b>x</b> and ftp://x.org/y", []),
    ("Data and code are available at `http://URL.withheld.for.review`.", []),
    ("e.g. CIFAR10/100, and/or Node.js/npm, 1/m, i.e./e.g.", []),
    ("Our code will be available at https://github.com/[Anonymous].", ["https://github.com"]),
    ("", []),
]

_IDS = [f"{i}:{text[:40]}" for i, (text, _) in enumerate(LINK_FORMS)]


@pytest.mark.parametrize(("text", "expected"), LINK_FORMS, ids=_IDS)
def test_extract_links_forms(text: str, expected: list[str]) -> None:
    assert [link["url"] for link in extract_links(text)] == expected


KINDS = [
    ("https://github.com/owner/repo", "code"),
    ("https://github.com/owner/repo/tree/main/src", "code"),
    ("https://gist.github.com/owner/abc123", "code"),
    ("https://gitlab.com/group/project", "code"),
    ("https://bitbucket.org/owner/repo", "code"),
    ("https://codeberg.org/owner/repo", "code"),
    ("https://gitee.com/mindspore/models", "code"),
    ("https://sourceforge.net/projects/foo", "code"),
    ("https://huggingface.co/openai/whisper", "code"),
    ("https://huggingface.co/spaces/owner/demo", "code"),
    ("https://anonymous.4open.science/r/QDF-8937", "code"),
    ("https://colab.research.google.com/drive/1yKj", "code"),
    ("https://pypi.org/project/foo", "code"),
    ("https://www.kaggle.com/code/user/notebook", "code"),
    ("https://github.com/owner", "account"),
    ("https://github.com/orgs/owner/repositories", "account"),
    ("https://gitlab.com/group", "account"),
    ("https://huggingface.co/openai", "account"),
    ("https://egotactile.github.io", "project_page"),
    ("https://zju-xyc.github.io/VIA-SD-Project-Page", "project_page"),
    ("https://sites.google.com/view/x", "project_page"),
    ("https://www.cis.upenn.edu/~leijh/projects/EFEM", "project_page"),
    ("https://libauc.org", "project_page"),
    ("https://arxiv.org/abs/2101.00001", "paper"),
    ("https://arxiv.org/pdf/2110.05286.pdf", "paper"),
    ("https://doi.org/10.3233/FAIA200099", "paper"),
    ("https://openreview.net/forum?id=abc", "paper"),
    ("https://aclanthology.org/2023.acl-long.1", "paper"),
    ("https://proceedings.mlr.press/v139/a21a.html", "paper"),
    ("https://papers.nips.cc/paper/2021/hash/x", "paper"),
    ("https://ieeexplore.ieee.org/document/1", "paper"),
    ("https://paperswithcode.com/paper/x", "paper"),
    ("https://x.edu/~me/paper.pdf", "paper"),
    ("https://huggingface.co/datasets/NeuroTec/SWEC", "data"),
    ("https://doi.org/10.5281/zenodo.17163267", "data"),
    ("https://zenodo.org/record/1", "data"),
    ("https://figshare.com/articles/x", "data"),
    ("https://www.kaggle.com/datasets/u/d", "data"),
    ("https://drive.google.com/file/d/1lRV/view", "data"),
    ("https://www.dropbox.com/sh/imh8", "data"),
    ("https://bit.ly/abc", "other"),
    ("https://git.io/RePaint", "other"),
    ("https://www.youtube.com/watch?v=_WI", "other"),
    ("https://en.wikipedia.org/wiki/X", "other"),
    ("https://github.com", "other"),
    ("https://github.com/features/copilot", "other"),
]


@pytest.mark.parametrize(("url", "kind"), KINDS)
def test_link_kind(url: str, kind: str) -> None:
    assert link_kind(url) == kind
    assert kind in LINK_KINDS


NORMALISED = [
    ("HTTPS://GitHub.com/Owner/Repo.git/", "https://github.com/Owner/Repo"),
    ("http://github.com/a/b", "https://github.com/a/b"),
    ("www.x.org/a/", "https://www.x.org/a"),
    ("github.com/a/b", "https://github.com/a/b"),
    ("https://x.org", "https://x.org"),
    ("https://x.org/a?utm_medium=m&utm_source=s", "https://x.org/a"),
    ("https://x.org:8080/a", "https://x.org:8080/a"),
    ("https://192.168.0.1/a", "https://192.168.0.1/a"),
    ("javascript:alert(1)", None),
    ("data:text/html,hello", None),
    ("ftp://x.org/a", None),
    ("https://", None),
    ("https://localhost/a", None),
    ("https://x.123/a", None),
    ("https://a..b/x", None),
    ("https://x.org:99999/a", None),
    ("https://example.com/a", None),
    ("", None),
]


@pytest.mark.parametrize(("url", "expected"), NORMALISED)
def test_normalize_url(url: str, expected: str | None) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("https://github.com/Owner/Repo/tree/main/src", "Owner/Repo"),
        ("https://github.com/Owner/Repo.git", "Owner/Repo"),
        ("https://gitlab.com/group/project/-/tree/main", "group/project"),
        ("https://huggingface.co/datasets/NeuroTec/SWEC", "NeuroTec/SWEC"),
        ("https://huggingface.co/openai/whisper", "openai/whisper"),
        ("https://github.com/owner", ""),
        ("https://github.com/features/copilot", ""),
        ("https://anonymous.4open.science/r/QDF", ""),
        ("https://x.org/a/b", ""),
        ("not a url", ""),
    ],
)
def test_repo_of(url: str, repo: str) -> None:
    assert repo_of(url) == repo


@pytest.mark.parametrize(
    ("url", "host"),
    [("https://www.Foo.org/x", "foo.org"), ("github.com/a/b", "github.com"), ("http://[::1", ""), ("", "")],
)
def test_url_host(url: str, host: str) -> None:
    assert url_host(url) == host


CODE_STATUS = [
    (
        "Code is available at https://github.com/Seunghyeok0715/CLAMP",
        "",
        ("https://github.com/Seunghyeok0715/CLAMP", "Seunghyeok0715/CLAMP", "released"),
    ),
    ("Our project page is at https://egotactile.github.io/.", "", ("", "", "project_page_only")),
    ("Code is available at: https://github.com/ZhangQuan-hub.", "", ("", "", "account_only")),
    ("Project page https://x.github.io; code at https://github.com/me", "", ("", "", "project_page_only")),
    ("The code will be released upon acceptance.", "", ("", "", "promised")),
    ("Code and data will be made publicly available.", "", ("", "", "promised")),
    ("We will release our code and models.", "", ("", "", "promised")),
    ("Our implementation will be open-sourced.", "", ("", "", "promised")),
    ("The source code is coming soon.", "", ("", "", "promised")),
    ("Code is available upon request.", "", ("", "", "promised")),
    ("Our code will be available at https://github.com/[Anonymous].", "", ("", "", "promised")),
    ("代码将在论文接收后公开。", "", ("", "", "promised")),
    ("Our method will be evaluated on ImageNet.", "", ("", "", "none")),
    ("The encoder and decoder will be released to the public.", "", ("", "", "none")),
    ("We show results. The model will be trained on code.", "", ("", "", "none")),
    ("Data at https://zenodo.org/record/1 and paper https://arxiv.org/abs/1.", "", ("", "", "none")),
    ("", "", ("", "", "none")),
    # the paper's own repository, not a dependency
    (
        "Our code is built on https://github.com/pytorch/fairseq and is available at https://github.com/me/ours.",
        "",
        ("https://github.com/me/ours", "me/ours", "released"),
    ),
    ("We build on https://github.com/pytorch/fairseq.", "", ("", "", "none")),
    (
        "Experiments use https://github.com/openai/gym. Code: https://github.com/me/agent",
        "",
        ("https://github.com/me/agent", "me/agent", "released"),
    ),
    (
        "Code: https://gitee.com/mindspore/models and https://github.com/me/x.",
        "",
        ("https://github.com/me/x", "me/x", "released"),
    ),
    ("Models at https://huggingface.co/me/model.", "", ("https://huggingface.co/me/model", "", "released")),
    (
        "Code will be available at https://github.com/KellyGong/SparseGAD.git.",
        "",
        ("https://github.com/KellyGong/SparseGAD", "KellyGong/SparseGAD", "released"),
    ),
    (
        "Code: https://anonymous.4open.science/r/QDF-8937.",
        "",
        ("https://anonymous.4open.science/r/QDF-8937", "", "released"),
    ),
    ("Der Code: https://github.com/a/b", "", ("https://github.com/a/b", "a/b", "released")),
    # the record's own code field counts first
    (
        "We show results.",
        "https://github.com/Own/Repo.git",
        ("https://github.com/Own/Repo", "Own/Repo", "released"),
    ),
    (
        "Code: https://github.com/a/b",
        "https://gitlab.com/own/repo",
        ("https://gitlab.com/own/repo", "", "released"),
    ),
    ("We show results.", "not a url at all", ("", "", "none")),
]


@pytest.mark.parametrize(("text", "record_code_url", "expected"), CODE_STATUS)
def test_code_release(text: str, record_code_url: str, expected: tuple[str, str, str]) -> None:
    result = code_release(extract_links(text), clean_markup(text), record_code_url)
    assert result == expected
    assert result[2] in CODE_STATUSES


def test_find_urls_gives_spans_into_the_text() -> None:
    text = r"see https://github.com/a/b). and \url{https://x.org/a\_b}"
    spans = find_urls(text)
    assert [(text[start:end], url) for start, end, url in spans] == [
        ("https://github.com/a/b", "https://github.com/a/b"),
        (r"https://x.org/a\_b", "https://x.org/a_b"),
    ]


# --- properties --------------------------------------------------------------------------------

_URL_PIECES = st.sampled_from(
    [
        "https://", "http://", "www.", "github.com/", "a.github.io", "x.org/", "HTTP://", "javascript:",
        "data:", "owner", "repo", ".git", "/", "(", ")", "[", "](", "\\url{", "}", "\\_", "*", "**", ".",
        ",", " ", "\n", "“", "”", "<", ">", "#", "?q=1", "~me", "%20", "-", "é", "代码", "。", ":",
        # loose forms (issue 51): spaced hosts, broken schemes, shorteners
        "github", " .", ". ", "com/", "io", "git.io/", "https:/", "h t tps", "bit.ly/", "available:",
    ]
)  # fmt: skip
_LINKY_TEXT = st.lists(_URL_PIECES, max_size=30).map("".join)


def _plain(text: str) -> str:
    # without spaces: a host written "github. com" is found as github.com
    return "".join(text.replace("\\", "").split()).lower()


@settings(max_examples=200, deadline=None)
@given(st.one_of(_LINKY_TEXT, st.text(max_size=200)))
def test_every_link_comes_from_the_text(text: str) -> None:
    plain = _plain(text)
    for link in extract_links(text):
        url = link["url"]
        assert url.startswith(("http://", "https://"))
        assert link["kind"] in LINK_KINDS
        host = url_host(url)
        assert host and host in plain
        first_segment = next((part for part in url.split("://", 1)[1].split("/")[1:] if part), "")
        first_segment = re.split(r"[?#]", first_segment)[0].lower()
        assert first_segment in plain


@settings(max_examples=200, deadline=None)
@given(st.one_of(_LINKY_TEXT, st.text(max_size=200)))
def test_code_release_never_raises(text: str) -> None:
    code_url, repo, status = code_release(extract_links(text), clean_markup(text))
    assert status in CODE_STATUSES
    assert (status == "released") == bool(code_url)
    assert not repo or code_url


@pytest.mark.parametrize(
    "text", ["https://" + "a" * 1_000_000, "www." * 250_000, "a.com/" * 160_000, "(" * 1_000_000]
)
@pytest.mark.timeout(60)  # a hang guard for catastrophic backtracking, not a speed assertion
def test_extract_links_is_linear_on_hostile_input(text: str) -> None:
    assert isinstance(extract_links(text), list)


def test_seed_links(seeds_dir: Path) -> None:
    """Integration: the links of the bundled seeds, every one of them."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted(seeds_dir.glob("*.txt")))
    urls = {link["url"]: link["kind"] for link in extract_links(text)}
    assert urls == {
        "https://github.com/AlanBaade/LatentForcing": "code",
        "https://github.com/jkz-338/Robust-ToM-RL": "code",
        "https://github.com/yazhengliu/MemExplainer": "code",
        "https://github.com/Ultraman6/FedScar": "code",
        "https://github.com/rl-bandits-lab/FB-PbRL": "code",
        "https://zju-xyc.github.io/VIA-SD-Project-Page": "project_page",
        "https://egotactile.github.io": "project_page",
        "https://github.com/Seunghyeok0715/CLAMP": "code",
        "https://github.com/Gwangho99/mem-curv-diff": "code",
        "https://github.com/scxue/AO-GPT-MDM": "code",
        "https://github.com/MedARC-AI/CortexMAE": "code",
        "https://github.com/MedARC-AI/Brainmarks": "code",
        "https://github.com/generaldi/NaRA": "code",
        "https://github.com/ZhangQuan-hub": "account",
    }


@pytest.mark.corpora
def test_real_corpus_links(corpora_dir: Path) -> None:
    """Every ICLR abstract that mentions github.com/owner/repo yields that repository as a code link."""
    import json

    records = [json.loads(line) for line in (corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl").open()]
    repo = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)")
    checked = 0
    for record in records:
        abstract = record.get("abstract") or ""
        match = repo.search(abstract.replace("\\_", "_"))
        if not match or match.group(1) == "[Anonymous]":
            continue
        checked += 1
        repos = {repo_of(link["url"]).lower() for link in extract_links(abstract) if link["kind"] == "code"}
        expected = f"{match.group(1)}/{match.group(2)}".rstrip(".").lower().removesuffix(".git")
        assert expected in repos, abstract
    assert checked >= 40
