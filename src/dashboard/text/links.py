"""Find the URLs in an abstract, clean and classify them, and decide whether the paper released code.

>>> extract_links(r"Code: \\url{https://github.com/Owner/Repo.git}.")
[{'url': 'https://github.com/Owner/Repo', 'kind': 'code'}]

URL forms found: ``http(s)://…``, ``www.…``, bare ``github.com/owner/repo`` and ``name.github.io``,
bare ``host.tld/path`` on common top-level domains, and the same inside ``\\url{}``, ``\\href{}{}``,
``[text](url)``, ``<url>``, quotes, parentheses and markdown emphasis. Only http and https URLs are
ever returned (a ``javascript:`` or ``data:`` link is not a URL here). Code-host links written
loosely are repaired: glued to a word (``available:github.com/a/b``), a broken scheme (``https:/``,
``https//``, ``https.//``, ``https: //``, ``h t tps://``, ``https://https://``), a space in the host
(``github. com``, ``github .com``, ``name. github. io``), a space after a slash or a line-break
hyphen in the path (``github.com/ a/b``, ``github.com/a/ b``, ``github.com/big- org/b``).

What a paper did with its code, ``code_status`` (`dashboard.schema.CODE_STATUSES`, decided by
`code_release`): ``released`` (a code link: a repository, package or notebook, or a shortened link
such as ``git.io/x`` the text names as code, whose repository stays unknown until
`resolve_shortened` follows it), ``project_page_only``, ``account_only``, ``stated`` (no link, but
the text says the code is available now: "our code is available on GitHub", "the code is in the
supplementary material"), ``promised`` (no link, and the text says the code will be released), and
``none``. ``stated`` is a status of its own rather than ``promised``: it claims a release that
exists, which a reader cannot follow from the abstract, not a future one. Both rules tie the verb
to a code word, as its subject ("the code will be released") or its object ("we will release our
code"); a code word and a future verb merely sharing a sentence ("an implementation of a strategy
... and will share our experiences") is neither.

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

__all__ = [
    "MAX_LINKS",
    "REDIRECT_HOSTS",
    "SHORTENER_HOSTS",
    "code_release",
    "extract_links",
    "find_urls",
    "is_shortener",
    "link_kind",
    "normalize_url",
    "repo_of",
    "resolve_shortened",
    "url_host",
]

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
    "nl|it|es|se|au|in|il|sg|hk|tw|ru|eu|us|at|be|dk|fi|no|pl|pt|cz|br|ly|gl|gd|cc|ms"  # the last: shorteners
)
_BARE_HOST_END = re.compile(rf"\.(?:github\.io|gitlab\.io|(?:{_TLDS})(?:\.[a-z]{{2}})?/)")
_URL_BODY = re.compile(_BODY)
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_BEFORE_BARE = frozenset("/@:.-_\\")
_TRAILING = ".,;:!?'\"*~…–—"
_XML_NAMESPACE = re.compile(r"xmlns(?::\w+)?=\"[^\"<>]*\"")
_LATEX_URL_ESCAPE = re.compile(r"\\(/|[_%#&~])")
# "https://https://github.com/a/b": a scheme written twice; the URL starts at the second.
_DOUBLED_SCHEME = re.compile(r"(?i:https?)://+(?=(?i:https?)[:./])")
# What may stand before a bare host when the scheme lost a character: "https:/", "https//",
# "https.//", "https: //" (anchored at the end of the few characters before the host).
_BROKEN_SCHEME_BEFORE = re.compile(r"(?i)\bhttps?(?:[:.] ?)?/{1,2}$")
# A code host however it is spaced or glued: "github. com", "github .com", "available:github.com",
# "name.github. io", "git.io". Bounded and anchored on a literal, so it is linear.
_LOOSE_CODE_HOST = re.compile(r"(?i)git(?:hub|lab)?(?: ?\. ?| \.)(?:com|io)(?![a-z0-9_-])")
_SCHEME_ONLY = re.compile(r"(?i:https?)://+ ?")
_PAGES_LABEL = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]{0,62}) ?\. ?$")
_LOOSE_HOSTS = frozenset({"github.com", "gitlab.com", "git.io", "github.io", "gitlab.io"})
# After "github.com/owner/ " a repository name goes on; these words end the sentence's URL instead.
_NOT_A_NAME = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "it", "of", "on", "or", "our",
     "that", "the", "this", "to", "which", "with", "where"}
)  # fmt: skip
_JOIN_HOSTS = frozenset(
    {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "gitee.com", "huggingface.co"}
)


MAX_LINKS = 1000  # distinct URLs read from one text (`extract_links`)

# Typographic ligatures PDF extraction leaves in text (and in URLs copied from PDFs): their letters.
LIGATURES = {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
_LIGATURE_TABLE = str.maketrans(LIGATURES)
# What joins several URLs in one code field: "a; b", "a;b", "a, b", "a | b" (a URL may hold ";" itself,
# so only a separator followed by the start of another URL splits)
_URL_JOINER = re.compile(r"\s*[;,|]\s*(?=(?:https?://|www\.|github\.com/|gitlab\.com/))", re.I)


def find_urls(text: str) -> list[tuple[int, int, str]]:
    """Spans of the URLs written in ``text``: ``(start, end, url)``, the URL as written with LaTeX
    escapes removed, or repaired where the author's form was loose.

    Trailing sentence punctuation and unbalanced closing parentheses are left out of the span;
    balanced ones (``https://en.wikipedia.org/wiki/Mean_(statistics)``) stay in. Links to code hosts
    are found however they were typed: glued to a word (``available:github.com/a/b``), with a
    broken scheme (``https:/``, ``https//``, ``h t tps://``), a space in the host (``github. com``),
    a space after a slash (``github.com/ a/b``, ``github.com/a/ b``) or a line-break hyphen
    (``github.com/big- org/b``); the span covers the loose form and the URL is the repaired one.

    >>> find_urls("see https://github.com/a/b).")
    [(4, 26, 'https://github.com/a/b')]
    >>> find_urls("Code:github. com/a/b")[0][2]
    'github.com/a/b'
    """
    if not isinstance(text, str) or not text:
        return []
    has_slash = "/" in text  # one memchr-fast test rules out most abstracts
    has_git = "git" in text or "Git" in text or "GIT" in text
    if not (has_slash or has_git or "www." in text):
        return []
    spans = _Spans(len(text))
    # span start -> (host, where its path starts) when the host was written loosely ("github. com")
    repaired: dict[int, tuple[str, int]] = {}
    if has_slash and "://" in text:
        if "xmlns" in text:
            # Scraped CVPR pages carry MathML namespace URLs in tag attributes: markup, not links.
            text = _XML_NAMESPACE.sub(lambda match: " " * len(match.group(0)), text)
        for match in _SCHEME_URL.finditer(text):
            doubled = _DOUBLED_SCHEME.match(text, match.start())
            spans.add(doubled.end() if doubled else match.start(), match.end())
        if "HTTP" in text or "Http" in text:  # rare: an upper-case scheme
            for match in _ANY_CASE_SCHEME_URL.finditer(text):
                if not spans.covers(match.start()):
                    spans.add(*match.span())
    if "www." in text:
        for match in _WWW_URL.finditer(text):
            start = match.start()
            if (start == 0 or text[start - 1] not in _BEFORE_BARE) and not spans.covers(start):
                spans.add(*match.span())
    if has_slash or ".git" in text:  # bare host/path, or a bare name.github.io / name.gitlab.io
        for match in _BARE_HOST_END.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] in _HOST_CHARS:
                start -= 1
            if start == match.start() or spans.covers(start):
                continue
            if start > 0 and text[start - 1] in _BEFORE_BARE and not _broken_scheme_before(text, start):
                continue
            if not any(char.isalpha() for char in text[start : match.start()]):
                continue
            body = _URL_BODY.match(text, start)
            if body:
                spans.add(*body.span())
    if has_git:
        _add_loose_code_hosts(text, spans, repaired)
    found: list[tuple[int, int, str]] = []
    for start, end in spans.in_order():
        if found and start < found[-1][1]:
            continue  # inside a URL already found (a joined one reaches over the next word)
        end = _trim_end(text, start, end)
        if end > start:
            host, path_start = repaired.get(start, ("", start))
            url = host + _unescape(text[path_start:end]) if host else _unescape(text[start:end])
            found.append(_join_split_name(text, start, end, url))
    return found


def _broken_scheme_before(text: str, start: int) -> bool:
    return _BROKEN_SCHEME_BEFORE.search(text, max(0, start - 9), start) is not None


def _loose_code_hosts(text: str) -> list[re.Match[str]]:
    """`_LOOSE_CODE_HOST` at each "git", "Git" or "GIT" (a case-insensitive scan of the whole text
    is several times slower than finding the few places to try)."""
    found = []
    for cased in ("git", "Git", "GIT"):
        position = text.find(cased)
        while position >= 0:
            match = _LOOSE_CODE_HOST.match(text, position)
            if match:
                found.append(match)
            position = text.find(cased, position + 3)
    return sorted(found, key=lambda match: match.start())


def _add_loose_code_hosts(text: str, spans: _Spans, repaired: dict[int, tuple[str, int]]) -> None:
    """Code-host URLs the regular finders miss: glued to a word, after a broken scheme, spaced hosts."""
    for match in _loose_code_hosts(text):
        start = match.start()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "-_"):
            continue  # "rgithub.com", "legit.io": another word
        host = "".join(match.group().split()).lower()
        if host not in _LOOSE_HOSTS:
            continue
        if host in ("github.io", "gitlab.io"):  # a Pages site needs its name: "name.github.io"
            label = _PAGES_LABEL.search(text, max(0, start - 66), start)
            if label is None:
                continue
            host = label.group(1).lower() + "." + host
            start = label.start()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "-_."):
                continue  # a longer host ("a.b.github.io") the regular finders see when it is well formed
        if spans.covers(start):
            if spans.covers(match.end() - 1):
                continue  # found whole by a regular finder
            # "https://github. com/a/b": the scheme finder stopped at the space.
            cut = spans.start_of_span_ending_in(start + 1, match.end())
            if cut is None or not _SCHEME_ONLY.fullmatch(text, cut, start):
                continue
            spans.remove(cut)
            host = "".join(text[cut:start].split()) + host
            start = cut
        position = match.end()
        if text.startswith("/", position) or text.startswith(" /", position):
            position = text.index("/", position)
            body = _URL_BODY.match(text, position)
            end = body.end() if body else position + 1
        elif host.endswith((".github.io", ".gitlab.io")):
            end = position
        else:
            continue  # "github.com" with no path: the site, not a link to follow
        spans.add(start, end)
        repaired[start] = (host, position)


def _join_split_name(text: str, start: int, end: int, url: str) -> tuple[int, int, str]:
    """Join a code-host URL broken by a space after a slash or a line-break hyphen to its rest."""
    if end + 1 >= len(text) or text[end] != " " or not url.endswith(("/", "-")):
        return start, end, url
    if url_host(url) not in _JOIN_HOSTS:
        return start, end, url
    rest = _URL_BODY.match(text, end + 1)
    if rest is None:
        return start, end, url
    rest_end = _trim_end(text, rest.start(), rest.end())
    word = _unescape(text[rest.start() : rest_end])
    segments = [segment for segment in url.split("://", 1)[-1].split("/")[1:] if segment]
    if not word or not (word[0].isalnum() or word[0] in "_."):
        return start, end, url
    if url.endswith("-") or (not segments and word.count("/") >= 1):
        pass  # "github.com/big- org/repo", "github.com/ owner/repo"
    elif len(segments) != 1 or "/" in word or word.lower() in _NOT_A_NAME:
        return start, end, url  # after "github.com/owner/ " only a repository name goes on
    return start, rest_end, url + word


class _Spans:
    """The spans found so far, with constant-time "is this position inside one" (a hostile text of
    thousands of URLs must not cost a scan of every span per candidate)."""

    def __init__(self, length: int) -> None:
        self.ends: dict[int, int] = {}  # start -> end
        self.starts: dict[int, int] = {}  # end -> start
        self.covered = bytearray(length + 1)

    def add(self, start: int, end: int) -> None:
        self.ends[start] = max(end, self.ends.get(start, end))
        self.starts[end] = start
        self.covered[start:end] = b"\x01" * (end - start)

    def covers(self, position: int) -> bool:
        return bool(self.covered[position])

    def start_of_span_ending_in(self, low: int, high: int) -> int | None:
        """The start of a span that ends in ``[low, high)``, or None."""
        for end in range(low, high):
            start = self.starts.get(end)
            if start is not None and self.ends.get(start) == end:
                return start
        return None

    def remove(self, start: int) -> None:
        """Forget the span at ``start`` (its positions stay covered: a longer span replaces it)."""
        self.starts.pop(self.ends.pop(start), None)

    def in_order(self) -> list[tuple[int, int]]:
        return sorted(self.ends.items())


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
# Link shorteners: where the link leads is unknown until the redirect is followed (`resolve_shortened`).
SHORTENER_HOSTS: tuple[str, ...] = (
    "git.io", "bit.ly", "tinyurl.com", "tiny.cc", "goo.gl", "aka.ms", "t.co", "ow.ly", "rb.gy", "is.gd",
    "v.gd", "t.ly", "cutt.ly", "shorturl.at", "buff.ly", "rebrand.ly", "s.id", "dwz.cn", "tinyurl.cn",
)  # fmt: skip
# Where a shortened code link may lead for it to count: the hosts the repository check knows.
REDIRECT_HOSTS: tuple[str, ...] = ("github.com", "gitlab.com", "huggingface.co")
_OTHER_HOSTS = (
    *SHORTENER_HOSTS,
    "youtube.com", "youtu.be", "vimeo.com", "bilibili.com", "twitter.com", "x.com", "linkedin.com",
    "facebook.com", "instagram.com", "reddit.com", "wikipedia.org", "wikimedia.org", "forms.gle",
    "docs.google.com/forms", "w3.org", "google.com", "medium.com", "discord.gg", "discord.com",
    "slack.com", "zoom.us",
)  # fmt: skip


def _host_table(patterns: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``host`` or ``host/path`` patterns as host -> the path prefixes under it (``""``: any path)."""
    table: dict[str, list[str]] = {}
    for pattern in patterns:
        pattern_host, _, pattern_path = pattern.partition("/")
        table.setdefault(pattern_host, []).append(pattern_path)
    return {host: tuple(paths) for host, paths in table.items()}


_CODE_TABLE, _DATA_TABLE, _PAPER_TABLE, _OTHER_TABLE, _SHORTENER_TABLE = (
    _host_table(patterns)
    for patterns in (_CODE_PREFIXES, _DATA_HOSTS, _PAPER_HOSTS, _OTHER_HOSTS, SHORTENER_HOSTS)
)


MAX_HOST_CHARS = 253


def _matches(host: str, path: str, table: dict[str, tuple[str, ...]]) -> bool:
    """Whether ``host`` (or a parent domain of it) and ``path`` fall under a pattern of ``table``.

    A lookup per label of the host, not a scan of every pattern: the cost of a link must not grow
    with the lists (a hostile text holds thousands of links).
    """
    # A host name has at most 253 characters (RFC 1035), and a table's keys are its last labels: a longer
    # "host" (a hostile text's "a.a.a...") is looked up by its last 253 characters, not label by label
    # over all of it (each step copied the rest: quadratic).
    host = host[-MAX_HOST_CHARS:]
    while host:
        for prefix in table.get(host, ()):
            if not prefix or path == prefix or path.startswith(prefix + "/"):
                return True
        host = host.partition(".")[2]
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
    if _matches(host, path, _CODE_TABLE):
        return "code"
    if host == "doi.org" or host.endswith(".doi.org"):
        return "data" if "zenodo" in path or "figshare" in path or "5061/dryad" in path else "paper"
    if _matches(host, path, _DATA_TABLE):
        return "data"
    if _matches(host, path, _PAPER_TABLE) or path.endswith(".pdf"):
        return "paper"
    if host == "sites.google.com" or host.endswith(
        (".github.io", ".gitlab.io", ".pages.dev", ".netlify.app", ".vercel.app", ".notion.site")
    ):
        return "project_page"
    if _matches(host, path, _OTHER_TABLE):
        return "other"
    return "project_page"


def is_shortener(url: str) -> bool:
    """Whether ``url`` is on a link shortener (`SHORTENER_HOSTS`): ``git.io``, ``bit.ly``...

    >>> is_shortener("https://git.io/JGiZA"), is_shortener("https://github.com/a/b")
    (True, False)
    """
    return _matches(url_host(url), "", _SHORTENER_TABLE)


def resolve_shortened(
    short_url: str, location: str, allowed_hosts: tuple[str, ...] = REDIRECT_HOSTS
) -> str | None:
    """Where a shortened link leads, given the ``Location`` its host answered, or ``None``.

    ``None`` unless ``short_url`` is on a shortener and ``location`` is an http(s) URL on one of
    ``allowed_hosts`` (exactly, or ``www.`` of it): a shortener cannot send the checker anywhere else.
    The caller makes the one request (no redirect followed, no token sent); this decides what to keep.

    >>> resolve_shortened("https://git.io/JGiZA", "https://github.com/Owner/Repo")
    'https://github.com/Owner/Repo'
    >>> resolve_shortened("https://bit.ly/x", "https://evil.example.net/github.com/a/b") is None
    True
    """
    if not is_shortener(short_url) or not isinstance(location, str):
        return None
    url = normalize_url(location)
    if url is None or not url.startswith("https://") or urlsplit(url).port is not None:
        return None
    return url if url_host(url) in allowed_hosts else None


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

    ``url_spans`` may pass `find_urls` of the same text when the caller has it. At most `MAX_LINKS`
    distinct URLs are read (an abstract holds a few; a text with thousands is not one, and each costs
    a parse).
    """
    links: list[dict[str, str]] = []
    seen: set[str] = set()
    seen_written: set[str] = set()  # a URL written again is not parsed again
    for _, _, written in find_urls(text) if url_spans is None else url_spans:
        if written in seen_written:
            continue
        seen_written.add(written)
        url = normalize_url(written)
        if url is None:
            continue
        key = _dedupe_key(url)
        if key in seen:
            continue
        seen.add(key)
        links.append({"url": url, "kind": link_kind(url)})
        if len(links) >= MAX_LINKS:
            break
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
# What the paper says about its code when it gives no link. Each rule ties the statement to a code
# word: as the subject ("the code will be released", "our implementation is available") or as the
# object of the verb ("we will release our code", "we make the code public"). A future verb somewhere
# in the sentence is not enough: "a practical implementation of a strategy ... and will share our
# experiences" promises experiences, not code.
_CODE_WORDS = ("code", "implementation", "software", "toolkit", "toolbox", "librar", "package", "repositor",
               "代码")  # fmt: skip
_CODE_NOUN = (
    r"(?:code(?:s|base)?|implementations?|software|toolkits?|toolbox(?:es)?|librar(?:y|ies)|packages?|"
    r"repositor(?:y|ies))(?![a-z])"
)
# Up to 80 characters between the code word and its verb, within one clause ("the code for
# reproducing our experiments will be released"); lazy and bounded, so linear.
_GAP = r"(?P<gap>[^.;:!?()\[\]]{0,80}?)"
# Words between a verb and the code it governs: "release [our pre-trained models and] code"; not a
# preposition, which would make the code a complement of something else ("share experiences in code").
_OBJECT_WORDS = r"(?:(?!(?:of|for|on|in|from|about|with|to|into|by|that|which|than|as)\b)[\w'-]+,?\s+){0,6}"
_ADVERBS = r"(?:(?:also|soon|then|publicly|freely|openly|fully|further|now|all|made)\s+)*"
_PROMISE_AFTER_CODE = re.compile(
    _CODE_NOUN + _GAP + r"\b(?:"
    rf"(?:will|shall|would)\s+{_ADVERBS}be\s+{_ADVERBS}"
    r"(?:available|released|public|open[- ]?sourced?|published|shared|provided|accessible|online|uploaded)"
    r"|(?:is|are)\s+(?:to\s+be|going\s+to\s+be)\s+(?:released|made\s+(?:publicly\s+)?available|published|"
    r"open[- ]?sourced)"
    r"|coming\s+soon|(?:available|released|public)\s+soon"
    r"|(?:upon|after)\s+(?:the\s+)?(?:paper'?s?\s+)?(?:acceptance|publication|request)"
    r")\b"
)
# "... will be released as a Python library": the code word is the complement.
_RELEASED_AS = (
    rf"{_ADVERBS}(?:released|available|made\s+(?:publicly\s+)?available|published|distributed|provided|"
    rf"open[- ]?sourced|shared)\s+as\s+"
)
_PROMISE_BEFORE_CODE = re.compile(
    r"\b(?:"
    rf"(?:will|shall|plan\s+to|intend\s+to|are\s+going\s+to|would\s+like\s+to)\s+{_ADVERBS}"
    r"(?:release|open[- ]?source|publish|share|make|provide|upload|distribute)\s+"
    rf"|(?:will|shall)\s+{_ADVERBS}be\s+{_RELEASED_AS}"
    rf"){_OBJECT_WORDS}$"
)
# "代码将在论文接收后公开" (the code will be made public after acceptance), "我们将开源代码".
_PROMISE_CHINESE_AFTER_CODE = re.compile(r"代码[^。]{0,20}?(?:将|会)[^。]{0,20}?(?:公开|开源|发布)")
_PROMISE_CHINESE_BEFORE_CODE = re.compile(r"(?:将|会)[^。]{0,10}?(?:公开|开源|发布)[^。]{0,10}?$")
# An abstract mentions its code a few times; a text with thousands of mentions is read up to this many.
_MAX_MENTIONS = 50
_STATED_AFTER_CODE = re.compile(
    _CODE_NOUN + _GAP + r"\b(?:"
    rf"(?:is|are|has\s+been|have\s+been|was|were|gets?|got)\s+{_ADVERBS}"
    r"(?:available|released|accessible|open[- ]?sourced?|public|provided|shared|published|hosted|included|"
    r"attached|online)"
    rf"|(?:can|could|may)\s+{_ADVERBS}be\s+{_ADVERBS}(?:found|downloaded|obtained|accessed|retrieved)"
    r"|(?:publicly\s+|freely\s+|openly\s+)?available\s+(?:at|on|in|from|online|via|here|for\s+download)"
    r")\b"
)
_STATED_BEFORE_CODE = re.compile(
    r"\b(?:"
    rf"(?:we|i)\s+(?:have\s+)?{_ADVERBS}"
    r"(?:release[ds]?|open[- ]?sourced?|publish(?:ed)?|share[ds]?|make|made|submit(?:ted)?|host(?:ed)?|"
    r"upload(?:ed)?)\s+"
    rf"|(?:is|are|has\s+been|have\s+been)\s+{_RELEASED_AS}"
    rf"){_OBJECT_WORDS}$"
)
_NEGATION = re.compile(r"\b(?:not|no|never|without|neither|nor|cannot|unavailable)\b|n't\b")
# A second clause inside the gap: the verb after it is not about the code ("code models, but the
# data will be released").
_CLAUSE_BREAK = re.compile(
    r"\b(?:but|while|whereas|although|though|however)\b|,\s+and\s+(?:we|it|they|this|these)\b"
)
_STATEMENT_WORDS = (
    "avail", "releas", "open", "public", "share", "found", "publish", "access", "host", "provid", "submit",
    "upload", "download", "obtain", "includ", "attach", "online",
)  # fmt: skip
_FUTURE_WORDS = ("will", "shall", "would", "upon", "after", "soon", "to be", "plan to", "intend", "going to")
# Words before a shortened link that say it is code: a shortener may lead to anything else.
_CODE_CUE = re.compile(
    r"\b(?:code|codes|codebase|implementation|source|software|repository|repo|github|gitlab|toolkit|"
    r"toolbox|library|package)\b",
    re.IGNORECASE,
)


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
    "such as"); among equals GitHub wins, then the first. Failing that, a shortened link
    (`SHORTENER_HOSTS`) whose preceding words name code ("code: git.io/abc") is the paper's code
    with its repository unknown: ``code_url`` is the short link, ``github_repo`` is ``""``, and
    `is_shortener` of ``code_url`` tells this state from a resolved repository.

    ``code_status``, first that holds:

    - ``released``: a code link (a repository, a package, a notebook, a shortened link named as code);
    - ``project_page_only`` / ``account_only``: no code link, but a project page / a user page;
    - ``promised``: no link, and a sentence says the code will be released ("code will be made
      available", "we will release our code", "upon acceptance");
    - ``stated``: no link, and a sentence says the code is available now ("our code is available on
      GitHub", "the code can be found in the supplementary material"): code said to exist, which a
      reader cannot follow from the abstract. A status of its own, because it is neither a release
      one can check nor a promise of a future one;
    - ``none``.

    >>> code_release([{"url": "https://github.com/a/b", "kind": "code"}], "Code: github.com/a/b")
    ('https://github.com/a/b', 'a/b', 'released')
    >>> code_release([], "", "[![github](/i.svg) a/b](https://github.com/a/b); https://github.com/c/d")
    ('https://github.com/a/b', 'a/b', 'released')
    >>> code_release([], "", "https://github.com/someone")[2], code_release([], "", "", "https://p.io/x")[2]
    ('account_only', 'project_page_only')
    >>> code_release([], "Our code is available on GitHub.")[2], code_release([], "Code will be released.")[2]
    ('stated', 'promised')
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
    for link in links:
        if link.get("kind") == "other" and is_shortener(link["url"]) and _names_code(link["url"], text):
            return link["url"], "", "released"
    kinds = {link.get("kind") for link in links}
    if "project_page" in kinds:
        return "", "", "project_page_only"
    if "account" in kinds:
        return "", "", "account_only"
    said = _said_about_code(text)
    return "", "", said or "none"


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


def _words_before(url: str, text: str, lowered: str) -> str | None:
    """The words of the link's sentence before it (at most 160 characters), or None if not found."""
    needle = url.split("://", 1)[-1].lower()
    needle = needle[4:] if needle.startswith("www.") else needle
    position = lowered.find(needle[: max(12, len(needle) // 2)])
    if position < 0:
        return None
    sentence_start = max(lowered.rfind(". ", 0, position), lowered.rfind("; ", 0, position), position - 160)
    return text[max(sentence_start, 0) : position]


def _ownership(url: str, text: str, lowered: str) -> float:
    """+1 when the words before the link say it is the paper's; -2 "built on", -0.5 "using"."""
    before = _words_before(url, text, lowered)
    if before is None:
        return 0.0
    score = 1.0 if _OWN_CUE.search(before) else 0.0
    if _BUILDS_ON_CUE.search(before):
        score -= 2.0
    elif _MENTIONS_CUE.search(before):
        score -= 0.5
    return score


def _names_code(url: str, text: str) -> bool:
    """Whether the words before a shortened link say it is the paper's code ("Code: bit.ly/x")."""
    before = _words_before(url, text, text.lower())
    return before is not None and bool(_CODE_CUE.search(before)) and not _BUILDS_ON_CUE.search(before)


def _said_about_code(text: str) -> str:
    """``promised``, ``stated`` or ``""``: what the text says about its code when it gives no link."""
    if not text:
        return ""
    lowered = text.lower()
    # Most abstracts never mention code: test that first (memchr-fast), then run the rules only at
    # each mention of a code word.
    if not any(word in lowered for word in _CODE_WORDS):
        return ""
    if "代码" in lowered and _promises_in_chinese(lowered):
        return "promised"
    may_promise = any(word in lowered for word in _FUTURE_WORDS)
    may_state = any(word in lowered for word in _STATEMENT_WORDS)
    if not (may_promise or may_state):
        return ""
    stated = False
    for position in _code_word_positions(lowered):
        sentence_start = max(
            lowered.rfind(". ", 0, position) + 1, lowered.rfind("。", 0, position) + 1, position - 120, 0
        )
        if _negated(lowered, sentence_start, position):
            continue
        if may_promise and (
            _about_code(_PROMISE_AFTER_CODE.match(lowered, position))
            or _PROMISE_BEFORE_CODE.search(lowered, sentence_start, position)
        ):
            return "promised"
        if may_state and not stated:
            stated = _about_code(_STATED_AFTER_CODE.match(lowered, position)) or bool(
                _STATED_BEFORE_CODE.search(lowered, sentence_start, position)
            )
    return "stated" if stated else ""


def _code_word_positions(lowered: str) -> list[int]:
    """Where each code word starts as a word of its own ("code", not "encoder" or "decode"), the first
    `_MAX_MENTIONS` of each word."""
    positions = []
    for word in _CODE_WORDS[:-1]:
        position, found = lowered.find(word), 0
        while position >= 0 and found < _MAX_MENTIONS:
            if not (position and lowered[position - 1].isalpha()):
                positions.append(position)
                found += 1
            position = lowered.find(word, position + 1)
    return sorted(positions)[:_MAX_MENTIONS]


def _promises_in_chinese(lowered: str) -> bool:
    position, found = lowered.find("代码"), 0
    while position >= 0 and found < _MAX_MENTIONS:
        if _PROMISE_CHINESE_AFTER_CODE.match(lowered, position) or _PROMISE_CHINESE_BEFORE_CODE.search(
            lowered, max(0, lowered.rfind("。", 0, position) + 1, position - 25), position
        ):
            return True
        position, found = lowered.find("代码", position + 2), found + 1
    return False


def _about_code(match: re.Match[str] | None) -> bool:
    """A rule's match, unless the verb belongs to another clause or is negated."""
    if match is None:
        return False
    gap = match.group("gap")
    return not _CLAUSE_BREAK.search(gap) and not _NEGATION.search(match.group(0))


def _negated(lowered: str, sentence_start: int, position: int) -> bool:
    """ "No code is available", "without code": a negation just before the code word."""
    return _NEGATION.search(lowered, max(sentence_start, position - 20), position) is not None
