"""The job store: jobs, approvals, intents and job history in one database (SQLite or Postgres).

This is the facade the CLI, the web console and recipes use; DBOS (the engine) runs what it holds.

    jobs = Jobs.open()                      # TASKCREW_JOBS_DB, else sqlite in TASKCREW_HOME
    job = jobs.submit("enter the Northwind invoice", submitted_by="ana")   # queued, id at once
    jobs.list(status="waiting"); jobs.get(job.id); jobs.cancel(job.id, by="ana"); jobs.retry(job.id, by="ana")
    jobs.approvals(status="pending"); jobs.approval(aid)
    jobs.decide(aid, ApprovalDecision.approve(), decided_by="bob")   # resumes the parked job
    jobs.decide(aid, ApprovalDecision.answer("use the PDF's total"), decided_by="bob")
    jobs.events(job.id)

Every read returns pydantic models (``taskcrew.jobs.models``). Errors: ``UnknownJob``,
``UnknownApproval``, ``InvalidChange`` (e.g. cancelling a finished job, deciding twice) and
``JobStoreError`` (the database is unreachable or damaged; ``NoJobDatabase``: there is none at that
URL), each with a message that says what to do.

Only ``Jobs.open(create=True)`` (the default) creates a job database (the CLI: ``worker``, ``submit`` and
``jobs limits``, never its folder: ``make_folder=False``); the commands that read or change jobs open
one that exists (``create=False``; the approvals commands too): a mistyped path is an error, not a
new empty database.

Heartbeats (a job's ``heartbeat_at``, a worker id's beat) are written and judged by the database's own
clock (``db_now``), never by one worker's: a host whose clock is off neither looks dead while it beats
nor alive after it stopped.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from taskcrew.jobs.liveness import is_orphaned
from taskcrew.jobs.models import (
    ACTIVE,
    CANCELLABLE,
    ENDED,
    RETRYABLE,
    RUN_SEAL_FORMAT,
    Approval,
    ApprovalKind,
    BatchOrigin,
    FanOut,
    FieldSource,
    Intent,
    Job,
    JobEvent,
    JobOptions,
    JobStatus,
    RecordTrust,
    utcnow,
)
from taskcrew.jobs.runseal import seal
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest
from taskcrew.tools.vault import MIN_SECRET_LENGTH

log = logging.getLogger(__name__)
ENV_URL = "TASKCREW_JOBS_DB"
VOID = "void"  # the record signature of a record the store found forged (never verifies, never legacy)


class JobStoreError(RuntimeError):
    """The job database cannot be used (unreachable, damaged, not a database)."""


class NoJobDatabase(JobStoreError):
    """There is no job database at the URL, and the command may not create one."""


class WrongKeyRing(JobStoreError):
    """This process's approvals key ring is not the one the job database's records are signed with."""


class UnknownJob(LookupError):
    pass


class UnknownApproval(LookupError):
    pass


class InvalidChange(ValueError):
    """The change does not apply to the job or approval in its current state."""


def default_url() -> str:
    if url := os.environ.get(ENV_URL):
        return url
    from taskcrew.config import Paths, check_home

    home = check_home(Paths.from_env().home)
    return f"sqlite:///{(home / 'jobs.sqlite3').resolve()}"


def where(url: str) -> str:
    """The job database as a person reads it, the one way every message names it: an SQLite file's
    path, else its dialect, host, port and database name. Never its user-info (a password, however
    written: an unescaped '@' in it leaves the rest in the host SQLAlchemy reads, cut off here) nor its
    query string (libpq takes ``?password=`` too). A setting that is neither a database URL with a
    plain host and database name nor a plain path (``_PLAIN``: no space, '=', quote, '@', '?', ':' …;
    a libpq ``host=… password=…`` string is neither) is not shown. Text shown beside it:
    ``hide_secrets``."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///").split("?", 1)[0]
    if "://" not in url:
        return url if _PLAIN.fullmatch(url) else NOT_SHOWN
    try:
        parsed = sa.engine.make_url(url)
    except Exception:
        return NOT_SHOWN
    host = (parsed.host or "").rsplit("@", 1)[-1]
    if not all(_PLAIN.fullmatch(part.replace(":", "")) for part in (host, parsed.database or "")):
        return NOT_SHOWN
    host = f"[{host}]" if ":" in host else host
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.drivername}://{host}{port}" + (f"/{parsed.database}" if parsed.database else "")


NOT_SHOWN = "(its setting, not shown: it is neither a database URL nor a plain path)"
_PLAIN = re.compile(r"[^\s='\"@?&;:]*")  # a path, host or database name that holds no other setting
_SECRET_KEY = re.compile(r"pass|secret|token|key", re.IGNORECASE)  # a query key whose value is hidden
_SECRET_IN_TEXT = [
    (re.compile(r"(password\s*[=:]\s*)('[^']*'|\"[^\"]*\"|[^\s&;,]+)", re.IGNORECASE), r"\1***"),
    (re.compile(r"(\w://)[^\s/?#]*@"), r"\1***@"),  # a URL's user-info, up to its last '@'
]


def _whole(secret: str) -> re.Pattern[str]:
    """``secret`` where it stands as a token of its own, not inside a longer word, number or host name
    (a password "127" is not the start of "127.0.0.1")."""
    return re.compile(rf"(?<![\w.~-]){re.escape(secret)}(?![\w~]|[.-]\w)")


def hide_secrets(text: str, url: str) -> str:
    """``text`` (a database error's, shown beside ``where(url)``) without ``url``'s secret parts: its
    password as written and as decoded, the part of it after an unescaped '@' (which the driver takes
    for the host and repeats in its errors), its query's password-like values, the whole URL (named
    as ``where`` names it), and any ``password=…`` or URL user-info the text holds itself. Anywhere
    else in the text a secret is taken out only as a whole token (``_whole``) and only when it is as
    long as a vault secret must be (``MIN_SECRET_LENGTH``): a password "a" or "127" does not garble
    "failed" or "127.0.0.1"; in its ``password=`` and user-info places it is hidden at any length."""
    hidden: set[str] = set()
    rest = url.split("://", 1)[-1]
    for part in (rest, rest.split("?", 1)[0], rest.split("/", 1)[0]):
        info = part.rpartition("@")[0]  # the user-info as written, up to the last '@'
        if ":" in info:
            hidden.add(info.split(":", 1)[1])
    with suppress(Exception):
        parsed = sa.engine.make_url(url)
        if "@" in (host := parsed.host or ""):
            hidden.add(host.rsplit("@", 1)[0])
        hidden.add(parsed.password or "")
        for key, values in parsed.query.items():
            if _SECRET_KEY.search(key):
                hidden.update([values] if isinstance(values, str) else values)
    text = text.replace(url, where(url))
    secrets_ = {s for h in hidden for s in (h, unquote(h)) if len(s) >= MIN_SECRET_LENGTH}
    for secret in sorted(secrets_, key=len, reverse=True):
        text = _whole(secret).sub("***", text)
    for pattern, replacement in _SECRET_IN_TEXT:
        text = pattern.sub(replacement, text)
    return text


def db_now(conn: sa.Connection) -> datetime:
    """The database's clock (UTC): the one clock every worker's heartbeats are written and judged by.
    SQLite runs in each process of its one machine, so it is that machine's clock; Postgres's is the
    server's."""
    if conn.dialect.name == "sqlite":
        raw = conn.execute(sa.text("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')")).scalar()
        return datetime.fromisoformat(str(raw)).replace(tzinfo=UTC)
    now = conn.execute(sa.select(sa.func.clock_timestamp())).scalar()
    if not isinstance(now, datetime):
        now = datetime.fromisoformat(str(now))
    return now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)


def past_deadline(approval: Approval, at: datetime) -> str | None:
    """Why a decision of ``approval`` at ``at`` comes too late (None: in time, or it has no deadline).
    The one rule for an approval's deadline, judged by the job database's clock (``db_now``), never
    by one host's: its deadline is stamped by it (``Jobs.park``), and by it an approval expires
    (``Jobs.expire_due``), is refused a decision (``Jobs.decide``) — both only for a row whose
    request seal, which covers the deadline, checks out (``Jobs.due``) — and, decided past its
    deadline, is not obeyed by the worker (``Authority.decided_late``)."""
    if approval.expires_at is None or at < approval.expires_at:
        return None
    return (
        f"the approval {approval.id} expired unanswered at {approval.expires_at:%Y-%m-%d %H:%M:%S} UTC "
        "(by the job database's clock)"
    )


def _check_models(options: JobOptions) -> None:
    """Only the operator's models (``crew.modellist``): never a URL a submitter chose."""
    from taskcrew.crew.modellist import offered_model
    from taskcrew.crew.modelspec import ModelConfigError

    try:
        for role, name in (("worker", options.worker_model), ("verifier", options.verifier_model)):
            if name is not None and name.strip():
                offered_model(name, role)
    except ModelConfigError as exc:
        raise InvalidChange(str(exc)) from exc


def check_url(url: str) -> str:
    """A job database URL SQLAlchemy can use, or a JobStoreError saying how to write one. The setting
    is named only as ``where`` names it; the "write sqlite:///PATH" hint is for a plain path only."""
    example = "e.g. sqlite:////abs/path/jobs.sqlite3 or postgresql+psycopg://user@host/db"
    try:
        parsed = sa.engine.make_url(url)
        parsed.get_dialect()
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError, ValueError):
        if "://" in url:
            raise JobStoreError(
                f"the job database {where(url)} is not a database URL SQLAlchemy knows; {example}"
            ) from None
        if where(url) == NOT_SHOWN:  # a URL without its scheme, a libpq "host=… password=…" string
            raise JobStoreError(
                f"the job database setting is not a database URL (it has no '://'; not shown); {example}"
            ) from None
        raise JobStoreError(
            f"the job database '{where(url)}' is a path, not a database URL: write sqlite:///{Path(url).resolve()}"
        ) from None
    if "@" in (parsed.host or ""):  # the rest of a password would be taken for the host
        raise JobStoreError(
            f"the job database URL {where(url)} has an '@' in its password or user name: write it as %40"
        )
    if not _PLAIN.fullmatch((parsed.host or "").replace(":", "")):
        raise JobStoreError(
            "the job database URL's host is not a host name (it has a space, '=' or quote; not shown: it "
            f"may hold a password); {example}"
        )
    return url


