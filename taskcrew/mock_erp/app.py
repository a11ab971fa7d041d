"""The ERP application: routing, the session guard, CSRF, and chaos around every page request.

Framework-free: ``ErpApp.handle(Request) -> Response``. The HTTP server (server.py) only
translates bytes to ``Request`` and ``Response`` to bytes. One lock serialises all state access.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from taskcrew.mock_erp.auth_pages import NOTICE_COOKIE, SESSION_COOKIE, AuthPages
from taskcrew.mock_erp.bill_pages import BillPages
from taskcrew.mock_erp.chaos import ChaosEngine
from taskcrew.mock_erp.db import reseed
from taskcrew.mock_erp.debug_api import DebugApi
from taskcrew.mock_erp.identity import ABOUT_PATH, about
from taskcrew.mock_erp.ledger import Ledger
from taskcrew.mock_erp.models import DebugState
from taskcrew.mock_erp.render import ANON_CSRF_COOKIE, Renderer, Visit
from taskcrew.mock_erp.seed import SeedData
from taskcrew.mock_erp.sessions import Clock, SessionStore, iso_utc
from taskcrew.mock_erp.settings import ChaosConfig, ErpSettings
from taskcrew.mock_erp.web import Request, Response, json_response, login_url, redirect, text

STATIC_DIR = Path(__file__).with_name("static")
CSRF_REJECTED = (
    "This form could not be accepted: its security token (CSRF token) is missing or invalid. "
    "Go back, reload the page and submit the form again."
)

Handler = Callable[..., Response]


class ErpApp:
    def __init__(
        self,
        conn: sqlite3.Connection,
        seed: SeedData,
        settings: ErpSettings,
        chaos: ChaosConfig,
        clock: Clock = time.time,
    ) -> None:
        self._conn = conn
        self._seed = seed
        self._lock = threading.Lock()
        self._clock = clock
        self.settings = settings
        self.chaos = ChaosEngine(chaos)
        self.ledger = Ledger(conn)
        self.sessions = SessionStore(conn, settings, clock)
        self._renderer = Renderer()
        self._auth = AuthPages(self.sessions, self._renderer)
        self._bills = BillPages(
            self.ledger, self.sessions, self.chaos, self._renderer, settings, self._entered_at
        )
        self._about = about(settings)
        self._debug = DebugApi(self.state_unlocked, self._reset_unlocked, self.chaos)
        # (method, full-path pattern, handler, needs login); every POST is CSRF-checked
        self._routes: list[tuple[str, re.Pattern[str], Handler, bool]] = [
            ("GET", re.compile(r"/"), self._home, False),
            ("GET", re.compile(r"/login"), self._auth.login_form, False),
            ("POST", re.compile(r"/login"), self._auth.login, False),
            ("POST", re.compile(r"/logout"), self._auth.logout, True),
            ("POST", re.compile(r"/notice/dismiss"), self._auth.dismiss_notice, False),
            ("GET", re.compile(r"/vendors"), self._bills.vendors, True),
            ("GET", re.compile(r"/bills"), self._bills.bills, True),
            ("GET", re.compile(r"/bills/new"), self._bills.new_form, True),
            ("POST", re.compile(r"/bills/new"), self._bills.create, True),
            ("GET", re.compile(r"/bills/(BILL-\d+)"), self._bills.detail, True),
            ("POST", re.compile(r"/bills/(BILL-\d+)/pay"), self._bills.mark_paid, True),
        ]

    def _entered_at(self) -> str:
        """When a record is entered: the simulated business day, at the real time of day (one calendar)."""
        return f"{self.settings.today.isoformat()}T{iso_utc(self._clock()).split('T', 1)[1]}"

    # -- library API (thread-safe) ---------------------------------------------------------------

    def state(self) -> DebugState:
        with self._lock:
            return self.state_unlocked()

    def reset(self, chaos: ChaosConfig | None = None) -> None:
        with self._lock:
            self._reset_unlocked(chaos)

    def set_chaos(self, chaos: ChaosConfig) -> None:
        with self._lock:
            self.chaos.configure(chaos)

    def state_unlocked(self) -> DebugState:
        return DebugState(
            today=self.settings.today.isoformat(),
            vendors=self.ledger.vendors(),
            bills=self.ledger.bills(),
            payments=self.ledger.payments(),
            sessions=self.sessions.infos(),
            chaos=self.chaos.state(),
        )

    def _reset_unlocked(self, chaos: ChaosConfig | None) -> None:
        reseed(self._conn, self._seed)
        self.chaos.configure(chaos or self.chaos.config)

    # -- request handling ----------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        path = request.path
        if path == "/_debug" or path.startswith("/_debug/"):
            with self._lock:
                return self._debug.handle(request)
        if path.startswith("/static/"):
            return self._static(path.removeprefix("/static/"))
        if path == "/healthz":
            return text("ok\n")
        if path == ABOUT_PATH:
            return json_response(self._about)
        with self._lock:
            fault = self.chaos.on_page_request()
        if fault.delay_s:
            time.sleep(fault.delay_s)
        if fault.error_status is not None:
            return self._bills.unavailable(fault.error_status)
        with self._lock:
            return self._dispatch(request)

    def _dispatch(self, request: Request) -> Response:
        matched_path = False
        for method, pattern, handler, needs_login in self._routes:
            match = pattern.fullmatch(request.path)
            if not match:
                continue
            matched_path = True
            if method != request.method:
                continue
            visit = self._visit(request)
            if needs_login and visit.session is None:
                return self._to_login(request)
            if request.method == "POST" and not self._csrf_ok(visit):
                return self._renderer.page(
                    visit, "message.html", 403, title="Form rejected", message=CSRF_REJECTED, link=None
                )
            if visit.session is not None and request.method == "GET":
                visit.flash = self.sessions.pop_flash(visit.session.token)
            return handler(visit, *match.groups())
        visit = self._visit(request)
        if matched_path:
            return self._renderer.page(
                visit,
                "message.html",
                405,
                title="Method not allowed",
                message="Use the links and forms on the pages.",
                link=("/", "Home"),
            )
        return self._renderer.page(
            visit,
            "message.html",
            404,
            title="Page not found",
            message=f"There is no page at {request.path}.",
            link=("/", "Home"),
        )

    def _visit(self, request: Request) -> Visit:
        session = self.sessions.lookup(request.cookies.get(SESSION_COOKIE))
        anon = request.cookies.get(ANON_CSRF_COOKIE, "")
        new_anon = session is None and len(anon) < 16
        if new_anon:
            anon = secrets.token_urlsafe(24)
        return Visit(
            request=request,
            session=session,
            csrf_token=session.csrf_token if session else anon,
            new_anon_csrf=new_anon,
            show_notice=self.chaos.show_notice(request.cookies.get(NOTICE_COOKIE) == "dismissed"),
            hostile=self.chaos.config.enabled and self.chaos.config.hostile_script,
        )

    def _csrf_ok(self, visit: Visit) -> bool:
        sent = visit.request.form.get("csrf_token", "")
        if not sent:
            return False
        if visit.session is not None and secrets.compare_digest(sent, visit.session.csrf_token):
            return True
        anon = visit.request.cookies.get(ANON_CSRF_COOKIE, "")
        allowed_anonymously = visit.request.path in ("/login", "/notice/dismiss")
        return allowed_anonymously and len(anon) >= 16 and secrets.compare_digest(sent, anon)

    def _to_login(self, request: Request) -> Response:
        """Signed out (or expired): to the login page, coming back to the page the form was on."""
        back = request.path.removesuffix("/pay") if request.method == "POST" else request.path
        if request.method == "GET" and request.query:
            back = request.path + "?" + urlencode(request.query)
        if request.path == "/logout":
            back = "/bills"
        reason = "expired" if SESSION_COOKIE in request.cookies else None
        return redirect(login_url(back, reason))

    def _home(self, visit: Visit) -> Response:
        return redirect("/bills" if visit.session else "/login")

    def _static(self, name: str) -> Response:
        if name != "erp.css":
            return text("not found\n", 404)
        body = (STATIC_DIR / name).read_bytes()
        return Response(
            body=body, content_type="text/css; charset=utf-8", headers=[("Cache-Control", "max-age=3600")]
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
