"""What every page of the console shares: the Console (settings, sessions, the job store, the
approvals authority, artifacts), the templates, and the request helpers a page's routes use —
the session, the login redirect, CSRF-checked POSTs, the server-kept message after an action."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import jinja2.runtime
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.templating import Jinja2Templates

from taskcrew.approvals.audit import AuditLogError
from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import is_startup
from taskcrew.approvals.rules import RiskRules, RulesInForce
from taskcrew.approvals.visible import Shown, visible
from taskcrew.console.artifacts import EvalResults, RunsDir, job_demo, unsupported_claim
from taskcrew.console.auth import Authenticator, ConsoleUserError, load_users
from taskcrew.console.documents import Documents
from taskcrew.console.job_words import current_reason, event_words, planned_for, rolled_back
from taskcrew.console.security import LoginThrottle, same_origin, token_ok
from taskcrew.console.sessions import Session, SessionStore, identity_of
from taskcrew.console.settings import ConsoleSettings
from taskcrew.console.worklist import iban_groups, shown_value
from taskcrew.eval.runs import RunRecords
from taskcrew.jobs.store import Jobs

HERE = Path(__file__).parent
WORKLIST = ("/approvals", "the approvals waiting for you")  # where a page that is not there sends you back
SESSION_COOKIE = "taskcrew_console"
LOGIN_COOKIE = "taskcrew_console_login"

Handler = Callable[[Request], Awaitable[Response]]
SignedInHandler = Callable[[Request, Session], Awaitable[Response]]


class Console:
    """Everything the handlers share; built once per app from the settings."""

    def __init__(self, settings: ConsoleSettings, jobs: Jobs | None = None) -> None:
        self.settings = settings
        state = settings.state_dir
        state.mkdir(parents=True, exist_ok=True)
        users = load_users(settings.users_file)
        held = None if users else settings.token  # a console started with users holds no start-up token
        self.auth = Authenticator(users, token=held)
        self.throttle = LoginThrottle()  # failed sign-ins (console/security.py)
        self.sign_ins = SignInLog(self)  # their audit entries: bounded, one per hold (below)
        if not self.auth.users and settings.token is None:
            raise ValueError(
                f"No console users in {settings.users_file} and no token: add one with "
                "`taskcrew console add-user NAME`, or start without users to get a login token."
            )
        try:
            self.sessions = SessionStore(
                state / "console.sqlite3", ttl_seconds=settings.session_hours * 3600, startup_token=held
            )
            if users:  # the start-up token's sessions end once there are users
                self.sessions.drop_startup()
        except (sqlite3.DatabaseError, RuntimeError) as exc:
            raise ValueError(
                f"The console's database {state / 'console.sqlite3'} cannot be used ({exc}); move it aside: "
                "everyone logs in again and pending first approvals must be given again."
            ) from exc
        rules = RulesInForce(settings.risk_rules)  # read now (a file that cannot be used: said at start)
        self._owns_jobs = jobs is None
        self.jobs = jobs if jobs is not None else Jobs.open(settings.jobs_url)
        # the console is a thin client of the approvals authority (rules, identities, signatures, audit)
        self.approver = Authority(
            self.jobs, rules, home=settings.approvals_dir, users_file=settings.users_file
        )
        self.audit = self.approver.audit
        # run folders and what the job store's signed records say of them, read once a page
        self.runs = RunsDir(settings.runs_dirs, records=lambda: RunRecords.read(self.jobs))
        self.evals = EvalResults(settings.eval_dirs)
        self.documents = Documents(settings.sandbox)

    @property
    def rules(self) -> RiskRules:
        """The risk rules in force now: the authority's (``Authority.rules``: the file read again when
        it changed), so every page shows what a decision made now is judged by."""
        return self.approver.rules

    def close(self) -> None:
        with contextlib.suppress(AuditLogError, OSError):  # the refusals counted, written before it stops
            self.sign_ins.ended(everything=True)
        self.sessions.close()
        if self._owns_jobs:
            self.jobs.close()


UNPROVEN_CHARS = 64  # no console user's name is longer (auth.NAME_PATTERN)


def unproven(text: str, limit: int = UNPROVEN_CHARS) -> str:
    """Text typed by someone who has proven nothing (a sign-in's name), as the console keeps it (the
    audit log, the throttle's counts): whole up to ``limit`` characters, else cut to ``limit`` with
    its length said ("xxxx… (cut: 200,000 characters)"): such a name is nobody's."""
    if len(text) <= limit:
        return text
    mark = f"… (cut: {len(text):,} characters)"
    return text[: limit - len(mark)] + mark


class _Hold:
    """The sign-ins refused during one hold after its first (``SignInLog.refused``)."""

    def __init__(self, who: str, address: str, kinds: list[str], until: float) -> None:
        self.who, self.address, self.kinds, self.until = who, address, kinds, until
        self.count, self.first, self.last = 0, "", ""


class SignInLog:
    """The audit entries of sign-ins that prove nothing (failed, or refused while the throttle holds
    them), the one place they are written, so that whoever reaches the port cannot grow the signed
    log every process reads: the name as ``who`` writes it, and one ``login_refused`` per hold
    (``LoginThrottle.holds``), when its first refusal comes; the refusals after it are counted (in
    memory) and written as one more entry (``refused_again``, ``first``, ``last``) at the first
    sign-in after the hold ended, or when the console stops. Appends only: the chain is as before.
    The name is written as typed only when it is a user's (``who``): any other may be a password typed
    into the wrong box, shown to every user on the audit page, and is written as "(unknown name)"."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._open: dict[tuple[tuple[str, str], float], _Hold] = {}  # (throttle key, hold end) → hold
        self._lock = threading.Lock()

    def who(self, name: str) -> str:
        """The name a failed or refused sign-in is written under: as typed if it is a user's name (as
        the throttle reads names: spaces around and case aside), else "(unknown name)", the same for
        every other name, so that nothing on the audit page tells a guess of it (a password typed into
        the Name box) from another: a marker derived from the name, keyed or not, is computed for
        whoever types a name, and his right guess would write the same marker. (The throttle counts
        each typed name apart, in memory; that count is never shown.)"""
        if name.strip().casefold() in {user.casefold() for user in self.console.auth.users}:
            return name
        return "(unknown name)" if name.strip() else "(empty)"

    def failed(self, name: str) -> None:
        self.console.audit.append(self.who(name), "login_failed", "/login", {})

    def refused(self, name: str, address: str) -> None:
        throttle = self.console.throttle
        holds, now = throttle.holds(name, address), throttle.clock()
        at = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            counting = next((self._open[h] for h in holds.items() if h in self._open), None)
            if counting is not None:
                counting.count += 1
                counting.first = counting.first or at
                counting.last = at
                return
            until = max(holds.values(), default=now)
            hold = _Hold(self.who(name), address, sorted({key[0] for key in holds}), until)
            for held in holds.items():
                self._open[held] = hold
        ends = datetime.now(UTC) + timedelta(seconds=max(0.0, until - now))
        payload = {
            "address": address,
            "held_by": hold.kinds,
            "held_until": ends.isoformat(timespec="seconds"),
        }
        self.console.audit.append(hold.who, "login_refused", "/login", payload)

    def ended(self, everything: bool = False) -> None:
        """Write the count of each hold that has ended (``everything``: of every hold, at a stop)."""
        now = self.console.throttle.clock()
        with self._lock:
            done = {id(h): h for h in self._open.values() if everything or now >= h.until}
            self._open = {k: h for k, h in self._open.items() if id(h) not in done}
        for hold in done.values():
            if hold.count:
                payload = {
                    "address": hold.address,
                    "held_by": hold.kinds,
                    "refused_again": hold.count,
                    "first": hold.first,
                    "last": hold.last,
                }
                self.console.audit.append(hold.who, "login_refused", "/login", payload)


# raw HTML off, unsafe link schemes refused; no remote images, and a character reference (&#x202E;)
# stays text: decoded, it would put a character the page's escaping never saw into the page
_md = MarkdownIt("js-default").disable(["image", "entity"])


def markdown(text: str) -> str:
    """report.md as HTML inside a page: its headings one level down (the page has its own h1),
    its table headers marked as column headers."""
    html = _md.render(text)
    for level in range(5, 0, -1):
        html = html.replace(f"<h{level}>", f"<h{level + 1}>").replace(f"</h{level}>", f"</h{level + 1}>")
    return re.sub(r"<th(?=[ >])", '<th scope="col"', html)


class DbClock:
    """The job database's clock for one page (``Jobs.db_now``), read once, and only by a page that
    judges a job's holder (``job_note``): what heartbeats are written and judged by, never this
    host's clock, which may be off (a live worker's job shown as orphaned, or a dead one's not)."""

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs
        self._now: datetime | None = None

    def __call__(self) -> datetime:
        if self._now is None:
            self._now = self.jobs.db_now()
        return self._now