meta = sa.MetaData()
J = sa.Table(
    "taskcrew_jobs",
    meta,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("status", sa.String(20), nullable=False, index=True),
    sa.Column("submitted_at", sa.String(40), nullable=False, index=True),
    sa.Column("parent_id", sa.String(40), index=True),
    sa.Column("leg", sa.Integer, nullable=False, default=0),
    sa.Column("doc", sa.Text, nullable=False),
)
A = sa.Table(
    "taskcrew_approvals",
    meta,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("job_id", sa.String(40), nullable=False, index=True),
    sa.Column("status", sa.String(20), nullable=False, index=True),
    sa.Column("key", sa.String(80), nullable=False),
    sa.Column("doc", sa.Text, nullable=False),
)
INT = sa.Table(
    "taskcrew_intents",
    meta,
    sa.Column("key", sa.String(80), primary_key=True),
    sa.Column("job_id", sa.String(40), nullable=False, index=True),
    sa.Column("doc", sa.Text, nullable=False),
)
EV = sa.Table(
    "taskcrew_job_events",
    meta,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("job_id", sa.String(40), nullable=False, index=True),
    sa.Column("doc", sa.Text, nullable=False),
)
CK = sa.Table(
    "taskcrew_checkpoints",
    meta,
    sa.Column("job_id", sa.String(40), primary_key=True),
    sa.Column("doc", sa.Text, nullable=False),
)
RING = sa.Table(  # the mark of the approvals key ring that signs this job database (``Jobs.keys``)
    "taskcrew_key_ring",
    meta,
    sa.Column("name", sa.String(20), primary_key=True),
    sa.Column("mark", sa.Text, nullable=False),
)
BACKOFF = sa.Table(  # a model's shared 429 pause (taskcrew.jobs.backoff)
    "taskcrew_model_backoff",
    meta,
    sa.Column("model", sa.String(200), primary_key=True),
    sa.Column("until", sa.String(40), nullable=False),
    sa.Column("strikes", sa.Integer, nullable=False),
)


def starts_over(job: Job) -> bool:
    """Does a retry of ``job`` start its run over (its checkpoint dropped)? A finished run's does;
    one stopped by a signal before its end (`taskcrew run` and Ctrl-C, outcome ``interrupted``) did
    not finish: it resumes from its last checkpoint, as a failed one. The decisions given in it are
    void all the same (``authority.VOIDED_BY_RETRY``): the person stopped it."""
    return job.status == "finished" and job.outcome != "interrupted"


def cancel_refusal(job: Job) -> str | None:
    """Why ``job`` cannot be cancelled (None: it can): the one rule for ``Jobs.cancel`` and for the
    approvals authority, which records a cancel before it makes it (``Authority.act_on_job``)."""
    if job.status in CANCELLABLE:  # a failed one too: its retry would resume its decisions
        return None
    return (
        f"job {job.id} is already {job.status}; only queued, running, waiting or failed jobs can be cancelled"
    )


def holds(job: Job, worker: str | None, token: str | None = None) -> bool:
    """Whether ``job`` runs on ``worker`` (None: whoever) and, given ``token``, in that very worker
    start (``jobs.identity.IdHolder.token``: a process, not only its worker id): the one rule for a
    leg's claim, heartbeat, writes, hand-back and sends (``approvals.worker.leg_refusal``)."""
    return (
        job.status == "running"
        and (worker is None or job.worker == worker)
        and (token is None or job.worker_token == token)
    )


def retry_refusal(job: Job, now: datetime) -> str | None:
    """Why ``job`` cannot be retried (None: it can), judged at ``now`` (the database's clock): the
    one rule for ``Jobs.retry`` and for the approvals authority (``Authority.act_on_job``). A record
    taskcrew did not sign (``record_trust`` forged or legacy) is never put back: every worker refuses
    it (``LegRunner._refuse_forged``). A superseded one is signed: its retry is judged on its state."""
    if job.record_trust in ("forged", "legacy"):
        return (
            f"job {job.id}'s record is not signed by taskcrew ({job.record_trust}): no worker runs it; "
            "submit the task again"
        )
    if job.status in RETRYABLE or is_orphaned(job, now):
        return None
    return (
        f"job {job.id} is {job.status}; only finished, failed, cancelled or orphaned (holder gone) jobs "
        "can be retried"
    )


def check_item(item: str, what: str = "the item") -> str:
    """``item`` if it may be a batch item: plain text (``inputs.check_plain``) on one line, no line
    break and no tab. An item is shown after its job's id, one line each (a batch's answer, ``jobs
    list``): one holding a line break would forge a line there. The one rule for ``--for-each``, a
    planned batch's items and ``Jobs.submit``."""
    from taskcrew.inputs import InputError, check_plain
    from taskcrew.terminal import LAYOUT

    try:
        check_plain(item, what)
    except InputError as exc:
        raise InvalidChange(str(exc)) from exc
    if found := sorted({repr(c) for c in item if c in LAYOUT}):
        raise InvalidChange(
            f"{what} holds a line break or a tab ({', '.join(found)}): an item is one line of plain text"
        )
    return item


