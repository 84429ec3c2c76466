"""Find the URLs in an abstract, clean and classify them, and decide whether the paper released code.

>>> extract_links(r"Code: \\url{https://github.com/Owner/Repo.git}.")
[{'url': 'https://github.com/Owner/Repo', 'kind': 'code'}]

URL forms found: ``http(s)://…``, ``www.…``, bare ``github.com/owner/repo`` and ``name.github.io``,
bare ``host.tld/path`` on common top-level domains, and the same inside ``\\url{}``, ``\\href{}{}``,
``[text](url)``, ``<url>``, quotes, parentheses and markdown emphasis. Only http and https URLs are
ever returned (a ``javascript:`` or ``data:`` link is not a URL here).

Link kinds (`dashboard.schema.LINK_KINDS`), decided by host and path only, so they are predictable:

code          a repository or released software: GitHub/GitLab/Bitbucket/Codeberg/Gitee/SourceForge
              repositories, gists, Hugging Face models and spaces (weights and demo apps are the
              released artefact of many papers), anonymous.4open.science review mirrors, Colab
              notebooks, Kaggle notebooks, PyPI/CRAN packages
account       a user or organisation page without a repository (``github.com/owner``)
project_page  ``*.github.io``/``*.gitlab.io`` sites, ``sites.google.com``, and any other website
              (personal, lab or project domains are what papers mostly link)
paper         arXiv, DOI (except Zenodo/Figshare DOIs), OpenReview, ACL Anthology, proceedings sites,
              publishers, Papers with Code, and any URL ending in ``.pdf``
data          Hugging Face datasets, Zenodo, Figshare, Kaggle datasets and competitions, OSF,
              Dataverse, PhysioNet, UCI, and file shares (Google Drive, Dropbox, OneDrive, Box,
              Baidu Pan), which papers use for data and checkpoints far more often than for code
other         link shorteners, video and social sites, encyclopaedias, the bare home page of a code host
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["code_release", "extract_links", "find_urls", "link_kind", "normalize_url", "repo_of", "url_host"]

# --- finding URLs ------------------------------------------------------------------------------

# Characters a URL may hold here: not whitespace, quotes, brackets, braces or CJK punctuation (a URL
# written in Chinese text ends at the first full-width mark); LaTeX escapes such as \_ are allowed.
_STOP = r"\s<>\"{}|^`\[\]\\“”‘’«»「」『』（）【】，。；：、！？\u3000-\u9fff\uff00-\uffef"
_URL_CHARS = rf"(?:[^{_STOP}]|\\[_%#&/~])"
_BODY = rf"{_URL_CHARS}{{1,2048}}"
# Each finder starts with a literal so the regex engine can skip ahead quickly.
_SCHEME_URL = re.compile(rf"https?://{_BODY}")
_ANY_CASE_SCHEME_URL = re.compile(rf"(?i:https?)://{_BODY}")
_WWW_URL = re.compile(rf"www\.{_BODY}")
_TLDS = (
    "com|org|net|edu|gov|io|ai|co|me|dev|app|page|info|science|tech|site|xyz|cn|uk|de|fr|jp|kr|ca|ch|"
    "nl|it|es|se|au|in|il|sg|hk|tw|ru|eu|us|at|be|dk|fi|no|pl|pt|cz|br"
)
_BARE_HOST_END = re.compile(rf"\.(?:github\.io|gitlab\.io|(?:{_TLDS})(?:\.[a-z]{{2}})?/)")
_URL_BODY = re.compile(_BODY)
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_BEFORE_BARE = frozenset("/@:.-_\\")
_TRAILING = ".,;:!?'\"*~…–—"
_XML_NAMESPACE = re.compile(r"xmlns(?::\w+)?=\"[^\"<>]*\"")
_LATEX_URL_ESCAPE = re.compile(r"\\(/|[_%#&~])")


# Typographic ligatures PDF extraction leaves in text (and in URLs copied from PDFs): their letters.
LIGATURES = {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
_LIGATURE_TABLE = str.maketrans(LIGATURES)
# What joins several URLs in one code field: "a; b", "a;b", "a, b", "a | b" (a URL may hold ";" itself,
# so only a separator followed by the start of another URL splits)
_URL_JOINER = re.compile(r"\s*[;,|]\s*(?=(?:https?://|www\.|github\.com/|gitlab\.com/))", re.I)


def find_urls(text: str) -> list[tuple[int, int, str]]:
    """Spans of the URLs written in ``text``: ``(start, end, url as written, LaTeX escapes removed)``.

    Trailing sentence punctuation and unbalanced closing parentheses are left out of the span;
    balanced ones (``https://en.wikipedia.org/wiki/Mean_(statistics)``) stay in.

    >>> find_urls("see https://github.com/a/b).")
    [(4, 26, 'https://github.com/a/b')]
    """
    if not isinstance(text, str) or not text:
        return []
    spans: list[tuple[int, int]] = []
    has_slash = "/" in text  # one memchr-fast test rules out most abstracts
    if has_slash and "://" in text:
        if "xmlns" in text:
            # Scraped CVPR pages carry MathML namespace URLs in tag attributes: markup, not links.
            text = _XML_NAMESPACE.sub(lambda match: " " * len(match.group(0)), text)
        spans.extend(match.span() for match in _SCHEME_URL.finditer(text))
        if "HTTP" in text or "Http" in text:  # rare: an upper-case scheme
            for match in _ANY_CASE_SCHEME_URL.finditer(text):
                if not _inside(match.start(), spans):
                    spans.append(match.span())
    if "www." in text:
        for match in _WWW_URL.finditer(text):
            start = match.start()
            if (start == 0 or text[start - 1] not in _BEFORE_BARE) and not _inside(start, spans):
                spans.append(match.span())
    if has_slash or ".git" in text:  # bare host/path, or a bare name.github.io / name.gitlab.io
        for match in _BARE_HOST_END.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] in _HOST_CHARS:
                start -= 1
            if (
                start == match.start()
                or _inside(start, spans)
                or (start > 0 and text[start - 1] in _BEFORE_BARE)
            ):
                continue
            if not any(char.isalpha() for char in text[start : match.start()]):
                continue
            body = _URL_BODY.match(text, start)
            if body:
                spans.append(body.span())
    found = []
    for start, end in sorted(spans):
        end = _trim_end(text, start, end)
        if end > start:
            found.append((start, end, _unescape(text[start:end])))
    return found


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start:
        char = text[end - 1]
        if char in _TRAILING or char == ")" and text.count("(", start, end) < text.count(")", start, end):
            end -= 1
        else:
            break
    return end


def _unescape(url: str) -> str:
    return _LATEX_URL_ESCAPE.sub(lambda match: "" if match.group(1) == "/" else match.group(1), url)


# --- normalising -------------------------------------------------------------------------------

_CODE_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "gitee.com"})
_HOST_LABEL = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|xn--[a-z0-9-]+|[^\x00-\x7f]+)$")
_TRACKING_PARAMETERS = ("utm_", "fbclid", "gclid", "igshid", "mc_cid", "mc_eid", "spm")
_PLACEHOLDER_HOSTS = ("withheld", "anonymized", "example.com", "example.org", "example.net")


def normalize_url(url: str) -> str | None:
    """Canonical form of a URL written in text, or ``None`` when it is not an http(s) URL.

    Lowercases the host, adds ``https://`` to ``www.``/bare forms, removes ``.git``, a trailing
    slash, tracking parameters (``utm_*``...) and an empty fragment, and drops the fragment of a
    repository URL (``#readme``).

    >>> normalize_url("HTTPS://GitHub.com/Owner/Repo.git/")
    'https://github.com/Owner/Repo'
    """
    if not isinstance(url, str):
        return None
    url = url.strip()
    lowered = url[:8].lower()
    if not lowered.startswith(("http://", "https://")):
        if "://" in url or ":" in url.split("/", 1)[0]:
            return None  # another scheme (ftp:, javascript:, data:...) or a port without a host
        url = "https://" + url
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not _valid_host(host):
        return None
    if any(marker in host for marker in _PLACEHOLDER_HOSTS):
        return None
    if host.startswith("www.") and host[4:] in _CODE_HOSTS:
        host = host[4:]
    path = parts.path
    while path.endswith("/"):
        path = path[:-1]
    if path.lower().endswith(".git"):
        path = path[:-4]
    query = parts.query
    if not path and (query or parts.fragment):
        path = "/"  # https://www.synapse.org/#!Synapse:syn3193805 keeps the slash before its fragment
    if query:
        kept = [
            (k, v)
            for k, v in parse_qsl(query, keep_blank_values=True)
            if not k.startswith(_TRACKING_PARAMETERS)
        ]
        query = urlencode(kept, safe="/:@!$'()*+,;=") if len(kept) != len(query.split("&")) else query
    fragment = parts.fragment
    scheme = parts.scheme.lower()
    if host in _CODE_HOSTS or host == "huggingface.co":
        fragment, scheme = "", "https"  # these hosts serve https only; "#readme" is not part of the repo
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit(SplitResult(scheme, netloc, path, query, fragment))


def _valid_host(host: str) -> bool:
    if not host or len(host) > 253 or "." not in host:
        return False
    labels = host.split(".")
    if labels[-1].isdigit():
        return len(labels) == 4 and all(label.isdigit() and int(label) < 256 for label in labels)
    tld = labels[-1]
    if not (tld.isalpha() and len(tld) >= 2) and not tld.startswith("xn--"):
        return False
    return all(_HOST_LABEL.match(label) for label in labels)


def url_host(url: str) -> str:
    """The host of a URL, lowercase and without ``www.``: ``"https://www.Foo.org/x"`` -> ``"foo.org"``."""
    try:
        host = (urlsplit(url if "://" in url else "https://" + url).hostname or "").rstrip(".")
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def _segments(url: str) -> list[str]:
    try:
        path = urlsplit(url).path
    except ValueError:
        return []
    return [segment for segment in path.split("/") if segment]


# --- classifying -------------------------------------------------------------------------------

# Top-level paths of code hosts that are site features, not owners.
_RESERVED_OWNERS = frozenset(
    {
        "about", "apps", "blog", "collections", "contact", "customer-stories", "enterprise", "events",
        "explore", "features", "issues", "join", "login", "marketplace", "new", "notifications",
        "organizations", "pricing", "pulls", "search", "security", "settings", "site", "sponsors",
        "topics", "trending", "users", "help", "docs", "dashboard", "signup", "orgs",
    }
)  # fmt: skip
_HF_SITE_PAGES = frozenset({"docs", "blog", "papers", "learn", "tasks", "pricing", "join", "login"})
_PAPER_HOSTS = (
    "arxiv.org", "doi.org", "openreview.net", "aclanthology.org", "aclweb.org", "papers.nips.cc",
    "proceedings.neurips.cc", "neurips.cc", "proceedings.mlr.press", "mlr.press", "jmlr.org",
    "openaccess.thecvf.com", "thecvf.com", "ecva.net", "ieeexplore.ieee.org", "dl.acm.org",
    "link.springer.com", "springer.com", "sciencedirect.com", "nature.com", "science.org",
    "biorxiv.org", "medrxiv.org", "chemrxiv.org", "ssrn.com", "ojs.aaai.org", "aaai.org", "ijcai.org",
    "semanticscholar.org", "paperswithcode.com", "researchgate.net", "pubmed.ncbi.nlm.nih.gov",
    "ncbi.nlm.nih.gov", "iopscience.iop.org", "pnas.org", "cell.com", "wiley.com", "tandfonline.com",
    "mdpi.com", "frontiersin.org", "plos.org", "jstor.org", "isca-speech.org", "bmva.org",
    "roboticsproceedings.org", "osf.io/preprints",
)  # fmt: skip
_DATA_HOSTS = (
    "zenodo.org", "figshare.com", "osf.io", "dataverse.harvard.edu", "dataverse.org", "physionet.org",
    "archive.ics.uci.edu", "data.mendeley.com", "drive.google.com", "dropbox.com", "onedrive.live.com",
    "1drv.ms", "box.com", "pan.baidu.com", "synapse.org", "openml.org", "datadryad.org",
    "registry.opendata.aws", "storage.googleapis.com", "competitions.codalab.org", "codalab.org",
    "kaggle.com/datasets", "kaggle.com/c", "kaggle.com/competitions", "huggingface.co/datasets",
    "docs.google.com/spreadsheets",
)  # fmt: skip
_CODE_PREFIXES = (
    "gist.github.com", "anonymous.4open.science/r", "colab.research.google.com",
    "kaggle.com/code", "pypi.org/project", "cran.r-project.org/package", "cran.r-project.org/web/packages",
    "sourceforge.net/projects", "huggingface.co/spaces", "npmjs.com/package", "anaconda.org",
    "modelscope.cn/models", "codeocean.com/capsule", "paperswithcode.com/code",
)  # fmt: skip
_OTHER_HOSTS = (
    "bit.ly", "tinyurl.com", "tiny.cc", "git.io", "goo.gl", "aka.ms", "t.co", "ow.ly", "rb.gy",
    "youtube.com", "youtu.be", "vimeo.com", "bilibili.com", "twitter.com", "x.com", "linkedin.com",
    "facebook.com", "instagram.com", "reddit.com", "wikipedia.org", "wikimedia.org", "forms.gle",
    "docs.google.com/forms", "w3.org", "google.com", "medium.com", "discord.gg", "discord.com",
    "slack.com", "zoom.us",
)  # fmt: skip


def _matches(host: str, path: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        pattern_host, _, pattern_path = pattern.partition("/")
        on_host = host == pattern_host or host.endswith("." + pattern_host)
        if on_host and (not pattern_path or path == pattern_path or path.startswith(pattern_path + "/")):
            return True
    return False


def link_kind(url: str) -> str:
    """The kind of a normalised URL, one of `dashboard.schema.LINK_KINDS`.

    >>> link_kind("https://github.com/owner"), link_kind("https://arxiv.org/abs/2101.00001")
    ('account', 'paper')
    """
    host = url_host(url)
    segments = _segments(url)
    path = "/".join(segments).lower()
    if host in _CODE_HOSTS:
        if not segments or segments[0].lower() in _RESERVED_OWNERS and host == "github.com":
            if host == "github.com" and len(segments) >= 2 and segments[0].lower() == "orgs":
                return "account"
            return "other"
        return "code" if len(segments) >= 2 else "account"
    if host == "huggingface.co":
        if not segments:
            return "other"
        if segments[0] == "datasets":
            return "data" if len(segments) >= 3 else "account"
        if segments[0] in ("spaces", "models"):
            return "code" if len(segments) >= 3 else "account"
        if segments[0] in _HF_SITE_PAGES:
            return "paper" if segments[0] == "papers" else "other"
        return "code" if len(segments) >= 2 else "account"
    if _matches(host, path, _CODE_PREFIXES):
        return "code"
    if host == "doi.org" or host.endswith(".doi.org"):
        return "data" if "zenodo" in path or "figshare" in path or "5061/dryad" in path else "paper"
    if _matches(host, path, _DATA_HOSTS):
        return "data"
    if _matches(host, path, _PAPER_HOSTS) or path.endswith(".pdf"):
        return "paper"
    if host == "sites.google.com" or host.endswith(
        (".github.io", ".gitlab.io", ".pages.dev", ".netlify.app", ".vercel.app", ".notion.site")
    ):
        return "project_page"
    if _matches(host, path, _OTHER_HOSTS):
        return "other"
    return "project_page"


def repo_of(url: str) -> str:
    """``owner/name`` of a repository URL on a code host or Hugging Face, else ``""``.

    >>> repo_of("https://github.com/Owner/Repo/tree/main/src")
    'Owner/Repo'
    """
    host = url_host(url)
    segments = _segments(url)
    if host == "huggingface.co":
        if segments and segments[0] in ("datasets", "spaces", "models"):
            segments = segments[1:]
        elif segments and segments[0] in _HF_SITE_PAGES:
            return ""
    elif host not in _CODE_HOSTS or (segments and segments[0].lower() in _RESERVED_OWNERS):
        return ""
    if len(segments) < 2 or segments[1] == "-":
        return ""
    name = segments[1][:-4] if segments[1].lower().endswith(".git") else segments[1]
    return f"{segments[0]}/{name}" if name else ""


# --- extracting --------------------------------------------------------------------------------


def extract_links(text: str, *, url_spans: list[tuple[int, int, str]] | None = None) -> list[dict[str, str]]:
    """Every http(s) URL in ``text``, normalised, de-duplicated in order of appearance, with its kind.

    >>> extract_links("Code: github.com/a/b and https://github.com/a/b/.")
    [{'url': 'https://github.com/a/b', 'kind': 'code'}]

    ``url_spans`` may pass `find_urls` of the same text when the caller has it.
    """
    links: list[dict[str, str]] = []
    seen: set[str] = set()
    for _, _, written in find_urls(text) if url_spans is None else url_spans:
        url = normalize_url(written)
        if url is None:
            continue
        key = _dedupe_key(url)
        if key in seen:
            continue
        seen.add(key)
        links.append({"url": url, "kind": link_kind(url)})
    return links


def _dedupe_key(url: str) -> str:
    scheme_less = url.split("://", 1)[-1]
    if scheme_less.startswith("www."):
        scheme_less = scheme_less[4:]
    host = scheme_less.split("/", 1)[0]
    # Owner and repository names on code hosts are case-insensitive; other paths are not.
    return scheme_less.lower() if host in _CODE_HOSTS or host == "huggingface.co" else scheme_less


# --- code release ------------------------------------------------------------------------------

# Words before a link that say the link is the paper's own artefact...
_OWN_CUE = re.compile(
    r"\b(?:our|code|codes|codebase|implementation|source|available|availability|accessible|released?|"
    r"releasing|open[- ]?sourced?|repository|repo|github|project|page|website|found|download)\b",
    re.IGNORECASE,
)
# ...that it is work the paper builds on (strong), or merely mentions or uses (weak).
_BUILDS_ON_CUE = re.compile(
    r"\b(?:based on|built (?:up)?on|builds? (?:up)?on|on top of|adapted from|borrowed from|forked from|"
    r"taken from|modified from|derived from|extends?|extending)\b[^.;]{0,30}$",
    re.IGNORECASE,
)
_MENTIONS_CUE = re.compile(
    r"\b(?:using|uses?|used|utili[sz]e[sd]?|via|leverag\w+|following|such as|e\.g\.|i\.e\.|baselines?|"
    r"compared? (?:with|to)|like)\b[^.;]{0,30}$",
    re.IGNORECASE,
)
# "code ... will be released", "we will release our code", "code ... upon acceptance", "代码将公开".
_PROMISE = re.compile(
    r"\b(?:will|shall|would)\s+(?:also\s+)?(?:soon\s+)?(?:be\s+)?(?:made\s+)?"
    r"(?:publicly\s+|freely\s+|openly\s+|fully\s+|soon\s+)?"
    r"(?:available|released?|public|open[- ]?sourced?|published|shared|provided|accessible|online)\b"
    r"|\b(?:will|plan to|intend to|are going to)\s+(?:publicly\s+|also\s+|soon\s+)?"
    r"(?:release|open[- ]?source|publish|share|make)\b"
    r"|\b(?:upon|after)\s+(?:the\s+)?(?:paper'?s?\s+)?(?:acceptance|publication|request)\b"
    r"|\b(?:coming soon|to be released|to be made (?:publicly )?available|available soon|released soon)\b"
    r"|(?:将|会|即将)[^。]{0,20}(?:公开|开源|发布)",
    re.IGNORECASE,
)
_FUTURE_WORDS = ("will", "shall", "would", "upon", "after", "soon", "to be", "plan to", "intend", "将", "会")
_CODE_WORDS = ("code", "implementation", "software", "toolkit", "toolbox", "library", "package", "repositor",
               "代码")  # fmt: skip


def code_release(
    links: list[dict[str, str]], text: str, record_code_url: str = "", record_project_url: str = ""
) -> tuple[str, str, str]:
    """``(code_url, github_repo, code_status)`` for one paper.

    A record's own code field counts first, read by the same rule as the abstract: the URLs in it
    (plain, markdown ``[label](url)``, several joined by ``;`` or spaces) are classified, and its
    first repository URL is the paper's code; a field holding only an account URL
    (``github.com/someone``) or a project page adds that link and the abstract rule decides
    (``account_only``, ``project_page_only``). A record's project field is a project page link.
    Otherwise the paper's own repository is the code link whose preceding words say so ("code is
    available at", "our implementation") rather than that it is a dependency ("based on", "using",
    "such as"); among equals GitHub wins, then the first.
    ``code_status``: ``released`` (a code link), ``project_page_only``, ``account_only``,
    ``promised`` (the text says code will be released, with no link), or ``none``.

    >>> code_release([{"url": "https://github.com/a/b", "kind": "code"}], "Code: github.com/a/b")
    ('https://github.com/a/b', 'a/b', 'released')
    >>> code_release([], "", "[![github](/i.svg) a/b](https://github.com/a/b); https://github.com/c/d")
    ('https://github.com/a/b', 'a/b', 'released')
    >>> code_release([], "", "https://github.com/someone")[2], code_release([], "", "", "https://p.io/x")[2]
    ('account_only', 'project_page_only')
    """
    field_links: list[dict[str, str]] = []
    if isinstance(record_code_url, str) and record_code_url.strip():
        field = _URL_JOINER.sub(" ", record_code_url.translate(_LIGATURE_TABLE))
        field_links = extract_links(field)
        own = next((link["url"] for link in field_links if link.get("kind") == "code"), "")
        if own:
            return own, _github_repo(own), "released"
        other = next((link["url"] for link in field_links if link.get("kind") in ("other", "data")), "")
        if other:  # a code field naming a URL of no known kind (a shortener such as git.io): the code
            return other, _github_repo(other), "released"
    if isinstance(record_project_url, str) and record_project_url.strip():
        project = normalize_url(record_project_url.strip().split()[0].rstrip(";,"))
        if project is not None:
            field_links.append({"url": project, "kind": "project_page"})
    if field_links:
        links = [*links, *(link for link in field_links if link.get("kind") in ("account", "project_page"))]
    text = text if isinstance(text, str) else ""
    code_links = [link["url"] for link in links if link.get("kind") == "code"]
    if code_links:
        best = _own_repository(code_links, text)
        if best:
            return best, _github_repo(best), "released"
    kinds = {link.get("kind") for link in links}
    if "project_page" in kinds:
        return "", "", "project_page_only"
    if "account" in kinds:
        return "", "", "account_only"
    if _promises_code(text):
        return "", "", "promised"
    return "", "", "none"


def _github_repo(url: str) -> str:
    return repo_of(url) if url_host(url) == "github.com" else ""


def _own_repository(code_links: list[str], text: str) -> str:
    lowered = text.lower()
    best, best_score = "", -99.0
    for order, url in enumerate(code_links):
        score = _ownership(url, text, lowered) - order * 0.01
        if url_host(url) == "github.com":
            score += 0.5
        if score > best_score:
            best, best_score = url, score
    # A lone link the paper says it builds on ("based on github.com/pytorch/fairseq") is not a release.
    return best if best_score > -1.5 else ""


def _ownership(url: str, text: str, lowered: str) -> float:
    """+1 when the words before the link say it is the paper's; -2 "built on", -0.5 "using"."""
    needle = url.split("://", 1)[-1].lower()
    needle = needle[4:] if needle.startswith("www.") else needle
    position = lowered.find(needle[: max(12, len(needle) // 2)])
    if position < 0:
        return 0.0
    sentence_start = max(lowered.rfind(". ", 0, position), lowered.rfind("; ", 0, position), position - 160)
    before = text[max(sentence_start, 0) : position]
    score = 1.0 if _OWN_CUE.search(before) else 0.0
    if _BUILDS_ON_CUE.search(before):
        score -= 2.0
    elif _MENTIONS_CUE.search(before):
        score -= 0.5
    return score


def _promises_code(text: str) -> bool:
    """True when a sentence that mentions code also says it will be released."""
    if not text:
        return False
    lowered = text.lower()
    # Most abstracts never mention code: test that first, then a future or a condition.
    if not any(word in lowered for word in _CODE_WORDS):
        return False
    if not any(word in lowered for word in _FUTURE_WORDS):
        return False
    for word in _CODE_WORDS:
        position = lowered.find(word)
        while position >= 0:
            if position and lowered[position - 1].isalpha():  # "encoder", "decode"
                position = lowered.find(word, position + 1)
                continue
            # Search only the sentence around the mention: cheap, and keeps the promise about the code.
            start = max(lowered.rfind(". ", 0, position), lowered.rfind("。", 0, position), position - 200, 0)
            end = min(_sentence_end(lowered, position), position + 250)
            if _PROMISE.search(lowered, start, end):
                return True
            position = lowered.find(word, end)
    return False


def _sentence_end(text: str, position: int) -> int:
    ends = [index for index in (text.find(". ", position), text.find("。", position)) if index >= 0]
    return min(ends) + 1 if ends else len(text)