@jinja2.pass_context
def _job_note(context: jinja2.runtime.Context, job: Any) -> str:
    """What to do about a job not simply moving along (``jobs.liveness.state_note``), judged by the
    page's database clock (``db_clock``, set by ``Web.page``)."""
    from taskcrew.jobs.liveness import state_note

    clock = context.get("db_clock")
    if not isinstance(clock, DbClock):
        raise RuntimeError("job_note needs the job database's clock (db_clock): render through Web.page")
    return state_note(job, clock())


def _finalize(value: Any) -> Any:
    """Every ``{{ }}`` of every page: text with its invisible characters shown (``visible``): a
    bidi control cannot reorder a value, padding cannot push its tail off the screen. Text of more
    than one line (a summary, a log) keeps its layout; HTML the console made (``Markup``) too. Text
    code has already shown (``Shown``: a risk flag's message quoting markers) is shown as it is
    (escaped, not marked again); text that only looks marked ("⟨…⟩" a page wrote) is marked."""
    if isinstance(value, Shown):
        return value
    if isinstance(value, Markup):
        return Markup(visible(str(value), layout=True))
    if isinstance(value, str):
        return visible(value, layout="\n" in value)
    return value


def _grouped(value: Any) -> Any:
    """A bank account number drawn in groups of four (``worklist.iban_groups``), whether it was sent
    spaced or not: a new IBAN and the old one read alike, group under group. The gaps are drawn (a
    margin), not typed: copied, the value is exactly what was sent. Anything else as it is."""
    groups = iban_groups(str(value))
    if groups is None:
        return value
    last = len(groups) - 1
    spans = Markup("").join(
        Markup("<span>{}</span>" if g.endswith(" ") or i == last else '<span class="gap">{}</span>').format(g)
        for i, g in enumerate(groups)
    )
    return Markup('<span class="iban">{}</span>').format(spans)


