# ruff: noqa: F811 — the fixture ``env`` is imported from test_approvals
"""One reading of a target's path for every rule (``approvals.rules.target_path``).

Chromium sends a form's action as written ("/bills/BILL%2D0011/%70ay", "/Bills/X/pay/"), and a
server that decodes %XX, drops ";params", merges "//" or a trailing "/" or ignores case routes it
to the record the plain path names. Deny and flag rules (blocked paths, data-changing GETs, amount
lookups, flag_paths, path_rules) match any such reading; allow rules (login, exempt paths,
auto-approval) only a plain path as sent, exactly; a path a server could read otherwise is flagged
"unclear_target" for two people.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, get_args
from urllib.parse import unquote

import pytest
from test_approvals import env  # noqa: F401

from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import (
    RiskRules,
    RuleName,
    assess,
    canonical_path,
    load_rules,
    look_up,
    path_flags,
    target_path,
)
from taskcrew.console.worklist import FLAG_WORDS, RULE_CODES
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.mock_erp import web as erp_web
from taskcrew.tools.human import ApprovalDecision, FieldValue, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission, check_url

ERP = "http://127.0.0.1:8800"
BILL_PAGE = '<dd id="bill-amount">8000.00 EUR</dd>'
PAY = [("csrf_token", "x"), ("paid_on", "2026-10-01")]


def _rules(**changes: Any) -> RiskRules:
    return RiskRules.model_validate({**load_rules().model_dump(), **changes})


# ---- the canonical form and the readings ----------------------------------------------------------
@pytest.mark.parametrize(
    ("sent", "canonical"),
    [
        ("/bills/BILL%2D0011/%70ay", "/bills/BILL-0011/pay"),
        ("/a/%7e%5F%2e", "/a/~_."),
        ("/a/%2f%3f%c3%a9", "/a/%2F%3F%C3%A9"),  # reserved and non-ASCII stay escaped, in upper case
        ("/a/./b/../c", "/a/c"),
        ("/a/%2E%2E/b", "/b"),
        ("/a/b/..", "/a/"),
        ("/../..", "/"),
        ("", "/"),
        ("/Bills//X;p/pay/", "/Bills//X;p/pay/"),  # case, "//", ";params", a trailing "/": as sent
    ],
)
def test_the_canonical_path(sent: str, canonical: str) -> None:
    assert canonical_path(sent) == canonical


def test_a_path_is_plain_only_when_no_server_reads_it_otherwise() -> None:
    for plain in ("/", "/login", "/bills/BILL-0011/pay", "/Bills/x"):
        target = target_path(ERP + plain + "?next=/x")
        assert target.plain and target.readings == (plain,) and target.unclear() == []
    for sent, reading in [
        ("/bills/BILL%2D0011/pay", "/bills/BILL-0011/pay"),
        ("/bills/X/pay/", "/bills/X/pay"),
        ("/bills/X/pay;jsessionid=1", "/bills/X/pay"),
        ("//bills/X/pay", "/bills/X/pay"),
        ("/bills\\X/pay", "/bills/X/pay"),
        ("/notes/../bills/X/pay", "/bills/X/pay"),
        ("/bills/X/pay;x=%252f..%252f..%252f..%252flogin", "/login"),
        ("/bills/X/pay%3f%252f..%252f..%252f..%252flogin", "/bills/X/pay"),
    ]:
        target = target_path(ERP + sent)
        assert not target.plain and target.unclear(), sent
        assert reading in target.readings and reading in target.ends(), (sent, target.readings)


# ---- risk rules: lookups, flag_paths, path_rules --------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/bills/BILL%2D0005/pay",
        "/bills/BILL-0005/%70ay",
        "/bills/BILL-0005/pay/",
        "/Bills/BILL-0005/pay",
        "/bills/BILL-0005/pay;jsessionid=1",
        "//bills/BILL-0005/pay",
        "/bills/x/../BILL-0005/pay",
        "/bills/%2542ILL-0005/pay",  # decoded twice by a proxy and the server
    ],
)
def test_every_reading_of_a_pay_path_is_judged_by_the_bills_amount(path: str) -> None:
    rules = load_rules()
    fetched: list[str] = []

    def fetch(url: str) -> str:
        fetched.append(url)
        return BILL_PAGE

    looked_up = look_up(ERP + path, rules, fetch)
    assert fetched == [f"{ERP}/bills/BILL-0005"] or fetched == [f"{ERP}/bills/bill-0005"]
    assert looked_up["amount"] == "8000.00" and looked_up["currency"] == "EUR"
    assessment = assess(PAY, ERP + path, rules, looked_up)
    assert {"amount_above_threshold", "unclear_target"} <= {f.rule for f in assessment.flags}
    assert assessment.needs_second_approver


def test_the_plain_pay_path_is_looked_up_and_not_unclear() -> None:
    rules = load_rules()
    looked_up = look_up(f"{ERP}/bills/BILL-0005/pay", rules, lambda url: BILL_PAGE)
    assert looked_up["amount"] == "8000.00"
    assert [f.rule for f in assess(PAY, f"{ERP}/bills/BILL-0005/pay", rules, looked_up).flags] == [
        "amount_above_threshold"
    ]
    assert assess([("amount", "10.00")], f"{ERP}/bills/new", rules).flags == []


def test_a_path_read_as_two_records_is_unreadable_never_one_of_them() -> None:
    # "pay%3F/../../B/pay": B with "%3F" as a character, A when a decoded "?" ends the path
    looked_up = look_up(f"{ERP}/bills/A/pay%3F/../../B/pay", load_rules(), lambda url: BILL_PAGE)
    assert "unreadable" in looked_up and "more than one record" in looked_up["unreadable"]
    flags = assess(PAY, f"{ERP}/bills/A/pay%3F/../../B/pay", load_rules(), looked_up).flags
    assert "unreadable_amount" in {f.rule for f in flags}


@pytest.mark.parametrize(
    "url",
    [
        "http://erp.example/%70ayments/new",
        "http://erp.example/payments%2Fnew",
        "http://erp.example/vendors/7/%62ank",
        "http://erp.example/vendors/7/bank;x",
        "http://erp.example/VENDORS/7/BANK",
    ],
)
def test_flag_paths_and_path_rules_match_any_reading(url: str) -> None:
    rules = _rules(path_rules=[{"path": r"^/vendors/\d+/bank$", "message": "a bank change"}])
    flags = {f.rule for f in assess([("memo", "x")], url, rules).flags}
    assert "sensitive_target" in flags
    if "vendors" in url.lower():
        assert "path_rule" in flags


def test_an_unclear_target_is_flagged_for_two_and_named_in_words_on_the_console() -> None:
    (flag,) = path_flags(f"{ERP}/bills/BILL-0011/pay;x=%252f..%252f..%252flogin", _rules(amount_lookups=[]))
    assert flag.rule == "unclear_target" and flag.second_approver
    assert "/login" in flag.message and "';' parameters" in flag.message
    assert set(get_args(RuleName)) <= set(RULE_CODES)  # every rule has a code and words
    assert all(code in FLAG_WORDS for code in RULE_CODES.values())
    assert FLAG_WORDS[RULE_CODES["unclear_target"]] == "unclear target path"


def test_a_vendor_created_under_any_reading_of_its_path_is_a_new_vendor() -> None:
    from taskcrew.approvals.rules import Payee, new_vendor

    for path in ("/vendors/new", "/Vendors/%6Eew", "/vendors/new/", "/vendors/create;x=1"):
        assert (
            new_vendor(Payee(fields=[("vendor", "Hooli")]), ERP + path, None, None) == "creates a vendor"
        ), path


def test_auto_approval_is_an_allow_rule_matched_on_plain_paths_only() -> None:
    rules = _rules(auto_approve=[{"identities": ["*"], "paths": ["^/bills/new$", "^/bills/[^/]+/pay$"]}])
    assert rules.auto_approve_rule("ana", f"{ERP}/bills/new") is not None
    assert rules.auto_approve_rule("ana", f"{ERP}/bills/BILL-0011/pay") is not None
    for path in ("/bills/new/", "/Bills/new", "/bills/%6Eew", "/bills/BILL%2D0011/pay", "/x/../bills/new"):
        assert rules.auto_approve_rule("ana", ERP + path) is None, path
    assert load_rules().auto_approve_rule("ana", f"{ERP}/bills/BILL%2D0011/pay") is None  # even ".*"


# ---- the policy: exemptions exact, blocked paths and data-changing GETs generous -------------------
@pytest.mark.parametrize(
    "path",
    [
        "/bills/BILL-0011/pay;x=%252f..%252f..%252f..%252f..%252flogin",
        "/bills/BILL-0011/pay%3f%252f..%252f..%252f..%252flogin",
        "/login/",
        "/LOGIN",  # plain: asked, not exempt (the risk rules do not know the policy's login paths)
        "/%6Cogin",
        "/login;jsessionid=1",
        "//login",
        "/bills/../login",
        "/notice/dismiss/",
        "/notice/%64ismiss",
    ],
)
def test_a_path_that_only_reads_as_login_or_exempt_is_asked_and_flagged(path: str) -> None:
    human = ScriptedHuman([ApprovalDecision.reject("no")])
    policy = Policy(PolicyConfig.for_url(ERP), human)
    assert not policy.is_exempt(ERP + path)
    decision = policy.submission(
        Submission(origin="network", method="POST", url=ERP + path, fields=[FieldValue(name="a", value="1")])
    )
    assert decision.outcome == "rejected"
    (request,) = human.requests
    unclear = any("can be read otherwise than as written" in flag for flag in request.flags)
    assert unclear == (path != "/LOGIN"), request.flags
    read_only = Policy(PolicyConfig.for_url(ERP, read_only=True), ScriptedHuman())
    sub = Submission(origin="form", method="POST", url=ERP + path)
    assert read_only.submission(sub).outcome == "read_only_refused"


@pytest.mark.parametrize("url", [f"{ERP}/login", f"{ERP}/login?next=/bills", f"{ERP}/notice/dismiss"])
def test_the_configured_login_and_exempt_paths_as_sent_are_exempt(url: str) -> None:
    policy = Policy(PolicyConfig.for_url(ERP), ScriptedHuman())
    assert policy.is_exempt(url)
    assert policy.submission(Submission(origin="form", method="POST", url=url)).outcome == "allowed"


@pytest.mark.parametrize(
    "path",
    [
        "/_debug;x/state",
        "/%255Fdebug/state",
        "/_Debug/",
        "/bills%2f..%2f_debug",
        "/x/..%5c_debug",
        "//_debug/x://y",
    ],
)
def test_blocked_paths_match_any_reading(path: str) -> None:
    verdict = check_url(ERP + path, PolicyConfig.for_url(ERP))
    assert not verdict.allowed and "off limits" in verdict.reason


def test_a_data_changing_get_is_gated_on_any_reading() -> None:
    policy = Policy(PolicyConfig.for_url(ERP, changing_get_paths=["/logout"]), ScriptedHuman())
    for path in ("/logout", "/logout/", "/LOGOUT", "/%6Cogout", "/logout;x", "/a/../logout"):
        assert policy.changes_data("GET", ERP + path), path
    assert not policy.changes_data("GET", f"{ERP}/logout-help")


# ---- end to end: the demo ERP behind a decoding front, the worker's Policy, JobHuman, authority ----
def test_a_percent_encoded_pay_path_on_a_decoding_server_needs_two_people(
    env: dict[str, Any],
    erp: ErpServer,
    erp_user: Any,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parse = erp_web.Request.parse.__func__  # type: ignore[attr-defined]

    def decoding(cls: type, method: str, target: str, headers: dict[str, str], body: bytes) -> Any:
        request = parse(cls, method, target, headers, body)  # Starlette, werkzeug, Spring decode %XX
        return dataclasses.replace(request, path=unquote(request.path))

    monkeypatch.setattr(erp_web.Request, "parse", classmethod(decoding))
    jobs, authority = env["jobs"], env["authority"]
    erp_user.new_bill(vendor="Initech", invoice_number="INI-9999", amount="8000.00", currency="EUR")
    bill = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "INI-9999")
    encoded = f"/bills/{bill.id.replace('-', '%2D')}/pay"
    job = jobs.submit(f"Pay {bill.id}", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    policy = Policy(PolicyConfig.for_url(erp.url), JobHuman(jobs, job.id))
    policy.page_fetch = lambda url: erp_user.http.get(url).text if url.startswith(erp.url) else None
    token = re.search(r'name="csrf_token" value="([^"]+)"', erp_user.http.get(f"/bills/{bill.id}").text)
    assert token is not None
    fields = [
        FieldValue(name="csrf_token", value=token.group(1)),
        FieldValue(name="paid_on", value="2026-10-01"),
    ]
    with pytest.raises(Parked) as parked:
        policy.submission(Submission(origin="form", method="POST", url=erp.url + encoded, fields=fields))
    jobs.mark(job.id, "waiting", only_if=("running",))
    view = authority.view(jobs.approval(parked.value.approval_id))
    assert view.approval.request.looked_up["amount"] == "8000.00"
    assert {"amount_above_threshold", "unclear_target"} <= {f.rule for f in view.assessment.flags}
    assert view.needs_two
    refused = authority.decide(parked.value.approval_id, "approve", Identity(name="ana", proof="token"))
    assert refused.status == "refused" and "another person must approve" in refused.message
    assert next(b for b in fetch_state(erp.url).bills if b.id == bill.id).status == "unpaid"
    # the front does read it as that bill: sent directly, it pays it
    sent = erp_user.http.post(encoded, data={f.name: f.value for f in fields})
    assert sent.status_code == 303
    assert next(b for b in fetch_state(erp.url).bills if b.id == bill.id).status == "paid"
