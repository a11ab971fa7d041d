"""The approval identity seam attacked where a red-team found it open, over real HTTP against the
console served by uvicorn (the real job store on SQLite), and the honest paths beside each fix.

- An emptied or deleted users file (the obvious way to lock everyone out) let every console
  session and CLI token count again and turned the two-person rule off: one person approved a
  payment that needed two. Now no login proven by a user's password counts while the users file
  lists nobody (``identity.current_users``, ``identity.standing_refusal``); the console's start-up
  token still logs in where there are no users; a worker given no users file at all still obeys the
  decisions signed where logins were checked. ``console remove-user`` takes a user away.
- The login throttle was escaped by a forged X-Forwarded-For (uvicorn trusted it from 127.0.0.1):
  the address is the connection's now.
- "Bob" beside "bob" counted as two people: the users file may not hold them, and the authority
  compares people case-folded (``identity.person``).
- With fewer than two users the decision page said "needs a second approver" and then "One
  approver suffices": it now says why one suffices (``ApprovalView.said``).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from fixtures_console import PASSWORDS
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import (
    STARTUP_CREDENTIAL,
    Identity,
    TokenStore,
    identity_refusal,
    login,
    startup_credential,
)
from taskcrew.cli import app
from taskcrew.console.auth import ConsoleUserError, add_user, load_users
from taskcrew.console.server import ConsoleServer, prepare
from taskcrew.console.sessions import SessionStore, identity_of
from taskcrew.console.settings import ConsoleSettings
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue

ERP = "http://127.0.0.1:8800"


def _request(amount: str) -> ApprovalRequest:
    fields = {"csrf_token": "tok-1", "vendor_id": "3", "invoice_number": "INV-2057", "amount": amount}
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP}/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )


class Office:
    """A users file (ana, bob, carol), a job store, the authority and the console over HTTP."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch, users: Path | None) -> None:
        self.users = tmp / "users.yaml"
        if users is not None:
            self.users.write_bytes(users.read_bytes())
        url = f"sqlite:///{tmp / 'jobs.sqlite3'}"
        monkeypatch.setenv("TASKCREW_JOBS_DB", url)
        monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp / "approvals"))
        monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(self.users))
        monkeypatch.setenv("TASKCREW_HOME", str(tmp / "home"))
        monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
        monkeypatch.delenv("TASKCREW_RISK_RULES", raising=False)
        self.jobs = Jobs.open(url)
        self.authority = Authority(self.jobs, users_file=self.users)
        settings = ConsoleSettings(
            port=0,
            state_dir=tmp / "console",
            runs_dirs=[],
            eval_dirs=[],
            users_file=self.users,
            jobs_url=url,
            approvals_dir=tmp / "approvals",
        )
        self.settings, self.startup_token = prepare(settings)  # a token only where there are no users
        self.server = ConsoleServer(self.settings, self.jobs).start()
        self.base = self.server.url
        self.clients: list[httpx.Client] = []

    def park(self, submitter: str, amount: str, proof: str = "token") -> str:
        """A job submitted by ``submitter`` waiting on its payment of ``amount``: the approval's id."""
        job = self.jobs.submit("Enter the Northwind invoice", submitted_by=submitter, submitted_proof=proof)
        self.jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked) as parked:
            JobHuman(self.jobs, job.id).approve(_request(amount))
        self.jobs.mark(job.id, "waiting", only_if=("running",))
        return parked.value.approval_id

    def client(self) -> httpx.Client:
        client = httpx.Client(base_url=self.base, follow_redirects=False, timeout=60)
        self.clients.append(client)
        return client

    def sign_in(
        self, client: httpx.Client, name: str, password: str, forwarded_for: str | None = None
    ) -> httpx.Response:
        form = client.get("/login")
        csrf = form.text.split('name="csrf" value="')[1].split('"')[0]
        headers = {"Origin": self.base, **({"X-Forwarded-For": forwarded_for} if forwarded_for else {})}
        data = {"username": name, "password": password, "csrf": csrf, "next": "/"}
        return client.post("/login", data=data, headers=headers)

    def login(self, name: str, password: str | None = None) -> httpx.Client:
        client = self.client()
        signed = self.sign_in(client, name, password or PASSWORDS[name])
        assert signed.status_code == 303, signed.text
        return client

    def decide(self, client: httpx.Client, approval_id: str, action: str = "approve") -> httpx.Response:
        page = client.get(f"/approvals/{approval_id}")
        assert page.status_code == 200, (page.status_code, page.headers.get("location"))
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        data = {"csrf": csrf, "action": action, "text": ""}
        return client.post(f"/approvals/{approval_id}/decide", data=data, headers={"Origin": self.base})

    def token(self, name: str) -> Identity:
        """``name``'s CLI token identity, as `taskcrew approvals login` issues it."""
        who = TokenStore().identity(login(name, PASSWORDS[name], self.users))
        assert who is not None
        return who

    def restart(self) -> None:
        """The console stopped and started again on the same state (sessions survive a restart): it
        prints a new start-up token where there are no users, none where there are."""
        self.server.stop()
        self.settings, self.startup_token = prepare(self.settings.model_copy(update={"token": None}))
        self.server = ConsoleServer(self.settings, self.jobs).start()
        self.base = self.server.url

    def moved(self, client: httpx.Client) -> httpx.Client:
        """``client``'s cookies (its session), on the console as it runs now (a restart's new port)."""
        moved = httpx.Client(base_url=self.base, follow_redirects=False, timeout=60, cookies=client.cookies)
        self.clients.append(moved)
        return moved

    def start_up_sessions(self) -> int:
        """How many sessions opened with a start-up token the console's session store holds."""
        with contextlib.closing(sqlite3.connect(self.settings.state_dir / "console.sqlite3")) as db:
            row = db.execute(
                "SELECT count(*) FROM sessions WHERE credential LIKE 'start-up token%'"
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        for client in self.clients:
            client.close()
        self.server.stop()
        self.jobs.close()


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[Office]:
    made = Office(tmp_path, monkeypatch, console_users)
    yield made
    made.close()


@pytest.fixture
def empty_office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Office]:
    """The console started with no users file: it prints a start-up token (``server.prepare``)."""
    made = Office(tmp_path, monkeypatch, None)
    yield made
    made.close()