def _drawn_gaps(value: Any) -> bool:
    """Whether ``grouped`` draws a gap the value does not have (an IBAN sent without spaces, or
    spaced otherwise than in fours): the page says so beside it."""
    groups = iban_groups(str(value))
    return groups is not None and any(not g.endswith(" ") for g in groups[:-1])


def _marked(value: Any, prose: bool = False) -> Shown:
    """A value shown on one line (``visible`` without layout): a line break in it shows as a
    marker, not as a space (a refused batch item "Invoice 4.eml⟨U+000A⟩batch-0000 x"). ``prose``: a
    free-text field's value (``WorkItem.prose``), its typographic signs shown as they are."""
    return Shown(visible(str(value), prose=prose))


# what a narrow column must not break at a hyphen: a date (with its time), a run's time stamp, a
# record id ("BILL-0005", "HCS-2026-09")
_WHOLE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\b\d{8}-\d{6}\b|\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b"
)


def _whole(value: Any) -> Markup:
    """``value`` escaped, with each date, time stamp and record id in it kept on one line, and a
    line allowed to break after each "/" of a URL (never inside a word)."""
    text, out, at = str(value), Markup(""), 0

    def between(part: str) -> Markup:
        return Markup("/<wbr>").join(escape(piece) for piece in part.split("/"))

    for found in _WHOLE.finditer(text):
        out += between(text[at : found.start()]) + Markup('<span class="nowrap">{}</span>').format(
            found.group()
        )
        at = found.end()
    return out + between(text[at:])


def _verbatim(value: Any) -> Markup:
    """A line whose spacing is its own (a document's line, a routine's step, in a <pre>): its
    invisible characters shown, its spaces and tabs kept."""
    return Markup(visible(str(escape(value)), layout=True))


def templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
    )
    env.filters["when"] = lambda v: "" if v is None else str(v)[:19].replace("T", " ")
    env.filters["money"] = lambda v: "—" if v is None else f"${float(v):.4f}"
    env.filters["urlpart"] = lambda v: quote(str(v), safe="")
    env.filters["shown"] = shown_value  # a field as read: a chosen option's label, else its value
    env.filters["verbatim"] = _verbatim
    env.filters["grouped"] = _grouped  # an IBAN in groups of four, copied as it is
    env.tests["drawn_gaps"] = _drawn_gaps  # … drawn with gaps it does not have
    env.tests["identifier_like"] = lambda w: any(c.isdigit() for c in str(w))  # "BILL-0003": kept whole
    env.filters["job_note"] = _job_note  # orphaned, parked, interrupted: what to do (jobs.liveness)
    env.filters["demo"] = job_demo  # "demo (scripted stand-in models, not AI)", as its run page says
    env.filters["event_words"] = event_words  # a history line's kind in words
    env.filters["marked"] = _marked  # one line, its line breaks and tabs shown as markers too
    env.filters["whole"] = _whole  # dates and record ids never broken mid-way in a narrow column
    env.globals["planned_for"] = planned_for  # a planned batch child: for whose batch, not by whom
    env.globals["rolled_back"] = rolled_back  # a job row set back: the signed log's newest ending of it
    env.globals["unsupported"] = lambda answer: unsupported_claim(answer)  # a job answer's flag, worded
    env.filters["reason_now"] = current_reason  # a job's reason, only where it describes its state
    return Jinja2Templates(env=env)


