"""Policy rules without a browser: URL tricks, blocked paths, approvals, read-only, the human interface."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from taskcrew.tools.human import (
    ApprovalDecision,
    ApprovalRequest,
    AutoApproveHuman,
    FieldValue,
    ScriptedHuman,
    ScriptError,
    TerminalHuman,
    describe_request,
)
from taskcrew.tools.policy import Policy, PolicyConfig, PolicyDecision, Submission, check_url

ERP = PolicyConfig(allowed_hosts=["127.0.0.1:8800", "localhost:8800"])


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8800/",
        "http://127.0.0.1:8800/bills?status=unpaid",
        "HTTP://LOCALHOST:8800/login",
        "http://localhost.:8800/bills",
        "http://2130706433:8800/bills",  # the same IPv4 address, spelled as a number
        "http://127.1:8800/bills",
        "about:blank",
    ],
)
def test_allowed_urls(url: str) -> None:
    assert check_url(url, ERP).allowed, check_url(url, ERP).reason


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://erp@evil.test/", "user info"),
        ("http://127.0.0.1:8800@evil.test/", "user info"),
        ("http://127.0.0.1:8800%40evil.test/", "invalid port"),
        ("http://evil.test/?next=http://127.0.0.1:8800/", "allow-list"),
        ("http://evil.test#@127.0.0.1:8800/", "allow-list"),
        ("http://evil.test\\@127.0.0.1:8800/", "allow-list"),  # browsers read the backslash as a slash
        ("http://127.0.0.1.evil.test:8800/", "allow-list"),
        ("http://127.0.0.1:8801/", "allow-list"),
        ("http://lоcalhost:8800/", "allow-list"),  # Cyrillic 'о'
        ("http://127.0.0.2:8800/", "allow-list"),
        ("javascript:alert(1)", "javascript"),
        ("JaVaScRiPt:alert(1)", "javascript"),
        (" javascript:alert(1)", "javascript"),
        ("java\tscript:alert(1)", "javascript"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("file:///etc/passwd", "file"),
        ("/bills", "relative"),
        ("http://127.0.0.1:8800/_debug/state", "off limits"),
        ("http://127.0.0.1:8800/_debug", "off limits"),
        ("http://127.0.0.1:8800/_DEBUG/reset", "off limits"),
        ("http://127.0.0.1:8800/%5Fdebug/state", "off limits"),
        ("http://127.0.0.1:8800/bills/../_debug/state", "off limits"),
        ("http://127.0.0.1:8800//_debug/state", "off limits"),
        ("http://127.0.0.1:8800/bills/%2e%2e/_debug/chaos", "off limits"),
    ],
)
def test_blocked_urls(url: str, why: str) -> None:
    verdict = check_url(url, ERP)
    assert not verdict.allowed
    assert why in verdict.reason, verdict.reason


def test_https_port_is_part_of_the_host() -> None:
    cfg = PolicyConfig(allowed_hosts=["erp.example.com"])
    assert check_url("https://erp.example.com/x", cfg).allowed
    assert check_url("http://erp.example.com:8080/x", cfg).allowed
    assert not check_url("https://erp.example.com.evil.test/", cfg).allowed
    wild = PolicyConfig(allowed_hosts=["*.example.com:443"])
    assert check_url("https://a.b.example.com/", wild).allowed
    assert not check_url("https://example.com.evil.test/", wild).allowed
    assert not check_url("http://a.example.com/", wild).allowed  # port 80


def test_for_url_allows_the_loopback_twin() -> None:
    cfg = PolicyConfig.for_url("http://127.0.0.1:9123/login")
    assert check_url("http://localhost:9123/bills", cfg).allowed
    assert not check_url("http://127.0.0.1:9124/bills", cfg).allowed


def _sub(**kw: object) -> Submission:
    base: dict[str, object] = {
        "origin": "form",
        "method": "POST",
        "url": "http://127.0.0.1:8800/bills",
        "fields": [
            FieldValue(name="csrf_token", value="abc123"),
            FieldValue(name="vendor", value="Northwind Traders"),
            FieldValue(name="amount", value="1284.50"),
        ],
        "summary": 'button "Save bill"',
    }
    base.update(kw)
    return Submission.model_validate(base)


def test_approval_shows_exact_fields_and_is_not_asked_twice() -> None:
    human = ScriptedHuman([ApprovalDecision.approve()])
    recorded: list[PolicyDecision] = []
    policy = Policy(ERP, human, recorded)
    first = policy.submission(_sub())
    assert first.outcome == "approved"
    (request,) = human.requests
    assert request.method == "POST" and request.url.endswith("/bills")
    shown = {f.name: f.value for f in request.fields}
    assert shown["vendor"] == "Northwind Traders" and shown["amount"] == "1284.50"
    assert "abc123" not in describe_request(request)  # the token is summarised, not dumped
    # the same payload with a fresh CSRF token is not asked again
    second = policy.submission(_sub(fields=[FieldValue(name="csrf_token", value="zzz"), *_sub().fields[1:]]))
    assert second.outcome == "allowed" and "approved before" in second.reason
    # a different payload is asked again (and the script has nothing left: ScriptError)
    with pytest.raises(ScriptError):
        policy.submission(_sub(fields=[FieldValue(name="amount", value="1.00")]))
    human.assert_complete()
    assert [d.outcome for d in recorded] == ["approved", "allowed"]
    assert recorded == policy.decisions[:2]


def test_reject_and_answer_are_rejections_with_the_humans_words() -> None:
    human = ScriptedHuman([ApprovalDecision.reject("wrong vendor"), ApprovalDecision.answer("use EUR")])
    policy = Policy(ERP, human)
    rejected = policy.submission(_sub())
    answered = policy.submission(_sub())
    assert rejected.outcome == "rejected" and rejected.answer == "wrong vendor"
    assert answered.outcome == "rejected" and "use EUR" in answered.message()
    assert not rejected.permitted
    human.assert_complete()


def test_login_is_exempt_and_read_only_refuses_writes() -> None:
    seen: list[PolicyDecision] = []
    policy = Policy(ERP, ScriptedHuman(), seen.append).read_only_copy()
    assert policy.read_only
    login = policy.submission(_sub(url="http://127.0.0.1:8800/login", fields=[]))
    pw_form = policy.submission(_sub(url="http://127.0.0.1:8800/session", login_form=True))
    write = policy.submission(_sub())
    fetch = policy.request("DELETE", "http://127.0.0.1:8800/bills/3")
    read = policy.request("GET", "http://127.0.0.1:8800/bills")
    # a login is recognised by the configured login URL, never by the form's shape (issue 10)
    assert (login.outcome, pw_form.outcome) == ("allowed", "read_only_refused")
    assert write.outcome == "read_only_refused" and "read-only" in write.message()
    assert fetch.outcome == "read_only_refused"
    assert read.outcome == "allowed"
    assert [d.outcome for d in seen] == ["allowed", *["read_only_refused"] * 3]


def test_blocked_target_is_never_asked() -> None:
    policy = Policy(ERP, ScriptedHuman())
    assert policy.submission(_sub(url="http://evil.test/bills")).outcome == "blocked"
    assert policy.submission(_sub(url="http://127.0.0.1:8800/_debug/reset")).outcome == "blocked"
    assert policy.navigation("http://erp@evil.test/").outcome == "blocked"


@pytest.mark.parametrize("read_only", [False, True], ids=["normal", "read-only"])
def test_a_websocket_is_recorded_as_one_and_says_why_whatever_its_host(read_only: bool) -> None:
    policy = Policy(ERP.model_copy(update={"read_only": read_only}), ScriptedHuman())
    off, on = (
        policy.refuse_websocket("ws://evil.test/x", "none is opened"),
        policy.refuse_websocket("ws://127.0.0.1:8800/live", "none is opened"),
    )
    assert (off.method, off.outcome) == ("WEBSOCKET", "blocked")  # off the list: blocked there, not a GET
    assert "evil.test" in off.reason and off.reason.endswith("none is opened"), off.reason
    assert (on.method, on.outcome) == ("WEBSOCKET", "read_only_refused" if read_only else "blocked")
    assert policy.decisions == [off, on]


def test_network_requests_without_approval_mode_are_blocked() -> None:
    cfg = ERP.model_copy(update={"approve_network_requests": False})
    policy = Policy(cfg, ScriptedHuman())
    assert policy.request("POST", "http://127.0.0.1:8800/api/bills").outcome == "blocked"
    assert policy.request("POST", "http://127.0.0.1:8800/login").outcome == "allowed"


def test_scripted_human_fails_on_unused_script_and_unexpected_questions() -> None:
    human = ScriptedHuman(answers=["yes"])
    assert human.ask("Proceed?") == "yes"
    with pytest.raises(ScriptError):
        human.ask("Again?")
    leftover = ScriptedHuman([ApprovalDecision.approve()])
    with pytest.raises(ScriptError, match="not used up"):
        leftover.assert_complete()


def test_auto_approve_human() -> None:
    human = AutoApproveHuman(answer="carry on")
    req = ApprovalRequest(kind="form_submission", method="POST", url="http://x/")
    assert human.approve(req).approved
    assert human.ask("?") == "carry on"
    assert human.approved == [req]


def test_terminal_human_reads_answers_from_its_stream() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    req = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills",
        fields=[FieldValue(name="password", value="{{secret:ERP_PASSWORD}}")],
    )
    human = TerminalHuman(console=console, stream=io.StringIO("y\nn\nnot this vendor\na\nuse EUR\n"))
    assert human.approve(req).outcome == "approve"
    rejected = human.approve(req)
    assert rejected.outcome == "reject" and rejected.text == "not this vendor"
    answered = human.approve(req)
    assert answered.outcome == "answer" and answered.text == "use EUR"
    shown = out.getvalue()
    assert "POST http://127.0.0.1:8800/bills" in shown and "{{secret:ERP_PASSWORD}}" in shown
    asker = TerminalHuman(console=console, stream=io.StringIO("Northwind\n"))
    assert asker.ask("Which vendor?") == "Northwind"


def test_a_repeat_in_doubt_reads_the_record_again_once_approved_as_any_send_does() -> None:
    """A pay request sends no amount: the system pays what the bill says when it arrives. A colleague
    raises the bill while the person decides on a repeat in doubt: before, it was sent on the amount
    shown; now the record is read again and the person asked again, both warnings shown."""
    amount = {"now": "300.00"}

    class Slow(ScriptedHuman):  # meanwhile a colleague edits the bill
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            decided = super().approve(request)
            amount["now"] = "98000.00"
            return decided

    person = Slow([ApprovalDecision.approve(by="ana at the terminal", basis="person")] * 2)
    policy = Policy(PolicyConfig.for_url("http://127.0.0.1:8800"), person)
    policy.page_fetch = lambda url: (
        f'<span id="bill-amount">{amount["now"]} EUR</span>' if url.endswith("/bills/BILL-0004") else None
    )
    url = "http://127.0.0.1:8800/bills/BILL-0004/pay"
    assert policy.ask_to_send_again("POST", url, [("paid_on", "2026-10-02")], "k.1", "it MAY STILL APPLY")
    first, second = person.requests
    assert (first.looked_up or {}).get("amount") == "300.00"
    assert (second.looked_up or {}).get("amount") == "98000.00" and any("98000.00" in f for f in second.flags)
    assert "MAY STILL APPLY" in (second.asked_again or "") and "300.00" in (second.asked_again or "")
