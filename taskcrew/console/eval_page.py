"""Eval results (every sweep's results.json, by folder and time; one sweep with its charts) and
the audit log (newest first, by kind and a page at a time, with the hash chain's state)."""

from __future__ import annotations

import asyncio
import re
from bisect import bisect_left
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
        # every line as written, each with whether it is an entry of the signed chain: a line that
        # is not (copied, forged, edited) is shown where it stands, marked, never as an entry
        rows = await asyncio.to_thread(console.audit.checked)
        problems = await asyncio.to_thread(console.audit.verify)
        show = request.query_params.get("show", "")
        show = show if show in AUDIT_KINDS else "decisions"
        kept = [
            (place, entry, in_chain)
            for place, (entry, in_chain) in enumerate(rows, 1)
            if show == "all" or (entry.action in SIGN_INS) == (show == "sign-ins")
        ]
        # pages by a line's place in the log (rising), not by its number: a copied or forged line
        # may carry any number, and no page may skip or repeat an entry for it
        places = [place for place, _, _ in kept]
        before = request.query_params.get("before", "")  # a page: the lines older than this one
        end = bisect_left(places, int(before)) if re.fullmatch(r"[0-9]{1,18}", before) else len(kept)
        start, newer = max(0, end - AUDIT_PAGE), end + AUDIT_PAGE
        return web.page(
            request,
            "audit.html",
            session,
            entries=[(_shown(e), in_chain) for _, e, in_chain in reversed(kept[start:end])],
            problems=problems,
            checked=len(rows),
            show=show,
            kinds=AUDIT_KINDS,
            total=len(kept),
            sign_ins=sum(e.action in SIGN_INS for e, _ in rows),
            older=places[start] if start else None,  # the links to the pages beside it (0: the newest)
            newer=None if end == len(kept) else places[newer] if newer < len(kept) else 0,
            title="Audit log",
        )

    return [
        Route("/eval", eval_index),
        Route("/eval/{key}", eval_page),
        Route("/audit", audit_page),
    ]


SIGN_INS = frozenset({"login", "login_failed", "login_refused", "logout"})  # the rest: decisions and actions
AUDIT_KINDS = {"decisions": "Decisions and actions", "sign-ins": "Sign-ins", "all": "Everything"}
AUDIT_PAGE = 500  # entries a page


def _shown(entry: AuditEntry) -> AuditEntry:
    """An entry as the page shows it: a password's fingerprint (``credential``, kept so a
    reset voids what the old login did) is no one's to read, so it is not shown."""
    if "credential" not in entry.payload:
        return entry
    payload = {**entry.payload, "credential": "(kept, not shown)"}
    return entry.model_copy(update={"payload": payload})
