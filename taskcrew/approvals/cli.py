"""`taskcrew approvals …`: a thin client of the approvals authority (``approvals.authority``).

list | show | approve | reject | answer act as the CLI's proven identity (``approvals.identity``):
a personal token from `approvals login` (TASKCREW_TOKEN, or the saved one), else the OS user where
no rule needs more. login | logout | whoami manage that identity; rotate-key and audit are for the
operator.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

approvals_app = typer.Typer(help="Approvals and questions that parked jobs wait for.", no_args_is_help=True)

DbUrl = Annotated[
    str | None,
    typer.Option(
        "--db", help="The job database URL (default: TASKCREW_JOBS_DB, else SQLite in TASKCREW_HOME)."
    ),
]


def screen_width() -> int:
    """The terminal's columns (``COLUMNS``, else the terminal's, else 80): what a line is fitted to."""
    import shutil

    return shutil.get_terminal_size().columns


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def identity() -> Any:
    """The CLI's proven identity, or a clear error (exit 2)."""
    from taskcrew.approvals.identity import IdentityError, cli_identity

    try:
        return cli_identity()
    except IdentityError as exc:
        raise fail(str(exc)) from exc


def _authority(db: str | None) -> Any:
    """The authority, its rules file read when first used: while it cannot be read, approvals are
    still listed and shown unjudged and can be rejected; the authority refuses the rest, saying why."""
    from taskcrew.approvals.authority import lazy_authority
    from taskcrew.jobs.store import Jobs, JobStoreError

    try:
        jobs = Jobs.open(db, create=False, make_folder=False)  # never a new database
    except JobStoreError as exc:
        raise fail(str(exc)) from exc
    return lazy_authority(jobs)


def _unreadable(authority: Any) -> str | None:
    """Why the rules cannot be read now (said on stderr, once), else None (``rules_unreadable``)."""
    said: str | None = authority.rules_unreadable()
    if said:
        typer.echo(f"warning: {said}", err=True)
    return said


def _approval(authority: Any, approval_id: str) -> Any:
    from taskcrew.jobs.store import UnknownApproval

    try:
        return authority.jobs.approval(approval_id)
    except UnknownApproval as exc:
        raise fail(str(exc.args[0]), 1) from exc


@approvals_app.command("list")
def approvals_list(
    all_: Annotated[bool, typer.Option("--all", help="Decided and expired ones too.")] = False,
    db: DbUrl = None,
) -> None:
    """Pending approvals and questions, oldest first: one row each (a question's line breaks shown as
    markers, a long one cut; `approvals show ID` shows it whole)."""
    from taskcrew.approvals.visible import cut_shown, visible
    from taskcrew.tools.human import fit

    authority = _authority(db)
    unread = _unreadable(authority)
    found = authority.jobs.approvals(None if all_ else "pending")
    if not found:
        typer.echo("No approvals." if all_ else "Nothing waits for approval.")
    for a in found:
        view = authority.unjudged(a) if unread else authority.view(a)
        what = visible(
            a.question if a.kind == "question" else f"{a.request.method} {a.request.url}" if a.request else ""
        )  # the model's words, never their own layout: its line breaks are markers, not rows
        what = cut_shown(what, f"`taskcrew approvals show {a.id}`")
        if view.problem:
            what = f"CANNOT BE TRUSTED: {view.problem}"
        rules = [f.rule for f in view.assessment.flags]
        if a.request is not None and a.request.asked_again:  # approved before, when the record said otherwise
            rules.insert(0, "asked_again")
        if unread:  # no flag is read: none is shown as if it were
            rules.append("risk not read: the rules could not be read")
        flags = f"  [{', '.join(rules)}]" if rules else ""
        # on a terminal, a row wider than it goes on on lines marked continued (``fit``), never at
        # column 0; piped, one line a row
        row = visible(f"{a.id}  {a.status}  job {a.job_id}  {a.kind}: ") + what + flags
        typer.echo(fit([row], screen_width() if sys.stdout.isatty() else None))


def _changed_files(sealed: dict[str, str] | None, cited: list[str]) -> list[str]:
    """The cited files that are not the ones sealed with the approval, by the console's rule
    (``console.documents.seal_of``), read where this command runs."""
    if sealed is None:  # parked before cited files were sealed
        return []
    from taskcrew.config import Paths
    from taskcrew.console.documents import Documents

    documents = Documents(Paths.from_env().sandbox)
    return [f for f in dict.fromkeys(cited) if documents.seal(f, sealed.get(f, "")) == "changed"]