def _logged_out(client: httpx.Client, path: str = "/approvals") -> bool:
    page = client.get(path)
    return page.status_code == 303 and page.headers["location"].startswith("/login")


def _two_person_approved(office: Office, approval_id: str) -> None:
    """bob then carol approve ``approval_id`` with their CLI tokens (ana submitted it)."""
    bob, carol = office.token("bob"), office.token("carol")
    assert office.authority.decide(approval_id, "approve", bob).status == "first_approval"
    done = office.authority.decide(approval_id, "approve", carol)
    assert done.status == "decided", done.message
    assert office.jobs.approval(approval_id).decided_by == "bob+carol"


# ---- 1. no users: nobody's login counts ------------------------------------------------------------


def test_emptying_the_users_file_locks_every_session_and_token_out(office: Office) -> None:
    """The incident action: the operator empties the users file. bob's open console session opens
    no page and decides nothing, carol's CLI token decides nothing, nobody signs in, and the 9500.00
    payment that needed two people is not approved by one of them. Before: bob's cookie still opened
    every page and, the two-person rule off with no users, bob alone approved it."""
    approval_id = office.park("ana", "9500.00")
    bob = office.login("bob")
    carol = office.token("carol")
    assert "two approvers" in bob.get("/approvals").text  # the rule as it stood

    office.users.write_text("users: []\n", encoding="utf-8")

    assert _logged_out(bob) and _logged_out(bob, f"/approvals/{approval_id}")
    refused = bob.post(
        f"/approvals/{approval_id}/decide", data={"action": "approve"}, headers={"Origin": office.base}
    )
    assert refused.status_code == 401  # no session: refused before any decision
    by_token = office.authority.decide(approval_id, "approve", carol)
    assert by_token.status == "refused" and "the users file lists no users" in by_token.message
    assert "taskcrew console add-user" in by_token.message
    again = office.sign_in(office.client(), "bob", PASSWORDS["bob"])
    assert again.status_code == 401 and "Nobody can sign in" in again.text
    assert office.jobs.approval(approval_id).status == "pending"
    unbound = Identity(name="bob", proof="token")  # a token from before tokens kept a credential
    assert identity_refusal(unbound, office.users) is not None


