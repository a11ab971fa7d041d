"""The console's page of learned facts: proposals from untrusted text wait here for a person.

A fact the reflector took from documents, e-mails or pages is ``proposed`` and reaches no planner
until someone accepts it (taskcrew/knowledge/facts.py). This page lists facts newest first, with
why a fact is not (or no longer) accepted, rows of unknown origin without their claimed origin, and
damaged rows apart; a signed-in user accepts or rejects a fact (a CSRF-checked POST carrying the
digest of the words the page showed: a fact whose words changed since is not decided), as her
session's proven identity, recorded by the fact store in the signed audit log (``fact_accept`` /
``fact_reject``). The store is opened lazily on first use (TASKCREW_HOME/knowledge, or
``directory``), so the console starts without chromadb.
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

from taskcrew.approvals.identity import Identity
from taskcrew.console.sessions import identity_of

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

    def rows(self) -> Any:
        """Every row as the store reads it: ``FactRows`` (facts oldest first, damaged rows)."""
        return self._facts().rows()

    def decide(self, fact_id: str, accept: bool, who: Identity, words: str | None) -> Any:
        return self._facts().decide(fact_id, accept, who, words)


def fact_routes(
    desk: FactsDesk,
    page: Page,
    signed_in: Callable[
        [Callable[[Request, Any], Awaitable[Response]]], Callable[[Request], Awaitable[Response]]
    ],
    checked_post: Callable[[Request], Awaitable[Any]],
    back: Callable[..., Response],
) -> list[Route]:
    """GET /facts and POST /facts/{id}/decide, built from the console's own helpers (fact decisions
    are recorded by the fact store in the log beside the key it seals with, the approvals folder
    every process reads them from)."""
    from taskcrew.knowledge.facts import words_of

    @signed_in
    async def facts_page(request: Request, session: Any) -> Response:
        rows = await asyncio.to_thread(desk.rows)
        facts = list(reversed(rows.facts))
        proposed = sum(1 for f in facts if f.status == "proposed")
        return page(
            request,
            "facts.html",
            session,
            facts=facts,
            damaged=rows.damaged,
            words={f.id: words_of(f.text) for f in facts},
            proposed=proposed,
            title="Learned facts",
        )

    async def decide(request: Request) -> Response:
        checked = await checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        action = form.get("action")
        if action not in ("accept", "reject"):
            return back(request, "/facts", "Choose accept or reject.", "error")
        fact_id = request.path_params["id"]
        words = str(form.get("words") or "") or None
        try:
            fact = await asyncio.to_thread(
                desk.decide, fact_id, action == "accept", identity_of(session), words
            )
        except ValueError as exc:  # FactRefused: changed words, a damaged row, a person who may not
            return back(request, "/facts", str(exc), "error")
        if fact is None:
            return back(request, "/facts", f"No fact with id {fact_id}.", "error")
        return back(request, "/facts", f"{fact.status.capitalize()} {fact.id}.")

    return [Route("/facts", facts_page), Route("/facts/{id}/decide", decide, methods=["POST"])]