@approvals_app.command("show")
def approvals_show(
    approval_id: str,
    full: Annotated[bool, typer.Option("--full", help="Every value whole, however long.")] = False,
    db: DbUrl = None,
) -> None:
    """One approval: the exact payload (once checked against its key), its sources, risk and decision.
    A value longer than 200 characters is cut (--full shows it whole); a line wider than the terminal
    goes on on lines that start "  ┆ "; the payee, amount, bank details and due date come last."""
    from taskcrew.approvals.origins import field_sources
    from taskcrew.approvals.visible import visible
    from taskcrew.tools.human import continued, deciding_lines, describe_request, fit

    authority = _authority(db)
    a = _approval(authority, approval_id)
    lines = [visible(f"{a.id}  {a.kind}  {a.status}  job {a.job_id}")]
    unread = _unreadable(authority)
    view = authority.unjudged(a) if unread else authority.view(a)
    if view.problem:  # first, judged or not: nothing of a row that does not check out is shown
        lines.append(continued(visible(f"This approval cannot be trusted: {view.problem}.", layout=True)))
        typer.echo(fit(lines, screen_width()))
        return
    if unread:  # what it asks, and nothing the rules would read of it
        what = (
            a.question if a.kind == "question" else f"{a.request.method} {a.request.url}" if a.request else ""
        )
        lines.append(continued(visible(what, layout=True)))
        lines.append("risk: not read (the rules could not be read); no value is shown until they can be")
        typer.echo(fit(lines, screen_width()))
        return
    more = None if full else f"`taskcrew approvals show {a.id} --full` shows them all"  # where a cut value is
    request = a.request
    if request is not None:  # every value shown visible, there; what decides it comes last (below)
        lines.append(describe_request(request, full_values=more, rules=authority.rules, deciding=False))
    if a.question:
        lines.append(continued(visible(a.question, layout=True)))  # its further lines marked continued
    origins = field_sources(view)
    for name, origin in origins.items():  # the console's account of each origin
        lines.append(f"  {visible(name)}: from {visible(origin.text)}")  # one line each, line breaks marked
    for changed in _changed_files(a.files_sha256, [o.file for o in origins.values() if o.file]):
        lines.append(
            f"  ⚠ {visible(changed)} changed since the approval was parked: not what the run read; "
            "do not decide from it"
        )
    for flag in view.assessment.flags:
        lines.append(visible(f"risk: {view.said(flag)}"))
    if view.needs_two:
        firsts = ", ".join(view.first_approvers) or "none yet"
        lines.append(
            f"two-person rule: two authenticated approvers, not the submitter (first approval: {firsts})"
        )
    if a.screenshot:
        lines.append(f"screenshot: {a.screenshot}")
    if a.expires_at:
        lines.append(f"expires: {a.expires_at:%Y-%m-%d %H:%M} UTC")
    if a.decision:
        by = a.decision.by or a.decided_by
        lines.append(visible(f"decision: {a.decision.outcome} {a.decision.text or ''} by {by}"))
    if request is not None and (request.fields or request.looked_up):  # last: on screen, whatever came before
        lines.extend(deciding_lines(request, authority.rules, more))
    typer.echo(fit(lines, screen_width()))


def _decide(approval_id: str, action: str, text: str, db: str | None) -> None:
    from taskcrew.crew.stopping import signals_deferred
    from taskcrew.jobs.engine import prepare_to_enqueue

    authority = _authority(db)
    prepare_to_enqueue(authority.jobs)  # the queue's client is made before anything is written
    with signals_deferred():  # a Ctrl-C waits for the decision, its signed entry and the job's resume
        result = authority.decide(approval_id, action, identity(), text)
        if result.status != "refused":
            typer.echo(f"{approval_id}  {result.message}")
    if result.status == "refused":
        raise fail(result.message, 1)


@approvals_app.command("approve")
def approvals_approve(approval_id: str, db: DbUrl = None) -> None:
    """Approve exactly the shown payload, under the risk rules; the job resumes (on any worker)."""
    _decide(approval_id, "approve", "", db)


@approvals_app.command("reject")
def approvals_reject(
    approval_id: str,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (the run sees it).")] = None,
    db: DbUrl = None,
) -> None:
    """Reject; the run ends 'rejected' (or, for a question, stops)."""
    _decide(approval_id, "reject", reason or "", db)


@approvals_app.command("answer")
def approvals_answer(approval_id: str, text: str, db: DbUrl = None) -> None:
    """Answer a question (or reply to an approval with guidance instead of approving)."""
    _decide(approval_id, "answer", text, db)


@approvals_app.command("login")
def approvals_login(
    name: Annotated[str, typer.Option("--name", prompt=True, help="Your console user name.")],
    password: Annotated[str, typer.Option("--password", prompt=True, hide_input=True, help="Your password.")],
    print_token: Annotated[
        bool, typer.Option("--print-token", help="Print the token (for TASKCREW_TOKEN) instead of saving it.")
    ] = False,
) -> None:
    """Prove who you are (the console's users file): a personal token, stored hashed by the authority."""
    import os

    from taskcrew.approvals.identity import IdentityError, login, saved_token_path

    try:
        token = login(name.strip(), password)
    except (IdentityError, ValueError) as exc:
        raise fail(str(exc)) from exc
    if print_token:
        typer.echo(token)
        return
    path = saved_token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    typer.echo(f"logged in as {name.strip()}; the token is saved in {path} (or set TASKCREW_TOKEN)")


