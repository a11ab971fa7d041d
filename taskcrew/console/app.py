"""The console's routes (Starlette). Thin: each handler checks the session (and CSRF on POST),
calls a plain module (the approvals authority, artifacts, the job store) and renders a template."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
from markdown_it import MarkdownIt
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp

from taskcrew.approvals.audit import AuditLogError
from taskcrew.approvals.authority import ACTIONS, Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import load_rules
from taskcrew.console.artifacts import EvalResults, RunsDir
from taskcrew.console.auth import Authenticator, load_users
from taskcrew.console.charts import sweep_charts
from taskcrew.console.documents import Documents
from taskcrew.console.facts_page import FactsDesk, fact_routes
from taskcrew.console.routines_page import RoutinesDesk, routine_routes
from taskcrew.console.security import SecurityHeaders, allowed_hosts, same_origin, token_ok
from taskcrew.console.sessions import Session, SessionStore
from taskcrew.console.settings import ConsoleSettings
from taskcrew.console.worklist import (
    FLAG_WORDS,
    SORTS,
    field_sources,
    filter_items,
    shown_value,
    sort_items,
    summary_text,
    work_item,
)
from taskcrew.jobs.models import ACTIVE, Job, JobOptions, JobStatus
from taskcrew.jobs.store import InvalidChange, Jobs, JobStoreError, UnknownJob

HERE = Path(__file__).parent
SESSION_COOKIE = "taskcrew_console"
LOGIN_COOKIE = "taskcrew_console_login"
JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running", "waiting", "finished", "failed", "cancelled")


class Console:
    """Everything the handlers share; built once per app from the settings."""

    def __init__(self, settings: ConsoleSettings, jobs: Jobs | None = None) -> None:
        self.settings = settings
        state = settings.state_dir
        state.mkdir(parents=True, exist_ok=True)
        self.auth = Authenticator(load_users(settings.users_file), token=settings.token)
        if not self.auth.users and settings.token is None:
            raise ValueError(
                f"No console users in {settings.users_file} and no token: add one with "
                "`taskcrew console add-user NAME`, or start without users to get a login token."
            )
        try:
            self.sessions = SessionStore(state / "console.sqlite3", ttl_seconds=settings.session_hours * 3600)
        except (sqlite3.DatabaseError, RuntimeError) as exc:
            raise ValueError(
                f"The console's database {state / 'console.sqlite3'} cannot be used ({exc}); move it aside: "
                "everyone logs in again and pending first approvals must be given again."
            ) from exc
        self.rules = load_rules(settings.risk_rules)
        self._owns_jobs = jobs is None
        self.jobs = jobs if jobs is not None else Jobs.open(settings.jobs_url)
        # the console is a thin client of the approvals authority (rules, identities, signatures, audit)
        self.approver = Authority(self.jobs, self.rules, users_file=settings.users_file)
        self.audit = self.approver.audit
        self.runs = RunsDir(settings.runs_dirs, extra=self._job_run_dirs)
        self.evals = EvalResults(settings.eval_dirs)
        self.documents = Documents(settings.sandbox)

    def _job_run_dirs(self) -> list[Path]:
        try:
            return [Path(j.run_dir) for j in self.jobs.list(limit=500) if j.run_dir]
        except JobStoreError:
            return []

    def close(self) -> None:
        self.sessions.close()
        if self._owns_jobs:
            self.jobs.close()


_md = MarkdownIt("js-default")  # raw HTML off, unsafe link schemes refused


def _markdown(text: str) -> str:
    """report.md as HTML inside a page: its headings one level down (the page has its own h1),
    its table headers marked as column headers."""
    html = _md.render(text)
    for level in range(5, 0, -1):
        html = html.replace(f"<h{level}>", f"<h{level + 1}>").replace(f"</h{level}>", f"</h{level + 1}>")
    return re.sub(r"<th(?=[ >])", '<th scope="col"', html)


def annotate_runs(runs: list[Any], find: Any, jobs: Any) -> list[Any]:
    from taskcrew.jobs.liveness import annotate_runs as annotate

    return annotate(runs, find, jobs)


def _job_note(job: Any) -> str:
    from taskcrew.jobs.liveness import state_note

    return state_note(job)


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = lambda v: "" if v is None else str(v)[:19].replace("T", " ")
    env.filters["money"] = lambda v: "—" if v is None else f"${float(v):.4f}"
    env.filters["urlpart"] = lambda v: quote(str(v), safe="")
    env.filters["shown"] = shown_value
    env.filters["job_note"] = _job_note  # orphaned, parked, interrupted: what to do (jobs.liveness)
    return Jinja2Templates(env=env)


def build_app(settings: ConsoleSettings, jobs: Jobs | None = None) -> ASGIApp:
    console = Console(settings, jobs)
    templates = _templates()

    # ---- helpers --------------------------------------------------------------------------------
    def session_of(request: Request) -> Session | None:
        return console.sessions.get(request.cookies.get(SESSION_COOKIE))

    def page(
        request: Request, name: str, session: Session | None, status_code: int = 200, **ctx: Any
    ) -> Response:
        # The message after an action is kept with the session on the server (never in a cookie or
        # the URL, where another page on this host or a crafted link could put words in our mouth).
        flash, kind = (
            console.sessions.take_flash(request.cookies.get(SESSION_COOKIE)) if session else ("", "info")
        )
        ctx.setdefault("flash", flash)
        ctx.setdefault("flash_kind", kind)
        ctx.setdefault("title", "Sign in")
        return templates.TemplateResponse(
            request, name, {"session": session, "nav": name.split(".")[0], **ctx}, status_code=status_code
        )

    def to_login(request: Request) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    def signed_in(
        handler: Callable[[Request, Session], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """A page for signed-in people: anyone else goes to the login page (and comes back after)."""

        async def guarded(request: Request) -> Response:
            session = session_of(request)
            return to_login(request) if session is None else await handler(request, session)

        return guarded

    def back(request: Request, path: str, msg: str, kind: str = "info") -> RedirectResponse:
        console.sessions.flash(request.cookies.get(SESSION_COOKIE), msg, kind)
        return RedirectResponse(path, status_code=303)

    async def checked_post(request: Request) -> tuple[Session, FormData] | Response:
        session = session_of(request)
        if session is None:
            return PlainTextResponse("Log in first.", status_code=401)
        form = await request.form()
        if not same_origin(request) or not token_ok(form.get("csrf"), session.csrf):
            console.audit.append(session.user, "csrf_refused", request.url.path, {})
            return PlainTextResponse(
                "Refused: this form did not come from the console (CSRF check failed). Reload the page and try again.",
                status_code=403,
            )
        return session, form

    def not_found(request: Request, session: Session | None, what: str) -> Response:
        return page(request, "error.html", session, status_code=404, title="Not found", message=what)

    # ---- login ----------------------------------------------------------------------------------
    async def login_form(request: Request) -> Response:
        token = secrets.token_urlsafe(24)
        nxt = request.query_params.get("next", "/")
        response = page(
            request,
            "login.html",
            None,
            login_csrf=token,
            next=nxt,
            token_mode=not console.auth.users,
            error="",
        )
        response.set_cookie(
            LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=settings.cookie_secure, max_age=3600
        )
        return response

    async def login(request: Request) -> Response:
        form = await request.form()
        nxt = str(form.get("next") or "/")
        if not nxt.startswith("/") or nxt.startswith("//") or urlsplit(nxt).netloc:
            nxt = "/"
        if not same_origin(request) or not token_ok(form.get("csrf"), request.cookies.get(LOGIN_COOKIE)):
            return PlainTextResponse(
                "Refused: the login form did not come from the console. Reload it.", status_code=403
            )
        name = str(form.get("username") or "").strip()
        user = console.auth.check(name, str(form.get("password") or ""))
        if user is None:
            console.audit.append(name or "(empty)", "login_failed", "/login", {})
            token = secrets.token_urlsafe(24)
            response = page(
                request,
                "login.html",
                None,
                status_code=401,
                login_csrf=token,
                next=nxt,
                token_mode=not console.auth.users,
                error="Wrong name or password." if console.auth.users else "Wrong token.",
            )
            response.set_cookie(
                LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=settings.cookie_secure
            )
            return response
        session_id, _ = console.sessions.create(user)
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
        checked = await checked_post(request)
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

    # ---- approvals ------------------------------------------------------------------------------
    @signed_in
    async def approvals(request: Request, session: Session) -> Response:
        views = await asyncio.to_thread(console.approver.pending)
        everything = [work_item(v, console.rules) for v in views]
        query = request.query_params
        sort = next((s for s in SORTS if s == query.get("sort")), "age")
        descending = query.get("dir", "desc" if sort in ("age", "risk") else "asc") == "desc"
        flag = next((f for f in (*FLAG_WORDS, "none") if f == query.get("flag")), "")
        systems = sorted({i.system for i in everything if i.system})
        system = next((s for s in systems if s == query.get("system")), "")
        q = query.get("q", "")[:200]
        items = sort_items(filter_items(everything, flag=flag, system=system, q=q), sort, descending)
        return page(
            request,
            "approvals.html",
            session,
            items=items,
            total=len(everything),
            sort=sort,
            descending=descending,
            flag=flag,
            flags=FLAG_WORDS,
            system=system,
            systems=systems,
            q=q,
            title="Approvals",
        )

    @signed_in
    async def approval(request: Request, session: Session) -> Response:
        try:
            item = await asyncio.to_thread(console.jobs.approval, request.path_params["id"])
        except LookupError as exc:
            return not_found(request, session, str(exc))
        view = console.approver.view(item)
        work = work_item(view, console.rules)
        run_name = Path(view.job.run_dir).name if view.job and view.job.run_dir else None
        run = await asyncio.to_thread(console.runs.detail, run_name) if run_name else None
        return page(
            request,
            "approval.html",
            session,
            view=view,
            work=work,
            summary=summary_text(view),
            rules=console.rules,
            plan=run.plan if run else None,
            run_name=run_name if run else None,
            title=f"Approval {item.id}",
        )

    def cited_file(request: Request) -> tuple[str, str] | Response:
        """(approval id, file) when the approval's values cite that file; else a refusal."""
        approval_id, name = request.path_params["id"], request.query_params.get("file", "")
        try:
            view = console.approver.view(console.jobs.approval(approval_id))
        except LookupError:
            return PlainTextResponse("No such approval.", status_code=404)
        cited = {ref.file for ref in field_sources(view).values() if ref.file}
        if name not in cited:
            return PlainTextResponse("This approval cites no such document.", status_code=404)
        return approval_id, name

    def _int(value: str | None) -> int | None:
        return int(value) if value and value.isdigit() and len(value) < 7 else None

    @signed_in
    async def source_document(request: Request, session: Session) -> Response:
        checked = cited_file(request)
        if isinstance(checked, Response):
            return not_found(request, session, "This approval cites no such document.")
        approval_id, name = checked
        line, page_no = _int(request.query_params.get("line")), _int(request.query_params.get("page"))
        find = request.query_params.get("find", "")[:200]
        doc = await asyncio.to_thread(console.documents.view, name, line, page_no, find)
        if isinstance(doc, str):
            return not_found(request, session, doc)
        field = request.query_params.get("field", "")[:100]
        return page(
            request,
            "document.html",
            session,
            doc=doc,
            approval_id=approval_id,
            file=name,
            field=field,
            title=f"Source: {name}",
        )

    async def source_image(request: Request) -> Response:
        if session_of(request) is None:
            return PlainTextResponse("Log in first.", status_code=401)
        checked = cited_file(request)
        if isinstance(checked, Response):
            return checked
        _, name = checked
        page_no = _int(request.query_params.get("page"))
        if page_no is not None:
            png = await asyncio.to_thread(console.documents.pdf_page_png, name, page_no)
            if png is None:
                return PlainTextResponse("No such page.", status_code=404)
            return Response(png, media_type="image/png")
        image = await asyncio.to_thread(console.documents.image, name)
        if image is None:
            return PlainTextResponse("This document is not an image.", status_code=404)
        return Response(image[0], media_type=image[1])

    async def approval_screenshot(request: Request) -> Response:
        if session_of(request) is None:
            return PlainTextResponse("Log in first.", status_code=401)
        try:
            item = console.jobs.approval(request.path_params["id"])
        except LookupError:
            return PlainTextResponse("No such approval.", status_code=404)
        if not item.screenshot or not Path(item.screenshot).is_file() or not item.screenshot.endswith(".png"):
            return PlainTextResponse("This approval has no screenshot.", status_code=404)
        return FileResponse(item.screenshot, media_type="image/png")

    async def decide(request: Request) -> Response:
        checked = await checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        approval_id = request.path_params["id"]
        wanted = form.get("action")
        action = next((a for a in ACTIONS if a == wanted), None)
        if action is None:
            return back(request, f"/approvals/{approval_id}", "Choose approve, reject or answer.", "error")
        text = str(form.get("text") or "")
        who = Identity(name=session.user, proof="console")
        result = await asyncio.to_thread(console.approver.decide, approval_id, action, who, text)
        kind = "error" if result.status == "refused" else "info"
        target = "/approvals" if result.status == "decided" else f"/approvals/{approval_id}"
        return back(request, target, result.message, kind)

    async def bulk(request: Request) -> Response:
        checked = await checked_post(request)
        if isinstance(checked, Response):
            return checked
        session, form = checked
        ids = [str(v) for v in form.getlist("ids")]
        who = Identity(name=session.user, proof="console")
        results = await asyncio.to_thread(console.approver.bulk_approve, ids, who)
        refused = [r for r in results if r.status == "refused"]
        if refused:
            return back(request, "/approvals", refused[0].message, "error")
        return back(request, "/approvals", f"{len(results)} approvals approved.")

    # ---- jobs -----------------------------------------------------------------------------------
    @signed_in
    async def jobs_list(request: Request, session: Session) -> Response:
        wanted = request.query_params.get("status", "")
        status = next((s for s in JOB_STATUSES if s == wanted), None)
        items = await asyncio.to_thread(console.jobs.list, status)
        return page(
            request,
            "jobs.html",
            session,
            jobs=items,
            status=status or "",
            statuses=JOB_STATUSES,
            title="Jobs",
        )

    def _job_context(job: Job) -> dict[str, Any]:
        run_name = Path(job.run_dir).name if job.run_dir else None
        detail = console.runs.detail(run_name) if run_name else None
        return {
            "job": job,
            "events": console.jobs.events(job.id),
            "run": detail,
            "run_name": run_name if detail else None,
            "approvals": console.jobs.approvals(job_id=job.id),
            "active": job.status in ACTIVE,
        }

    @signed_in
    async def job_page(request: Request, session: Session) -> Response:
        try:
            job = await asyncio.to_thread(console.jobs.get, request.path_params["id"])
        except UnknownJob as exc:
            return not_found(request, session, str(exc))
        ctx = await asyncio.to_thread(_job_context, job)
        return page(request, "job.html", session, title=f"Job {job.id}", **ctx)

    async def submit(request: Request) -> Response:
        checked = await checked_post(request)
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
            return back(request, "/jobs", str(exc), "error")
        console.audit.append(session.user, "submit", job.id, {"task": job.task, **options.model_dump()})
        return back(request, f"/jobs/{job.id}", f"Job {job.id} submitted; a worker will pick it up.")

    def _job_action(name: str) -> Any:
        async def handler(request: Request) -> Response:
            checked = await checked_post(request)
            if isinstance(checked, Response):
                return checked
            session, _ = checked
            job_id = request.path_params["id"]
            try:
                method = console.jobs.cancel if name == "cancel" else console.jobs.retry
                await asyncio.to_thread(method, job_id, by=session.user)
            except (InvalidChange, UnknownJob) as exc:
                console.audit.append(session.user, f"{name}_refused", job_id, {"reason": str(exc)})
                return back(request, f"/jobs/{job_id}", str(exc), "error")
            console.audit.append(session.user, name, job_id, {})
            done = "cancelled" if name == "cancel" else "queued again"
            return back(request, f"/jobs/{job_id}", f"Job {job_id} {done}.")

        return handler

    async def job_live(request: Request) -> Response:
        if session_of(request) is None:
            return PlainTextResponse("Log in first.", status_code=401)
        job_id = request.path_params["id"]
        try:
            console.jobs.get(job_id)
        except UnknownJob:
            return PlainTextResponse("No such job.", status_code=404)

        async def stream() -> AsyncIterator[str]:
            sent_events, sent_timeline = 0, 0
            last_status = ""
            while True:
                if await request.is_disconnected():
                    return
                job = await asyncio.to_thread(console.jobs.get, job_id)
                events = await asyncio.to_thread(console.jobs.events, job_id)
                timeline: list[Any] = []
                if job.run_dir:
                    detail = await asyncio.to_thread(console.runs.detail, Path(job.run_dir).name)
                    timeline = detail.story if detail else []
                for e in events[sent_events:]:
                    yield _sse(
                        "event", {"at": str(e.at)[:19], "kind": e.kind, "detail": e.detail, "actor": e.actor}
                    )
                for item in timeline[sent_timeline:]:
                    yield _sse("timeline", item.model_dump(mode="json"))
                sent_events, sent_timeline = len(events), len(timeline)
                status = f"{job.status} {job.outcome or ''}".strip()
                if status != last_status:
                    yield _sse("status", {"status": job.status, "outcome": job.outcome, "reason": job.reason})
                    last_status = status
                if job.status not in ACTIVE:
                    yield _sse("done", {"status": job.status})
                    return
                await asyncio.sleep(0.5)

        return StreamingResponse(stream(), media_type="text/event-stream")

    # ---- runs -----------------------------------------------------------------------------------
    @signed_in
    async def runs_list(request: Request, session: Session) -> Response:
        runs = await asyncio.to_thread(
            lambda: annotate_runs(console.runs.list(), console.runs.find, console.jobs)
        )  # parked, orphaned, interrupted: the job store says (jobs.liveness)
        status = request.query_params.get("status", "")
        q = request.query_params.get("q", "").strip().lower()
        statuses = sorted({r.status for r in runs})
        if status:
            runs = [r for r in runs if r.status == status]
        if q:
            runs = [r for r in runs if q in r.task.lower() or q in r.name.lower()]
        return page(
            request, "runs.html", session, runs=runs, status=status, q=q, statuses=statuses, title="Runs"
        )

    @signed_in
    async def run_page(request: Request, session: Session) -> Response:
        name = request.path_params["name"]
        detail = await asyncio.to_thread(console.runs.detail, name)
        if detail is None:
            return not_found(request, session, f"No run folder named {name!r} with a trace.jsonl.")
        report_html = _markdown(detail.report_md) if detail.report_md else None
        return page(request, "run.html", session, run=detail, report_html=report_html, title=f"Run {name}")

    async def run_file(request: Request) -> Response:
        if session_of(request) is None:
            return PlainTextResponse("Log in first.", status_code=401)
        path = console.runs.screenshot(request.path_params["name"], request.path_params["path"])
        if path is None:
            return PlainTextResponse("No such screenshot in this run.", status_code=404)
        return FileResponse(path, media_type="image/png")

    # ---- eval -----------------------------------------------------------------------------------
    @signed_in
    async def eval_index(request: Request, session: Session) -> Response:
        files = await asyncio.to_thread(console.evals.listing)
        if len(files) == 1:
            return RedirectResponse(f"/eval/{quote(files[0].key, safe='')}", status_code=303)
        return page(request, "eval_index.html", session, files=files, title="Eval results")

    @signed_in
    async def eval_page(request: Request, session: Session) -> Response:
        key = request.path_params["key"]
        report = await asyncio.to_thread(console.evals.load, key)
        if isinstance(report, str):
            return not_found(request, session, report)
        charts, scatter = sweep_charts(report)
        return page(
            request,
            "eval.html",
            session,
            key=key,
            report=report,
            charts=charts,
            scatter=scatter,
            title="Eval",
        )

    # ---- audit ----------------------------------------------------------------------------------
    @signed_in
    async def audit_page(request: Request, session: Session) -> Response:
        entries = await asyncio.to_thread(console.audit.entries)
        problems = await asyncio.to_thread(console.audit.verify)
        return page(
            request,
            "audit.html",
            session,
            entries=list(reversed(entries[-500:])),
            problems=problems,
            title="Audit log",
        )

    routes = [
        Route("/", home),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/approvals", approvals),
        Route("/approvals/bulk", bulk, methods=["POST"]),
        Route("/approvals/{id}", approval),
        Route("/approvals/{id}/screenshot", approval_screenshot),
        Route("/approvals/{id}/source", source_document),
        Route("/approvals/{id}/source/image", source_image),
        Route("/approvals/{id}/decide", decide, methods=["POST"]),
        Route("/jobs", jobs_list, methods=["GET"]),
        Route("/jobs", submit, methods=["POST"]),
        Route("/jobs/{id}", job_page),
        Route("/jobs/{id}/live", job_live),
        Route("/jobs/{id}/cancel", _job_action("cancel"), methods=["POST"]),
        Route("/jobs/{id}/retry", _job_action("retry"), methods=["POST"]),
        Route("/runs", runs_list),
        Route("/runs/{name}", run_page),
        Route("/runs/{name}/files/{path:path}", run_file),
        Route("/eval", eval_index),
        Route("/eval/{key}", eval_page),
        Route("/audit", audit_page),
        *fact_routes(FactsDesk(), page, signed_in, checked_post, back, console.audit),
        *routine_routes(RoutinesDesk(), page, signed_in, not_found),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        console.close()

    async def audit_broken(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=503)

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={AuditLogError: audit_broken})
    app.state.console = console
    if settings.port == 0:  # no port known yet (tests of the app alone): no Host check possible
        return SecurityHeaders(app)
    hosts = allowed_hosts(settings.host, settings.port, settings.public_hosts)
    return SecurityHeaders(app, hosts, settings.host)


def _sse(event: str, data: dict[str, Any]) -> str:
    body = json.dumps(data, ensure_ascii=False, default=str)  # JSON escapes newlines: one data line
    return f"event: {event}\ndata: {body}\n\n"
