"""The approvals: the worklist, one approval as a decision page, the source documents its values
cite, the filled form's screenshot, and the decisions (one, or in bulk)."""

from __future__ import annotations

import asyncio
from typing import NamedTuple
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from taskcrew.approvals.authority import ACTIONS, ApprovalView, DecisionResult
from taskcrew.approvals.origins import SourceRef, amount_currencies, priced
from taskcrew.console.documents import NotAsSealed, withheld_png
from taskcrew.console.expected import expected_after
from taskcrew.console.sessions import Session, identity_of
from taskcrew.console.web import Web
from taskcrew.console.worklist import (
    FLAG_WORDS,
    SORTS,
    field_sources,
    filter_items,
    offer_bulk,
    shown_value,
    sort_items,
    summary_text,
    work_item,
)
from taskcrew.jobs import Approval
from taskcrew.jobs.human import sealed_screenshot

RENDERS = 2  # PDF pages drawn at once (each up to documents.MAX_PIXELS); more requests wait their turn


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 7 else None


class Cited(NamedTuple):
    """A document an approval cites, as a link asked for it: every part from the approval itself."""

    view: ApprovalView
    file: str
    field: str | None  # the field whose origin it is (None: the link named the cited file)
    ref: SourceRef | None  # that field's origin (which page and line the run cited)

    @property
    def sealed(self) -> str | None:
        """The SHA-256 sealed with the approval for this file ("": not readable when it was parked;
        None: the approval was parked before cited files were sealed)."""
        sealed = self.view.approval.files_sha256
        return None if sealed is None else sealed.get(self.file, "")