@approvals_app.command("logout")
def approvals_logout() -> None:
    """Revoke the saved personal token."""
    from taskcrew.approvals.identity import TokenStore, saved_token_path

    path = saved_token_path()
    if not path.is_file():
        typer.echo("not logged in (no saved token)")
        return
    TokenStore().revoke(path.read_text(encoding="utf-8"))
    path.unlink()
    typer.echo("logged out; the token is revoked")


@approvals_app.command("whoami")
def approvals_whoami() -> None:
    """Who the CLI acts as, and how that is proven."""
    typer.echo(identity().describe())


@approvals_app.command("rotate-key")
def approvals_rotate_key(
    retire_old: Annotated[
        bool,
        typer.Option(
            "--retire-old",
            help="Drop the earlier keys: everything they signed is void (archive the audit log first).",
        ),
    ] = False,
    remark: Annotated[
        bool,
        typer.Option(
            "--remark",
            help="Make no key: mark the job database(s) again with the current key, where a key this "
            "approvals folder retired marked them.",
        ),
    ] = False,
    dbs: Annotated[
        list[str] | None,
        typer.Option(
            "--db",
            help="A job database the workers use, marked with the new key (repeatable; default: "
            "TASKCREW_JOBS_DB, else SQLite in TASKCREW_HOME, if there is one).",
        ),
    ] = None,
) -> None:
    """Start signing with a new operator key (earlier keys still verify unless --retire-old). With
    --retire-old, every job database named by --db (default: TASKCREW_JOBS_DB, else the home's) is
    marked with the new key; --remark repairs one a rotation missed."""
    from taskcrew.approvals.signing import KeyRing
    from taskcrew.jobs.store import where

    if remark and retire_old:
        raise fail("--remark makes no key: give it without --retire-old")
    ring = KeyRing.default()
    # checked, and marked by a key the ring holds, while the old keys still prove the mark
    jobs = _marked_jobs(ring, dbs, remark=remark) if retire_old or remark else []
    try:
        if remark:
            return
        new = ring.rotate(retire_old=retire_old)
        for db in jobs:  # signed with the new key from now on (``Jobs.remark_keys``)
            typer.echo(f"job database {where(db.url)}: {db.remark_keys(KeyRing.default())}")
    finally:
        for db in jobs:
            db.close()
    note = (
        "earlier keys retired: earlier signatures no longer verify; pending approvals must be given "
        "again, and queued or waiting jobs submitted again"
        if retire_old
        else "earlier keys still verify"
    )
    typer.echo(f"new signing key {new} in {ring.path} ({note})")


def _marked_jobs(ring: Any, dbs: list[str] | None, *, remark: bool) -> list[Any]:
    """The job databases ``dbs`` (none: ``TASKCREW_JOBS_DB``, else the home's, if there is one), each
    marked by a key ``ring`` holds (``Jobs.remark_keys``: one marked by a key it retired is marked
    again, one of another approvals folder refused). A named one that cannot be: exit 2, no key made."""
    from taskcrew.jobs.store import Jobs, JobStoreError, NoJobDatabase, where

    opened: list[Any] = []
    urls: list[str | None] = [*dbs] if dbs else [None]
    for url in urls:
        try:
            jobs = Jobs.open(url, create=False, make_folder=False, check_ring=False)
            try:
                did = jobs.remark_keys(ring)
            except JobStoreError:
                jobs.close()
                raise
            opened.append(jobs)
            if remark or not did.startswith("already"):
                typer.echo(f"job database {where(jobs.url)}: {did}")
        except JobStoreError as exc:
            if dbs or remark:  # a repair asked for and nothing repaired: no quiet exit 0
                for done in opened:
                    done.close()
                raise fail(f"{exc} (no key was made or retired)") from exc
            typer.echo(
                f"note: no job database was marked ({exc}); for each one the workers use, run `taskcrew "
                "approvals rotate-key --remark --db URL`"
                if isinstance(exc, NoJobDatabase)
                else f"note: the default job database was not marked: {exc}",
                err=True,
            )
    return opened


@approvals_app.command("audit")
def approvals_audit() -> None:
    """Verify the audit log's keyed chain and signed head; exit 1 and say where it breaks."""
    from taskcrew.approvals.audit import AuditLog
    from taskcrew.approvals.signing import KeyRing, approvals_dir

    log = AuditLog(approvals_dir() / "audit.jsonl", KeyRing.default())
    problems = log.verify()
    for p in problems:
        typer.echo(f"line {p.line}: {p.problem}")
    if problems:
        raise typer.Exit(1)
    typer.echo(f"audit log intact: {len(log.entries())} entries")
