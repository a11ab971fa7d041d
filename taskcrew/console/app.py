"""The console's app (Starlette). Thin: each page's module (``*_page.py``) builds its routes from
the shared request helpers (``web.Web``: the session, CSRF on POST, the message after an action),
calls a plain module (the approvals authority, artifacts, the job store) and renders a template.

A new page is one module with ``routes(web) -> list[BaseRoute]``, added to ``PAGES``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from taskcrew.approvals.audit import AuditLogError
from taskcrew.approvals.authority import unreadable_said
from taskcrew.approvals.rules import RiskRulesError
from taskcrew.console import approvals_page, eval_page, jobs_page, login_page, runs_page
from taskcrew.console.facts_page import FactsDesk, fact_routes
from taskcrew.console.routines_page import RoutinesDesk, routine_routes
from taskcrew.console.security import SecurityHeaders, allowed_hosts
from taskcrew.console.settings import ConsoleSettings
from taskcrew.console.web import HERE, WORKLIST, Console, Web
from taskcrew.jobs.store import Jobs

__all__ = ["PAGES", "Console", "build_app"]


def _facts(web: Web) -> list[BaseRoute]:
    desk = FactsDesk(web.settings.knowledge_dir)
    return list(fact_routes(desk, web.page, web.signed_in, web.checked_post, web.back))


def _routines(web: Web) -> list[BaseRoute]:
    desk = RoutinesDesk(web.settings.routines_dir, web.settings.approvals_dir)  # the console's key
    return list(routine_routes(desk, web.page, web.signed_in, web.not_found))


# Every page of the console, in the order their routes are matched.
PAGES: list[Callable[[Web], list[BaseRoute]]] = [
    login_page.routes,
    approvals_page.routes,
    jobs_page.routes,
    runs_page.routes,
    eval_page.routes,
    _facts,
    _routines,
]


def build_app(settings: ConsoleSettings, jobs: Jobs | None = None) -> ASGIApp:
    console = Console(settings, jobs)
    web = Web(console)
    routes: list[BaseRoute] = [route for page in PAGES for route in page(web)]
    routes.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        console.close()

    async def audit_broken(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=503)

    async def rules_broken(request: Request, exc: Exception) -> Response:  # read again as they change
        """A page that needs the risk rules while they cannot be read: why, what to do, and the way to
        the approvals, which are still listed and can be rejected (``approvals_page.unjudged``)."""
        session = web.session_of(request)
        if session is None:  # who has proven nothing is told nothing of the file
            return PlainTextResponse("The console cannot show this now. Log in first.", status_code=503)
        said = unreadable_said(exc) if isinstance(exc, RiskRulesError) else str(exc)
        return web.page(
            request,
            "error.html",
            session,
            status_code=503,
            title="This page needs the risk rules",
            message=f"This page is not shown while the risk rules cannot be read. {said}",
            links=[WORKLIST],
            rules_unreadable=None,  # said once, in the message
        )

    async def no_such_page(request: Request, exc: Exception) -> Response:
        return web.not_found(  # a mistyped or outdated address: the way back, not a bare "Not Found"
            request,
            web.session_of(request),
            "There is no such page in the console: the link may be mistyped.",
        )

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={AuditLogError: audit_broken, RiskRulesError: rules_broken, 404: no_such_page},
    )
    app.state.console = console
    if settings.port == 0:  # no port known yet (tests of the app alone): no Host check possible
        return SecurityHeaders(app)
    hosts = allowed_hosts(settings.host, settings.port, settings.public_hosts)
    return SecurityHeaders(app, hosts, settings.host)
