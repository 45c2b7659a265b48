"""The VIZ web server: stdlib ``http.server`` on 127.0.0.1, a random free port.

Routes: ``/`` (the page), ``/app.js``, ``/style.css``; JSON under ``/api/``: ``groups``,
``stage?g=&s=``, ``graph?g=&s=&side=&page=``, ``search?q=``, ``profile``; and
``/source?path=&line=`` (a rule's source file, only files of this trace's rules).
"""

from __future__ import annotations

import html
import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

from fusegrad.viz.data import VizData

_ASSETS = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/style.css": ("style.css", "text/css"),
}


def _asset(name: str) -> bytes:
    return resources.files("fusegrad.viz").joinpath("static", name).read_bytes()


def _int(q: dict[str, list[str]], key: str, default: int | None = None) -> int:
    if key not in q:
        if default is None:
            raise KeyError(f"missing parameter {key!r}")
        return default
    try:
        return int(q[key][0])
    except ValueError as e:
        raise KeyError(f"parameter {key!r} is not an integer") from e


def _source_page(viz: VizData, path: str, line: int) -> str:
    lines = viz.source_lines(path)
    rows = "".join(
        f'<tr id="L{i}" class="{"hit" if i == line else ""}"><td>{i}</td>'
        f"<td><pre>{html.escape(text)}</pre></td></tr>"
        for i, text in enumerate(lines, 1)
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(path)}</title>"
        "<link rel='stylesheet' href='/style.css'></head><body class='source'>"
        f"<h3>{html.escape(path)}:{line}</h3><table>{rows}</table>"
        f"<script>document.getElementById('L{line}')?.scrollIntoView({{block:'center'}})"
        "</script></body></html>"
    )


def make_handler(viz: VizData) -> type[BaseHTTPRequestHandler]:
    """A request handler class answering from ``viz``."""

    def graph(q: dict[str, list[str]]) -> Any:
        side = q.get("side", ["output"])[0]
        return viz.graph(_int(q, "g"), _int(q, "s"), side, _int(q, "page", 0))

    api: dict[str, Callable[[dict[str, list[str]]], Any]] = {
        "/api/groups": lambda q: viz.listing(),
        "/api/stage": lambda q: viz.stage(_int(q, "g"), _int(q, "s")),
        "/api/graph": graph,
        "/api/search": lambda q: viz.search(q.get("q", [""])[0]),
        "/api/profile": lambda q: viz.data.get("profile", []),
    }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind + "; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, value: Any) -> None:
            self._send(200, json.dumps(value).encode(), "application/json")

        def do_GET(self) -> None:
            url = urlparse(self.path)
            q = parse_qs(url.query)
            try:
                if url.path in _ASSETS:
                    name, kind = _ASSETS[url.path]
                    self._send(200, _asset(name), kind)
                elif url.path == "/source":
                    page = _source_page(viz, q.get("path", [""])[0], _int(q, "line", 1))
                    self._send(200, page.encode(), "text/html")
                elif url.path in api:
                    self._json(api[url.path](q))
                else:
                    self._send(404, b"not found", "text/plain")
            except KeyError as e:
                self._send(400, str(e).encode(), "text/plain")

    return Handler


class VizServer:
    """The page for one trace, served from a background thread (``url`` once started)."""

    def __init__(self, viz: VizData, port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(viz))
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def start(self) -> VizServer:
        """Serve in a daemon thread; returns self."""
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> VizServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(viz: VizData, port: int = 0) -> None:
    """Serve the page until Ctrl-C, its address printed on stderr."""
    server = VizServer(viz, port)
    print(f"fusegrad VIZ: {server.url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
