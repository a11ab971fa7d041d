"""The console's plain modules: passwords, persisted sessions, the audit chain, risk rules, the
approval decisions on a real job store (SQLite), and reading run/eval artifacts."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from console_seed import parked_job, write_run, write_sweep
from fixtures_console import PASSWORDS

from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import RiskRulesError, assess, load_rules, parse_amount
from taskcrew.console.artifacts import EvalResults, RunsDir
from taskcrew.console.auth import (
    Authenticator,
    ConsoleUserError,
    add_user,
    hash_password,
    load_users,
    verify_password,
)
from taskcrew.console.sessions import SessionStore
from taskcrew.jobs import Jobs
from taskcrew.tools.human import FieldValue


def test_passwords_are_scrypt_hashed_and_checked(tmp_path: Path) -> None:
    encoded = hash_password("correct horse")
    assert encoded.startswith("scrypt$") and "correct horse" not in encoded
    assert verify_password("correct horse", encoded)
    assert not verify_password("correct hors", encoded)
    assert not verify_password("x", "garbage")
    users = tmp_path / "users.yaml"
    add_user(users, "ana", "ana-password")
    add_user(users, "bob", "bob-password")
    add_user(users, "ana", "new-password")  # replaces
    assert users.stat().st_mode & 0o077 == 0
    auth = Authenticator(load_users(users))
    assert auth.check("ana", "new-password") == "ana"
    assert auth.check("ana", "ana-password") is None
    assert auth.check("nobody", "new-password") is None
    with pytest.raises(ValueError, match="8 characters"):
        hash_password("short")
    users.write_text("users: [{name: 'a b', password_hash: plain}]", encoding="utf-8")
    with pytest.raises(ConsoleUserError, match="add-user"):
        load_users(users)


def test_token_login_only_without_users() -> None:
    auth = Authenticator([], token="tok-123")
    assert auth.check("", "tok-123") == "operator"
    assert auth.check("", "tok-124") is None


def test_sessions_survive_a_restart_and_expire(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "c.sqlite3")
    sid, session = store.create("ana")
    store.close()
    again = SessionStore(tmp_path / "c.sqlite3")
    found = again.get(sid)
    assert found is not None and found.user == "ana" and found.csrf == session.csrf
    assert again.get(sid + "x") is None
    raw = (tmp_path / "c.sqlite3").read_bytes()
    assert sid.encode() not in raw  # only a digest is stored
    again.delete(sid)
    assert again.get(sid) is None
    short = SessionStore(tmp_path / "d.sqlite3", ttl_seconds=-1)
    sid2, _ = short.create("bob")
    assert short.get(sid2) is None


def test_audit_chain_detects_edits_and_removals(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(4):
        log.append("ana", "approve", f"apr-{i}", {"amount": f"{i}00.00"})
    assert log.verify() == []
    assert [e.seq for e in AuditLog(tmp_path / "audit.jsonl").entries()] == [1, 2, 3, 4]
    lines = log.path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("100.00", "900.00")
    log.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [p.line for p in log.verify()] == [2]
    del lines[1]
    lines[0] = log.entries()[0].model_dump_json()
    log.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = log.verify()
    assert problems and problems[0].line == 2 and "previous" in problems[0].problem


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,250.00", "1250.00"),
        ("1.250,00", "1250.00"),
        ("€ 9 800,50", "9800.50"),
        ("1,234", "1234"),
        ("12", "12"),
    ],
)
def test_amounts_in_several_notations(text: str, value: str) -> None:
    assert parse_amount(text) == Decimal(value)


def test_risk_rules_thresholds_per_currency_bank_details_and_targets(tmp_path: Path) -> None:
    rules = load_rules()
    low = assess([("amount", "4,999.99"), ("currency", "EUR")], "http://erp/bills/new", rules)
    assert low.low_risk
    high = assess([("amount", "5.000,01"), ("currency", "EUR")], "http://erp/bills/new", rules)
    assert high.needs_second_approver and high.flags[0].rule == "amount_above_threshold"
    gbp = assess([("total_amount", "4,500.00"), ("currency", "gbp")], "http://erp/bills/new", rules)
    assert gbp.needs_second_approver  # GBP's threshold is lower
    unknown_currency = assess([("amount", "5,000.00"), ("currency", "JPY")], "http://erp/x", rules)
    assert unknown_currency.low_risk  # the '*' threshold, not above it
    bank = assess(
        [("vendor", "Acme"), ("iban", "DE89 3704 0044 0532 0130 00")], "http://erp/vendors/3/edit", rules
    )
    assert [f.rule for f in bank.flags] == ["bank_details"] and bank.needs_second_approver
    garbled = assess([("amount", "twelve hundred")], "http://erp/bills/new", rules)
    assert garbled.flags[0].rule == "unreadable_amount"
    target = assess([("note", "x")], "http://erp/payments/run", rules)
    assert target.flags[0].rule == "sensitive_target"
    broken = tmp_path / "rules.yaml"
    broken.write_text("amount_thresholds: {EUR: 10}\namount_fields: ['(']\n", encoding="utf-8")
    with pytest.raises(RiskRulesError, match="rules"):
        load_rules(broken)


@pytest.fixture
def approver(tmp_path: Path) -> Authority:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    rules = load_rules().model_copy(update={"two_person": "on"})  # several people approve here
    return Authority(jobs, rules, home=tmp_path / "approvals")


def as_(name: str) -> Identity:
    return Identity(name=name, proof="console")


def test_two_person_rule_and_second_approver(approver: Authority) -> None:
    jobs = approver.jobs
    job, approval = parked_job(jobs, "ana", amount="12,000.00")
    assert approver.decide(approval.id, "approve", as_("ana")).status == "refused"  # the submitter
    first = approver.decide(approval.id, "approve", as_("bob"))
    assert first.status == "first_approval"
    assert jobs.approval(approval.id).status == "pending" and jobs.get(job.id).status == "waiting"
    again = approver.decide(approval.id, "approve", as_("bob"))
    assert again.status == "refused" and "second" in again.message
    done = approver.decide(approval.id, "approve", as_("carol"))
    assert done.status == "decided"
    decided = jobs.approval(approval.id)
    assert decided.status == "approved" and decided.decided_by == "bob+carol"
    assert jobs.get(job.id).status == "queued"  # resumed: back on the queue
    actions = [(e.who, e.action) for e in approver.audit.entries()]
    assert actions == [
        ("ana", "approve_refused"),
        ("bob", "approve_first"),
        ("bob", "approve_refused"),
        ("carol", "approve"),
    ]
    assert approver.audit.entries()[-1].payload["request"]["fields"][2]["value"] == "12,000.00"
    assert approver.audit.verify() == []


def test_low_risk_submitter_may_approve_and_answers_stay_answers(approver: Authority) -> None:
    jobs = approver.jobs
    _, small = parked_job(jobs, "ana", amount="80.00")
    assert approver.decide(small.id, "approve", as_("ana")).status == "decided"
    assert jobs.approval(small.id).status == "approved"
    _, other = parked_job(jobs, "ana")
    assert approver.decide(other.id, "answer", as_("bob"), "").status == "refused"
    assert (
        approver.decide(other.id, "answer", as_("bob"), "Use the PDF's total, not the email's").status
        == "decided"
    )
    answered = jobs.approval(other.id)
    assert answered.status == "answered" and answered.decision is not None
    assert (
        answered.decision.outcome == "answer"
        and answered.decision.text == "Use the PDF's total, not the email's"
    )
    assert approver.decide(other.id, "reject", as_("bob")).status == "refused"  # already decided
    _, third = parked_job(jobs, "ana")
    assert approver.decide(third.id, "reject", as_("bob"), "wrong vendor").status == "decided"
    assert jobs.approval(third.id).status == "rejected"


def test_bulk_only_for_identical_low_risk_items(approver: Authority) -> None:
    jobs = approver.jobs

    def parked(amount: str, **extra: Any) -> Any:  # no value read by OCR: no flag (parked_job has one)
        fields = _fields(vendor="Northwind Traders", invoice_number="INV-1", amount=amount, currency="EUR")
        return _work(approver, fields + _fields(**extra.pop("more", {})), **extra)[1].approval

    a, b, risky = parked("10.00"), parked("20.00"), parked("20,000.00")
    different = parked("30.00", more={"memo": "x"})
    refused = approver.bulk_approve([a.id, risky.id], as_("bob"))
    assert refused[0].status == "refused" and "flagged" in refused[0].message
    read = _fields(vendor="Northwind Traders", invoice_number="INV-1", currency="EUR")
    ocr = _work(approver, [*read, FieldValue(name="amount", value="10.00", note="read by OCR")])[1].approval
    (refused,) = approver.bulk_approve([a.id, ocr.id], as_("bob"))  # identical but for a value read by OCR
    assert refused.status == "refused" and f"{ocr.id} is flagged (ocr_value" in refused.message
    assert "not identical" not in refused.message
    refused = approver.bulk_approve([a.id, different.id], as_("bob"))
    assert refused[0].status == "refused" and "not identical" in refused[0].message
    assert jobs.approval(a.id).status == "pending"  # all or nothing
    assert approver.bulk_approve([a.id], as_("bob"))[0].status == "refused"
    changed = parked("10.00", asked_again="bob approved it when it said 1.00")
    refused = approver.bulk_approve([a.id, changed.id], as_("bob"))
    assert refused[0].status == "refused" and f"{changed.id} is asked again" in refused[0].message
    done = approver.bulk_approve([a.id, b.id], as_("bob"))
    assert [r.status for r in done] == ["decided", "decided"]
    assert {jobs.approval(a.id).status, jobs.approval(b.id).status} == {"approved"}


def test_runs_and_eval_artifacts(tmp_path: Path) -> None:
    write_run(tmp_path / "runs", "2026-12-01-northwind", "Enter the Northwind invoice")
    live = write_run(tmp_path / "runs", "2026-12-01-live", "Still running", finished=None)
    with (live / "trace.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "tool_call", "at": "torn')  # a line still being written
    runs = RunsDir([tmp_path / "runs", tmp_path / "missing"])
    listed = {r.name: r for r in runs.list()}
    assert listed["2026-12-01-northwind"].status == "done" and listed["2026-12-01-northwind"].tokens == 380
    assert listed["2026-12-01-live"].status == "running"
    detail = runs.detail("2026-12-01-live")
    assert detail is not None and detail.unreadable_lines == 1
    # the raw trace leaves no event out (the LLM call and the start were missing)
    assert [t.kind for t in detail.timeline] == [
        "run_started",
        "plan",
        "llm_call",
        "action",
        "approval",
        "step",
    ]
    assert detail.timeline[3].ok is False
    assert runs.screenshot("2026-12-01-live", "final_page.png") is not None
    assert runs.screenshot("2026-12-01-live", "../2026-12-01-northwind/final_page.png") is None
    assert runs.detail("nope") is None
    write_sweep(tmp_path / "eval")
    results = EvalResults([tmp_path / "eval"])
    report = results.load("sweep-1")
    assert not isinstance(report, str) and len(report.totals) == 2
    (tmp_path / "eval" / "bad").mkdir()
    (tmp_path / "eval" / "bad" / "results.json").write_text("{", encoding="utf-8")
    assert "not a readable sweep result" in str(results.load("bad"))


def test_cli_add_user_and_clear_errors_on_bad_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from taskcrew.cli import app

    runner = CliRunner()
    users = tmp_path / "users.yaml"
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))  # the one users file of every process
    short = runner.invoke(app, ["console", "add-user", "ana"], input="short\nshort\n")
    assert short.exit_code == 2 and "8 characters" in short.output and not users.exists()
    ok = runner.invoke(app, ["console", "add-user", "ana"], input="long-enough\nlong-enough\n")
    assert ok.exit_code == 0 and load_users(users)[0].name == "ana" and str(users) in ok.output
    jobs_db = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    users.write_text("users: 3\n", encoding="utf-8")
    bad_users = runner.invoke(app, ["console", "--jobs-db", jobs_db, "--port", "0"])
    assert bad_users.exit_code == 2 and "cannot be used" in bad_users.output
    with pytest.raises(ConsoleUserError):  # a broken file is never overwritten: nothing is lost
        add_user(users, "bob", "long-enough")
    users.unlink()
    add_user(users, "ana", "long-enough")
    state = tmp_path / "state"
    state.mkdir()
    (state / "console.sqlite3").write_bytes(b"this is not a database" * 100)
    from taskcrew.console.app import Console
    from taskcrew.console.settings import ConsoleSettings

    settings = ConsoleSettings(
        state_dir=state, runs_dirs=[], eval_dirs=[], users_file=users, jobs_url=jobs_db
    )
    with pytest.raises(ValueError, match="move it aside"):
        Console(settings)


def test_a_damaged_audit_log_stops_decisions(tmp_path: Path) -> None:
    from taskcrew.approvals.audit import AuditLogError

    log = AuditLog(tmp_path / "audit.jsonl")
    log.append("ana", "login", "/login")
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write('{"seq": 2, "broken\n')
    with pytest.raises(AuditLogError, match="moved aside"):
        log.append("bob", "approve", "apr-1")


def test_a_question_is_answered_never_approved(approver: Authority) -> None:
    jobs = approver.jobs
    job = jobs.submit("Enter the latest Hooli invoice into the ERP", submitted_by="ana")
    jobs.mark(job.id, "waiting", only_if=("queued",))
    question = jobs.park(job.id, kind="question", key="q1", question="Which of the two Hooli invoices?")
    assert approver.decide(question.id, "approve", as_("bob")).status == "refused"
    assert approver.bulk_approve([question.id, question.id], as_("bob"))[0].status == "refused"
    assert (
        approver.decide(question.id, "answer", as_("bob"), "HCS-2026-10, the newer one").status == "decided"
    )
    decided = jobs.approval(question.id)
    assert decided.status == "answered" and decided.decision is not None
    assert decided.decision.text == "HCS-2026-10, the newer one"


def test_origins_from_the_runs_checked_lines_or_else_the_jobs_trace(approver: Authority) -> None:
    """The run's lines in the summary were checked by code (it read the file); where they know a
    field's origin it is theirs, and a warning in them links no file. The job's trace (the step's
    quote, unchecked) speaks only for a field they do not mention or do not find."""
    from taskcrew.approvals.origins import field_sources
    from taskcrew.jobs import ApprovalRequest, FieldSource
    from taskcrew.tools.human import FieldValue

    jobs = approver.jobs
    job = jobs.submit("Enter the latest Northwind invoice", submitted_by="ana")
    summary = (
        "where the values come from:\n"
        "  amount = 1284.50: inbox/northwind_inv_2057.pdf, line 14 (cited in step 1)\n"
        "  vendor = Northwind Traders: step 1 (file_reader) reported it as 'vendor' — it cited "
        "inbox/memo.eml, but inbox/memo.eml does not show it\n"
        "  terms = Net 45: not found in any source or step result of this run\n"
        "  po = PO-7: not found in any source or step result of this run — it cited 'erp', which code "
        "cannot read: the model's word, not checked"
    )
    values = {
        "amount": "1284.50",
        "vendor": "Northwind Traders",
        "currency": "USD",
        "terms": "Net 45",
        "po": "PO-7",
    }
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://erp/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in values.items()],
        summary=summary,
    )
    sources = [
        FieldSource(name="amount", value="1284.50", source="the page's form as filled"),
        FieldSource(
            name="vendor",
            value="Northwind Traders",
            source="step 1 (file_reader: Read) found vendor, citing inbox/memo.eml",
            files=["inbox/memo.eml"],
        ),
        FieldSource(name="currency", value="USD", source="scan.png (OCR), line 3"),
        FieldSource(
            name="terms",
            value="Net 45",
            source="step 1 (file_reader: Read) found terms, citing terms.txt",
            files=["terms.txt"],
        ),
        FieldSource(
            name="po",
            value="PO-7",
            source="step 1 (file_reader: Read) found po, citing po.txt",
            files=["po.txt"],
        ),
    ]
    approval = jobs.park(job.id, kind="approval", key="k", request=request, sources=sources)
    found = field_sources(approver.view(approval))
    assert (found["amount"].file, found["amount"].line) == ("inbox/northwind_inv_2057.pdf", 14)
    assert found["vendor"].file is None and "does not show it" in found["vendor"].text
    assert (found["currency"].file, found["currency"].line, found["currency"].ocr) == ("scan.png", 3, True)
    # code found it nowhere: that stands, the job's trace (the step's quote) only adds a note
    assert found["terms"].file is None and found["terms"].text.startswith("not found in any source")
    assert "the job's trace: step 1 (file_reader: Read) found terms" in found["terms"].text
    assert found["po"].file is None and "cannot read" in found["po"].text  # its warning kept too


def test_the_worklist_reads_actions_sources_and_charts_in_words() -> None:
    from taskcrew.approvals.origins import parse_source
    from taskcrew.console.charts import bar_chart
    from taskcrew.console.worklist import action_words, shown_value

    assert action_words("POST", "http://127.0.0.1:8800/bills/new") == ("127.0.0.1:8800", "create bill")
    assert action_words("POST", "http://erp.acme.example/bills/BILL-0004/pay")[1] == "pay bill BILL-0004"
    assert action_words("POST", "https://erp.acme.example/vendors/V-12/edit")[1] == "change vendor V-12"
    assert action_words("DELETE", "https://erp.acme.example/bills/BILL-0009")[1] == "delete bill BILL-0009"
    ref = parse_source("downloads/Rechnung.pdf (OCR), page 2, line 7 (cited in step 1)")
    assert (ref.file, ref.page, ref.line, ref.ocr) == ("downloads/Rechnung.pdf", 2, 7, True)
    step = parse_source("step 2 (browser_operator: Look) found vendor = Hooli, citing http://erp/vendors")
    assert step.file is None and step.url == "http://erp/vendors"
    chosen = FieldValue(
        name="vendor_id", value="7 (Müller Industrietechnik GmbH)", label="Müller Industrietechnik GmbH"
    )
    assert shown_value(chosen) == "Müller Industrietechnik GmbH"  # a chosen option: its label
    typed = FieldValue(name="payee", value="Initrode (Northwind Traders)")  # typed: never taken apart
    assert shown_value(typed) == "Initrode (Northwind Traders)"
    assert shown_value(FieldValue(name="invoice", value="INV-2057")) == "INV-2057"
    long_name = "anthropic/claude-sonnet-4-5-20250929@http://10.0.0.7:8000/v1 · northwind-headline"
    chart = bar_chart("cost", [(long_name, 1.0, "$1"), ("short", 0.5, "$0.5")])
    assert chart.bars[1].shown == "short" and len(chart.bars[0].shown) < len(long_name)
    assert chart.bars[0].shown.startswith("anthropic/") and chart.bars[0].shown.endswith("headline")
    assert chart.axis_y <= chart.width / 2


def test_eval_folders_of_the_same_name_are_all_listed(tmp_path: Path) -> None:
    write_sweep(tmp_path / "a")
    write_sweep(tmp_path / "b")
    listing = EvalResults([tmp_path / "a", tmp_path / "b"]).listing()
    assert sorted(f.key for f in listing) == ["sweep-1", "sweep-1~2"]
    assert {f.path.parent.parent for f in listing} == {tmp_path / "a", tmp_path / "b"}


def _console(tmp_path: Path, users: Path) -> tuple[Any, Jobs]:
    """The real console over HTTP on a job store in ``tmp_path``, with ``users`` as its users file."""
    from taskcrew.console.server import ConsoleServer
    from taskcrew.console.settings import ConsoleSettings

    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    settings = ConsoleSettings(
        port=0,
        state_dir=tmp_path / "console",
        runs_dirs=[],
        eval_dirs=[],
        users_file=users,
        jobs_url=f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
    )
    return ConsoleServer(settings, jobs).start(), jobs


def _login(client: Any, server: Any, name: str, password: str) -> Any:
    form = client.get("/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    data = {"csrf": csrf.group(1), "next": "/jobs", "username": name, "password": password}
    return client.post("/login", data=data, headers={"origin": server.url})


def test_a_session_of_someone_removed_from_the_users_file_ends(tmp_path: Path, console_users: Path) -> None:
    """The real console over HTTP: carol is logged in, then removed from the users file; her open
    session (kept 12 h, across restarts) no longer opens a page, and she cannot log in again."""
    import httpx
    import yaml

    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    server, jobs = _console(tmp_path, users)

    def login(client: httpx.Client) -> httpx.Response:
        return _login(client, server, "carol", PASSWORDS["carol"])

    try:
        with httpx.Client(base_url=server.url) as client:
            assert login(client).status_code == 303 and client.get("/jobs").status_code == 200
            data = yaml.safe_load(users.read_text(encoding="utf-8"))
            data["users"] = [u for u in data["users"] if u["name"] != "carol"]
            users.write_text(yaml.safe_dump(data), encoding="utf-8")
            gone = client.get("/jobs")
            assert gone.status_code == 303 and gone.headers["location"].startswith("/login")
            assert login(client).status_code == 401
    finally:
        server.stop()
        jobs.close()


def test_an_approvals_screenshot_is_served_only_from_its_own_jobs_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screenshot path is a column of the job database: one written there (another job's
    screenshot, a look-alike folder elsewhere, any .png on the console's host, a link to a file or
    a linked job folder) is not served."""
    from taskcrew.jobs.human import screenshot_file

    home = tmp_path / "home"
    monkeypatch.setenv("TASKCREW_HOME", str(home))
    name = "form-20261203-101500-1.png"
    own, other = home / "jobs" / "job-1" / name, home / "jobs" / "job-2" / name
    elsewhere, stray = tmp_path / "elsewhere" / "jobs" / "job-1" / name, tmp_path / "secret.png"
    for path in (own, other, elsewhere, stray):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x89PNG\r\n\x1a\n")
    link = own.with_name("form-20261203-101500-2.png")
    link.symlink_to(stray)
    (home / "jobs" / "job-3").symlink_to(other.parent)  # job 3's folder is job 2's
    assert screenshot_file("job-1", str(own)) == own
    forged = [
        other,
        elsewhere,
        stray,
        link,
        own.with_name("x.png"),
        own.with_name("form-20261203-101500-9.png"),
    ]
    for path in [*forged, home / "jobs" / "job-1" / ".." / "job-2" / name]:
        assert screenshot_file("job-1", str(path)) is None, path
    assert screenshot_file("job-3", str(home / "jobs" / "job-3" / name)) is None
    assert screenshot_file("job-1", None) is None


