"""The console's page of routines: what each learned routine will do, for the person who reviews it.

``GET /routines`` lists every version (status, clean replays and fallbacks, FLAGGED when it keeps
falling back — the workers' counts, which nothing signs, and the page says so — the run it came
from); ``GET /routines/{name}/{version}`` shows one step by step (the same lines as ``taskcrew
routines show``, with its fingerprint) and its diff against the version that replays now, else the
one before it (``RoutineStore.diff_base``; never the version the draft says it heals). The page only
reads: accepting or retiring a version stays with ``taskcrew routines accept|retire`` (one approval
path, with the CLI's own record of who reviewed it); the command it shows carries the fingerprint of
the version the page showed, so the CLI accepts exactly that one. The routines folder is the CLI's
(``TASKCREW_ROUTINES`` or ``TASKCREW_HOME/routines``) unless the console's settings name one
(``routines_dir``: the demo's worker's), read on every request. Who wrote a version and
who reviewed it are shown only as far as they are signed (``RoutineStore.authorship``,
``review_problem``): a reviewer or author a file merely names reads "not proven".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Page = Callable[..., Response]


@dataclass
class Shown:
    """One routine version as the page shows it."""

    routine: Any
    steps: list[str]
    compared_with: int | None
    compared_why: str  # what that version is: the one that replays now, or the one before
    diff: list[str]
    unsealed: str | None  # why a version marked accepted does not replay (None: it checks out)
    fingerprint: str
    author: str | None = None  # who wrote it, as signed (None: not proven)
    reviewer_unproven: str | None = None  # why the reviewer its file names is not proven (None: it is)
    not_by: list[str] | None = None  # who may not accept it under the two-person rule (its author, submitter)
    nobody: str | None = None  # why nobody may accept this draft here (``author_refusal``, asked for no one)


@dataclass
class Row:
    """What the list shows of one version beyond its file: who wrote it and whether its reviewer is
    proven, each only as far as it is signed."""

    author: str | None
    reviewer_unproven: bool


class RoutinesDesk:
    """The routines folder, opened on each request (the CLI may change it at any time); who wrote
    and reviewed a version is checked with the key in ``approvals`` (None: the CLI's)."""

    def __init__(self, folder: Path | None = None, approvals: Path | None = None) -> None:
        self._folder = folder
        self._approvals = approvals

    def _store(self) -> Any:
        from taskcrew.approvals.signing import KEY_FILE, KeyRing
        from taskcrew.routines.store import RoutineStore

        keys = KeyRing(self._approvals / KEY_FILE) if self._approvals is not None else None
        return RoutineStore(self._folder, keys)

    def list(self) -> tuple[list[Any], list[str], set[tuple[str, int]], dict[tuple[str, int], Row]]:
        """Every version, the problems to show, the versions marked accepted that do not replay, and
        who wrote and reviewed each, as far as it is signed."""
        store = self._store()
        routines, problems = store.all()
        unsealed = {(r.name, r.version): p for r in routines if (p := store.acceptance_problem(r))}
        rows = {(r.name, r.version): _row(store, r) for r in routines}
        return list(routines), [*problems, *unsealed.values()], set(unsealed), rows

    def show(self, name: str, version: int) -> Shown | None:
        from taskcrew.routines.distil import describe_routine
        from taskcrew.routines.store import RoutineError, diff, fingerprint

        store = self._store()
        try:
            routine = store.get(name, version)
        except RoutineError:
            return None
        old, why = store.diff_base(routine)
        lines = diff(old, routine).splitlines() if old is not None else []
        described = describe_routine(routine)  # its head (status, counts) is the page's own header
        work = next((i for i, line in enumerate(described) if line.startswith("parameters:")), 0)
        shown = fingerprint(routine)
        steps = [*described[work:], f"fingerprint: {shown} (routines accept --fingerprint)"]
        problem = store.acceptance_problem(routine)
        written = _written(store, routine)
        not_by = [] if written is None else [n for n in (written.person, written.submitter) if n]
        nobody = _nobody(store, routine, written) if routine.status == "draft" else None
        return Shown(
            routine,
            steps,
            old.version if old else None,
            why,
            lines,
            problem,
            shown,
            author=written.describe() if written is not None else None,
            reviewer_unproven=_unproven(store, routine),
            not_by=list(dict.fromkeys(not_by)),
            nobody=nobody,
        )


def _written(store: Any, routine: Any) -> Any:
    """Who wrote ``routine``, as signed (None: not proven, or the key cannot check it)."""
    from taskcrew.approvals.signing import KeyError_

    try:
        return store.authorship(routine)
    except KeyError_:
        return None


def _nobody(store: Any, routine: Any, written: Any) -> str | None:
    """Why nobody may accept ``routine`` here: the CLI's own rule (``author_refusal``), asked for a
    name nobody has, refuses only what it refuses everyone (an unproven author or submitter)."""
    from taskcrew.approvals.signing import KeyError_

    try:
        return str(store.author_refusal(routine, "", written) or "") or None
    except KeyError_ as exc:
        return str(exc)


def _unproven(store: Any, routine: Any) -> str | None:
    from taskcrew.approvals.signing import KeyError_

    try:
        return store.review_problem(routine)
    except KeyError_ as exc:
        return str(exc)


def _row(store: Any, routine: Any) -> Row:
    written = _written(store, routine)
    return Row(written.describe() if written is not None else None, _unproven(store, routine) is not None)


def routine_routes(
    desk: RoutinesDesk,
    page: Page,
    signed_in: Callable[
        [Callable[[Request, Any], Awaitable[Response]]], Callable[[Request], Awaitable[Response]]
    ],
    not_found: Callable[..., Response],
) -> list[Route]:
    """GET /routines and GET /routines/{name}/{version}, built from the console's own helpers."""

    @signed_in
    async def routines_page(request: Request, session: Any) -> Response:
        routines, problems, unsealed, rows = await asyncio.to_thread(desk.list)
        flagged = sum(1 for r in routines if r.flagged)
        return page(
            request,
            "routines.html",
            session,
            routines=routines,
            problems=problems,
            unsealed=unsealed,
            rows=rows,
            flagged=flagged,
            title="Routines",
        )

    @signed_in
    async def routine_page(request: Request, session: Any) -> Response:
        name = request.path_params["name"]
        try:
            version = int(request.path_params["version"])
        except ValueError:
            return not_found(
                request,
                session,
                "A routine's version is a number, as in /routines/enter-invoice/2.",
                ("/routines", "the list of routines"),
            )
        shown = await asyncio.to_thread(desk.show, name, version)
        if shown is None:
            return not_found(
                request,
                session,
                f"No routine {name} v{version} is kept here (no such routine, or no such version of it).",
                ("/routines", "the list of routines"),
            )
        return page(
            request,
            "routine.html",
            session,
            shown=shown,
            routine=shown.routine,
            title=f"Routine {name} v{version}",
        )

    return [Route("/routines", routines_page), Route("/routines/{name}/{version}", routine_page)]
