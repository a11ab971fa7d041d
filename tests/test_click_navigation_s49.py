"""A click that starts a navigation is read on the page it opens, however slow the browser or the
server is to get there: the observation after the click is never the page the click left."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fixtures_browser import SessionFactory

from taskcrew.tools.browser import BrowserConfig, Click, Observation

pytestmark = pytest.mark.browser

START = """<title>Start</title><h1>Start</h1>
<a href="/slow">Slow page</a>
<a href="/fast">Fast</a>
<a href="/fast" id="busy">Busy</a>
<a href="/empty">No content</a>
<a href="/later">Later</a>
<a href="#part">Part</a><p id="part">part</p>
<form method="get" action="/slow"><button>Search</button></form>
<script>document.getElementById('busy').onclick = () => addEventListener('beforeunload', () => {
  const t = performance.now(); while (performance.now() - t < 1000) {}
});
document.querySelector('a[href="/later"]').onclick = (e) => {
  e.preventDefault(); setTimeout(() => { location.href = '/slow'; }, 10);
};</script>"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/empty":
            self.send_response(204)
            self.end_headers()
            return
        if path == "/slow":
            time.sleep(1.5)  # longer than the click's own wait (action_timeout_ms) below
        body = (START if path == "/" else "<title>Arrived</title><h1>Arrived</h1>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def slow_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _named(obs: Observation, name: str) -> int:
    return next(el.index for el in obs.elements if el.name == name)


@pytest.mark.parametrize("name", ["Slow page", "Search", "Later", "Busy"])
def test_a_click_whose_page_comes_after_the_clicks_own_wait_is_read_on_that_page(
    make_session: SessionFactory, slow_site: str, name: str
) -> None:
    config = BrowserConfig(action_timeout_ms=300, settle_timeout_ms=8000)
    session = make_session(base_url=slow_site, config=config)
    start = session.goto(f"{slow_site}/").observation
    result = session.act([Click(index=_named(start, name))])
    assert result.observation.title == "Arrived", result.model_dump_json()[:2000]


def test_a_link_that_leads_nowhere_leaves_the_page_as_it_was(
    make_session: SessionFactory, slow_site: str
) -> None:
    session = make_session(base_url=slow_site)
    start = session.goto(f"{slow_site}/").observation
    result = session.act([Click(index=_named(start, "No content"))])
    assert result.observation.title == "Start"
    assert result.ran[0].ok, result.ran[0].message
    part = session.act([Click(index=_named(result.observation, "Part"))])
    assert part.observation.title == "Start" and part.observation.url.endswith("#part")