def test_a_password_reset_ends_the_users_console_sessions_and_cli_tokens(
    tmp_path: Path, console_users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real console over HTTP and the real CLI: carol's password is reset (`console add-user`
    again, the way an operator locks out a stolen password). The console started before the reset
    takes the new password and refuses the old one; her session opened before the reset, and her
    CLI token issued before it, no longer prove her — the authority's one rule for both."""
    import httpx
    from typer.testing import CliRunner

    from taskcrew.cli import app
    from taskcrew.console.auth import add_user

    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    cli = CliRunner()
    issued = cli.invoke(
        app, ["approvals", "login", "--name", "carol", "--password", PASSWORDS["carol"], "--print-token"]
    )
    assert issued.exit_code == 0, issued.output
    monkeypatch.setenv("TASKCREW_TOKEN", issued.output.strip())
    assert "carol" in cli.invoke(app, ["approvals", "whoami"]).output
    server, jobs = _console(tmp_path, users)

    def login(client: httpx.Client, password: str) -> httpx.Response:
        return _login(client, server, "carol", password)

    try:
        with httpx.Client(base_url=server.url) as before, httpx.Client(base_url=server.url) as after:
            assert (
                login(before, PASSWORDS["carol"]).status_code == 303
                and before.get("/jobs").status_code == 200
            )
            add_user(users, "carol", "a-new-password-9")  # the reset
            gone = before.get("/jobs")
            assert gone.status_code == 303 and gone.headers["location"].startswith("/login")
            assert login(after, PASSWORDS["carol"]).status_code == 401  # the old password
            assert (
                login(after, "a-new-password-9").status_code == 303 and after.get("/jobs").status_code == 200
            )
    finally:
        server.stop()
        jobs.close()
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.identity import cli_identity

    refusal = Authority(None, users_file=users).identity_refusal(cli_identity())
    assert refusal is not None and "password was changed" in refusal