def test_deleting_the_users_file_locks_the_console_out_too(office: Office) -> None:
    """The users file removed instead of emptied: carol's console session (proven by her password)
    counts for nothing in a process that has no users, so she cannot approve the 9500.00 payment
    alone. Before: with no file the two-person rule was off and her session still counted."""
    approval_id = office.park("ana", "9500.00")
    carol, carol_token = office.login("carol"), office.token("carol")
    office.users.unlink()
    assert _logged_out(carol, f"/approvals/{approval_id}")
    refused = office.authority.decide(approval_id, "approve", carol_token)
    assert refused.status == "refused" and "the users file lists no users" in refused.message
    assert office.jobs.approval(approval_id).status == "pending"


def test_an_approval_given_before_the_file_was_emptied_is_not_obeyed(office: Office) -> None:
    """bob and carol approved the 9500.00 payment; then the users file is emptied before the worker
    sends it. The worker's check of whom it rests on (``approvers_refusal``) reads a file that lists
    nobody as "nobody counts", not as "cannot check". Before: it let it through."""
    approval_id = office.park("ana", "9500.00")
    _two_person_approved(office, approval_id)
    approval = office.jobs.approval(approval_id)
    assert office.authority.approvers_refusal(approval) is None
    assert office.authority.rules_refusal(approval) is None

    office.users.write_text("users: []\n", encoding="utf-8")
    worker = Authority(office.jobs, users_file=office.users)
    refusal = worker.approvers_refusal(office.jobs.approval(approval_id))
    assert refusal is not None and "the users file lists no users" in refusal


def test_a_worker_given_no_users_file_obeys_what_was_signed(office: Office, tmp_path: Path) -> None:
    """The documented worker case stays: a worker that was not given the console's users file (none
    at its path) cannot check passwords, so it obeys the two-person approval the console's process
    signed, judging only its names by its rules."""
    approval_id = office.park("ana", "9500.00")
    _two_person_approved(office, approval_id)
    worker = Authority(office.jobs, users_file=tmp_path / "elsewhere" / "users.yaml")
    approval = office.jobs.approval(approval_id)
    assert worker.approvers_refusal(approval) is None
    assert worker.rules_refusal(approval) is None


def test_a_normal_two_person_approval_over_http(office: Office) -> None:
    """The honest path: ana submits 9500.00, bob gives the first approval and carol the second in
    the console; the worker's checks let it through; ana could not have been one of them."""
    approval_id = office.park("ana", "9500.00")
    ana, bob, carol = office.login("ana"), office.login("bob"), office.login("carol")
    office.decide(ana, approval_id)
    assert office.jobs.approval(approval_id).status == "pending"
    assert not office.jobs.approval(approval_id).first_approvals
    office.decide(bob, approval_id)
    assert office.jobs.approval(approval_id).status == "pending"
    office.decide(carol, approval_id)
    approval = office.jobs.approval(approval_id)
    assert approval.status == "approved" and approval.decided_by == "bob+carol"
    assert office.authority.approvers_refusal(approval) is None
    assert office.authority.rules_refusal(approval) is None


def test_the_start_up_token_logs_in_where_there_are_no_users(empty_office: Office) -> None:
    """The console started with no users prints one token that logs in as "operator"; that login
    works (it proves no user's password, so no users file is needed), and approves a payment alone
    (one person on a laptop). A user added later ends it; bob's own session, opened while he was a
    user, ends when the file lists nobody again, while the start-up token's login counts again."""
    from taskcrew.console.auth import remove_user

    office = empty_office
    assert office.startup_token is not None and not office.users.exists()
    operator = office.client()
    assert office.sign_in(operator, "", office.startup_token).status_code == 303
    assert operator.get("/approvals").status_code == 200
    approval_id = office.park("operator", "9500.00", proof="console")
    office.decide(operator, approval_id)
    assert office.jobs.approval(approval_id).status == "approved"

    add_user(office.users, "bob", PASSWORDS["bob"])
    assert _logged_out(operator)  # the start-up token counts only while nobody is a user
    bob = office.login("bob")
    assert bob.get("/approvals").status_code == 200
    remove_user(office.users, "bob")
    assert load_users(office.users) == [] and office.users.exists()
    assert _logged_out(bob)
    again = office.client()
    assert office.sign_in(again, "", office.startup_token).status_code == 303
    assert again.get("/approvals").status_code == 200


