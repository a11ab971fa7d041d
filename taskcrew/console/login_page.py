"""Sign in (a user from the users file, or the start-up token), sign out, and the home redirect."""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from taskcrew.approvals.identity import NO_USERS, credential_of, startup_credential
from taskcrew.console.auth import ConsoleUserError, load_users
from taskcrew.console.security import same_origin, token_ok
from taskcrew.console.web import LOGIN_COOKIE, SESSION_COOKIE, Web, unproven


def routes(web: Web) -> list[BaseRoute]:
    console, settings = web.console, web.settings

    def form_page(
        request: Request, nxt: str, status_code: int = 200, error: str = "", max_age: int | None = 3600
    ) -> Response:
        token = secrets.token_urlsafe(24)
        response = web.page(
            request,
            "login.html",
            None,
            status_code=status_code,
            login_csrf=token,
            next=nxt,
            token_mode=not console.auth.users,
            error=error,
        )
        response.set_cookie(
            LOGIN_COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=settings.cookie_secure,
            max_age=max_age,
        )
        return response

    async def login_form(request: Request) -> Response:
        return form_page(request, request.query_params.get("next", "/"))

    async def login(request: Request) -> Response:
        form = await request.form()
        nxt = str(form.get("next") or "/")
        if not nxt.startswith("/") or nxt.startswith("//") or urlsplit(nxt).netloc:
            nxt = "/"
        if not same_origin(request) or not token_ok(form.get("csrf"), request.cookies.get(LOGIN_COOKIE)):
            return PlainTextResponse(
                "Refused: the login form did not come from the console. Reload it.", status_code=403
            )
        # a name longer than any user's is nobody's: kept cut (``web.unproven``), in the counts and the log
        name = unproven(str(form.get("username") or "").strip())
        # the connection's own address: uvicorn reads no X-Forwarded-For (``server.ConsoleServer``),
        # so no client names the address its failures are counted under
        address = request.client.host if request.client else ""
        console.sign_ins.ended()  # the refusals counted in holds that have ended, written first
        if wait := console.throttle.wait(name, address):
            console.sign_ins.refused(name, address)  # one entry a hold, not one an attempt
            minutes = max(1, round(wait / 60))
            error = f"Too many failed sign-ins: try again in {minutes} minute{'s' if minutes > 1 else ''}."
            response = form_page(request, nxt, status_code=429, error=error, max_age=None)
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
        try:  # the users file as it is now (read once): a reset or a removal since the console started
            console.auth.users = {u.name: u for u in load_users(settings.users_file)}
        except ConsoleUserError:
            user = None
        else:
            user = console.auth.check(name, str(form.get("password") or ""))
            if console.auth.users:  # the start-up token's sessions end once there are users
                console.sessions.drop_startup()
        if user is None:
            console.throttle.failed(name, address)
            console.sign_ins.failed(name)
            if console.auth.users:
                error = "Wrong name or password."
            elif console.auth.token is None:  # started with users, all removed since: nobody logs in
                error = f"Nobody can sign in: {NO_USERS} (or restart the console for a one-time token)."
            else:
                error = "Wrong token."
            return form_page(request, nxt, status_code=401, error=error, max_age=None)
        console.throttle.succeeded(name, address)
        found = console.auth.users.get(user)  # None: the start-up token, which proves no user's password
        # a start-up session is bound to the token that opened it (``identity.startup_credential``)
        proven = credential_of(found.password_hash) if found else startup_credential(console.auth.token)
        session_id, _ = console.sessions.create(user, credential=proven)
        console.audit.append(user, "login", "/login", {})
        response = RedirectResponse(nxt, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            session_id,
            httponly=True,
            samesite="strict",
            secure=settings.cookie_secure,
            max_age=int(settings.session_hours * 3600),
        )
        response.delete_cookie(LOGIN_COOKIE)
        return response

    async def logout(request: Request) -> Response:
        checked = await web.checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, _ = checked
        console.sessions.delete(request.cookies.get(SESSION_COOKIE))
        console.audit.append(session.user, "logout", "/logout", {})
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def home(request: Request) -> Response:
        return RedirectResponse("/approvals", status_code=303)

    return [
        Route("/", home),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
