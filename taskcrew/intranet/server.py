"""The intranet over real HTTP (stdlib ``ThreadingHTTPServer``), read-only.

Routes: ``/`` and every page path, section listings (``/news/?tag=price-change``), ``/search?q=&n=``,
``/static/site.css``, ``/healthz``; anything else is an HTML 404. Only GET and HEAD.
"""

from __future__ import annotations

import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from taskcrew.background import QuietServer
from taskcrew.intranet import DEFAULT_PORT
from taskcrew.intranet.content import PAGES_DIR, Page, load_pages
from taskcrew.intranet.render import Renderer, tag_slug
from taskcrew.intranet.search import SiteIndex

MAX_RESULTS = 25


class Site:
    """The loaded pages, their search index and the renderer: everything a request needs."""

    def __init__(self, pages: list[Page], renderer: Renderer | None = None) -> None:
        self.pages = {p.path: p for p in pages}
        self.index = SiteIndex(pages)
        self.renderer = renderer or Renderer()

    @classmethod
    def load(cls, pages_dir: Path = PAGES_DIR) -> Site:
        return cls(load_pages(pages_dir))

    def respond(self, raw_path: str) -> tuple[int, str, str]:
        """``(status, content type, body)`` for a GET of ``raw_path`` (path plus query)."""
        parts = urlsplit(raw_path)
        query = parse_qs(parts.query)
        path = parts.path or "/"
        if path == "/healthz":
            return 200, "text/plain; charset=utf-8", "ok\n"
        if path == "/static/site.css":
            return 200, "text/css; charset=utf-8", self.renderer.stylesheet
        if path == "/search":
            text = query.get("q", [""])[0][:300]
            limit = _int(query.get("n", ["10"])[0], default=10, low=1, high=MAX_RESULTS)
            return (
                200,
                _HTML,
                self.renderer.search(text, self.index.search(text, limit) if text.strip() else []),
            )
        page = self.pages.get(path) or self.pages.get(path.rstrip("/") + "/")
        if page is None:
            return 404, _HTML, self.renderer.not_found(path)
        if page.listing is None:
            return 200, _HTML, self.renderer.page(page)
        tag = query.get("tag", [None])[0]
        listed = self._listing(page, tag)
        return 200, _HTML, self.renderer.page(page, listed, tag)

    def _listing(self, page: Page, tag: str | None) -> list[Page]:
        members = [p for p in self.pages.values() if p.section == page.listing and p.listing is None]
        if tag:
            members = [p for p in members if tag_slug(tag) in {tag_slug(t) for t in p.tags}]
        members.sort(key=lambda p: (p.date.isoformat() if p.date else "", p.path), reverse=True)
        return members[: page.listing_limit] if page.listing_limit else members


_HTML = "text/html; charset=utf-8"


def _int(value: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(value)))
    except ValueError:
        return default


def _handler(site: Site, log_requests: bool) -> type[BaseHTTPRequestHandler]:
    class IntranetHandler(BaseHTTPRequestHandler):
        server_version = "AcmeConnect/1.0"

        def do_GET(self) -> None:
            self._send(head_only=False)

        def do_HEAD(self) -> None:
            self._send(head_only=True)

        def _send(self, head_only: bool) -> None:
            status, content_type, body = site.respond(self.path)
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if not head_only:
                self.wfile.write(data)

        def _refuse(self) -> None:
            self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, "the intranet is read-only (GET and HEAD only)")

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

        def log_message(self, format: str, *args: object) -> None:
            if log_requests:
                sys.stderr.write("intranet: " + (format % args) + "\n")

    return IntranetHandler


class _QuietHTTPServer(QuietServer, ThreadingHTTPServer):
    background_name = "the intranet"


class IntranetServer:
    """The site on ``host:port`` (port 0 picks a free one) in a background thread; a context manager."""

    def __init__(
        self, site: Site, host: str = "127.0.0.1", port: int = 0, log_requests: bool = False
    ) -> None:
        self.site = site
        self._httpd = _QuietHTTPServer((host, port), _handler(site, log_requests))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> IntranetServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="intranet", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until Ctrl-C, then close the socket."""
        try:
            self._httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._httpd.server_close()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> IntranetServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(host: str = "127.0.0.1", port: int = DEFAULT_PORT, pages_dir: Path | None = None) -> None:
    """Serve until Ctrl-C (the ``taskcrew intranet serve`` command)."""
    site = Site.load(pages_dir or PAGES_DIR)
    server = IntranetServer(site, host=host, port=port, log_requests=True)
    print(
        f"Acme Connect intranet: {len(site.pages)} pages at {server.base_url}/ (Ctrl-C to stop)", flush=True
    )
    server.serve_forever()
