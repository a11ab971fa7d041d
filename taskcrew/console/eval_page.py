"""Eval results (every sweep's results.json, by folder and time; one sweep with its charts) and
the audit log (every action, newest first, with the hash chain's state)."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from taskcrew.approvals.audit import AuditEntry
from taskcrew.console.charts import sweep_charts
from taskcrew.console.sessions import Session
from taskcrew.console.web import Web


def routes(web: Web) -> list[BaseRoute]:
    console = web.console

    @web.signed_in
    async def eval_index(request: Request, session: Session) -> Response:
        files = await asyncio.to_thread(console.evals.listing)
        if len(files) == 1:
            return RedirectResponse(f"/eval/{quote(files[0].key, safe='')}", status_code=303)
        return web.page(request, "eval_index.html", session, files=files, title="Eval results")

    @web.signed_in
    async def eval_page(request: Request, session: Session) -> Response:
        key = request.path_params["key"]
        report = await asyncio.to_thread(console.evals.load, key)
        if isinstance(report, str):
            return web.not_found(request, session, report, ("/eval", "the eval results"))
        charts, scatter = sweep_charts(report)
        return web.page(
            request,
            "eval.html",
            session,
            key=key,
            report=report,
            charts=charts,
            scatter=scatter,
            title="Eval",
        )

    @web.signed_in
    async def audit_page(request: Request, session: Session) -> Response:
        entries = await asyncio.to_thread(console.audit.entries)
        problems = await asyncio.to_thread(console.audit.verify)
        return web.page(
            request,
            "audit.html",
            session,
            entries=[_shown(e) for e in reversed(entries[-500:])],
            problems=problems,
            title="Audit log",
        )

    return [
        Route("/eval", eval_index),
        Route("/eval/{key}", eval_page),
        Route("/audit", audit_page),
    ]


def _shown(entry: AuditEntry) -> AuditEntry:
    """An entry as the page shows it: a password's fingerprint (``credential``, kept so a
    reset voids what the old login did) is no one's to read, so it is not shown."""
    if "credential" not in entry.payload:
        return entry
    payload = {**entry.payload, "credential": "(kept, not shown)"}
    return entry.model_copy(update={"payload": payload})