def test_remove_user_takes_a_user_away(office: Office, monkeypatch: pytest.MonkeyPatch) -> None:
    """`taskcrew console remove-user NAME`: carol's session ends and her token counts for nothing;
    an unknown name, or one in the wrong case, is a clear error and changes nothing; removing the
    last user leaves a file that lists nobody, and says what that means."""
    carol_session = office.login("carol")
    carol_token = office.token("carol")
    cli = CliRunner()
    done = cli.invoke(app, ["console", "remove-user", "carol"])
    assert done.exit_code == 0, done.output
    assert "user carol removed" in done.output and "2 left: ana, bob" in done.output
    assert _logged_out(carol_session)
    assert (why := office.authority.identity_refusal(carol_token)) and "no longer a user" in why
    assert [u.name for u in load_users(office.users)] == ["ana", "bob"]

    unknown = cli.invoke(app, ["console", "remove-user", "mallory"])
    assert unknown.exit_code == 2 and "no user named 'mallory'" in unknown.output
    wrong_case = cli.invoke(app, ["console", "remove-user", "Bob"])
    assert wrong_case.exit_code == 2 and "did you mean 'bob'" in wrong_case.output
    assert [u.name for u in load_users(office.users)] == ["ana", "bob"]

    one = cli.invoke(app, ["console", "remove-user", "bob"])
    assert one.exit_code == 0 and "turns the two-person rule off" in one.output, one.output
    last = cli.invoke(app, ["console", "remove-user", "ana"])
    assert last.exit_code == 0 and "the users file lists no users" in last.output
    assert yaml.safe_load(office.users.read_text(encoding="utf-8")) == {"users": []}


