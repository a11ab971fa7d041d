"""One approval, one send that may have saved: an answer nobody can read as "not saved" spends it.

Found (red team): the approved payment was answered HTTP 200 "Payment recorded." with a fresh copy of
the form ("Save & New"), which ``submissions.classify`` reads as "unknown" (the form again, no
error). An approval was spent only on "saved", so a script on that page posted the identical payload
again and the gate let it through ("an identical payload was approved before"): two payments on one
approval, in a run without an intent log (a bare session and policy: ``Workplace.run``, demo, eval).

The rule now (``Policy.sent``): an answer that may have saved the request — "saved" or "unknown" —
spends its approval, so an identical request after it is asked again; only an answer that says it
was not saved ("refused", "bounced", "not_sent") leaves it for the agent's retry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_adversarial import Server, serve
from fixtures_browser import SessionFactory

from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.tools.browser import Click, Wait
from taskcrew.tools.human import ApprovalDecision, FieldValue, ScriptedHuman
from taskcrew.tools.intents import IntentLog
from taskcrew.tools.policy import IN_DOUBT, Policy, PolicyConfig, Submission

FORM = """<!doctype html><title>Pay</title><h1>Pay bill</h1>
<form method="post" action="/pay">
<label>Bill <input name="bill" value="BILL-0004" readonly></label>
<label>Amount <input name="amount" value="640.00"></label>
<button type="submit">Pay 640.00</button></form>"""

# the answer: "Payment recorded" and a fresh form (Save & New) whose page posts it again at once
ANSWER = FORM.replace("<h1>", "<p>Payment recorded.</p><h1>") + (
    "<script>if (!sessionStorage.done) { sessionStorage.done = 1; "
    "setTimeout(() => document.forms[0].submit(), 50); }</script>"
)


@pytest.fixture
def hostile() -> Iterator[Server]:
    yield from serve({"/pay.html": FORM, "/pay": ANSWER})


@pytest.mark.browser
def test_a_copy_posted_after_an_answer_that_may_have_saved_is_asked_again(
    make_session: SessionFactory, hostile: Server
) -> None:
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.reject("one payment only")])
    session = make_session(human=human, base_url=hostile.url)
    obs = session.goto(f"{hostile.url}/pay.html").observation
    first = session.act([Click(index=next(e.index for e in obs.elements if e.name == "Pay 640.00"))])
    assert [s.result for s in first.submissions] == ["unknown"]
    session.act([Wait(seconds=1)])
    for _ in range(20):  # the page's copy is asked (and refused) once its script runs
        if len(human.requests) == 2:
            break
        session.act([Wait(seconds=1)])
    human.assert_complete()
    copy = human.requests[1]
    assert [(f.name, f.value) for f in copy.fields] == [("bill", "BILL-0004"), ("amount", "640.00")]
    assert copy.asked_again == IN_DOUBT and human.requests[0].asked_again is None  # told why
    assert [h.body for h in hostile.posts()] == [b"bill=BILL-0004&amount=640.00"]  # one payment
    reasons = [d.reason for d in session.policy.decisions if d.method == "POST"]
    assert not any("identical payload" in r for r in reasons), reasons


@pytest.mark.browser
def test_in_a_run_with_an_intent_log_the_log_holds_the_copy(
    make_session: SessionFactory, hostile: Server, tmp_path: Path
) -> None:
    """A run that keeps an intent log (a job, ``taskcrew run``, a routine's replay): the approval is
    not spent by the "unknown" answer, and the log decides the copy: no read-back rule for this
    system, and the first copy's answer nobody can read, so it is not sent again."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Pay BILL-0004", submitted_by="ana")
    human = ScriptedHuman([ApprovalDecision.approve()])
    session = make_session(human=human, base_url=hostile.url)
    log = session.policy.intents = IntentLog(StoreIntents(jobs, job.id), job.id, [])
    obs = session.goto(f"{hostile.url}/pay.html").observation
    session.act([Click(index=next(e.index for e in obs.elements if e.name == "Pay 640.00"))])
    for _ in range(20):  # until the page's copy was held back by the log
        if log.refused:
            break
        session.act([Wait(seconds=1)])
    assert log.refused == 1
    human.assert_complete()
    assert [h.body for h in hostile.posts()] == [b"bill=BILL-0004&amount=640.00"]  # one payment


def _pay() -> Submission:
    return Submission(
        origin="form",
        method="POST",
        url="http://127.0.0.1:8800/bills/7/pay",
        fields=[FieldValue(name="paid_on", value="2026-10-01")],
        summary='button "Pay"',
    )


@pytest.mark.parametrize(
    ("answer", "asked_again"),
    [("saved", True), ("unknown", True), ("refused", False), ("bounced", False), ("not_sent", False)],
)
def test_only_an_answer_that_says_not_saved_leaves_the_approval_for_a_retry(
    answer: str, asked_again: bool
) -> None:
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url("http://127.0.0.1:8800"), human)
    assert policy.submission(_pay()).outcome == "approved"
    sent = [("paid_on", "2026-10-01")]
    policy.leaving("POST", _pay().url, sent)
    policy.sent("POST", _pay().url, sent, answer)
    retry = policy.submission(_pay())
    if asked_again:
        assert retry.outcome == "approved" and len(human.requests) == 2
        # an answer in doubt says so to the person asked again; a saved one needs no warning
        assert human.requests[1].asked_again == (IN_DOUBT if answer == "unknown" else None)
    else:
        assert retry.outcome == "allowed" and "identical payload" in retry.reason and len(human.requests) == 1