class Web:
    """The request helpers every page's routes are built from (one per app)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.settings = console.settings
        self.templates = templates()

    def session_of(self, request: Request) -> Session | None:
        """The request's session, while it proves its user (the authority's rule: a user who has
        since been removed from the users file, or whose password was reset, is logged out)."""
        session_id = request.cookies.get(SESSION_COOKIE)
        session = self.console.sessions.get(session_id)
        if session is not None and self.console.approver.identity_refusal(identity_of(session)):
            if is_startup(session.credential):  # a start-up session that no longer counts never will
                self.console.sessions.delete(session_id)
                with contextlib.suppress(ConsoleUserError):
                    if load_users(self.settings.users_file):  # there are users: none counts again
                        self.console.sessions.drop_startup()
            return None
        return session

    def page(
        self, request: Request, name: str, session: Session | None, status_code: int = 200, **ctx: Any
    ) -> Response:
        # The message after an action is kept with the session on the server (never in a cookie or
        # the URL, where another page on this host or a crafted link could put words in our mouth).
        flash, kind = (
            self.console.sessions.take_flash(request.cookies.get(SESSION_COOKIE)) if session else ("", "info")
        )
        ctx.setdefault("flash", flash)
        ctx.setdefault("flash_kind", kind)
        ctx.setdefault("db_clock", DbClock(self.console.jobs))  # read only if the page judges a job
        # while the rules file cannot be read, every page says so, and what is still decided (a rejection)
        ctx.setdefault("rules_unreadable", self.console.approver.rules_unreadable() if session else None)
        ctx.setdefault("title", "Sign in")
        return self.templates.TemplateResponse(
            request, name, {"session": session, "nav": name.split(".")[0], **ctx}, status_code=status_code
        )

    def to_login(self, request: Request) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    def signed_in(self, handler: SignedInHandler) -> Handler:
        """A page for signed-in people: anyone else goes to the login page (and comes back after)."""

        async def guarded(request: Request) -> Response:
            session = self.session_of(request)
            return self.to_login(request) if session is None else await handler(request, session)

        return guarded

    def back(self, request: Request, path: str, msg: str, kind: str = "info") -> RedirectResponse:
        self.console.sessions.flash(request.cookies.get(SESSION_COOKIE), msg, kind)
        return RedirectResponse(path, status_code=303)

    async def checked_post(self, request: Request) -> tuple[Session, FormData] | Response:
        session = self.session_of(request)
        if session is None:
            return PlainTextResponse("Log in first.", status_code=401)
        form = await request.form()
        if not same_origin(request) or not token_ok(form.get("csrf"), session.csrf):
            self.console.audit.append(session.user, "csrf_refused", request.url.path, {})
            return PlainTextResponse(
                "Refused: this form did not come from the console (CSRF check failed). Reload the page and try again.",
                status_code=403,
            )
        return session, form

    def not_found(
        self,
        request: Request,
        session: Session | None,
        what: str,
        back: tuple[str, str] | None = None,
    ) -> Response:
        """A page that is not there, said in the console's words, with the way back: to the list the
        person came from (``back``: its path and name), and to the worklist."""
        links = [back] if back else []
        if WORKLIST not in links:
            links.append(WORKLIST)
        return self.page(
            request, "error.html", session, status_code=404, title="Not found", message=what, links=links
        )

    def live(self, request: Request, rounds: AsyncGenerator[str, None]) -> StreamingResponse:
        """A long-lived response (server-sent events) for a signed-in person: each round of
        ``rounds`` (what one poll has to send, "" for nothing) is sent only while the request's
        session still counts (``session_of``, asked again every round): a removal, a password reset,
        a logout or an expiry ends the stream, as it ends the person's pages."""

        async def checked() -> AsyncIterator[str]:
            async with contextlib.aclosing(rounds):
                async for part in rounds:
                    if await asyncio.to_thread(self.session_of, request) is None:
                        return
                    if part:
                        yield part

        return StreamingResponse(checked(), media_type="text/event-stream")

    def anonymous(self, request: Request) -> Response | None:
        """For files and streams: a refusal for a request without a session, else None."""
        return (
            PlainTextResponse("Log in first.", status_code=401) if self.session_of(request) is None else None
        )
