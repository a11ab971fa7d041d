"""pytest fixtures for the browser area (imported by conftest.py).

- ``site``: a real HTTP server on 127.0.0.1 (port 0) serving tests/pages plus endpoints that record
  every request (POST /record/..., /login, /_debug/state, /redirect?to=, /echo, /status/N, /suggest).
- ``foreign_site``: the same server on 127.0.0.2 — a host that is NOT on the allow-list.
- ``miniwob_site``: the MiniWoB++ task pages from the ``miniwob`` wheel over HTTP.
- ``browser_runtime``: ONE Chromium per test module; ``make_session`` opens a fresh context per test.
"""

from __future__ import annotations

import html
import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, BrowserSession, Observation
from taskcrew.tools.human import Human, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, PolicyDecision
from taskcrew.tools.vault import Vault

PAGES_DIR = Path(__file__).parent / "pages"


@dataclass
class Hit:
    method: str
    path: str
    fields: list[tuple[str, str]]
    headers: dict[str, str]


@dataclass
class RecordingSite:
    url: str
    hits: list[Hit] = field(default_factory=list)

    def posts(self) -> list[Hit]:
        return [h for h in self.hits if h.method != "GET"]

    def paths(self) -> list[str]:
        return [h.path for h in self.hits]

    def page(self, name: str) -> str:
        return f"{self.url}/pages/{name}"


def _handler(site: RecordingSite, root: Path) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _record(self, body: bytes = b"") -> None:
            ctype = self.headers.get("Content-Type", "")
            fields: list[tuple[str, str]]
            if "json" in ctype:
                data = json.loads(body or b"{}")
                fields = [(str(k), str(v)) for k, v in data.items()] if isinstance(data, dict) else []
            else:
                fields = parse_qsl(body.decode(), keep_blank_values=True)
            site.hits.append(Hit(self.command, self.path, fields, dict(self.headers.items())))

        def _html(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._record()
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            if parts.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", query.get("to", "/"))
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif parts.path == "/echo":
                items = "".join(f"<li>{html.escape(k)} = {html.escape(v)}</li>" for k, v in query.items())
                self._html(200, f"<title>Echo</title><h1>You sent</h1><ul>{items}</ul>")
            elif parts.path.startswith("/status/"):
                code = int(parts.path.rsplit("/", 1)[1])
                self._html(
                    code, f"<title>Status {code}</title><h1>Error {code}</h1><p>Service unavailable</p>"
                )
            elif parts.path == "/suggest":
                data = json.dumps(["alpha", "beta"]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif parts.path.startswith("/_debug"):
                self._html(200, "<title>debug</title><pre>ground truth</pre>")
            elif parts.path.startswith("/saved"):
                self._html(200, "<title>Saved</title><h1>Saved</h1><a href='/pages/form.html'>Again</a>")
            elif parts.path == "/welcome":
                self._html(
                    200, "<title>Welcome</title><h1>Welcome back</h1><a href='/pages/form.html'>Orders</a>"
                )
            else:
                super().do_GET()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            self._record(body)
            path = urlsplit(self.path).path
            if path.startswith("/record"):
                if "json" in self.headers.get("Content-Type", ""):
                    self._html(201, "{}")
                    return
                self.send_response(303)
                self.send_header("Location", "/saved" + path[len("/record") :])
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path == "/login":
                self.send_response(303)
                self.send_header("Location", "/welcome")
                self.send_header("Set-Cookie", "sid=s3ss10n; Path=/; HttpOnly")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._html(404, "<title>Not found</title>")

    return Handler


def serve(host: str, root: Path) -> Iterator[RecordingSite]:
    site = RecordingSite(url="")
    server = ThreadingHTTPServer((host, 0), _handler(site, root))
    site.url = f"http://{host}:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def _site_server() -> Iterator[RecordingSite]:
    yield from serve("127.0.0.1", PAGES_DIR.parent)


@pytest.fixture(scope="session")
def _foreign_server() -> Iterator[RecordingSite]:
    yield from serve("127.0.0.2", PAGES_DIR.parent)


@pytest.fixture
def site(_site_server: RecordingSite) -> RecordingSite:
    """The allowed test site, with its request log cleared for this test."""
    _site_server.hits.clear()
    return _site_server


@pytest.fixture
def foreign_site(_foreign_server: RecordingSite) -> RecordingSite:
    """A second host (127.0.0.2) that the policy does not allow."""
    _foreign_server.hits.clear()
    return _foreign_server


def miniwob_html_dir() -> Path:
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the miniwob package is not installed (it is in the dev dependency group)")
    return Path(next(iter(spec.submodule_search_locations))) / "html"


@pytest.fixture(scope="session")
def miniwob_site() -> Iterator[RecordingSite]:
    yield from serve("127.0.0.1", miniwob_html_dir())


@pytest.fixture(scope="module")
def browser_runtime() -> Iterator[BrowserRuntime]:
    """One Chromium for the whole test module."""
    with BrowserRuntime(BrowserConfig()) as runtime:
        yield runtime


SessionFactory = Callable[..., BrowserSession]


@pytest.fixture
def make_session(browser_runtime: BrowserRuntime, site: RecordingSite) -> Iterator[SessionFactory]:
    """Open a fresh browser context (a 'page per test') with a policy allowing ``site`` (or
    ``base_url``'s host), a ScriptedHuman by default (fails if asked), and the shared Chromium."""
    opened: list[BrowserSession] = []

    def factory(
        *,
        human: Human | None = None,
        vault: Vault | None = None,
        read_only: bool = False,
        allowed: list[str] | None = None,
        recorder: list[PolicyDecision] | None = None,
        config: BrowserConfig | None = None,
        base_url: str | None = None,
        **policy_overrides: Any,
    ) -> BrowserSession:
        policy_config = PolicyConfig.for_url(base_url or site.url, read_only=read_only, **policy_overrides)
        if allowed is not None:
            policy_config.allowed_hosts = allowed
        policy = Policy(policy_config, human or ScriptedHuman(), recorder)
        session = BrowserSession(config, policy=policy, vault=vault, runtime=browser_runtime)
        session.start()
        opened.append(session)
        return session

    yield factory
    for session in opened:
        session.close()


def open_web(
    make_session: SessionFactory, site: RecordingSite, page: str
) -> tuple[BrowserSession, Observation]:
    """A fresh session on one of tests/pages/web/ (pages written like real sites' own)."""
    session = make_session()
    result = session.goto(site.page(f"web/{page}"))
    assert result.ok, result.render()
    return session, result.observation


def log(session: BrowserSession) -> str:
    """What the page wrote into its #log (each action of the test pages logs what it did)."""
    return str(session.run(lambda page: page.evaluate("document.getElementById('log').textContent")))


__all__ = [
    "Hit",
    "RecordingSite",
    "_foreign_server",
    "_site_server",
    "browser_runtime",
    "foreign_site",
    "make_session",
    "miniwob_html_dir",
    "miniwob_site",
    "serve",
    "site",
]