def test_the_console_the_workers_and_the_cli_read_one_users_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """Who may approve, and whether two people must, is the users file: `taskcrew console --users
    FILE` made the console enforce the two-person rule while the worker and the CLI on the same
    machine (no such option: TASKCREW_CONSOLE_USERS or the default) counted no users and treated it
    as off. The users file is one setting now: the option is gone (the error names the setting) and
    the console's settings take no users file of their own; with TASKCREW_CONSOLE_USERS set, the
    console, the worker and the CLI say the same."""
    from typer.testing import CliRunner

    from taskcrew.cli import app
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.console.web import Console
    from taskcrew.jobs import JobOptions
    from taskcrew.jobs.human import JobHuman, Parked
    from taskcrew.tools.human import ApprovalRequest, FieldValue

    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_DIR", str(tmp_path / "console"))
    monkeypatch.delenv("TASKCREW_CONSOLE_USERS", raising=False)
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    with pytest.raises(ValueError, match="TASKCREW_CONSOLE_USERS"):
        ConsoleSettings.from_env(users_file=console_users, jobs_url=url)
    runner = CliRunner()
    for args in (
        ["console", "--users", str(console_users), "--jobs-db", url, "--port", "0"],
        ["console", "add-user", "x", "--users", "u.yaml"],
    ):
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and "TASKCREW_CONSOLE_USERS" in refused.output, refused.output

    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    jobs = Jobs.open(url)
    console = Console(ConsoleSettings.from_env(jobs_url=url), jobs)
    big = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name="vendor_id", value="3"), FieldValue(name="amount", value="8000.00")],
    )
    try:
        assert console.approver.needs_two(console.approver.assess(big))  # the console: two people
        auto = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="token",
                           options=JobOptions(auto_approve=True))  # fmt: skip
        jobs.mark(auto.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked):  # the worker: --auto-approve does not cover it
            JobHuman(jobs, auto.id, auto_approve=True).approve(big)
        job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="token")
        jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked) as parked:
            JobHuman(jobs, job.id).approve(big)
        ana = Identity(name="ana", proof="token")
        assert console.approver.decide(parked.value.approval_id, "approve", ana).status == "refused"
        assert Authority(jobs).decide(parked.value.approval_id, "approve", ana).status == "refused"  # the CLI
    finally:
        console.close()
        jobs.close()


