"""Start fetching the chart library with the page itself, not when its first chart arrives.

Streamlit's browser code fetches Plotly (one 4.7 MB module, ``static/js/PlotlyChart.<hash>.js``, and
three small modules of its own) only when a session's first ``st.plotly_chart`` is drawn. By then the
browser is fetching some 60 other modules for the page's widgets from the same server, and Plotly's
fetch waited behind them: in a warm visit to the Overview on the seeds it began at 0.91 s and ended at
1.55 s, and the chart was drawn a second later.

`ChartPreload` is a small ASGI middleware of the dashboard's server (``app.py``: ``st.App(...,
middleware=...)``). It adds ``<link rel="modulepreload">`` for those modules to the head of Streamlit's
page, beside Streamlit's own preloads, so the browser fetches them with the page's first scripts while
it waits for the server's first answer. Plotly is still evaluated only when a chart needs it: a page
without charts fetches it and never runs it. The modules come from Vite's manifest in Streamlit's
package (``static/manifest.json``: each module's file and the modules it imports), never from a
request or a corpus. A Streamlit without a manifest or without such a module serves its page
unchanged; only Streamlit's own page (the one that loads ``static/js/index.*.js``) is changed, and
every other response passes through as it came.

Preloading the widgets' modules as well (multiselect, slider, table, ...) was tried and kept out: in
the head they delayed Streamlit's own start, and the count line came 0.35 s later; tried again once
the server's connections answered without Nagle's delay (`dashboard.ui.sockets`), it changed nothing
(ten alternating warm visits each: first chart 2.23 against 2.25 s). Evaluating Plotly early (a
module script in the head importing it at once, at the page's load event, or when the browser is idle)
was tried too: the count line came 0.5-0.6 s later and the first chart no sooner (1.96-2.04 s against
1.97-2.07 s, ten alternating warm visits each).

Before this, the first element of each page was a script that imported the module
(``st.html(..., unsafe_allow_javascript=True)``), which could begin only once that element had arrived.
The app now sends no JavaScript of its own.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

import streamlit as st

CHART_MODULE = "PlotlyChart"  # the name Streamlit's build gives the chart element's module
STATIC = Path(st.__file__).parent / "static"
# A module path as Vite writes it: safe inside a quoted attribute, and under the static folder.
MODULE_PATH = re.compile(r"^static/js/[A-Za-z0-9_.-]+\.js$")
STREAMLIT_ENTRY = re.compile(rb'<script type="module"[^>]*src="[^"]*static/js/index\.')
# Headers of the page that no longer hold once it is changed (a changed page is never revalidated).
STALE_HEADERS = frozenset({b"content-length", b"content-encoding", b"etag", b"last-modified"})


@functools.cache
def chart_modules(static: Path = STATIC) -> tuple[str, ...]:
    """The chart module and every module it imports, imports first, as paths under Streamlit's
    static folder (``static/js/...``); empty when the manifest or the module is missing."""
    try:
        manifest = json.loads((static / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ()
    if not isinstance(manifest, dict):
        return ()
    roots = [
        key
        for key, module in manifest.items()
        if isinstance(module, dict) and module.get("isDynamicEntry") and module.get("name") == CHART_MODULE
    ]
    if len(roots) != 1:
        return ()
    ordered: list[str] = []
    seen: set[str] = set()

    def visit(key: str) -> None:
        module = manifest.get(key)
        if key in seen or not isinstance(module, dict):
            return
        seen.add(key)
        for imported in module.get("imports") or ():
            visit(str(imported))
        ordered.append(str(module.get("file", "")))

    visit(roots[0])
    modules = tuple(path for path in ordered if MODULE_PATH.match(path) and (static / path).is_file())
    return modules if modules and modules[-1].startswith(f"static/js/{CHART_MODULE}.") else ()


def with_preloads(page: bytes, modules: tuple[str, ...]) -> bytes | None:
    """``page`` with a ``modulepreload`` link for each of ``modules`` it does not name yet, at the end
    of its head; None when ``page`` is not Streamlit's page (the modules would not resolve there)."""
    if not STREAMLIT_ENTRY.search(page) or b"</head>" not in page:
        return None
    text = page.decode("utf-8", "replace")
    missing = [path for path in modules if f'"./{path}"' not in text]
    links = "".join(f'<link rel="modulepreload" crossorigin href="./{path}">' for path in missing)
    return page.replace(b"</head>", links.encode() + b"</head>", 1)


class ChartPreload:
    """ASGI middleware: Streamlit's page, with the chart modules' preloads in its head (`with_preloads`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        modules = chart_modules()
        if scope["type"] != "http" or scope.get("method") != "GET" or not modules:
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}  # the start of an HTML answer, until its body is complete
        body = bytearray()

        async def send_changed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and _is_html(message):
                held["start"] = message
                return
            if "start" not in held:
                await send(message)
                return
            if message["type"] != "http.response.body":  # not a plain body (a file sent by path)
                await send(held.pop("start"))
                await send(message)
                return
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                await _send_page(send, held.pop("start"), bytes(body), modules)

        await self.app(scope, receive, send_changed)


def _is_html(start: dict[str, Any]) -> bool:
    headers = dict(start.get("headers") or ())
    return start.get("status") == 200 and headers.get(b"content-type", b"").startswith(b"text/html")


async def _send_page(send: Any, start: dict[str, Any], body: bytes, modules: tuple[str, ...]) -> None:
    """Send the page changed (`with_preloads`), or as it came when it is not Streamlit's page."""
    encoding = dict(start.get("headers") or ()).get(b"content-encoding", b"identity")
    changed = None
    if encoding in (b"identity", b"gzip"):
        try:
            changed = with_preloads(gzip.decompress(body) if encoding == b"gzip" else body, modules)
        except (OSError, EOFError, zlib.error):  # not the gzip it says it is: passed on untouched
            changed = None
    if changed is None:
        await send(start)
        await send({"type": "http.response.body", "body": body})
        return
    headers = [(name, value) for name, value in start["headers"] if name.lower() not in STALE_HEADERS]
    headers.append((b"content-length", str(len(changed)).encode()))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": changed})
