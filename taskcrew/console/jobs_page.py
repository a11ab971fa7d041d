"""Jobs: the list with a status filter, submitting a task, one job's page with its history and its
run's timeline followed live (server-sent events), cancel and retry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any, Literal

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from taskcrew.approvals.authority import Authority
from taskcrew.console.job_words import FIRST_APPROVAL, console_note, current_reason, history_line
from taskcrew.console.sessions import Session, identity_of
from taskcrew.console.web import DbClock, Handler, Web
from taskcrew.eval.runs import TRACE
from taskcrew.jobs.liveness import sends_in_doubt, state_note
from taskcrew.jobs.models import ACTIVE, CANCELLABLE, Approval, Intent, Job, JobEvent, JobOptions, JobStatus
from taskcrew.jobs.store import InvalidChange, Jobs, UnknownJob

JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running", "waiting", "finished", "failed", "cancelled")


def sse(event: str, data: dict[str, Any]) -> str:
    body = json.dumps(data, ensure_ascii=False, default=str)  # JSON escapes newlines: one data line
    return f"event: {event}\ndata: {body}\n\n"


def notes(clock: DbClock, doubts: dict[str, Intent]) -> Callable[[Job], Markup]:
    """A page's job notes in the console's words, a decision to make a link to it (``console_note``),
    judged by the page's database clock (read once, only if a note needs it); ``doubts``: the page's
    jobs' sends in doubt (``liveness.sends_in_doubt``, read once for the page)."""
    return lambda job: console_note(job, clock(), doubts.get(job.id))


def first_approvals(approver: Authority, approvals: list[Approval]) -> list[tuple[str, JobEvent]]:
    """Each first of two approvals given on the job's approvals, as a line of its history: who and
    when, read from the record the authority decides by (``Approval.first_approvals``, signed
    ``Cosign``s), and whether it still counts by the authority's own rule (``ApprovalView.
    first_approvers``: a cancel takes it back, a password reset voids it). Keyed for the live page."""
    lines = []
    for approval in approvals:
        if not approval.first_approvals:
            continue
        counted = set(approver.view(approval).first_approvers)
        for first in approval.first_approvals:
            if first.name not in counted:
                said = (
                    "it no longer counts (a cancel took it back, or the login it was given under no "
                    "longer holds)"
                )
            elif approval.status == "pending":
                said = "a second, different person must approve before anything is sent"
            else:
                said = "the first of the two approvals it needed"
            line = JobEvent(
                job_id=approval.job_id,
                at=first.at,
                kind=FIRST_APPROVAL,
                detail=f"{approval.id}: {said}",
                actor=first.name,
            )
            lines.append((f"first {approval.id} {first.name} {first.at.isoformat()}", line))
    return lines


def history(events: list[JobEvent], firsts: list[tuple[str, JobEvent]]) -> list[tuple[str, JobEvent]]:
    """The job's history: its store's lines in their order, each first approval put in by its time
    (before the first line written after it)."""
    merged: list[tuple[str, JobEvent]] = [(f"event {i}", e) for i, e in enumerate(events)]
    for key, line in sorted(firsts, key=lambda f: f[1].at):
        at = next(
            (i for i, (k, e) in enumerate(merged) if k.startswith("event") and e.at > line.at), len(merged)
        )
        merged.insert(at, (key, line))
    return merged


def batch_children(jobs: Jobs, job: Job) -> list[Job]:
    """A batch's child jobs, as its page lists them: every one the store holds for it in any status
    (``Jobs.children``: chosen by signed data; an earlier plan's too), its current plan's
    (``fan_out.children``) in their order first. [] for a job that is no batch."""
    if job.fan_out is None:
        return []
    found = {c.id: c for c in jobs.children(job.id, statuses=JOB_STATUSES)}
    planned = [found.pop(i) for i in job.fan_out.children if i in found]
    return planned + list(found.values())