# ---- what the rules read and what an approver is shown of it (one reader, every surface) ----------
def _work(approver: Authority, fields: list[FieldValue], **extra: Any) -> Any:
    """A parked approval of ``fields``, as the worklist reads it (with its view)."""
    from taskcrew.console.worklist import work_item
    from taskcrew.jobs import ApprovalRequest

    jobs = approver.jobs
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=extra.pop("url", "http://erp.example:8080/bills/new"),
        fields=fields,
        **extra,
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    view = approver.view(jobs.approval(approval.id))
    return work_item(view, approver.rules, systems={}), view


def _fields(**values: str) -> list[FieldValue]:
    return [FieldValue(name=k, value=v) for k, v in values.items()]


def test_field_names_are_matched_on_their_words() -> None:
    from taskcrew.approvals.rules import field_matches, word_name

    assert word_name("invoiceAmount") == "invoice_amount" and word_name("IBANNumber") == "iban_number"
    assert word_name("invoice-total") == word_name("invoice.total") == word_name("invoice[total]")
    assert word_name("lines[0].amount") == "lines_0_amount"
    rules = load_rules()
    for name in ("amount", "total_amount", "invoiceAmount", "totalAmount", "invoice_total", "Invoice.Net"):
        assert field_matches(name, rules.amount_fields), name
    for name in ("discount_rate", "network_id", "summary", "account"):
        assert not field_matches(name, rules.amount_fields), name
    assert field_matches("accountNumber", rules.bank_fields)  # "account_number" in its words
    assert field_matches("currencyCode", rules.currency_fields)


