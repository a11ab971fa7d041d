"""The console's page of learned facts: proposals from untrusted text wait here for a person.

A fact the reflector took from documents, e-mails or pages is ``proposed`` and reaches no planner
until someone accepts it (taskcrew/knowledge/facts.py). This page lists facts newest first and
lets a signed-in user accept or reject one (a CSRF-checked POST, recorded in the audit log as
``fact_accept`` / ``fact_reject`` with the console user). The store is opened lazily on first use
(TASKCREW_HOME/knowledge, or ``directory``), so the console starts without chromadb.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Page = Callable[..., Response]


class FactsDesk:
    """The knowledge store's facts, opened once on first use."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory
        self._store: Any = None
        self._lock = threading.Lock()

    def _facts(self) -> Any:
        with self._lock:
            if self._store is None:
                from taskcrew.knowledge.bootstrap import open_store

                self._store = open_store(self._directory)
            return self._store.facts

    def list(self) -> list[Any]:
        return list(reversed(self._facts().all()))

    def decide(self, fact_id: str, accept: bool, who: str, audit: Any) -> Any:
        from taskcrew.approvals.identity import Identity

        return self._facts().decide_as(fact_id, accept, Identity(name=who, proof="console"), audit)


def fact_routes(
    desk: FactsDesk,
    page: Page,
    signed_in: Callable[
        [Callable[[Request, Any], Awaitable[Response]]], Callable[[Request], Awaitable[Response]]
    ],
    checked_post: Callable[[Request], Awaitable[Any]],
    back: Callable[..., Response],
    audit: Any,
) -> list[Route]:
    """GET /facts and POST /facts/{id}/decide, built from the console's own helpers."""

    @signed_in
    async def facts_page(request: Request, session: Any) -> Response:
        facts = await asyncio.to_thread(desk.list)
        proposed = sum(1 for f in facts if f.status == "proposed")
        return page(request, "facts.html", session, facts=facts, proposed=proposed, title="Learned facts")

    async def decide(request: Request) -> Response:
        checked = await checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        action = form.get("action")
        if action not in ("accept", "reject"):
            return back(request, "/facts", "Choose accept or reject.", "error")
        fact_id = request.path_params["id"]
        fact = await asyncio.to_thread(desk.decide, fact_id, action == "accept", session.user, audit)
        if fact is None:
            return back(request, "/facts", f"No fact with id {fact_id}.", "error")
        return back(request, "/facts", f"{fact.status.capitalize()} {fact.id}.")

    return [Route("/facts", facts_page), Route("/facts/{id}/decide", decide, methods=["POST"])]
