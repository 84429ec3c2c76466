"""The chart library's preload and the other modules' warm-up (`dashboard.ui.preload`): which modules
they name, how they change Streamlit's page and nothing else, and the real server's answers. What the
browser does with them (one fetch, on a page without charts too; the table's module loaded before the
first table) is in tests/browser/test_browser.py."""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from support.server import running_app

from dashboard.ui import preload

STATIC = Path(st.__file__).parent / "static"
PAGE = (
    b'<html><head><script type="module" crossorigin src="./static/js/index.Ab1.js"></script>'
    b'<link rel="modulepreload" crossorigin href="./static/js/shared.Cd2.js"></head><body></body></html>'
)


def test_the_modules_are_streamlits_chart_module_and_its_imports() -> None:
    modules = preload.chart_modules()
    assert modules, "this Streamlit has no chart module in its manifest: the page is left as it is"
    assert modules[-1].startswith("static/js/PlotlyChart.")
    assert (STATIC / modules[-1]).stat().st_size > 1_000_000  # Plotly itself, not a stub
    manifest = json.loads((STATIC / "manifest.json").read_text())
    files = {entry["file"]: entry for entry in manifest.values()}
    imported = {manifest[key]["file"] for key in files[modules[-1]]["imports"]}
    assert imported <= set(modules) and all((STATIC / path).is_file() for path in modules)


def test_the_warmed_modules_are_streamlits_own_widget_modules() -> None:
    warm = preload.warm_modules()
    names = [path.removeprefix("static/js/").split(".")[0] for path in warm]
    # the table, the download's format and button: what a first switch to Papers waited for
    assert {"DataFrame", "ButtonGroup", "DownloadButton"} <= set(names)
    assert names == [name for name in preload.WARM_MODULES if name in names]
    assert (STATIC / warm[0]).stat().st_size > 100_000  # the table's module itself, not a stub
    manifest = json.loads((STATIC / "manifest.json").read_text())
    on_demand = {manifest[key]["file"] for key in manifest["index.html"]["dynamicImports"]}
    assert set(warm) <= on_demand  # the very files Streamlit imports when a page draws them


def test_a_warmed_name_this_streamlit_lacks_or_an_unsafe_file_is_left_out(tmp_path: Path) -> None:
    folder = _manifest(
        tmp_path,
        {
            "index.html": {"file": "static/js/index.I1.js", "dynamicImports": ["_grid", "b.tsx", "s.tsx"]},
            "_grid": {"file": "static/js/DataFrame.D1.js", "name": "DataFrame"},
            "b.tsx": {
                "file": 'static/js/x"onload="alert(1).js',
                "name": "ButtonGroup",
                "isDynamicEntry": True,
            },
            "s.tsx": {"file": "static/js/Selectbox.S1.js", "name": "Selectbox", "isDynamicEntry": True},
            "c.tsx": {"file": "static/js/Checkbox.C1.js", "name": "Checkbox"},  # not imported on demand
        },
    )
    for name in ("DataFrame.D1.js", 'x"onload="alert(1).js', "Checkbox.C1.js"):  # Selectbox's is missing
        (folder / "static" / "js" / name).write_text("export {}")
    assert preload.warm_modules(folder) == ("static/js/DataFrame.D1.js",)


def test_the_warm_up_script_names_its_modules_after_the_links() -> None:
    warm = ("static/js/DataFrame.D1.js", 'static/js/x"></script><script>alert(1)//.js')
    changed = preload.with_preloads(PAGE, ("static/js/PlotlyChart.X1.js",), warm)
    assert changed is not None
    head = changed.split(b"</head>")[0]
    link = b'<link rel="modulepreload" crossorigin href="./static/js/PlotlyChart.X1.js">'
    assert head.index(link) < head.index(
        b'<script type="module">\nconst files = ["static/js/DataFrame.D1.js"];'
    )
    assert b"alert" not in changed and changed.count(b"<script") == 2  # Streamlit's entry and the warm-up
    assert str(preload.WARM_UP_AFTER_MS).encode() in head
    assert preload.with_preloads(PAGE, (), ()) == PAGE  # nothing to name: the page as it came


def _manifest(folder: Path, entries: Any) -> Path:
    (folder / "static" / "js").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(entries))
    return folder


def test_imports_come_first_and_unsafe_or_missing_files_are_left_out(tmp_path: Path) -> None:
    folder = _manifest(
        tmp_path,
        {
            "src/PlotlyChart.tsx": {
                "file": "static/js/PlotlyChart.X1.js",
                "name": "PlotlyChart",
                "isDynamicEntry": True,
                "imports": ["_a", "_b", "_quote", "_gone"],
            },
            "_a": {"file": "static/js/a.A1.js", "imports": ["_b"]},
            "_b": {"file": "static/js/b.B1.js", "imports": ["_a"]},  # a cycle is visited once
            "_quote": {"file": 'static/js/x"onload="alert(1).js'},
            "_gone": {"file": "static/js/gone.G1.js"},
        },
    )
    for name in ("PlotlyChart.X1.js", "a.A1.js", "b.B1.js", 'x"onload="alert(1).js'):
        (folder / "static" / "js" / name).write_text("export {}")
    assert preload.chart_modules(folder) == (
        "static/js/b.B1.js",
        "static/js/a.A1.js",
        "static/js/PlotlyChart.X1.js",
    )