@pytest.mark.parametrize(
    "name", ["invoiceAmount", "totalAmount", "invoice_total", "invoice-total", "lines[0].amount"]
)
def test_an_amount_field_of_any_spelling_is_judged_and_shown(approver: Authority, name: str) -> None:
    """The reviewer's case: invoiceAmount = 90,000.00 got no threshold, no flag, one approver."""
    item, view = _work(approver, _fields(vendor="Globex Corp", invoice_number="INV-1", **{name: "90,000.00"}))
    assert [f.rule for f in view.assessment.flags] == ["amount_above_threshold"] and view.needs_two
    assert item.amount_text == "90,000.00" and item.currency == "EUR" and "amount" in item.flag_codes
    assert next(kv for kv in item.key_values if kv.label == "Amount").value == "90,000.00 EUR"


def test_a_value_shaped_like_money_is_flagged_whatever_its_field_is_called(approver: Authority) -> None:
    rules = load_rules()
    url = "http://erp/bills/new"
    betrag = assess([("betrag", "90.000,00"), ("vendor", "Globex")], url, rules)
    assert [f.rule for f in betrag.flags] == ["amount_above_threshold"] and betrag.needs_second_approver
    assert "looks like an amount" in betrag.flags[0].message
    assert assess([("price", "£4,500.00")], url, rules).needs_second_approver  # GBP's 4,000.00
    small = assess([("price", "120.00"), ("phone", "0049 30 1234567"), ("ref", "2026.10")], url, rules)
    assert small.low_risk  # below the threshold, or not shaped like money: no flag
    # the page says so, rather than "amount within the threshold", when no amount was read
    item, view = _work(approver, _fields(vendor="Globex Corp", memo="paid by card"))
    assert item.amount is None and item.limit is None and view.assessment.low_risk