def batch_outcome(children: Sequence[Job], refused: Sequence[str], missing: int = 0) -> tuple[str, str]:
    """A batch's outcome and reason once none of its children is active any more: ``done`` when every
    child finished ``done`` or ``nothing_to_do`` (``nothing_to_do`` when all did) and no item was
    refused; else ``incomplete``, with the counts and the children that did not end well."""
    ended = [c.outcome or "finished" if c.status == "finished" else c.status for c in children]
    counts: dict[str, int] = {}
    for word in ended:
        counts[word] = counts.get(word, 0) + 1
    fine = ("done", "nothing_to_do")
    said = ", ".join(f"{n} {word}" for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    reason = f"its {len(children)} child job(s) ended: {said or 'none'}"
    bad = [f"{c.id} ({word})" for c, word in zip(children, ended, strict=True) if word not in fine]
    if bad:
        reason += (
            "; not done: " + ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        )
    if refused:
        reason += f"; {len(refused)} item(s) refused, never submitted (the answer says why)"
    if missing:
        reason += f"; {missing} child job(s) no longer in the job database"
    if bad or refused or missing or not children:
        return "incomplete", reason
    return ("nothing_to_do" if set(ended) == {"nothing_to_do"} else "done"), reason


def fingerprint(obj: Any) -> str:
    raw = obj.model_dump_json() if hasattr(obj, "model_dump_json") else json.dumps(obj, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def _put_approval(conn: sa.Connection, approval: Approval, *, was: str | None = None) -> bool:
    """Write an approval's document and its status column together (every surface reads the
    document; queries select by the column); ``was``: only while the row's status still is that."""
    where = A.c.id == approval.id
    if was is not None:
        where = sa.and_(where, A.c.status == was)
    values = {"status": approval.status, "doc": approval.model_dump_json()}
    return bool(conn.execute(A.update().where(where).values(**values)).rowcount)


class Jobs:
    """The store facade. One per process; thread-safe (a SQLAlchemy engine underneath)."""

    def __init__(self, engine: sa.Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.on_enqueue: Callable[[Job, int], None] | None = None  # set by taskcrew.jobs.engine
        self.on_cancel_leg: Callable[[str, int], None] | None = None  # a dead worker's leg
        # a job that ended finished, on its leg: a signed entry (``Authority._record_finish``), by the
        # authority that set it, else the operator's
        self.on_finish: Callable[[Job, int], None] | None = None
        # a waiting batch about to settle, on its leg: what the signed audit log says of it
        # (``Authority.settle``: a standing cancel ends it cancelled, its children too; None: nothing)
        self.on_batch_settle: Callable[[str, int, str], str | None] | None = None
        self._keys: Any = None  # approvals.signing.KeyRing: signs submissions, parked requests, decisions
        self._ring_ok: Any = None  # the ring found to be this job database's (``keys``)
        self.created = False  # ``open`` created this job database (the caller says so, once)

    @property
    def keys(self) -> Any:
        """The approvals key ring (``KeyRing.default()`` unless one was set), only once found to be this
        job database's (``check_keys``)."""
        if self._keys is None:
            from taskcrew.approvals.signing import KeyRing

            self._keys = KeyRing.default()
        if self._ring_ok is not self._keys:
            self.check_keys(self._keys, mark=True)
        return self._keys

    @keys.setter
    def keys(self, ring: Any) -> None:
        self._keys = ring

    def check_keys(self, ring: Any = None, *, mark: bool = False) -> None:
        """The one rule for which approvals key ring signs and reads this job database: the one whose
        mark it keeps, recorded by the first process that used a ring on it (``mark``: now, if none is
        kept, when the records it holds check out with ``ring``). A process with another ring
        (another approvals folder: another account's home, a unit without TASKCREW_APPROVALS_DIR)
        would read every record as forged and sign what it writes with a key no one else has: it is
        refused (``WrongKeyRing``) before it reads, signs or makes a key. Every process checks at start
        (``open``) and again for every ring it is given (``keys``)."""
        from taskcrew.approvals.signing import ENV_DIR, KeyRing

        if ring is None:  # the ring ``keys`` gives: found so here, not checked again at its first use
            if self._keys is None:
                self._keys = KeyRing.default()
            ring = self._keys
        for _ in range(3):
            with self._tx() as conn:
                row = conn.execute(sa.select(RING.c.mark).where(RING.c.name == "ring")).first()
            if row is not None:
                if not ring.made(str(row[0])):
                    folder = ring.path.parent
                    if ring.retired(str(row[0])):
                        raise WrongKeyRing(
                            f"the job database {where(self.url)} was marked by a key the approvals folder "
                            f"{folder} retired (`taskcrew approvals rotate-key --retire-old`): run `taskcrew "
                            f"approvals rotate-key --remark --db URL` with its URL (as the workers' --db or "
                            f"{ENV_URL}) to mark it with the folder's current key (its earlier records stay "
                            "void), then start again"
                        )
                    had = (
                        "holds another key"
                        if ring.path.exists()
                        else f"has no {ring.path.name} (none was made)"
                    )
                    raise WrongKeyRing(
                        f"the approvals folder {folder} {had}: the job database {where(self.url)} is signed "
                        f"with another one, whose records this process would read as forged. Set {ENV_DIR} "
                        "to the approvals folder the workers, the console and the CLI share (or run as the "
                        "account whose home holds it), then start again"
                    )
                self._ring_ok = ring
                return
            if not mark:
                return
            with self._tx() as conn:
                rows = conn.execute(
                    sa.select(J.c.id, J.c.doc, J.c.leg).order_by(J.c.submitted_at.desc()).limit(50)
                ).all()
            if rows and not self._vouches(ring, rows):
                raise WrongKeyRing(
                    f"the approvals key ring {ring.path} signed none of the newest records of the job "
                    f"database {where(self.url)}: set {ENV_DIR} to the approvals folder the workers, "
                    "the console and the CLI share (or run as the account whose home holds it), then "
                    "start again"
                )
            try:
                with self.engine.begin() as conn:
                    conn.execute(RING.insert().values(name="ring", mark=ring.mark()))
            except IntegrityError:
                continue  # another process marked it just now: checked against that mark
            self._ring_ok = ring
            return
        raise JobStoreError(f"the job database {where(self.url)}'s key ring mark keeps changing; try again")

    def remark_keys(self, ring: Any) -> str:
        """The operator's repair after ``taskcrew approvals rotate-key --retire-old``
        (``approvals rotate-key`` and ``--remark``, never a worker): a mark made by a key ``ring``
        retired (``KeyRing.retired``) is replaced by ``ring``'s; one ``ring`` made is kept; none is
        made as ``check_keys`` makes it. Any other mark (another approvals folder's) is
        ``WrongKeyRing``, as in ``check_keys``. Says what it did."""
        with self._tx() as conn:
            row = conn.execute(sa.select(RING.c.mark).where(RING.c.name == "ring")).first()
        old = None if row is None else str(row[0])
        if old is None or ring.made(old) or not ring.retired(old):
            self.check_keys(ring, mark=True)  # kept, made, or refused
            return "already marked by this approvals folder" if old is not None else "marked"
        with self._tx() as conn:
            changed = conn.execute(
                RING.update().where(RING.c.name == "ring", RING.c.mark == old).values(mark=ring.mark())
            ).rowcount
        if not changed:  # marked again meanwhile: judged as it is now
            self.check_keys(ring, mark=True)
            return "already marked by this approvals folder"
        self._ring_ok = ring
        return f"marked again (it was marked by retired key {old.split(':', 1)[0]})"

    def _vouches(self, ring: Any, rows: Sequence[Any]) -> bool:
        """Whether ``ring`` signed any of these job rows (id, doc, leg). Makes no key."""
        if not ring.path.exists():
            return False
        was, self._ring_ok = self._ring_ok, ring
        try:
            for row_id, doc, leg in rows:
                with suppress(ValueError):
                    data = json.loads(str(doc))
                    if self._trust(data, Job.model_validate(data), str(row_id), int(leg)) in (
                        "signed",
                        "legacy",
                    ):
                        return True
            return False
        finally:
            self._ring_ok = was

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        create: bool = True,
        make_folder: bool = True,
        check_ring: bool = True,
    ) -> Jobs:
        """The job store at ``url`` (default: ``default_url()``). ``create``: a database that does not
        exist yet is created (``Jobs.created`` says so), else it is ``NoJobDatabase``.
        ``make_folder``: an SQLite file's missing folder is created too, else it is an error.
        ``check_ring``: False only for ``remark_keys`` (the ring is still checked before any use)."""
        from taskcrew.config import HomeError

        try:
            url = check_url(url or default_url())
        except HomeError as exc:
            raise JobStoreError(str(exc)) from exc
        missing = (
            f"there is no job database at {where(url)} (nothing was created): point {ENV_URL} or --db at "
            "the one your workers use; `taskcrew worker` or `taskcrew submit` creates a new one"
        )
        new = False
        if url.startswith("sqlite:///"):
            path = Path(url.removeprefix("sqlite:///"))
            if path.is_dir():
                raise JobStoreError(f"the job database {path} is a folder; point it at a file in it")
            if path.exists() and path.stat().st_size and not _looks_like_sqlite(path):
                raise JobStoreError(
                    f"the job database {path} is damaged or not an SQLite database; move it aside "
                    f"(nothing is read from it) or point {ENV_URL} at another database"
                )
            new = not path.exists()
            if new and not create:
                raise NoJobDatabase(missing)
            if not make_folder and not path.parent.is_dir():  # a mistyped folder: not made
                raise JobStoreError(
                    f"the job database's folder {path.parent} does not exist (nothing was created): "
                    f"point {ENV_URL} or --db at the job database your workers use, or create the folder"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise JobStoreError(
                    f"the job database's folder {path.parent} cannot be created ({type(exc).__name__}); "
                    f"point {ENV_URL} or --db at a writable place"
                ) from exc
            engine = sa.create_engine(url, connect_args={"timeout": 30})
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
        try:
            if not url.startswith("sqlite:///"):
                new = not sa.inspect(engine).has_table(J.name)
                if new and not create:
                    engine.dispose()
                    raise NoJobDatabase(missing)
            meta.create_all(engine)
        except SQLAlchemyError as exc:
            raise JobStoreError(
                f"cannot use the job database {where(url)}: {hide_secrets(_first_line(exc), url)}; check that "
                f"it is running and reachable, or set {ENV_URL}"
            ) from exc
        jobs = cls(engine, url)
        jobs.created = new
        if check_ring:  # a process with another approvals folder stops here, before it reads or signs
            jobs.check_keys()
        from taskcrew.jobs import engine as job_engine

        enqueuer = job_engine.Enqueuer(url)
        jobs.on_enqueue, jobs.on_cancel_leg = enqueuer, enqueuer.cancel
        return jobs

    def db_now(self) -> datetime:
        """The database's clock (``db_now``): what heartbeats are written and judged by."""
        with self._tx() as conn:
            return db_now(conn)

    def queued_legs(self) -> builtins.list[tuple[str, int]]:
        """Every ``queued`` job's id and leg, no record read (``worker.enqueue_stranded``)."""
        with self._tx() as conn:
            rows = conn.execute(sa.select(J.c.id, J.c.leg).where(J.c.status == "queued")).tuples().all()
        return [(str(job_id), int(leg)) for job_id, leg in rows]

    @contextmanager
    def _tx(self) -> Iterator[sa.Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except SQLAlchemyError as exc:
            said = hide_secrets(_first_line(exc), self.url)
            raise JobStoreError(f"the job database {where(self.url)} failed: {said}") from exc

    # ---- jobs -----------------------------------------------------------------------------------
    def draft(
        self,
        task: str,
        *,
        submitted_by: str,
        submitted_proof: str = "os_user",
        submitted_credential: str | None = None,
        options: JobOptions | None = None,
        parent_id: str | None = None,
        item: str | None = None,
        job_id: str | None = None,
        origin: BatchOrigin | None = None,
    ) -> Job:
        """The job ``submit`` would queue, checked by the rules it checks (InvalidChange: why not);
        nothing is stored or signed. A batch's children are all drafted before any is submitted
        (``batch.plan_children``): an item the store refuses is refused on its own."""
        from taskcrew.inputs import InputError, check_plain

        task = task.replace("\r\n", "\n").strip()  # a browser sends a textarea's line breaks as CR LF
        item = item.replace("\r\n", "\n") if item is not None else None
        if len(task) < 3:
            raise InvalidChange("a task needs at least a few words: say what the worker should do")
        try:  # every surface shows a job's task to people: none may hold what a terminal obeys
            check_plain(task, "the task")
        except InputError as exc:
            raise InvalidChange(str(exc)) from exc
        if item is not None:
            check_item(item)
        if "{item}" in task and item is None:
            raise InvalidChange(
                "the task has an {item} placeholder but no items: add --for-each ITEM (repeatable) "
                "or write the task out"
            )
        options = options or JobOptions()
        if not options.foreground:  # the person at the terminal may run any model; a job may not
            _check_models(options)
        now = utcnow()
        return Job(
            id=job_id or _new_id("job"),
            task=task,
            status="queued",
            submitted_by=submitted_by,
            submitted_proof=submitted_proof,
            submitted_credential=submitted_credential,
            submitted_at=now,
            updated_at=now,
            options=options,
            parent_id=parent_id,
            item=item,
            origin=origin,
        )

    def submit(
        self,
        task: str,
        *,
        submitted_by: str,
        submitted_proof: str = "os_user",
        submitted_credential: str | None = None,
        options: JobOptions | None = None,
        parent_id: str | None = None,
        item: str | None = None,
        job_id: str | None = None,
        enqueue: bool = True,
    ) -> Job:
        """Queue a job and return it at once. ``job_id`` makes the submission idempotent: the job
        already stored under it is returned when it is the same submission, in whatever state it is
        now (the caller tells a person so: ``submitted_as``); ``enqueue=False`` records it without
        queueing (``taskcrew run`` runs it in the foreground). ``submitted_by`` is a proven identity
        (``approvals.identity``), ``submitted_proof`` how and ``submitted_credential`` under which
        password (``Identity.credential``); the submission (options such as ``auto_approve``
        included) is signed by the authority's key."""
        from taskcrew.approvals import seals

        job = self.draft(
            task,
            submitted_by=submitted_by,
            submitted_proof=submitted_proof,
            submitted_credential=submitted_credential,
            options=options,
            parent_id=parent_id,
            item=item,
            job_id=job_id,
        )
        now = job.submitted_at
        if job_id is not None and (same := self.submitted_as(job)) is not None:
            return same
        job.submission_sig = self.keys.sign(seals.submission(job))
        doc = self._job_text(job, 0)
        try:
            with self._tx() as conn:
                conn.execute(
                    J.insert().values(
                        id=job.id,
                        status=job.status,
                        submitted_at=now.isoformat(),
                        parent_id=parent_id,
                        leg=0,
                        doc=doc,
                    )
                )
                self._event(conn, job.id, "submitted", task, submitted_by)
        except JobStoreError as exc:  # submitted at the same moment under the same id
            if job_id is None or not isinstance(exc.__cause__, IntegrityError):
                raise
            same = self.submitted_as(job)
            if same is None:
                raise
            return same
        if enqueue:
            self._enqueue(job, 0)
        return job

    def submitted_as(self, wanted: Job) -> Job | None:
        """The job already stored under ``wanted``'s id (None: there is none), when it is the same
        submission (``seals.submission``: ``foreground`` aside): submitting it again changes nothing.
        Another submission under that id (a batch item whose id collides with another item's, or a
        row taskcrew did not write) is an error: returning it would leave ``wanted`` silently never
        created."""
        try:
            stored = self.get(wanted.id)
        except UnknownJob:
            return None
        if stored.record_trust == "forged":  # (a legacy record's submission is signed: it counts)
            raise InvalidChange(
                f"a job with the id {wanted.id} is already in the job database, and taskcrew cannot vouch "
                "for its record; nothing was submitted under that id"
            )
        from taskcrew.approvals import seals

        was, now = seals.submission(stored), seals.submission(wanted)  # what a submission is, as signed
        if was != now:
            differs = sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k))
            raise InvalidChange(
                f"the id {wanted.id} is already another submission's (they differ in {', '.join(differs)}): "
                f"{wanted.task[:80]!r} was not submitted; submit it on its own"
            )
        return stored

    def list(
        self, status: JobStatus | None = None, *, limit: int = 200, parent_id: str | None = None
    ) -> builtins.list[Job]:
        query = sa.select(J.c.id, J.c.doc, J.c.leg).order_by(J.c.submitted_at.desc()).limit(limit)
        if status is not None:
            query = query.where(J.c.status == status)
        if parent_id is not None:
            query = query.where(J.c.parent_id == parent_id)
        with self._tx() as conn:
            rows = conn.execute(query).all()
        logs: builtins.list[Any] = []  # the signed audit log, read once for the listing (``_read``)
        return [self._read(str(r[0]), str(r[1]), int(r[2]), logs) for r in rows]

    def naming(self, words: str, *, limit: int = 200) -> builtins.list[Job]:
        """The newest ``limit`` jobs whose record holds ``words`` anywhere (e.g. a run folder's name,
        for one folder whose job is older than the newest ``list`` reads); the caller checks the
        field it means."""
        query = (
            sa.select(J.c.id, J.c.doc, J.c.leg)
            .where(J.c.doc.contains(words, autoescape=True))
            .order_by(J.c.submitted_at.desc())
            .limit(limit)
        )
        with self._tx() as conn:
            rows = conn.execute(query).all()
        logs: builtins.list[Any] = []
        return [self._read(str(r[0]), str(r[1]), int(r[2]), logs) for r in rows]

    def get(self, job_id: str) -> Job:
        return self.get_on_leg(job_id)[0]

    def get_on_leg(self, job_id: str) -> tuple[Job, int]:
        """The job and the leg it is on, read together (one row, one read): what a leg checks
        before it acts for the job (``approvals.worker.leg_refusal``)."""
        with self._tx() as conn:
            row = conn.execute(sa.select(J.c.doc, J.c.leg).where(J.c.id == job_id)).first()
        if row is None:
            raise UnknownJob(f"no job with id {job_id!r}; `taskcrew jobs list` shows the jobs there are")
        return self._read(job_id, str(row[0]), int(row[1])), int(row[1])

    # ---- job records: signed by the store on every write, checked on every read ----------------
    def _sealed(self, kind: str, bound: dict[str, Any], data: dict[str, Any], field: str) -> dict[str, Any]:
        """A row's document with its signature in ``field``. The seal covers the document as it is
        stored (``bound``: what the row adds, such as its leg), not a model's dump of it, so a field a
        later version adds to the model (with a default) does not void the rows written before."""
        from taskcrew.approvals import seals

        body = {k: v for k, v in data.items() if k != field}
        return {**body, field: self.keys.sign(seals.stored(kind, bound, body))}

    def _seal_ok(self, kind: str, bound: dict[str, Any], data: dict[str, Any], field: str) -> bool:
        from taskcrew.approvals import seals

        body = {k: v for k, v in data.items() if k != field}
        return self.keys.verify(seals.stored(kind, bound, body), data.get(field))

    def _job_text(self, job: Job, leg: int) -> str:
        """The job as stored, signed on its leg (``job.record_sig`` set too)."""
        data = self._sealed("job", {"leg": leg}, json.loads(job.model_dump_json()), "record_sig")
        job.record_sig = data["record_sig"]
        return json.dumps(data)

    def _trust(self, data: dict[str, Any], job: Job, row_id: str, leg: int) -> RecordTrust:
        """How far the store vouches for a stored record: ``data`` as stored, ``job`` parsed from it."""
        from taskcrew.approvals import seals

        if data.get("id") != row_id:  # another job's record copied into this row
            return "forged"
        if self._seal_ok("job", {"leg": leg}, data, "record_sig"):
            return "signed"
        if job.record_sig is None and seals.submitted(self.keys, job):
            return "legacy"
        return "forged"

    def signed_log(self) -> Any:
        """What the signed audit log beside this store's key says of jobs' endings and decisions
        (``authority.SignedLog``), read now."""
        from taskcrew.approvals.authority import SignedLog

        return SignedLog.read(self.keys)

    def _read(self, row_id: str, doc: str, leg: int, logs: builtins.list[Any] | None = None) -> Job:
        """A stored job as every surface sees it: a record the store cannot vouch for keeps its state,
        but claims no reason and no ending (outcome, answer, run folder) of its own. An ended record
        that checks out is also held to the signed audit log (``_superseded``; ``logs``: the log as
        read once for a listing, filled on first need)."""
        data = json.loads(doc)  # parsed once: the seal is checked on it, the job validated from it
        job = Job.model_validate(data)
        job.record_trust = self._trust(data, job, row_id, leg)
        if job.record_trust == "signed" and job.status in ENDED:
            self._superseded(job, leg, logs)
        if job.record_trust in ("forged", "legacy"):
            said = f"{job.status} {job.outcome or ''}".strip()[:40]
            job.id = row_id
            if job.status in ENDED:
                job.outcome = "unsigned" if job.status == "finished" else None
                job.answer, job.run_dir = "", None
            job.reason = (
                f"taskcrew cannot vouch for this record (the job database says {said!r}): it was "
                "changed or added in the job database, written by a version before job records were "
                "signed, or signed with another approvals key (the CLI, the console and the workers "
                "must share one approvals folder). Do not rely on it: read the run's own report, or "
                "submit the task again"
            )
        return job

    def _superseded(self, job: Job, leg: int, logs: builtins.list[Any] | None) -> None:
        """An ended record, signed, that is not the job's newest: the signed audit log has a later end
        of it (``SignedLog.superseding``: a retry, a cancel or a takeover of its leg, a later leg's
        finish), so its row was set back to an earlier signed version. It reads ``superseded``: its
        state kept, no ending of its own, and its reason names the log's newest entry."""
        if logs is None:
            logs = []
        if not logs:
            logs.append(self.signed_log())
        entry = logs[0].superseding(job.id, job.status, leg)
        if entry is None:
            return
        from taskcrew.approvals.authority import superseded_words

        said = f"{job.status} {job.outcome or ''}".strip()[:40]
        job.record_trust = "superseded"
        if job.status == "finished":
            job.outcome = "superseded"
        job.answer, job.run_dir, job.run_seal = "", None, None
        job.reason = (
            f"superseded: this is an earlier version of the job's record ({said!r} on leg {leg}); the "
            f"signed audit log says {superseded_words(job.id, entry)} since. The job database was set "
            "back: do not rely on this ending (the audit log shows the job's signed history: `taskcrew "
            "approvals audit`, the console's Audit log)"
        )

    def cancel(self, job_id: str, *, by: str) -> Job:
        return self.cancel_on_leg(job_id, by=by)[0]

    def cancel_on_leg(
        self, job_id: str, *, by: str, leg: int | None = None, why: str = ""
    ) -> tuple[Job, int]:
        """Cancel the job; it and the leg it was cancelled on, as the cancel's own write read them.
        ``leg``: only while the job is on that leg (else InvalidChange); ``why``: said after "cancelled
        by ..." in its reason."""
        seen: list[int] = []

        def change(job: Job) -> None:
            if (refusal := cancel_refusal(job)) is not None:
                raise InvalidChange(refusal)
            job.status, job.cancelled_by = "cancelled", by
            job.reason = f"cancelled by {by}" + (f" ({why})" if why else "")
            job.finished_at = utcnow()

        job = self._update(
            job_id, change, event=("cancelled", why, by), seen=lambda _, on: seen.append(on), leg=leg
        )
        with self._tx() as conn:  # its pending approvals close with it: the row and what it says
            pending = conn.execute(sa.select(A.c.doc).where(A.c.job_id == job_id, A.c.status == "pending"))
            for (doc,) in pending.all():
                approval = Approval.model_validate_json(str(doc))
                approval.status = "expired"
                _put_approval(conn, approval, was="pending")
        return job, seen[-1]

    def retry(self, job_id: str, *, by: str, leg: int | None = None, was: JobStatus | None = None) -> Job:
        """Run a finished, failed, cancelled or orphaned job again (the same id, a new attempt). A
        finished job starts over (``starts_over``); the others, and an interrupted run, resume from
        their last checkpoint. ``leg`` and ``was``: only while the job is still on that leg and in
        that state, as it was judged (else InvalidChange)."""
        finished, now = False, self.db_now()

        def change(job: Job) -> None:
            nonlocal finished
            finished = starts_over(job)
            if (refusal := retry_refusal(job, now)) is not None:
                raise InvalidChange(refusal)
            if was is not None and job.status != was:
                raise InvalidChange(f"job {job_id} is {job.status} now, no longer {was}")
            job.status, job.outcome, job.reason, job.finished_at = "queued", None, "", None
            job.cancelled_by = None
            job.fan_out = None  # a batch plans anew: a new generation of children (``_fan_out``)

        job = self._update(job_id, change, event=("retried", "", by), new_leg=True, leg=leg)
        if finished:
            self.clear_checkpoint(job_id)
        self._enqueue(job, self._leg(job_id))
        return job

    # ---- batches: children submitted together, a batch that follows them --------------------------
    def children(self, job_id: str, statuses: tuple[JobStatus, ...] = CANCELLABLE) -> builtins.list[Job]:
        """The child jobs of ``job_id`` (a batch: every generation its retries planned) in one of
        ``statuses``, oldest first. By default what a cancel of the batch goes on to
        (``Authority.act_on_job``): every child queued, running or waiting, and every failed one
        (a failed job's retry would resume with its decisions: ``models.CANCELLABLE``).

        Chosen by signed data, never by a column alone (``parent_id`` and ``status`` are in no seal):
        the rows whose ``parent_id`` column names the batch, those whose id is one of its children's
        (``<batch>-…``: earlier generations too) and those its signed record names (``fan_out``); of
        them each one whose document (as read: ``_read``) names the batch as its parent, or that the
        batch's signed record names, in the status its document says. A row whose columns were set
        to hide it (parent_id NULL, status "finished" over a queued document) is still a child, in
        its document's status."""
        with self._tx() as conn:
            row = conn.execute(sa.select(J.c.doc, J.c.leg).where(J.c.id == job_id)).first()
            named: set[str] = set()
            if row is not None:
                batch = self._read(job_id, str(row[0]), int(row[1]))
                if batch.record_trust == "signed" and batch.fan_out is not None:
                    named = set(batch.fan_out.children)
            query = (
                sa.select(J.c.id, J.c.doc, J.c.leg)
                .where(
                    sa.or_(
                        J.c.parent_id == job_id,
                        sa.and_(J.c.id > f"{job_id}-", J.c.id < f"{job_id}."),  # '.' follows '-'
                        J.c.id.in_(sorted(named)),
                    ),
                    J.c.id != job_id,
                )
                .order_by(J.c.submitted_at)
            )
            found = [self._read(str(r[0]), str(r[1]), int(r[2])) for r in conn.execute(query)]
        return [
            job for job in found if (job.parent_id == job_id or job.id in named) and job.status in statuses
        ]

    def fan_out(
        self,
        batch_id: str,
        new: Sequence[Job],
        fanned: FanOut,
        *,
        leg: int,
        worker: str,
        answer: str,
        token: str | None = None,
    ) -> Job | None:
        """Submit a batch's children and set the batch ``waiting`` for them, in one transaction, only
        while the batch still runs on ``leg`` held by ``worker``: cancelled, taken over or handed back
        first, nothing is submitted (None). A cancel that comes after finds the children there and
        the batch waiting (cancellable): ``children``.

        ``new``: the children to submit (``draft``s); ``fanned.children``: every child the batch
        waits for (``new`` and any already stored as the same submission). The batch's checkpoint
        (its plan) is dropped with it: a later leg of the batch (a retry) plans anew, a new
        generation of children. Each new child is put on the queue after the commit (a process
        stopped in between: the watch loop, ``worker.enqueue_stranded``). The batch finishes when its
        last child ends (``settle_batch``)."""
        from taskcrew.approvals import seals

        docs = []
        for child in new:
            child.submission_sig = self.keys.sign(seals.submission(child))
            docs.append((child, self._job_text(child, 0)))
        waiting = f"waiting for its {len(fanned.children)} child job(s) to end"
        if fanned.refused:
            waiting += f"; {len(fanned.refused)} item(s) refused (the answer says why)"

        def change(job: Job) -> None:
            if not holds(job, worker, token):
                raise InvalidChange(f"job {batch_id} is {job.status} on {job.worker}")
            job.status, job.reason, job.answer, job.fan_out = "waiting", waiting, answer, fanned

        def submit_all(conn: sa.Connection) -> None:
            for child, doc in docs:
                conn.execute(
                    J.insert().values(
                        id=child.id,
                        status=child.status,
                        submitted_at=child.submitted_at.isoformat(),
                        parent_id=child.parent_id,
                        leg=0,
                        doc=doc,
                    )
                )
                self._event(conn, child.id, "submitted", child.task, child.submitted_by)
            conn.execute(CK.delete().where(CK.c.job_id == batch_id))

        try:
            batch = self._update(
                batch_id, change, event=("waiting", waiting, worker), leg=leg, also=submit_all
            )
        except InvalidChange:
            return None
        for child in new:
            try:
                self._enqueue(child, 0)
            except Exception as exc:  # it is queued in the job database: the watch loop enqueues it
                log.warning("job %s (of batch %s) is queued; its enqueue failed: %s", child.id, batch_id, exc)
        try:  # every child it waits for had ended already (stored before, by a version before)
            return self.settle_batch(batch_id) or batch
        except Exception as exc:
            log.warning("batch %s fanned out; it is not settled yet: %s", batch_id, exc)
            return batch

    def settle_batch(self, batch_id: str) -> Job | None:
        """A batch ``waiting`` for its children finishes once none of them is active any more, with an
        outcome that follows theirs (``batch_outcome``: ``done`` only when every one ended well).
        Called when a child ends (``_update``) and by the watch loop's pass over waiting jobs
        (``resume``): a process stopped between a child's end and this leaves nothing waiting for
        good. Not over a cancel the signed audit log holds (``on_batch_settle``: ``Authority.settle``
        ends it cancelled, and its children). Returns the batch finished now (None: it still waits,
        was cancelled so, or is no waiting batch)."""
        try:
            batch, leg = self.get_on_leg(batch_id)
        except UnknownJob:  # a --for-each batch or a recipe's: an id, not a job
            return None
        fanned = batch.fan_out
        if batch.status != "waiting" or fanned is None or batch.record_trust != "signed":
            return None
        ids = builtins.list(fanned.children)
        # the status column first (in no seal): cheap while a child still runs; it can only hold the
        # batch back (a column set "running"), never settle it early: the documents decide below
        with self._tx() as conn:
            busy = conn.execute(
                sa.select(J.c.id).where(J.c.id.in_(ids), J.c.status.in_(ACTIVE)).limit(1)
            ).first()
            rows = (
                []
                if busy is not None
                else conn.execute(sa.select(J.c.id, J.c.doc, J.c.leg).where(J.c.id.in_(ids))).all()
            )
        if busy is not None:
            return None
        kids = {str(r[0]): self._read(str(r[0]), str(r[1]), int(r[2])) for r in rows}
        if any(kid.status in ACTIVE for kid in kids.values()):
            return None
        # a cancel the signed audit log holds and the job database lacks (written ahead, the process
        # stopped before its change): the batch ends cancelled, never finished over it
        on_settle = self.on_batch_settle
        if on_settle is None:  # no authority here yet: the operator's, over this store
            from taskcrew.approvals.authority import Authority

            authority = Authority(None)
            authority._jobs = self  # its hooks are not set on this store: its keys stay as they are
            on_settle = authority.settle
        if on_settle(batch_id, leg, "") is not None:
            return None
        outcome, reason = batch_outcome(
            [kids[i] for i in ids if i in kids],
            fanned.refused,
            missing=len([i for i in ids if i not in kids]),
        )
        done = self.finish(batch_id, outcome, reason, only_if=("waiting",), leg=leg)
        if done is not None:
            self.clear_checkpoint(batch_id)
        return done

    def events(self, job_id: str) -> builtins.list[JobEvent]:
        self.get(job_id)
        with self._tx() as conn:
            rows = conn.execute(sa.select(EV.c.doc).where(EV.c.job_id == job_id).order_by(EV.c.seq))
            stored = [json.loads(str(doc)) for (doc,) in rows]
        lines = []
        for data in stored:  # a line taskcrew did not write (added, edited, of another job) says so
            line = JobEvent.model_validate(data)
            if line.job_id != job_id or not self._seal_ok("event", {}, data, "sig"):
                line.job_id, line.detail = job_id, f"[not signed] {line.detail}".strip()
            lines.append(line)
        return lines

    # ---- approvals and questions ----------------------------------------------------------------
    def approvals(self, status: str | None = None, *, job_id: str | None = None) -> builtins.list[Approval]:
        self.expire_due()
        query = sa.select(A.c.id, A.c.job_id, A.c.doc)
        if status is not None:
            query = query.where(A.c.status == status)
        if job_id is not None:
            query = query.where(A.c.job_id == job_id)
        with self._tx() as conn:
            rows = [
                (row_id, row_job, Approval.model_validate_json(str(doc)))
                for row_id, row_job, doc in conn.execute(query)
            ]
        # a row is the approval its document says it is, of the job its document names (both signed
        # with it): a decided approval of one job copied under another job's id is neither job's here
        items = [self._shown(a) for row_id, row_job, a in rows if a.id == row_id and a.job_id == row_job]
        return sorted(items, key=lambda a: a.created_at)

    def _shown(self, approval: Approval) -> Approval:
        """An approval as every surface shows it: sources and a screenshot the worker did not park
        with it (written into the job database, or parked by an earlier version) are not shown."""
        from taskcrew.approvals import seals

        if not seals.check(self.keys, seals.sources, approval, approval.sources_sig):
            approval.sources, approval.screenshot, approval.screenshot_sha256 = [], None, None
            approval.files_sha256 = None
        return approval

    def parked_here(self, approval: Approval) -> bool:
        """Whether ``approval``'s stored request (payload, key, deadline) is the one a worker parked
        (``seals.parked``). The store acts on a pending row only when it is: it expires it (and ends
        its job) by its deadline (``due``), a run parks on it again (``park``), and its job waits on it
        (``resume``). A row inserted or edited in the job database is shown with its problem
        (``Authority.problem``) and acted on by nobody: nothing signed says it expired or was asked."""
        from taskcrew.approvals import seals

        return seals.parked(self.keys, approval)

    def due(self, approval: Approval, at: datetime) -> str | None:
        """``past_deadline`` of ``approval`` at ``at``, for a row whose deadline is the one its worker
        parked (``parked_here``); None for one that fails its seal: a deadline moved in the job
        database expires nothing, and is no reason to refuse a decision."""
        if (why := past_deadline(approval, at)) is None or not self.parked_here(approval):
            return None
        return why

    def approval(self, approval_id: str) -> Approval:
        with self._tx() as conn:
            row = conn.execute(sa.select(A.c.job_id, A.c.doc).where(A.c.id == approval_id)).first()
        approval = Approval.model_validate_json(str(row[1])) if row is not None else None
        if approval is None or approval.id != approval_id or approval.job_id != row[0]:  # type: ignore[index]
            raise UnknownApproval(
                f"no approval with id {approval_id!r}; `taskcrew approvals list` shows the pending ones"
            )
        return self._shown(approval)

    def decide(
        self,
        approval_id: str,
        decision: ApprovalDecision,
        *,
        decided_by: str,
        recorded: Callable[[Approval], None] | None = None,
    ) -> Approval:
        """Record a decision, signed, and resume the parked job (on any worker). Callers other than
        the approvals authority (``taskcrew.approvals``) should not call this: it applies no rule.
        ``recorded``: told of the decision once it is in the job database and before the job is put
        back on the queue (the authority's signed audit entry: a stop in between then leaves a job
        still waiting on a recorded decision, never a resumed job whose decision the log lacks)."""
        from taskcrew.approvals import seals

        self.expire_due()
        approval = self.approval(approval_id)
        if approval.status == "expired":
            raise InvalidChange(too_late(approval))
        if approval.status != "pending":
            raise InvalidChange(f"approval {approval_id} is already {approval.status}")
        if approval.kind == "question" and decision.outcome == "approve":
            raise InvalidChange("this is a question: answer it with text (or reject to stop the job)")
        if decision.outcome == "answer" and not (decision.text or "").strip():
            raise InvalidChange("an answer needs text")
        approval.decision = decision
        approval.decided_by = decided_by
        approval.status = {"approve": "approved", "reject": "rejected", "answer": "answered"}[
            decision.outcome
        ]  # type: ignore[assignment]
        approval.signature = self.keys.sign(seals.decision(approval))
        with self._tx() as conn:
            approval.decided_at = db_now(conn)  # the deadline's clock (``past_deadline``)
            late = self.due(approval, approval.decided_at)
            if late is None:
                if not _put_approval(conn, approval, was="pending"):
                    raise InvalidChange(f"approval {approval_id} was decided meanwhile")
                self._event(conn, approval.job_id, f"approval_{approval.status}", approval.id, decided_by)
        if late is not None:  # its deadline passed since it was read: it expires now, undecided
            self.expire_due()
            raise InvalidChange(too_late(approval))
        if recorded is not None:
            recorded(approval)
        self.resume(approval.job_id)
        return approval

    def expire_due(self, now: datetime | None = None) -> builtins.list[Approval]:
        """Expire pending approvals past their deadline (``due``: ``past_deadline``, by the job
        database's clock unless ``now`` is given, of a row whose request seal checks out); their jobs
        end ``rejected`` with that reason. A row that fails its seal (its ``expires_at`` moved, or
        inserted in the job database) is not expired: it stays pending, shown with its problem."""
        now = now or self.db_now()
        with self._tx() as conn:
            pending = [
                Approval.model_validate_json(str(d))
                for (d,) in conn.execute(sa.select(A.c.doc).where(A.c.status == "pending"))
            ]
        expired = []
        for approval in pending:
            if (reason := self.due(approval, now)) is None:
                continue
            approval.status = "expired"
            with self._tx() as conn:
                if not _put_approval(conn, approval, was="pending"):
                    continue
                self._event(conn, approval.job_id, "approval_expired", approval.id, None)
            expired.append(approval)
            self.finish(approval.job_id, "rejected", reason, only_if=("waiting",))
        return expired

    # ---- used by the engine (workers) ------------------------------------------------------------
    def park(
        self,
        job_id: str,
        *,
        kind: ApprovalKind,
        key: str,
        request: ApprovalRequest | None = None,
        question: str | None = None,
        sources: builtins.list[FieldSource] | None = None,
        screenshot: str | None = None,
        screenshot_sha256: str | None = None,
        files_sha256: dict[str, str] | None = None,
        expires_in: timedelta | None = None,
        reusable: Callable[[Approval], bool] | None = None,
    ) -> Approval:
        """Create a pending approval (or return the pending one with the same key that a worker parked:
        ``parked_here``), signed. A row inserted or edited in the job database under the key is never
        returned: a new one is parked beside it, and that one reaches the approvers. ``reusable``:
        whether a pending one may be returned (the worker's: not a row the signed audit log records
        decided, set back to pending: ``WorkerGate.reusable``)."""
        from taskcrew.approvals import seals

        for existing in self.approvals(job_id=job_id, status="pending"):
            if existing.key != key or not self.parked_here(existing):
                continue
            if reusable is None or reusable(existing):
                return existing
        now = self.db_now()  # its deadline is judged by the job database's clock (``past_deadline``)
        approval = Approval(
            id=_new_id("apr"),
            job_id=job_id,
            kind=kind,
            status="pending",
            request=request,
            question=question,
            sources=sources or [],
            screenshot=screenshot,
            screenshot_sha256=screenshot_sha256,
            files_sha256=files_sha256,
            key=key,
            created_at=now,
            expires_at=now + expires_in if expires_in else None,
        )
        approval.request_sig = self.keys.sign(seals.request(approval))
        approval.sources_sig = self.keys.sign(seals.sources(approval))
        with self._tx() as conn:
            conn.execute(
                A.insert().values(
                    id=approval.id, job_id=job_id, status="pending", key=key, doc=approval.model_dump_json()
                )
            )
            self._event(conn, job_id, "parked", f"{kind} {approval.id}", None)
        return approval

    def add_first_approval(self, approval_id: str, first: Any) -> Approval:
        """Record a signed first approval (``jobs.models.Cosign``) on a pending approval."""
        for _ in range(20):
            with self._tx() as conn:
                row = conn.execute(sa.select(A.c.doc).where(A.c.id == approval_id)).first()
                if row is None:
                    raise UnknownApproval(f"no approval with id {approval_id!r}")
                approval = Approval.model_validate_json(str(row[0]))
                if approval.status != "pending":
                    raise InvalidChange(f"approval {approval_id} is already {approval.status}")
                approval.first_approvals.append(first)
                if conn.execute(
                    A.update()
                    .where(A.c.id == approval_id, A.c.doc == str(row[0]))
                    .values(doc=approval.model_dump_json())
                ).rowcount:
                    return approval
        raise JobStoreError(f"approval {approval_id} kept changing underneath; try again")

    def decision_for(self, job_id: str, key: str) -> Approval | None:
        """The latest decided approval of this job for exactly this payload or question."""
        decided = [
            a
            for a in self.approvals(job_id=job_id)
            if a.key == key and a.status in ("approved", "rejected", "answered")
        ]
        return decided[-1] if decided else None

    def take_over(
        self,
        job_id: str,
        dead_worker: str,
        *,
        silent_since: datetime | None = None,
        leg: int | None = None,
    ) -> Job | None:
        """A worker stopped heart-beating: put its job back on the queue as a new leg (through the
        queue, so the limits hold). The dead leg, if its worker ever comes back, finds a newer leg and
        steps aside. None when the job moved on meanwhile. ``silent_since``: the heartbeat the watcher
        judged stale (``heartbeat_at``, else ``started_at``), compared and set with the job: a holder
        that beat meanwhile keeps its job. ``leg``: the leg judged dead (else the job's current one):
        taken over only from that leg."""

        def may(job: Job) -> bool:
            beat = job.heartbeat_at or job.started_at
            still = silent_since is None or beat == silent_since
            return job.status == "running" and job.worker == dead_worker and still

        return self._requeue(
            job_id,
            self._leg(job_id) if leg is None else leg,
            may,
            ("taken_over", f"from {dead_worker}", None),
        )

    def hand_back(
        self,
        job_id: str,
        leg: int,
        worker: str,
        why: str,
        *,
        leg_ends: bool = False,
        token: str | None = None,
    ) -> Job | None:
        """A stopping worker gives leg ``leg`` back unfinished (claimed by it, or dequeued but not yet
        started): a new leg on the queue resumes from the last checkpoint on the next worker. None
        when the job moved on meanwhile (finished, cancelled, a newer leg). ``leg_ends``: the old
        leg's workflow returns by itself (else it is cancelled: its process is going away)."""
        return self._requeue(
            job_id,
            leg,
            lambda job: job.status == "queued" or holds(job, worker, token),
            ("handed_back", f"by {worker}: {why}", None),
            cancel_old=not leg_ends,
        )

    def reclaim(self, job_id: str, leg: int, gone_worker: str) -> Job | None:
        """Leg ``leg`` was dequeued by a worker that is gone before the leg claimed the job (it is still
        queued, its workflow held by a dead executor): a new leg on the queue, the old one cancelled.
        None when the job moved on meanwhile."""
        return self._requeue(
            job_id,
            leg,
            lambda job: job.status == "queued",
            ("taken_over", f"leg {leg} from {gone_worker}, which stopped before starting it", None),
        )

    def cancel_stale_leg(self, job_id: str, leg: int) -> bool:
        """Cancel leg ``leg``'s workflow when the job has gone on to a newer leg without it (left
        PENDING by a worker that is gone, it would hold a slot of the queue's session limit)."""
        if leg >= self._leg(job_id) or self.on_cancel_leg is None:
            return False
        self.on_cancel_leg(job_id, leg)
        return True

    def _requeue(
        self,
        job_id: str,
        leg: int,
        may: Callable[[Job], bool],
        event: tuple[str, str, str | None],
        *,
        cancel_old: bool = True,
    ) -> Job | None:
        """Leg ``leg`` ends and leg ``leg + 1`` goes on the queue, in one compare-and-set: None when
        ``may`` says no or the job is no longer on ``leg``."""

        def change(job: Job) -> None:
            if not may(job):
                raise InvalidChange(job.status)
            job.status = "queued"

        try:
            job = self._update(job_id, change, event=event, new_leg=True, leg=leg)
        except InvalidChange:
            return None
        if cancel_old and self.on_cancel_leg is not None:
            # The old leg's workflow would hold a slot of the queue's global concurrency (the
            # per-system session limit) until its worker came back: cancel it.
            with suppress(Exception):
                self.on_cancel_leg(job_id, leg)
        self._enqueue(job, leg + 1)
        return job

    def answers(self, job_id: str) -> builtins.list[Approval]:
        """The decided questions of this job not yet spent by a saved checkpoint, oldest first.

        A question's wording can differ when the resumed run gets stuck again (a real model words its
        summary anew), so answers are matched by order, not by text."""
        return [
            a
            for a in self.approvals(job_id=job_id)
            if a.kind == "question" and not a.used and a.status in ("answered", "rejected")
        ]

    def resume(self, job_id: str) -> Job | None:
        """A waiting job whose approvals are all decided goes back on the queue (a new leg). A pending
        row a worker did not park (``parked_here``: inserted or edited in the job database) holds
        nothing up: it is not what the job waits for."""
        if any(a.status == "pending" and self.parked_here(a) for a in self.approvals(job_id=job_id)):
            return None

        batch: list[str] = []

        def change(job: Job) -> None:
            if job.status != "waiting":
                raise InvalidChange("not waiting")
            if job.options.batch:  # it waits for its children, not for a person: not run again
                batch.append(job.id)
                raise InvalidChange("a batch waits for its children")
            job.status, job.reason = "queued", ""  # "waiting for approval …" no longer says why

        try:
            job = self._update(job_id, change, event=("resumed", "", None), new_leg=True)
        except InvalidChange:
            if batch:  # the watch loop's pass over waiting jobs: it ends once its children have
                self.settle_batch(job_id)
            return None
        self._enqueue(job, self._leg(job_id))
        return job

    def mark(
        self,
        job_id: str,
        status: JobStatus,
        *,
        only_if: tuple[JobStatus, ...],
        leg: int | None = None,
        beat: bool = False,
        **fields: Any,
    ) -> Job | None:
        """Move a job to ``status`` when it is in one of ``only_if`` and, given ``leg``, still on that
        leg (else None, nothing changed). ``beat``: its heartbeat is now, by the database's clock,
        whoever asks (``db_now``)."""
        marked = self.mark_on_leg(job_id, status, only_if=only_if, leg=leg, beat=beat, **fields)
        return None if marked is None else marked[0]

    def mark_on_leg(
        self,
        job_id: str,
        status: JobStatus,
        *,
        only_if: tuple[JobStatus, ...],
        leg: int | None = None,
        beat: bool = False,
        if_token: str | None = None,
        **fields: Any,
    ) -> tuple[Job, int] | None:
        """``mark``, and the leg the change was made on, read in its own transaction (None: nothing
        changed). An ending seals the run folder (``_update``) unless ``run_seal`` is given."""
        sealing = "run_seal" not in fields
        if beat:
            fields["heartbeat_at"] = self.db_now()

        def change(job: Job) -> None:
            if job.status not in only_if:
                raise InvalidChange(job.status)
            if if_token is not None and job.status == "running" and job.worker_token != if_token:
                raise InvalidChange(f"running in {job.worker_token}")  # claimed by another start meanwhile
            job.status = status
            for name, value in fields.items():
                setattr(job, name, value)

        wrote: list[int] = []
        try:
            job = self._update(
                job_id,
                change,
                event=(status, fields.get("reason", ""), fields.get("worker")),
                leg=leg,
                wrote=wrote,
                sealing=sealing,
            )
        except InvalidChange:
            return None
        return job, wrote[-1]

    def finish(
        self,
        job_id: str,
        outcome: str,
        reason: str,
        *,
        only_if: tuple[JobStatus, ...] = ("running",),
        leg: int | None = None,
        **fields: Any,
    ) -> Job | None:
        """End the job ``finished`` (see ``mark``), and sign that in the audit log on the leg it ended
        on: the leg the change was made on, read in the same transaction (``mark_on_leg``), never read
        again after it (a retry in between would have the finish signed on the retry's new leg, and
        that run's approvals taken back as of a finished run when it later failed and was retried).
        The run folder its record names (``run_dir``, else the one noted) is sealed into the record as
        it is now, its run ended (``_update``, as every ending's: ``jobs.runseal``)."""
        marked = self.mark_on_leg(
            job_id,
            "finished",
            only_if=only_if,
            leg=leg,
            outcome=outcome,
            reason=reason,
            finished_at=utcnow(),
            **fields,
        )
        if marked is None:
            return None
        done, on = marked
        # signed whichever process ends it (an approval expiring in a reader too)
        on_finish = self.on_finish
        if on_finish is None:  # no authority here yet: the operator's, as every durable run's
            from taskcrew.approvals.authority import Authority

            on_finish = Authority(None)._record_finish
        on_finish(done, on)
        return done

    def heartbeat(self, job_id: str, worker: str, token: str | None = None) -> tuple[Job, int]:
        """The worker running the job is alive (no history line: it would only be noise). The beat is
        the database's clock, not this process's (``db_now``). Returns the job and its leg as the
        beat read them (written or not: the job no longer ``worker``'s running one), so the beating
        leg checks it still holds the job without reading the row again (``leg_refusal_of``)."""
        now = self.db_now()
        seen: list[tuple[Job, int]] = []

        def change(job: Job) -> None:
            if not holds(job, worker, token):
                raise InvalidChange(job.status)
            # a beat always changes it: ``take_over`` compares it with the one judged stale
            job.heartbeat_at = now if now != job.heartbeat_at else now + timedelta(microseconds=1)

        with suppress(InvalidChange):
            self._update(job_id, change, event=None, seen=lambda job, leg: seen.append((job, leg)))
        return seen[-1]

    def note_run_dir(
        self, job_id: str, run_dir: str, *, leg: int, worker: str | None = None, token: str | None = None
    ) -> bool:
        """The run folder of leg ``leg``, recorded as soon as it is created (so a waiting job's
        approval can show its run's plan and trace): only while the job runs that leg (held by
        ``worker``, given), checked in the write's own transaction, as every leg's write. False, and
        nothing written, when the leg lost its job meanwhile (taken over, cancelled, ended: a stale
        leg never names its folder over the record of the leg that holds or ended the job)."""

        def change(job: Job) -> None:
            if not holds(job, worker, token):
                raise InvalidChange(f"{job.status} on {job.worker}")
            job.run_dir = run_dir
            job.run_seal = None  # an earlier leg's folder's seal: this leg's is made as it ends or parks
            job.run_seal_format = RUN_SEAL_FORMAT  # waiting or ended without a seal, it vouches for none

        try:
            self._update(job_id, change, event=None, leg=leg)
        except InvalidChange:
            return False
        return True

    def seal_run(self, job_id: str, run_dir: Path) -> None:
        """The run in ``run_dir`` is over: its leg wrote its last file (``jobs.runner``, ``jobs.
        foreground``, however the leg ended). Where its job ended while that run still wrote (a
        cancel, a rejection that landed first: sealed then, as the folder was) and its signed record
        still names the folder, the seal is made anew, of the folder as its run left it: an honest
        folder never reads "changed after the run ended" for its own last lines. Nothing is written
        while the job runs on unsealed, names another folder, is sealed as the folder is, or holds
        the seal made as it parked (that leg's folder was final then: never sealed again)."""
        folder = run_dir.resolve()
        trusted: list[bool] = []

        def change(job: Job) -> None:
            named = job.run_dir is not None and Path(job.run_dir).resolve() == folder
            if not (trusted[-1] and named and (job.status in ENDED or job.run_seal is not None)):
                raise InvalidChange("not this run's ending")
            if job.run_seal is not None and job.run_seal.parked:
                raise InvalidChange("sealed as it parked")
            now = seal(folder)
            if now == job.run_seal:
                raise InvalidChange("sealed as it is")
            job.run_seal = now

        with suppress(InvalidChange, UnknownJob):
            self._update(
                job_id,
                change,
                event=None,
                seen=lambda job, _: trusted.append(job.record_trust == "signed"),
                sealing=False,
            )

    def leg(self, job_id: str) -> int:
        return self._leg(job_id)

    # intents: recorded before a data-changing submission is sent
    def intent(self, key: str) -> Intent | None:
        with self._tx() as conn:
            row = conn.execute(sa.select(INT.c.key, INT.c.job_id, INT.c.doc).where(INT.c.key == key)).first()
        return self._read_intent(str(row[0]), str(row[1]), str(row[2])) if row else None

    def save_intent(self, intent: Intent) -> None:
        doc = self._signed_intent(intent)
        with self._tx() as conn:
            if conn.execute(INT.update().where(INT.c.key == intent.key).values(doc=doc)).rowcount == 0:
                conn.execute(INT.insert().values(key=intent.key, job_id=intent.job_id, doc=doc))

    def add_intent(self, intent: Intent) -> Intent | None:
        """Record a first attempt, atomically: None when this call recorded it, else the intent another
        leg recorded under the same key first (it is not overwritten)."""
        doc = self._signed_intent(intent)
        try:
            with self._tx() as conn:
                conn.execute(INT.insert().values(key=intent.key, job_id=intent.job_id, doc=doc))
        except JobStoreError as exc:
            earlier = self.intent(intent.key) if isinstance(exc.__cause__, IntegrityError) else None
            if earlier is None:
                raise
            return earlier
        return None

    def intents(self, job_id: str | None = None) -> builtins.list[Intent]:
        query = sa.select(INT.c.key, INT.c.job_id, INT.c.doc)
        if job_id is not None:
            query = query.where(INT.c.job_id == job_id)
        with self._tx() as conn:
            return [self._read_intent(str(r[0]), str(r[1]), str(r[2])) for r in conn.execute(query)]

    def intents_of(self, job_ids: Sequence[str]) -> dict[str, builtins.list[Intent]]:
        """The intents of many jobs, read together (one query for a listing's jobs; a list longer
        than 500 ids is read 500 at a time), each checked as ``intents`` checks it."""
        found: dict[str, builtins.list[Intent]] = {}
        ids = sorted(set(job_ids))
        with self._tx() as conn:
            for start in range(0, len(ids), 500):
                query = sa.select(INT.c.key, INT.c.job_id, INT.c.doc).where(
                    INT.c.job_id.in_(ids[start : start + 500])
                )
                for r in conn.execute(query):
                    found.setdefault(str(r[1]), []).append(self._read_intent(str(r[0]), str(r[1]), str(r[2])))
        return found

    def _signed_intent(self, intent: Intent) -> str:
        intent.updated_at = utcnow()
        data = self._sealed("intent", {}, json.loads(intent.model_dump_json()), "sig")
        intent.sig = data["sig"]
        return json.dumps(data)

    def _read_intent(self, key: str, job_id: str, doc: str) -> Intent:
        """A stored intent as the job reads it: one taskcrew did not write (edited, added, moved from
        another job, or from before intents were signed) is a send whose answer nobody knows, so a
        repeat of it needs a person's approval (``tools.intents``: an attempt in doubt)."""
        data = json.loads(doc)
        intent = Intent.model_validate(data)
        if intent.key == key and intent.job_id == job_id and self._seal_ok("intent", {}, data, "sig"):
            return intent
        said = f"{intent.status}: {intent.result or ''}".strip(": ")[:80]
        return intent.model_copy(
            update={
                "key": key,
                "job_id": job_id,
                "status": "uncertain",
                "seen": "unknown",
                "approved_again": False,  # nobody's judgement: a forged row approves nothing
                "trusted": False,
                "result": (
                    f"not signed: the job database's record of this submission was changed or added "
                    f"outside taskcrew (it says {said!r}); whether the system applied it is not known"
                ),
            }
        )

    # checkpoints: the run's state after each stage
    def checkpoint(self, job_id: str) -> dict[str, Any] | None:
        """The run's state as a leg of this job saved it; None when there is none, or when taskcrew did
        not write it (edited or added in the job database — a plan, finished steps or a verdict that
        a resumed leg would build on — or saved by a version before checkpoints were signed): the
        run then starts over (its sends are not repeated: the intents and the audit log say what
        it sent)."""
        from taskcrew.approvals import seals

        with self._tx() as conn:
            row = conn.execute(sa.select(CK.c.doc).where(CK.c.job_id == job_id)).first()
        if row is None:
            return None
        saved = json.loads(str(row[0]))
        state = saved.get("state") if isinstance(saved, dict) else None
        if isinstance(state, dict) and self.keys.verify(seals.checkpoint(job_id, state), saved.get("sig")):
            return state
        log.warning(
            "job %s: its checkpoint is not one taskcrew wrote (not signed); the run starts over", job_id
        )
        return None

    def save_checkpoint(
        self,
        job_id: str,
        doc: dict[str, Any],
        *,
        leg: int | None = None,
        worker: str | None = None,
        spent: Sequence[str] = (),
        token: str | None = None,
    ) -> bool:
        """Save the run's state; given ``leg`` (and ``worker``), only while the job runs that leg
        (held by that worker), checked in the same transaction as the write: a leg that lost the job
        meanwhile writes nothing (False). Signed, with the job's id (``checkpoint`` checks it).

        ``spent``: the answers to this job's questions the run took before this state, marked used in
        the same transaction: an answer is spent when the state built on it is saved, so a leg that
        ends before its next checkpoint leaves it to the next leg, and the person is not asked again."""
        from taskcrew.approvals import seals

        state = json.loads(json.dumps(doc, default=str))  # signed as it will read back
        raw = json.dumps({"state": state, "sig": self.keys.sign(seals.checkpoint(job_id, state))})
        with self._tx() as conn:
            if leg is not None:
                # the job row locked (Postgres) until the write: a takeover waits for it, or comes first
                row = conn.execute(
                    sa.select(J.c.doc, J.c.leg).where(J.c.id == job_id).with_for_update()
                ).first()
                if row is None or int(row[1]) != leg:
                    return False
                job = Job.model_validate_json(str(row[0]))
                if not holds(job, worker or None, token):
                    return False
            if conn.execute(CK.update().where(CK.c.job_id == job_id).values(doc=raw)).rowcount == 0:
                conn.execute(CK.insert().values(job_id=job_id, doc=raw))
            for approval_id in spent:
                row = conn.execute(
                    sa.select(A.c.doc).where(A.c.id == approval_id, A.c.job_id == job_id)
                ).first()
                if row is not None:
                    approval = Approval.model_validate_json(str(row[0]))
                    approval.used = True
                    _put_approval(conn, approval)
        return True

    def clear_checkpoint(self, job_id: str, *, leg: int | None = None) -> None:
        """Drop the job's checkpoint; given ``leg``, only while the job is still on that leg (checked
        in the same transaction): a leg that lost its job meanwhile never drops the newer leg's."""
        with self._tx() as conn:
            if leg is not None:
                row = conn.execute(sa.select(J.c.leg).where(J.c.id == job_id).with_for_update()).first()
                if row is None or int(row[0]) != leg:
                    return
            conn.execute(CK.delete().where(CK.c.job_id == job_id))

    def close(self) -> None:
        close = getattr(self.on_enqueue, "close", None)
        if close is not None:
            close()  # the store's own DBOS client
        self.engine.dispose()

    # ---- internals ------------------------------------------------------------------------------
    def _enqueue(self, job: Job, leg: int) -> None:
        if self.on_enqueue is not None:
            self.on_enqueue(job, leg)

    def _leg(self, job_id: str) -> int:
        with self._tx() as conn:
            row = conn.execute(sa.select(J.c.leg).where(J.c.id == job_id)).first()
        if row is None:
            raise UnknownJob(f"no job with id {job_id!r}")
        return int(row[0])

    def _update(
        self,
        job_id: str,
        change: Callable[[Job], None],
        *,
        event: tuple[str, str, str | None] | None,
        new_leg: bool = False,
        leg: int | None = None,
        seen: Callable[[Job, int], None] | None = None,
        wrote: builtins.list[int] | None = None,
        also: Callable[[sa.Connection], None] | None = None,
        sealing: bool = True,
    ) -> Job:
        """Read-modify-write with a compare-and-set on the stored document (safe across workers);
        given ``leg``, only while the job is on that leg (else InvalidChange). ``seen``: told the
        job (as every surface reads it: ``_read``) and its leg each time the row is read;
        ``wrote``: given the leg the change was signed on; ``also``: more writes, made in the same
        transaction once the change is in (all or nothing). A batch's child that ends has its
        batch checked (``settle_batch``).

        The one place a job ends (finished, failed, cancelled: rejected and expired are finished)
        or parks (set waiting): a signed record that ends or parks naming a run folder has the folder
        sealed into it as it is now (``_seal_ending``; ``sealing`` False: the caller set ``run_seal``
        itself), a seal made as it parked kept at its ending. A leg still
        writing its folder when another ends its job (a cancel) seals it again once its run is
        over (``seal_run``)."""
        self.keys  # noqa: B018 - the ring checked (and the database marked) before the write begins
        for _ in range(20):
            with self._tx() as conn:
                row = conn.execute(sa.select(J.c.doc, J.c.leg).where(J.c.id == job_id)).first()
                if row is None:
                    raise UnknownJob(
                        f"no job with id {job_id!r}; `taskcrew jobs list` shows the jobs there are"
                    )
                old_doc, current = str(row[0]), int(row[1])
                if seen is not None:
                    seen(self._read(job_id, old_doc, current), current)
                if leg is not None and leg != current:
                    raise InvalidChange(f"on leg {current}, not {leg}")
                data = json.loads(old_doc)
                job = Job.model_validate(data)
                trust = self._trust(data, job, job_id, current)  # before ``change`` alters ``job``
                job.record_trust = trust  # as ``change`` judges it (``retry_refusal``)
                was = job.status
                change(job)
                parks, ends = job.status == "waiting" != was, job.status in ENDED and was not in ENDED
                if sealing and trust == "signed" and (parks or ends):
                    _seal_ending(job, parked=parks)
                job.updated_at = utcnow()
                if trust != "signed":  # never signed over: a forged record stays one whoever writes it,
                    # and so does one without a signature (legacy: it may have had one)
                    job.record_sig, job.record_trust = (VOID if trust == "forged" else None), trust
                    doc = job.model_dump_json()
                else:
                    doc = self._job_text(job, current + 1 if new_leg else current)
                values: dict[str, Any] = {"status": job.status, "doc": doc}
                if new_leg:
                    values["leg"] = current + 1
                if conn.execute(
                    J.update().where(J.c.id == job_id, J.c.doc == old_doc).values(**values)
                ).rowcount:
                    if event is not None:
                        self._event(conn, job_id, *event)
                    if also is not None:
                        also(conn)
                    break
        else:
            raise JobStoreError(f"job {job_id} kept changing underneath; try again")
        if wrote is not None:
            wrote.append(current + 1 if new_leg else current)
        if job.parent_id and job.status in ENDED and was not in ENDED:
            self._child_ended(job)
        return job

    def _child_ended(self, child: Job) -> None:
        """A child job ended: its batch finishes if it was the last one it waited for. After the
        child's own commit, so of two children ending at once the later one sees the other ended; a
        process stopped in between leaves the batch to the watch loop (``resume``)."""
        try:
            self.settle_batch(str(child.parent_id))
        except Exception as exc:  # the child's end stands; the watch loop settles the batch
            log.warning("job %s ended; its batch %s is not settled yet: %s", child.id, child.parent_id, exc)

    def _event(self, conn: sa.Connection, job_id: str, kind: str, detail: str, actor: str | None) -> None:
        ev = JobEvent(job_id=job_id, at=utcnow(), kind=kind, detail=detail, actor=actor)
        doc = self._sealed("event", {}, json.loads(ev.model_dump_json()), "sig")
        conn.execute(EV.insert().values(job_id=job_id, doc=json.dumps(doc)))


def _seal_ending(job: Job, *, parked: bool = False) -> None:
    """Seal the run folder an ending (or, ``parked``, a parking) job's record names (``jobs.
    runseal``). A folder its record holds a seal of already keeps it: the one made as its leg
    parked (an edit while the job waited is then told, never sealed in), or an earlier leg's,
    sealed as that leg ended, named still by a job that ends before its next leg made a folder."""
    if not job.run_dir:
        return
    folder = Path(job.run_dir).resolve()
    if job.run_seal is not None and Path(job.run_seal.folder) == folder:
        return
    job.run_seal = seal(folder, parked=parked)
    job.run_seal_format = RUN_SEAL_FORMAT


def too_late(approval: Approval) -> str:
    """What a person is told who decides ``approval`` after its deadline (``past_deadline``)."""
    why = past_deadline(approval, approval.expires_at) if approval.expires_at else None
    return (
        f"{why or f'the approval {approval.id} expired unanswered'}: it is already expired and can no "
        "longer be decided; its job ends rejected. Submit the task again if it should still be done"
    )


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def _looks_like_sqlite(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
