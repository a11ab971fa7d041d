"""Runs: every run folder (outcome, task, cost) with filters, one run's page (plan, evidence, what
happened in words, the raw trace, screenshots, the report) and its screenshots."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from taskcrew.console.job_words import note_html
from taskcrew.console.sessions import Session
from taskcrew.console.web import Web, markdown
from taskcrew.crew.evidence import standing_words


def routes(web: Web) -> list[BaseRoute]:
    console = web.console

    @web.signed_in
    async def runs_list(request: Request, session: Session) -> Response:
        # the job store read once for the page: each run's outcome, and what one without an end is now
        runs = await asyncio.to_thread(console.runs.list)
        status = request.query_params.get("status", "")
        q = request.query_params.get("q", "").strip().lower()
        statuses = sorted({r.status for r in runs})
        if status:
            runs = [r for r in runs if r.status == status]
        if q:
            runs = [r for r in runs if q in r.task.lower() or q in r.name.lower()]
        return web.page(
            request,
            "runs.html",
            session,
            runs=runs,
            status=status,
            q=q,
            statuses=statuses,
            linked=note_html,  # a parked run's "open it in Approvals" a link
            title="Runs",
        )

    @web.signed_in
    async def run_page(request: Request, session: Session) -> Response:
        name = request.path_params["name"]
        detail = await asyncio.to_thread(console.runs.detail, name)
        if detail is None:
            return web.not_found(
                request,
                session,
                f"There is no run “{name}” here: no run by that name has a trace to show. The link may be "
                "mistyped, or come from another console; where two runs share a name, the list of runs "
                "has a link to each.",
                ("/runs", "the list of runs"),
            )
        report_html = markdown(detail.report_md) if detail.report_md else None
        return web.page(
            request,
            "run.html",
            session,
            run=detail,
            report_html=report_html,
            standing=standing_words,  # a check's standing in words, as the report says it
            linked=note_html,  # "open it in Approvals" a link (a parked run)
            title=f"Run {detail.summary.name}",
        )

    async def run_file(request: Request) -> Response:
        if refused := web.anonymous(request):
            return refused
        path = console.runs.screenshot(request.path_params["name"], request.path_params["path"])
        if path is None:
            return PlainTextResponse("No such screenshot in this run.", status_code=404)
        return FileResponse(path, media_type="image/png")

    return [
        Route("/runs", runs_list),
        Route("/runs/{name}", run_page),
        Route("/runs/{name}/files/{path:path}", run_file),
    ]