def test_the_currency_is_read_from_its_code_or_symbol_never_guessed(approver: Authority) -> None:
    from taskcrew.approvals.rules import read_currency

    assert [read_currency(v) for v in ("EUR", "gbp", "EUR (Euro)", "2 (GBP)", "€", "826 (GBP - £)")] == [
        "EUR",
        "GBP",
        "EUR",
        "GBP",
        "EUR",
        "GBP",
    ]
    assert [read_currency(v) for v in ("2 (Pound sterling)", "$", "USD (EUR)", "Euro")] == [None] * 4
    # a select whose options are ids: the gate records "2 (GBP)"; 4,500.00 GBP is above GBP's 4,000.00
    chosen = FieldValue(name="currency", value="2 (GBP)", label="GBP")
    item, view = _work(approver, [*_fields(vendor="Globex Corp", amount="4500.00"), chosen])
    assert [f.rule for f in view.assessment.flags] == ["amount_above_threshold"]
    assert item.currency == "GBP" and item.limit == Decimal("4000.00") and "amount" in item.flag_codes
    # a currency field that names no currency: flagged, a second approver, never the default's threshold
    item, view = _work(
        approver, _fields(vendor="Globex Corp", amount="900.00", currency="7 (Pound sterling)")
    )
    assert [f.rule for f in view.assessment.flags] == ["unreadable_currency"] and view.needs_two
    assert "currency not readable: check by hand" in view.assessment.flags[0].message
    assert "currency" in item.flag_codes and item.limit is None and item.currency == "7 (Pound sterling)"
    assert [f.words for f in item.flags] == ["currency not readable"]