def test_the_page_says_what_is_enforced_with_one_user(
    office: Office, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one user left the two-person rule (``two_person: auto``) is off, also for an item parked
    while there were three: the flag that asks for a second approver says it is not needed here, and
    why, beside "One approver suffices"; the worklist and `approvals show` say the same. Before: the
    flag said "needs a second approver" and the page "One approver suffices." (and bob approved)."""
    from taskcrew.console.auth import remove_user

    approval_id = office.park("ana", "9500.00")
    remove_user(office.users, "ana")
    remove_user(office.users, "carol")
    bob = office.login("bob")
    page = " ".join(bob.get(f"/approvals/{approval_id}").text.split())
    flags = page.split('id="risk-flags"', 1)[1].split("</ul>", 1)[0]
    assert "a second approver would be needed, but the two-person rule is off here" in flags
    assert "the users file lists fewer than two people" in flags and "one approver suffices" in flags
    assert "One approver suffices" in page.split('id="rule"', 1)[1]
    assert "one approver (the two-person rule is off here)" in bob.get("/approvals").text
    shown = CliRunner().invoke(app, ["approvals", "show", approval_id])
    assert shown.exit_code == 0, shown.output
    assert "but the two-person rule is off here" in " ".join(shown.output.split())
    office.decide(bob, approval_id)
    assert office.jobs.approval(approval_id).status == "approved"  # what the page said


# ---- 2. the login throttle keys on the connection's address --------------------------------------------


def test_a_forged_forwarded_for_does_not_escape_the_throttle(office: Office) -> None:
    """5 wrong passwords for bob from one client put bob-from-there on hold; the same client naming
    a new X-Forwarded-For address for each guess stays on hold, and the audit log records the real
    address. Before: uvicorn took the header from 127.0.0.1 and each guess came "from" elsewhere."""
    client = office.client()
    for i in range(5):
        assert office.sign_in(client, "bob", f"wrong-{i}").status_code == 401
    held = [office.sign_in(client, "bob", f"again-{i}", f"10.0.0.{i + 1}").status_code for i in range(3)]
    assert held == [429, 429, 429]
    assert office.sign_in(client, "bob", PASSWORDS["bob"], "10.0.1.1").status_code == 429
    refused = [e for e in office.authority.audit.entries() if e.action == "login_refused"]
    assert refused and {e.payload["address"] for e in refused} == {"127.0.0.1"}


def test_a_forged_forwarded_for_does_not_escape_the_per_address_limit(office: Office) -> None:
    """20 failed sign-ins for 20 names from one client hold that address, whatever address each
    request names in X-Forwarded-For."""
    client = office.client()
    codes = [office.sign_in(client, f"user{i}", "Summer2024!", f"192.0.2.{i}").status_code for i in range(21)]
    assert codes[:20] == [401] * 20 and codes[20] == 429
    assert office.sign_in(client, "carol", PASSWORDS["carol"], "198.51.100.7").status_code == 429


# ---- 3. names are people, whatever their case ------------------------------------------------------------


def test_a_name_in_another_case_is_not_a_second_person(office: Office) -> None:
    """`console add-user Bob` beside bob is refused (not a second login of one person, nor taken as a
    reset of bob's password unasked); a users file edited by hand to hold both is refused, naming
    both; and "Bob" cannot sign in. Before: "Bob" was added, and bob then Bob approved a 9500.00
    payment as two people."""
    before = office.users.read_bytes()
    with pytest.raises(ConsoleUserError, match="a user named 'bob' exists"):
        add_user(office.users, "Bob", "bob-new-secret")
    assert office.users.read_bytes() == before
    assert office.sign_in(office.client(), "Bob", "bob-new-secret").status_code == 401

    data = yaml.safe_load(before)
    data["users"].append({**data["users"][1], "name": "Bob"})
    office.users.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConsoleUserError, match="'bob' and 'Bob'"):
        load_users(office.users)
    cli = CliRunner().invoke(app, ["console", "add-user", "Bob"], input="bob-new-secret\nbob-new-secret\n")
    assert cli.exit_code == 2 and "'bob' and 'Bob'" in cli.output


def test_the_authority_compares_people_case_folded(office: Office) -> None:
    """A job submitted as "Ana" (token proof) is ana's: ana may not approve its two-person payment in
    the console, and a signed decision "bob+ana" (from a process with other rules) is not obeyed by
    the worker; she may not accept what her run proposed either. Before: "Ana" != "ana"."""
    approval_id = office.park("Ana", "9500.00")
    bob, ana = office.login("bob"), office.login("ana")
    office.decide(bob, approval_id)
    office.decide(ana, approval_id)
    approval = office.jobs.approval(approval_id)
    assert approval.status == "pending" and [c.name for c in approval.first_approvals] == ["bob"]
    assert "you submitted this task" in " ".join(ana.get(f"/approvals/{approval_id}").text.split())

    decision = ApprovalDecision(outcome="approve", by="bob and ana (two people)", basis="person")
    signed = office.jobs.decide(approval_id, decision, decided_by="bob+ana")
    refusal = office.authority.rules_refusal(signed)
    assert refusal is not None and "other than the submitter" in refusal
    assert office.authority.proposal_refusal("ana", "Ana", "run-1") is not None


# ---- 2. a start-up-token session counts only with the token that opened it ------------------------


def test_a_start_up_session_from_before_users_does_not_count_again(empty_office: Office) -> None:
    """The red-team's case over HTTP: on a fresh install the operator logs in with the start-up
    token; users are added and the console restarted with them (no token); later everyone is removed
    (to lock every login out: "Nobody can sign in"). The operator's 12-hour session opens no page and
    approves nothing, and a worker does not obey a decision it could have made. Before: a start-up
    session was known by a constant alone, so it counted again the moment the file listed nobody,
    with one-person approval power."""
    from taskcrew.console.auth import remove_user

    office = empty_office
    operator = office.client()
    assert office.sign_in(operator, "", str(office.startup_token)).status_code == 303
    assert operator.get("/approvals").status_code == 200
    add_user(office.users, "bob", PASSWORDS["bob"])
    office.restart()
    assert office.startup_token is None
    assert office.start_up_sessions() == 0  # a console started with users drops them
    remove_user(office.users, "bob")
    approval_id = office.park("ana", "9500.00")
    stale = office.moved(operator)
    assert _logged_out(stale) and _logged_out(stale, f"/approvals/{approval_id}")
    nobody = office.sign_in(office.client(), "", "anything")
    assert nobody.status_code == 401 and "Nobody can sign in" in nobody.text
    assert office.jobs.approval(approval_id).status == "pending"


def test_a_restart_ends_the_old_start_up_session_and_the_new_token_approves(empty_office: Office) -> None:
    """The honest path: the console's current start-up token logs in and approves a payment alone; a
    restart prints a new token, which logs in and approves, while the session of the old token is
    over (and the old token logs nobody in). Before: the old session counted on, across restarts."""
    office = empty_office
    first_token = str(office.startup_token)
    operator = office.client()
    assert office.sign_in(operator, "", first_token).status_code == 303
    first = office.park("operator", "9500.00", proof="console")
    office.decide(operator, first)
    assert office.jobs.approval(first).status == "approved"
    assert office.authority.approvers_refusal(office.jobs.approval(first)) is None  # the worker obeys

    office.restart()
    assert office.startup_token is not None and office.startup_token != first_token
    assert _logged_out(office.moved(operator))
    assert office.sign_in(office.client(), "", first_token).status_code == 401
    again = office.client()
    assert office.sign_in(again, "", office.startup_token).status_code == 303
    second = office.park("operator", "9500.00", proof="console")
    office.decide(again, second)
    assert office.jobs.approval(second).status == "approved"
    assert office.authority.approvers_refusal(office.jobs.approval(second)) is None


def test_users_added_while_the_console_runs_drop_its_start_up_sessions(empty_office: Office) -> None:
    """A user added while the console runs ends the start-up sessions: the first sign-in that reads
    the users file with someone in it deletes them from the session store, as does a request on one
    of them. Before: they stayed in the store for their 12 hours."""
    office = empty_office
    operator, spare = office.client(), office.client()
    assert office.sign_in(operator, "", str(office.startup_token)).status_code == 303
    assert office.sign_in(spare, "", str(office.startup_token)).status_code == 303
    assert office.start_up_sessions() == 2
    add_user(office.users, "bob", PASSWORDS["bob"])
    assert _logged_out(operator)  # a request on one: it is gone, and so are the others
    assert office.start_up_sessions() == 0
    assert office.sign_in(spare, "", str(office.startup_token)).status_code == 401
    office.users.write_text("users: []\n", encoding="utf-8")
    assert office.sign_in(operator, "", str(office.startup_token)).status_code == 303
    add_user(office.users, "bob", PASSWORDS["bob"])
    office.login("bob")  # a sign-in that reads a users file with someone in it
    assert office.start_up_sessions() == 0


def test_a_start_up_credential_counts_only_as_the_holding_store_vouches(
    tmp_path: Path, isolated_home: Path
) -> None:
    """The red-team's proof of concept: a session stored under the bare constant (as before), or
    bound to another token, proves nothing in a store holding no token, or another one, whatever the
    users file says; bound to the token the store holds, it counts while nobody is a user. A CLI
    token can never claim the start-up credential."""
    from taskcrew.console.auth import remove_user

    users = tmp_path / "users.yaml"
    sessions = SessionStore(tmp_path / "sessions.sqlite3")
    sid, _ = sessions.create("operator", credential=STARTUP_CREDENTIAL)
    add_user(users, "bob", PASSWORDS["bob"])
    _, token = prepare(ConsoleSettings.from_env().model_copy(update={"users_file": users}))
    assert token is None
    assert identity_refusal(identity_of(sessions.get(sid)), users) is not None  # type: ignore[arg-type]
    remove_user(users, "bob")
    old = sessions.get(sid)
    assert old is not None  # within its 12 hours
    assert identity_refusal(identity_of(old), users) is not None
    assert identity_refusal(identity_of(old), tmp_path / "none.yaml") is not None

    held = SessionStore(tmp_path / "sessions.sqlite3", startup_token="tok-now")
    now, _ = held.create("operator", credential=startup_credential("tok-now"))
    other, _ = held.create("operator", credential=startup_credential("tok-before"))
    for sid_, counts in ((sid, False), (now, True), (other, False)):
        got = held.get(sid_)
        assert got is not None and (identity_refusal(identity_of(got), users) is None) is counts
    restarted = SessionStore(tmp_path / "sessions.sqlite3", startup_token="tok-after")
    assert identity_refusal(identity_of(restarted.get(now)), users) is not None  # type: ignore[arg-type]
    assert held.drop_startup() == 3 and held.get(now) is None
    claimed = Identity(name="operator", proof="token", credential=STARTUP_CREDENTIAL)
    assert identity_refusal(claimed, users) is not None