@pytest.mark.parametrize(
    "manifest",
    [None, "not json", [], {"x": {"file": "static/js/Other.js", "name": "Other", "isDynamicEntry": True}}],
)
def test_without_a_manifest_or_a_chart_module_nothing_is_named(tmp_path: Path, manifest: Any) -> None:
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (tmp_path / "manifest.json").write_text(text)
    assert preload.chart_modules(tmp_path) == ()


def test_the_links_go_at_the_end_of_streamlits_head_once() -> None:
    modules = ("static/js/shared.Cd2.js", "static/js/PlotlyChart.X1.js")
    changed = preload.with_preloads(PAGE, modules)
    assert changed is not None
    link = b'<link rel="modulepreload" crossorigin href="./static/js/PlotlyChart.X1.js">'
    assert changed.split(b"</head>")[0].endswith(link)
    assert changed.count(b"shared.Cd2.js") == 1  # already preloaded by the page: not named twice
    assert changed.replace(link, b"") == PAGE


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><title>A component</title></head><body></body></html>",  # not Streamlit's page
        b'<script type="module" src="./static/js/index.Ab1.js"></script>',  # no head to add to
    ],
)
def test_another_page_is_not_changed(page: bytes) -> None:
    assert preload.with_preloads(page, ("static/js/PlotlyChart.X1.js",)) is None


def _answer(status: int, content_type: bytes, body: bytes, *, encoding: bytes | None = None) -> Any:
    """A downstream ASGI app that answers every request with ``body`` (in two parts)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
        headers += [(b"etag", b'"abc"')] + ([(b"content-encoding", encoding)] if encoding else [])
        await send({"type": "http.response.start", "status": status, "headers": headers})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})

    return app


def _through(app: Any, method: str = "GET") -> tuple[dict[str, Any], bytes]:
    """``app`` behind `preload.ModulePreload`: the answer's start and its whole body."""
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": method, "path": "/", "headers": []}
    asyncio.run(preload.ModulePreload(app)(scope, receive, send))
    return sent[0], b"".join(message.get("body", b"") for message in sent[1:])


@pytest.mark.parametrize("encoding", [None, b"gzip"])
def test_streamlits_page_is_sent_changed_with_its_length(encoding: bytes | None) -> None:
    body = gzip.compress(PAGE) if encoding else PAGE
    start, sent = _through(_answer(200, b"text/html; charset=utf-8", body, encoding=encoding))
    assert sent == preload.with_preloads(PAGE, preload.chart_modules(), preload.warm_modules())
    headers = dict(start["headers"])
    assert headers[b"content-length"] == str(len(sent)).encode()
    assert b"content-encoding" not in headers and b"etag" not in headers  # never revalidated


@pytest.mark.parametrize(
    ("status", "content_type", "body", "method"),
    [
        (200, b"application/javascript", PAGE, "GET"),  # a script, even one that mentions the entry
        (404, b"text/html", PAGE, "GET"),
        (200, b"text/html", b"<html><head></head><body>component</body></html>", "GET"),
        (200, b"text/html", PAGE, "HEAD"),
    ],
)
def test_every_other_answer_passes_through_as_it_came(
    status: int, content_type: bytes, body: bytes, method: str
) -> None:
    start, sent = _through(_answer(status, content_type, body), method)
    assert sent == body and dict(start["headers"])[b"etag"] == b'"abc"'


@pytest.mark.parametrize(
    "body",
    [PAGE, gzip.compress(PAGE, mtime=0)[:40], gzip.compress(PAGE, mtime=0)[:10] + b"\x07" + bytes(40)],
    ids=["not gzip", "cut short", "reserved block type"],
)  # mtime=0 and ids: xdist's workers each collect, and must collect the same names
def test_a_body_that_is_not_the_gzip_it_says_passes_through(body: bytes) -> None:
    start, sent = _through(_answer(200, b"text/html", body, encoding=b"gzip"))
    assert sent == body and dict(start["headers"])[b"content-encoding"] == b"gzip"


def test_the_real_server_sends_the_links_and_the_modules() -> None:
    modules = preload.chart_modules()
    with running_app() as url:
        for path, encoding in (("/", "identity"), ("/papers", "gzip")):  # the page under every path
            request = urllib.request.Request(url + path, headers={"Accept-Encoding": encoding})
            with urllib.request.urlopen(request, timeout=30) as response:
                page = response.read()
                assert int(response.headers["Content-Length"]) == len(page)
                assert response.headers.get("Content-Encoding") is None
            for module in modules:  # linked once, or named by Streamlit's own page already
                assert page.count(f'"./{module}"'.encode()) == 1, (path, module)
            assert b'rel="modulepreload" crossorigin href="./' + modules[-1].encode() in page
            assert json.dumps(list(preload.warm_modules())).encode() in page
        for module in modules + preload.warm_modules():  # each file named is served, whole
            with urllib.request.urlopen(f"{url}/{module}", timeout=30) as response:
                assert response.read() == (STATIC / module).read_bytes()