def routes(web: Web) -> list[BaseRoute]:
    console = web.console

    @web.signed_in
    async def jobs_list(request: Request, session: Session) -> Response:
        wanted = request.query_params.get("status", "")
        status = next((s for s in JOB_STATUSES if s == wanted), None)
        items = await asyncio.to_thread(console.jobs.list, status)
        folders = await asyncio.to_thread(run_folders, items)
        doubts = await asyncio.to_thread(sends_in_doubt, console.jobs, items)
        clock = DbClock(console.jobs)
        return web.page(
            request,
            "jobs.html",
            session,
            db_clock=clock,
            note_of=notes(clock, doubts),
            jobs=items,
            folders=folders,
            status=status or "",
            statuses=JOB_STATUSES,
            title="Jobs",
        )

    def run_folders(items: list[Job]) -> dict[str, str]:
        """Each finished job's run folder as its signed record holds it: "altered" (changed after the
        run ended, or another run's: ``RunRecord.altered``), "unsealed" (ended before seals) or
        absent (as sealed, or no folder to check)."""
        records = console.runs.records()
        said: dict[str, str] = {}
        for job in items:
            if job.status != "finished" or not job.run_dir or not (Path(job.run_dir) / TRACE).is_file():
                continue
            record = records.of(Path(job.run_dir))
            if record.altered:
                said[job.id] = "altered"
            elif record.unsealed:
                said[job.id] = "unsealed"
        return said

    def job_context(job: Job) -> dict[str, Any]:
        # the run in the folder this job's record names (another host's run of the same name is
        # another run), its outcome as the job store's signed records say (read once for the page)
        detail, run_key = console.runs.job_run(job, console.runs.records())
        approvals = console.jobs.approvals(job_id=job.id)
        firsts = first_approvals(console.approver, approvals)
        return {
            "job": job,
            "events": [history_line(job, line) for _, line in history(console.jobs.events(job.id), firsts)],
            "children": batch_children(console.jobs, job),
            "run": detail,
            "run_name": run_key,
            "approvals": approvals,
            "active": job.status in ACTIVE,
            "cancellable": job.status in CANCELLABLE,  # a failed job too: a cancel takes its approvals back
        }

    @web.signed_in
    async def job_page(request: Request, session: Session) -> Response:
        try:
            job = await asyncio.to_thread(console.jobs.get, request.path_params["id"])
        except UnknownJob:
            return web.not_found(
                request,
                session,
                f"There is no job “{request.path_params['id']}” here. The link may be mistyped, or come "
                "from another console.",
                ("/jobs", "the list of jobs"),
            )
        ctx = await asyncio.to_thread(job_context, job)
        doubts = await asyncio.to_thread(sends_in_doubt, console.jobs, [job, *ctx["children"]])
        clock = DbClock(console.jobs)
        return web.page(
            request,
            "job.html",
            session,
            title=f"Job {job.id}",
            db_clock=clock,
            note_of=notes(clock, doubts),
            **ctx,
        )

    async def submit(request: Request) -> Response:
        checked = await web.checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        task = str(form.get("task") or "")
        options = JobOptions(
            worker_model=str(form.get("model") or "").strip() or None,
            verifier_model=str(form.get("verifier_model") or "").strip() or None,
        )
        try:
            job = await asyncio.to_thread(
                console.jobs.submit,
                task,
                submitted_by=session.user,
                submitted_proof="console",
                options=options,
            )
        except InvalidChange as exc:
            return web.back(request, "/jobs", str(exc), "error")
        console.audit.append(session.user, "submit", job.id, {"task": job.task, **options.model_dump()})
        return web.back(request, f"/jobs/{job.id}", f"Job {job.id} submitted; a worker will pick it up.")

    def job_action(name: str) -> Handler:
        async def handler(request: Request) -> Response:
            checked = await web.checked_post(request)
            if isinstance(checked, Response):
                return checked
            session, _ = checked
            job_id = request.path_params["id"]
            action: Literal["cancel", "retry"] = "cancel" if name == "cancel" else "retry"
            try:
                await asyncio.to_thread(console.approver.act_on_job, job_id, action, identity_of(session))
            except (InvalidChange, UnknownJob) as exc:
                return web.back(request, f"/jobs/{job_id}", str(exc), "error")
            done = "cancelled" if name == "cancel" else "queued again"
            return web.back(request, f"/jobs/{job_id}", f"Job {job_id} {done}.")

        return handler

    async def job_live(request: Request) -> Response:
        if refused := web.anonymous(request):
            return refused
        job_id = request.path_params["id"]
        try:
            console.jobs.get(job_id)
        except UnknownJob:
            return PlainTextResponse("No such job.", status_code=404)

        # one part a poll, sent only while the session counts (``Web.live``)
        async def rounds() -> AsyncGenerator[str, None]:
            sent_events: set[str] = set()  # the history's lines sent (``history``'s keys)
            sent_timeline = 0
            firsts: list[tuple[str, JobEvent]] = []
            # the state the page was drawn in (``seen``): its note, with its links, stands until it changes
            last_status = request.query_params.get("seen", "")
            while True:
                if await request.is_disconnected():
                    return
                parts: list[str] = []
                job = await asyncio.to_thread(console.jobs.get, job_id)
                events = await asyncio.to_thread(console.jobs.events, job_id)
                if job.status == "waiting" or not sent_events:  # first approvals: given while it waits
                    firsts = await asyncio.to_thread(
                        lambda: first_approvals(console.approver, console.jobs.approvals(job_id=job_id))
                    )
                timeline: list[Any] = []
                if job.run_dir:  # its own run folder, judged by its own record (no store read a poll)
                    detail, _ = await asyncio.to_thread(console.runs.job_run, job)
                    timeline = detail.story if detail else []
                for key, e in history(events, firsts):
                    if key in sent_events:
                        continue
                    sent_events.add(key)
                    parts.append(sse("event", {**history_line(job, e), "actor": e.actor}))
                for item in timeline[sent_timeline:]:
                    parts.append(sse("timeline", item.model_dump(mode="json")))
                sent_timeline = len(timeline)
                status = f"{job.status} {job.outcome or ''}".strip()
                if status != last_status:
                    now = await asyncio.to_thread(console.jobs.db_now)
                    doubts = await asyncio.to_thread(sends_in_doubt, console.jobs, [job])
                    note = state_note(job, now, "console", doubts.get(job.id))
                    parts.append(
                        sse(
                            "status",
                            {
                                "status": job.status,
                                "outcome": job.outcome,
                                "reason": current_reason(job),
                                "note": note,  # as the page's note says it (job_note), for the state now
                                "unsigned": job.record_trust != "signed",
                            },
                        )
                    )
                    last_status = status
                if job.status not in ACTIVE:
                    yield "".join([*parts, sse("done", {"status": job.status})])
                    return
                yield "".join(parts)
                await asyncio.sleep(0.5)

        return web.live(request, rounds())

    return [
        Route("/jobs", jobs_list, methods=["GET"]),
        Route("/jobs", submit, methods=["POST"]),
        Route("/jobs/{id}", job_page),
        Route("/jobs/{id}/live", job_live),
        Route("/jobs/{id}/cancel", job_action("cancel"), methods=["POST"]),
        Route("/jobs/{id}/retry", job_action("retry"), methods=["POST"]),
    ]