def test_a_typed_value_shaped_like_an_option_is_shown_as_sent(approver: Authority) -> None:
    """The reviewer's case: a typed payee "Initrode (Northwind Traders)" was shown (and checked
    against the vendor list) as "Northwind Traders"."""
    sent = "Initrode (Northwind Traders)"  # a text input: this exact string is what the ERP gets
    item, _ = _work(
        approver,
        _fields(payee=sent, amount="900.00"),
        url="http://127.0.0.1:8800/payments/new",
        known_vendors=["Northwind Traders", "Globex Corp", "Initech"],
        vendors_page="http://127.0.0.1:8800/vendors",
    )
    assert item.vendor == sent and next(kv for kv in item.key_values if kv.label == "Payee").value == sent
    assert "new_vendor" in item.flag_codes
    # a chosen option is read by its label, which the gate recorded beside the value
    chosen = FieldValue(name="vendor_id", value="1 (Northwind Traders)", label="Northwind Traders")
    item, _ = _work(
        approver,
        [chosen, *_fields(amount="900.00")],
        known_vendors=["Northwind Traders", "Globex Corp"],
        vendors_page="http://127.0.0.1:8800/vendors",
    )
    assert item.vendor == "Northwind Traders" and "new_vendor" not in item.flag_codes


def test_a_label_is_sealed_with_the_request_and_absent_from_earlier_ones(
    approver: Authority, tmp_path: Path
) -> None:
    import sqlite3

    from taskcrew.approvals import seals

    plain = FieldValue(name="vendor_id", value="1 (Northwind Traders)")
    assert "label" not in plain.model_dump() and "label" not in seals.whole(plain)  # signed as before
    chosen = FieldValue(name="vendor_id", value="1 (Northwind Traders)", label="Northwind Traders")
    item, view = _work(approver, [chosen, *_fields(amount="900.00")])
    assert view.problem is None and item.vendor == "Northwind Traders"
    con = sqlite3.connect(tmp_path / "jobs.sqlite3")  # the approver fixture's job database
    (doc,) = con.execute("select doc from taskcrew_approvals where id=?", (view.approval.id,)).fetchone()
    con.execute(
        "update taskcrew_approvals set doc=? where id=?",
        (doc.replace('"label":"Northwind Traders"', '"label":"Initech"'), view.approval.id),
    )
    con.commit()
    forged = approver.view(approver.jobs.approval(view.approval.id))
    assert forged.problem and forged.fields == []  # a label written into the database is no label


