"""Start fetching the chart library with the page itself, not when its first chart arrives; load the
other pages' modules once the first page is drawn, not at the first switch to them.

Streamlit's browser code fetches Plotly (one 4.7 MB module, ``static/js/PlotlyChart.<hash>.js``, and
three small modules of its own) only when a session's first ``st.plotly_chart`` is drawn. By then the
browser is fetching some 60 other modules for the page's widgets from the same server, and Plotly's
fetch waited behind them: in a warm visit to the Overview on the seeds it began at 0.91 s and ended at
1.55 s, and the chart was drawn a second later.

`ModulePreload` is a small ASGI middleware of the dashboard's server (``app.py``: ``st.App(...,
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

**The other pages' modules, once the first page is drawn.** A first switch to Papers, Topics or Terms
drew a table, a segmented control and a download button for the first time in the session, and waited
for Streamlit to fetch, compile and run their modules (the table's alone is 1.2 MB with the Arrow code
it imports): on the seeds, a first switch to Papers took 1.0 s against 0.8 s once they were loaded. The
page's head therefore also holds a small module script (`WARM_UP`) that waits until the session's
first script run is over (the app's ``data-test-script-state`` goes from running to not running; at
most `WARM_UP_AFTER_MS` if it never says so) and then imports `WARM_MODULES` one at a time, each when
the browser is idle. Nothing runs before the first page is drawn, so the first page comes no later; a
module imported early is the same module Streamlit imports later (the same URL, resolved from
Streamlit's own entry script), so nothing is fetched or run twice. The script is fixed text and the
file names come from the manifest, filtered by `MODULE_PATH`.
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
# The modules of what the pages draw beside charts (the table, segmented controls, select boxes,
# checkboxes, download buttons, the word cloud's image, text areas, multiselects, sliders), by the
# names Streamlit's build gives them; warmed after the first page (`WARM_UP`). A name this Streamlit
# lacks is skipped.
WARM_MODULES = (
    "DataFrame",
    "ButtonGroup",
    "Selectbox",
    "Checkbox",
    "DownloadButton",
    "ImageList",
    "TextArea",
    "Multiselect",
    "Slider",
)
WARM_UP_AFTER_MS = 20_000
# `__FILES__` becomes a JSON list of `MODULE_PATH`s. Each resolves against Streamlit's entry script,
# as Streamlit's own imports do, so it names the same module.
WARM_UP = """<script type="module">
const files = __FILES__;
const entry = document.querySelector('script[type="module"][src*="static/js/index."]');
const drawn = '[data-testid="stMain"] [data-testid="stElementContainer"]';
const state = () => document.querySelector('[data-testid="stApp"]')?.getAttribute("data-test-script-state");
const idle = () => new Promise((done) =>
  window.requestIdleCallback ? requestIdleCallback(done, {timeout: 2000}) : setTimeout(done, 50));
let ran = false, waited = 0;
async function warm() {
  for (const file of files) {
    await idle();
    try {
      await import(new URL(file.split("/").pop(), entry.src));
    } catch (error) {
      // not loaded now: Streamlit fetches it when a page needs it
    }
  }
}
function wait() {
  // the first run has begun once the state says so or the page holds an element
  ran = ran || state() === "running" || document.querySelector(drawn) !== null;
  waited += 250;
  if ((ran && state() === "notRunning") || waited >= __AFTER__) warm();
  else setTimeout(wait, 250);
}
if (entry) wait();
</script>"""
STATIC = Path(st.__file__).parent / "static"
# A module path as Vite writes it: safe inside a quoted attribute, and under the static folder.
MODULE_PATH = re.compile(r"^static/js/[A-Za-z0-9_.-]+\.js$")
STREAMLIT_ENTRY = re.compile(rb'<script type="module"[^>]*src="[^"]*static/js/index\.')
# Headers of the page that no longer hold once it is changed (a changed page is never revalidated).
STALE_HEADERS = frozenset({b"content-length", b"content-encoding", b"etag", b"last-modified"})


def _manifest(static: Path) -> dict[str, Any]:
    """Vite's manifest in Streamlit's package; empty when it is missing or not a manifest."""
    try:
        manifest = json.loads((static / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


@functools.cache
def chart_modules(static: Path = STATIC) -> tuple[str, ...]:
    """The chart module and every module it imports, imports first, as paths under Streamlit's
    static folder (``static/js/...``); empty when the manifest or the module is missing."""
    manifest = _manifest(static)
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


@functools.cache
def warm_modules(static: Path = STATIC) -> tuple[str, ...]:
    """The files of `WARM_MODULES` that Streamlit's entry imports on demand, in that order, as paths
    under its static folder; a name it lacks is left out."""
    manifest = _manifest(static)
    entry = manifest.get("index.html")
    on_demand = entry.get("dynamicImports") if isinstance(entry, dict) else None
    files: dict[str, str] = {}
    for key in on_demand if isinstance(on_demand, list) else ():
        module = manifest.get(key)
        if isinstance(module, dict) and isinstance(module.get("name"), str):
            files.setdefault(module["name"], str(module.get("file", "")))
    return tuple(
        files[name]
        for name in WARM_MODULES
        if MODULE_PATH.match(files.get(name, "")) and (static / files[name]).is_file()
    )


def with_preloads(page: bytes, modules: tuple[str, ...], warm: tuple[str, ...] = ()) -> bytes | None:
    """``page`` with a ``modulepreload`` link for each of ``modules`` it does not name yet, and the
    warm-up script for ``warm`` (`WARM_UP`), at the end of its head; None when ``page`` is not
    Streamlit's page (the modules would not resolve there)."""
    if not STREAMLIT_ENTRY.search(page) or b"</head>" not in page:
        return None
    text = page.decode("utf-8", "replace")
    missing = [path for path in modules if f'"./{path}"' not in text]
    links = "".join(f'<link rel="modulepreload" crossorigin href="./{path}">' for path in missing)
    safe = [path for path in warm if MODULE_PATH.match(path)]
    script = WARM_UP.replace("__FILES__", json.dumps(safe)).replace("__AFTER__", str(WARM_UP_AFTER_MS))
    return page.replace(b"</head>", (links + (script if safe else "")).encode() + b"</head>", 1)


class ModulePreload:
    """ASGI middleware: Streamlit's page, with the chart modules' preloads and the other modules'
    warm-up in its head (`with_preloads`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        modules, warm = chart_modules(), warm_modules()
        if scope["type"] != "http" or scope.get("method") != "GET" or not (modules or warm):
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
                await _send_page(send, held.pop("start"), bytes(body), modules, warm)

        await self.app(scope, receive, send_changed)


def _is_html(start: dict[str, Any]) -> bool:
    headers = dict(start.get("headers") or ())
    return start.get("status") == 200 and headers.get(b"content-type", b"").startswith(b"text/html")


async def _send_page(
    send: Any, start: dict[str, Any], body: bytes, modules: tuple[str, ...], warm: tuple[str, ...]
) -> None:
    """Send the page changed (`with_preloads`), or as it came when it is not Streamlit's page."""
    encoding = dict(start.get("headers") or ()).get(b"content-encoding", b"identity")
    changed = None
    if encoding in (b"identity", b"gzip"):
        try:
            changed = with_preloads(gzip.decompress(body) if encoding == b"gzip" else body, modules, warm)
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
