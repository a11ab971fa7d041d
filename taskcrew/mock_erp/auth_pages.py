"""Login, logout and the notice overlay's dismissal."""

from __future__ import annotations

from taskcrew.mock_erp.render import Renderer, Visit
from taskcrew.mock_erp.sessions import SessionStore
from taskcrew.mock_erp.web import Response, local_path, redirect

SESSION_COOKIE = "acme_session"
NOTICE_COOKIE = "acme_notice"
NOTICE_MAX_AGE = 365 * 24 * 3600

SESSION_EXPIRED = "Your session has expired, please log in again."
LOGGED_OUT = "You have been logged out."
BAD_CREDENTIALS = "Invalid username or password."
MISSING_CREDENTIALS = "Enter your username and password."
LOGIN_NOTICES = {"expired": SESSION_EXPIRED, "logged_out": LOGGED_OUT}


class AuthPages:
    def __init__(self, sessions: SessionStore, renderer: Renderer) -> None:
        self._sessions = sessions
        self._renderer = renderer

    def login_form(self, visit: Visit) -> Response:
        query = visit.request.query
        next_path = local_path(query.get("next"))
        if visit.session:
            return redirect(next_path)
        notice = LOGIN_NOTICES.get(query.get("reason", ""))
        return self._form(visit, next_path, username="", notice=notice, error=None, status=200)

    def login(self, visit: Visit) -> Response:
        form = visit.request.form
        next_path = local_path(form.get("next"))
        username = form.get("username", "").strip()
        password = form.get("password", "")
        if not username or not password:
            return self._form(visit, next_path, username, notice=None, error=MISSING_CREDENTIALS, status=422)
        if not self._sessions.credentials_ok(username, password):
            return self._form(visit, next_path, username, notice=None, error=BAD_CREDENTIALS, status=401)
        session = self._sessions.start(username)
        response = redirect(next_path)
        response.set_cookie(SESSION_COOKIE, session.token)
        return response

    def logout(self, visit: Visit) -> Response:
        if visit.session:
            self._sessions.end(visit.session.token, "logged_out")
        response = redirect("/login?reason=logged_out")
        response.delete_cookie(SESSION_COOKIE)
        return response

    def dismiss_notice(self, visit: Visit) -> Response:
        response = redirect(local_path(visit.request.form.get("next"), default="/"))
        response.set_cookie(NOTICE_COOKIE, "dismissed", max_age=NOTICE_MAX_AGE)
        return response

    def _form(
        self, visit: Visit, next_path: str, username: str, notice: str | None, error: str | None, status: int
    ) -> Response:
        return self._renderer.page(
            visit,
            "login.html",
            status,
            title="Log in",
            next_path=next_path,
            username=username,
            notice=notice,
            error=error,
        )