def test_a_value_hiding_characters_is_flagged_and_never_bulk_approved(approver: Authority) -> None:
    from taskcrew.approvals.visible import hidden, visible

    bidi = "\u202e4,001\u202c"  # drawn "100,4" by a browser; the rules read 4001
    assert visible(bidi) == "⟨U+202E⟩4,001⟨U+202C⟩"
    padded = "Northwind Traders" + "\u00a0" * 160 + "c/o Initrode Ltd"
    assert visible(padded) == "Northwind Traders⟨160 × U+00A0⟩c/o Initrode Ltd"
    assert visible("a     b") == "a⟨5 spaces⟩b" and visible("a\nb") == "a⟨U+000A⟩b"
    assert visible("line one\n    indented\tand tabbed", layout=True) == "line one\n    indented\tand tabbed"
    assert visible("1\u00a0234,56 EUR") == "1\u00a0234,56 EUR"  # one no-break space: a grouping
    assert hidden("first line\r\nsecond line") == []  # a multi-line text field: nothing hidden
    rules = load_rules()
    flagged = assess([("amount", bidi), ("vendor", "Northwind Traders")], "http://erp/bills/new", rules)
    assert [f.rule for f in flagged.flags] == ["hidden_characters"] and not flagged.low_risk
    assert "U+202E" in flagged.flags[0].message and "⟨" in flagged.flags[0].message
    assert [f.rule for f in assess([("vendor", padded)], "http://erp/bills/new", rules).flags] == [
        "hidden_characters"
    ]
    item, _ = _work(approver, _fields(vendor="Northwind Traders", amount=bidi, currency="EUR"))
    assert item.amount == Decimal("4001") and "hidden" in item.flag_codes
    other, _ = _work(approver, _fields(vendor="Northwind Traders", amount=bidi, currency="EUR"))
    (refused,) = approver.bulk_approve([item.id, other.id], as_("bob"))
    assert refused.status == "refused" and "flagged" in refused.message