def routes(web: Web) -> list[BaseRoute]:
    console, systems = web.console, web.settings.systems
    renders = asyncio.Semaphore(RENDERS)

    def unjudged(request: Request, session: Session, items: list[Approval], heading: str) -> Response:
        """``items`` shown while the risk rules cannot be read (the page's banner says why): nothing
        read by rules, not even the ones read before; a rejection is offered, approving is not."""
        views = [console.approver.unjudged(item) for item in items]
        return web.page(request, "unjudged.html", session, views=views, heading=heading, title=heading)

    @web.signed_in
    async def approvals(request: Request, session: Session) -> Response:
        if await asyncio.to_thread(console.approver.rules_unreadable):
            pending = await asyncio.to_thread(console.jobs.approvals, "pending")
            return unjudged(request, session, pending, "Approvals waiting for you")
        views = await asyncio.to_thread(console.approver.pending)
        everything = [work_item(v, console.rules, systems=systems) for v in views]
        query = request.query_params
        sort = next((s for s in SORTS if s == query.get("sort")), "age")
        descending = query.get("dir", "desc" if sort in ("age", "risk") else "asc") == "desc"
        flag = next((f for f in (*FLAG_WORDS, "none") if f == query.get("flag")), "")
        names = sorted({i.system for i in everything if i.system})
        system = next((s for s in names if s == query.get("system")), "")
        q = query.get("q", "")[:200]
        items = sort_items(filter_items(everything, flag=flag, system=system, q=q), sort, descending)
        bulk = offer_bulk(items)  # checkboxes only where two or more can be approved together
        return web.page(
            request,
            "approvals.html",
            session,
            items=items,
            bulk=bulk,
            total=len(everything),
            sort=sort,
            descending=descending,
            flag=flag,
            flags=FLAG_WORDS,
            system=system,
            systems=names,
            q=q,
            title="Approvals",
        )

    @web.signed_in
    async def approval(request: Request, session: Session) -> Response:
        try:
            item = await asyncio.to_thread(console.jobs.approval, request.path_params["id"])
        except LookupError:
            return web.not_found(
                request,
                session,
                f"There is no approval “{request.path_params['id']}” here. The link may be mistyped, "
                "or come from another console.",
            )
        if await asyncio.to_thread(console.approver.rules_unreadable):
            return unjudged(request, session, [item], f"Approval {item.id}")
        view = console.approver.view(item)
        work = work_item(view, console.rules, systems=systems)
        run, run_key = (  # the job's own run folder, not another of its name (console/artifacts.py)
            await asyncio.to_thread(lambda: console.runs.job_run(view.job, console.runs.records()))
            if view.job
            else (None, None)
        )
        shot = await asyncio.to_thread(
            sealed_screenshot, item.job_id, item.screenshot, item.screenshot_sha256, web.settings.jobs_dir
        )
        changed = await asyncio.to_thread(changed_files, view, work.sources)
        # what the Approve button would do for this person, by the authority's own rule (``decide``)
        outcome = (
            await asyncio.to_thread(console.approver.approve_outcome, view, identity_of(session))
            if item.status == "pending" and item.kind == "approval" and not view.problem
            else None
        )
        cancel = (
            await asyncio.to_thread(console.approver.standing_cancel, item.job_id)
            if item.status == "expired"
            else None
        )
        return web.page(
            request,
            "approval.html",
            session,
            view=view,
            work=work,
            summary=summary_text(view),
            expected=expected_after(item.request, work.system, web.settings.sandbox)
            if item.request and not work.creating and not view.problem
            else [],
            rules=console.rules,
            plan=run.plan if run else None,
            run_name=run_key,
            shot_ok=bool(shot),
            changed=changed,
            outcome=outcome,
            cancel=cancel,
            title=f"Approval {item.id}",
        )

    def changed_files(view: ApprovalView, sources: dict[str, SourceRef]) -> list[str]:
        """The files the approval's values cite that are no longer the ones sealed with it, by the
        source page's own rule (``Documents.seal``): shown by their links, not decided on here."""
        sealed = view.approval.files_sha256
        if sealed is None or view.problem:  # parked before the seal; or the page shows no source
            return []
        files = dict.fromkeys(ref.file for ref in sources.values() if ref.file)
        return [name for name in files if console.documents.seal(name, sealed.get(name, "")) == "changed"]

    def cited(request: Request) -> Cited | Response:
        """The approval, a file its values cite and the field whose origin it is, or a refusal. A
        link names a field (its origin in the approval says which file, page and line) or a cited
        file: what the page says, marks and checks the file against comes from the approval, never
        from the link. The origins are worked out once a request (``field_sources``)."""
        try:
            view = console.approver.view(console.jobs.approval(request.path_params["id"]))
        except LookupError:
            return PlainTextResponse("No such approval.", status_code=404)
        origins = {name: ref for name, ref in field_sources(view).items() if ref.file}
        field, name = request.query_params.get("field"), request.query_params.get("file", "")
        if field is not None and field in origins and not view.problem:
            ref = origins[field]
            return Cited(view, ref.file or "", field, ref)
        if field is None and name in {ref.file for ref in origins.values()} and not view.problem:
            return Cited(view, name, None, None)
        return PlainTextResponse("This approval cites no such document.", status_code=404)

    @web.signed_in
    async def source_document(request: Request, session: Session) -> Response:
        checked = cited(request)
        back = (f"/approvals/{quote(request.path_params['id'], safe='')}", "the approval")
        if isinstance(checked, Response):
            return web.not_found(request, session, "This approval cites no such document.", back)
        view, name, field, ref = checked
        sent = view.approval.request.fields if view.approval.request and field else []
        # looked for without a line; an amount with the currency the rules read for it (``priced``)
        currency = amount_currencies(sent, console.approver.rules).get(field or "")
        value = next((priced(shown_value(f), currency) for f in sent if f.name == field), "")
        doc = await asyncio.to_thread(
            console.documents.view,
            name,
            ref.line if ref else None,
            ref.page if ref else None,
            value,
            checked.sealed,
        )
        if isinstance(doc, str):
            return web.not_found(request, session, doc, back)
        return web.page(
            request,
            "document.html",
            session,
            doc=doc,
            approval_id=view.approval.id,
            file=name,
            field=field,
            value=value,
            cited_line=ref.line if ref else None,
            title=f"Source: {name}",
        )

    async def source_image(request: Request) -> Response:
        """A cited scan, or a page of a cited PDF, drawn from the very bytes checked against the
        approval's seal for that file: a file that is not the one sealed is not shown (409, and a
        picture saying so in its place, where the approver looks for the document)."""
        if refused := web.anonymous(request):
            return refused
        checked = cited(request)
        if isinstance(checked, Response):
            return checked
        page_no = _int(request.query_params.get("page"))
        try:
            if page_no is not None:
                async with renders:  # a large page takes a while and much memory: a few at a time
                    png = await asyncio.to_thread(
                        console.documents.pdf_page_png, checked.file, page_no, checked.sealed
                    )
                if png is None:
                    return PlainTextResponse("No such page.", status_code=404)
                return Response(png, media_type="image/png")
            image = await asyncio.to_thread(console.documents.image, checked.file, checked.sealed)
        except NotAsSealed:
            return Response(await asyncio.to_thread(withheld_png), status_code=409, media_type="image/png")
        if image is None:
            return PlainTextResponse("This document is not an image.", status_code=404)
        return Response(image[0], media_type=image[1])

    async def approval_screenshot(request: Request) -> Response:
        if refused := web.anonymous(request):
            return refused
        try:
            item = console.jobs.approval(request.path_params["id"])
        except LookupError:
            return PlainTextResponse("No such approval.", status_code=404)
        shot = await asyncio.to_thread(
            sealed_screenshot, item.job_id, item.screenshot, item.screenshot_sha256, web.settings.jobs_dir
        )
        if shot is None or console.approver.problem(item):  # an edited row or file shows nothing of it
            return PlainTextResponse("This approval has no screenshot.", status_code=404)
        return Response(shot, media_type="image/png")

    async def decide(request: Request) -> Response:
        checked = await web.checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        approval_id = request.path_params["id"]
        wanted = form.get("action")
        action = next((a for a in ACTIONS if a == wanted), None)
        if action is None:
            return web.back(
                request, f"/approvals/{approval_id}", "Choose approve, reject or answer.", "error"
            )
        text = str(form.get("text") or "")
        who = identity_of(session)
        result = await asyncio.to_thread(console.approver.decide, approval_id, action, who, text)
        kind = "error" if result.status == "refused" else "info"
        target = "/approvals" if result.status == "decided" else f"/approvals/{approval_id}"
        return web.back(request, target, result.message, kind)

    async def bulk(request: Request) -> Response:
        checked = await web.checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        ids = [str(v) for v in form.getlist("ids")]
        who = identity_of(session)
        results = await asyncio.to_thread(console.approver.bulk_approve, ids, who)
        if partial := await asyncio.to_thread(console.approver.bulk_partial, results):
            return web.back(request, "/approvals", partial, "error")  # what was approved, and what not
        refused = [r for r in results if r.status != "decided"]
        if refused:
            return web.back(request, "/approvals", refused[0].message, "error")
        return web.back(request, "/approvals", await asyncio.to_thread(bulk_message, results))

    def bulk_message(results: list[DecisionResult]) -> str:
        """What a bulk approval approved, each by id, payee and amount (as the worklist shows them)."""
        said = []
        for result in results:
            try:
                view = console.approver.view(console.jobs.approval(result.approval_id))
            except LookupError:
                said.append(result.approval_id)
                continue
            item = work_item(view, console.rules, systems=systems)
            money = f"{item.amount_text} {item.currency}".strip() if item.amount_text else "no amount"
            said.append(f"{result.approval_id} ({item.vendor or 'no payee named'}, {money})")
        return f"{len(results)} approvals approved: " + "; ".join(said) + "."

    return [
        Route("/approvals", approvals),
        Route("/approvals/bulk", bulk, methods=["POST"]),
        Route("/approvals/{id}", approval),
        Route("/approvals/{id}/screenshot", approval_screenshot),
        Route("/approvals/{id}/source", source_document),
        Route("/approvals/{id}/source/image", source_image),
        Route("/approvals/{id}/decide", decide, methods=["POST"]),
    ]
