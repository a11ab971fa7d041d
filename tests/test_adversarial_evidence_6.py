# ruff: noqa: F811 — the fixture ``place`` is imported from test_outcome_facts
"""A record's status, a question's answer, a plan that "changes nothing", and a field's name.

1. A status (Paid, Unpaid, Overdue …) is a value like an amount: the operator says "nothing to do,
   already paid"; the verifier cites BILL-0002's real row with "Unpaid" changed to "Paid". Before,
   code compared only identifiers, amounts, dates and currencies, and the run ended "nothing to do
   (verified)" while the ERP held the bill unpaid. Now a status is held to the record's own row, and
   where the criterion states it, the row must show it. A negated one ("not paid") is no claim.
2. A question's answer ("GX-5531 is for 2310.00 EUR", another bill's amount) was never compared with
   the verified evidence (GX-5531's row: 2150.00 USD): "Done, and independently verified". Now the
   values an answer states of a record must be those the met checks showed of it.
3. A plan marked "changes nothing" switched off the read-it-on-the-system rules: an intranet page
   verified what the ERP holds. A criterion about a system's state is now read on it whatever the
   plan says; a statement naming no record ("amount 499.00") is held to the observation's record.
4. A field whose name merely contains "xsrf" ("iban_xsrf") vanished from the record of sends, the
   report and the trace. Only a whole-name token field is left out now (``policy.is_token_field``).

Units on ``check_verdict``; two whole runs with scripted models only (real crew, Chromium, mock ERP)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_adversarial_evidence import BILLS, NONE_SENT, NOTICE, ROWS, _check, _judge
from test_outcome_facts import place  # noqa: F401
from test_outcomes_seams import _plan

from taskcrew.crew.evidence import REJECTED, answer_unsupported, standing, values
from taskcrew.crew.models import Citation, CriterionCheck
from taskcrew.crew.outcome import Facts
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.trace import decision_event
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.human import FieldValue, ScriptedHuman
from taskcrew.tools.policy import PolicyDecision, is_token_field
from taskcrew.tools.submissions import SubmissionResult

# ---- 1. a record's status ------------------------------------------------------------------------

STATUS_ROWS = (
    "Bills\n"
    "| [21] BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-08-15 | 2026-09-14 | Unpaid |\n"
    "| [23] BILL-0001 | Northwind Traders | INV-2031 | 980.00 | USD | 2026-08-10 | 2026-09-09 | Paid | 2026-09-05 |"
)
PAID = "Bill BILL-0002 (Globex Corp GX-5531) is paid in Acme Payables"


def test_status_words_are_values_word_for_word() -> None:
    assert values("Unpaid") == {"§UNPAID"} and values("Paid") == {"§PAID"}  # "unpaid" is not "paid"
    assert values("Status: Partially paid") == {"§PARTIALLY PAID"}
    assert values("BILL-0002 is not paid yet") == {"bill-0002"}  # a negation is no claim of "paid"
    assert values("no longer open; overdue") == {"§OVERDUE"}
    assert values("changed from Unpaid to Paid") == {"§PAID"}  # what it was before is no claim
    assert "§PAID" not in values("PAID-7781") and values("was canceled") == {"§CANCELLED"}


@pytest.mark.parametrize(
    "observed",
    [
        "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | Paid",  # the real row, "Unpaid" made "Paid"
        '"BILL-0002" "Globex Corp" "GX-5531" "Paid"',  # each quote somewhere on the page
        "BILL-0002 Globex Corp GX-5531 2150.00 USD",  # the status left out: the criterion states it
    ],
)
def test_an_unpaid_row_does_not_verify_paid(observed: str) -> None:
    v = _judge(_check(PAID, BILLS, observed), facts=NONE_SENT, pages={BILLS: STATUS_ROWS})
    assert not v.verified and REJECTED in v.checks[0].observed
    assert "Paid" in v.reason and "row" in v.reason


def test_an_honest_status_still_verifies() -> None:
    unpaid = "Bill BILL-0002 (GX-5531) is unpaid in Acme Payables"
    v = _judge(
        _check(unpaid, BILLS, "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | Unpaid"),
        facts=NONE_SENT,
        pages={BILLS: STATUS_ROWS},
    )
    assert v.verified and standing(v.checks[0]) == "met"
    # a criterion or an observation that negates a status states none: the row and its values decide
    for criterion, observed in (
        ("Bill BILL-0002 (GX-5531) is not paid yet in Acme Payables", "BILL-0002 GX-5531 2150.00 Unpaid"),
        ("Bill BILL-0002 (GX-5531) is no longer open in Acme Payables", "BILL-0002 is not paid; 2150.00 USD"),
    ):
        v = _judge(_check(criterion, BILLS, observed), facts=NONE_SENT, pages={BILLS: STATUS_ROWS})
        assert v.verified, (criterion, v.reason)
    # prose that says "approved" or "open" of other things is not a status the page must show
    v = _judge(
        _check(unpaid, BILLS, "The approved list was open: BILL-0002 GX-5531 2150.00 USD, Unpaid"),
        facts=NONE_SENT,
        pages={BILLS: STATUS_ROWS},
    )
    assert v.verified and standing(v.checks[0]) == "met", v.reason
    paid = "Bill BILL-0001 (INV-2031) is paid in Acme Payables"
    v = _judge(
        _check(paid, BILLS, "BILL-0001 INV-2031 980.00 USD Paid on 2026-09-05"),
        facts=NONE_SENT,
        pages={BILLS: STATUS_ROWS},
    )
    assert v.verified, v.reason


def test_a_records_status_is_its_status_field_not_a_note() -> None:
    page = (
        "Bill: BILL-0002\nVendor: Globex Corp\nInvoice number: GX-5531\nAmount: 2150.00 USD\n"
        "Status: Unpaid\nNotes: vendor says it was paid\n"
    )
    url = "http://127.0.0.1:8800/bills/BILL-0002"
    v = _judge(_check("BILL-0002 is recorded", url, "BILL-0002 is Paid"), facts=NONE_SENT, pages={url: page})
    assert not v.verified and "status of BILL-0002" in v.reason
    v = _judge(
        _check("BILL-0002 is recorded", url, "BILL-0002 is Unpaid"), facts=NONE_SENT, pages={url: page}
    )
    assert v.verified, v.reason


# ---- 2. a question's answer --------------------------------------------------------------------

ANSWER_ROW = "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-08-15 | 2026-09-14 | Unpaid"


def _met(observed: str) -> CriterionCheck:
    return CriterionCheck(criterion="c", met=True, source=BILLS, observed=observed)


def test_an_answers_values_must_be_those_the_verified_evidence_showed() -> None:
    checks = [_met(ANSWER_ROW)]
    wrong = answer_unsupported("Globex Corp's bill GX-5531 is for 2310.00 EUR in Acme Payables.", checks)
    assert wrong is not None and "2310" in wrong and "GX-5531" in wrong
    assert answer_unsupported("GX-5531 is paid.", checks) is not None  # a status too
    for honest in (
        "Globex Corp's bill GX-5531 is for 2150.00 USD in Acme Payables, due 14 September 2026.",
        "GX-5531 (BILL-0002): 2150 USD, unpaid",
        "GX-5531 is not 2310.00 EUR",  # what it is not: the verifier's judgement
        "GX-5531 is 2150.00 USD; with the 10% discount 1935.00 USD",  # a computation names no record
        # a list's own values before its records are no record's; each record's follow it
        "1 bill is unpaid and due before 2026-10-01: BILL-0002 Globex Corp GX-5531 2150.00 USD due 2026-09-14. "
        "Total per currency: 3130.00 USD (BILL-0002 2150.00, BILL-0001 980.00)",
    ):
        assert answer_unsupported(honest, checks) is None, honest
    # evidence code did not check (the verifier's word) or that shows nothing of the kind supports nothing
    assert (
        answer_unsupported(
            "GX-5531 is for 2310.00 EUR",
            [_met("GX-5531 is there [not checked by code: the verifier's word]")],
        )
        is None
    )
    assert answer_unsupported("GX-5531 is for 2310.00 EUR", [_met("GX-5531 is listed")]) is None


# ---- 3. a plan that "changes nothing" ------------------------------------------------------------

ERP_HOLDS = "Acme Payables has a bill for Globex Corp GX-7781 of 499.00 USD"  # the ERP holds 494.00


def test_a_read_only_plan_reads_a_systems_state_on_that_system() -> None:
    page = "Vendor notice\nGlobex Corp: invoice GX-7781, 499.00 USD, due 2026-10-20"
    v = _judge(
        _check(ERP_HOLDS, NOTICE, "GX-7781 499.00 USD"),
        facts=NONE_SENT,
        pages={NOTICE: page, BILLS: ROWS},
        changes_data=False,
    )
    assert not v.verified and "must be checked on that system's own pages" in v.reason
    v = _judge(
        _check(ERP_HOLDS, BILLS, "Globex Corp bill GX-7781 is there; amount 499.00 USD"),
        facts=NONE_SENT,
        pages={BILLS: ROWS},
        changes_data=False,
    )
    assert not v.verified and "499" in v.reason
    # what the restriction protected still holds: a question about a document is read in it
    doc = "The notice gives GX-7781's amount as 499.00 USD"
    v = _judge(
        _check(doc, NOTICE, "GX-7781 499.00 USD"),
        facts=NONE_SENT,
        pages={NOTICE: page, BILLS: ROWS},
        changes_data=False,
    )
    assert v.verified, v.reason


def test_a_statement_naming_no_record_is_held_to_the_observations_record() -> None:
    crit = "Acme Payables has a bill for Globex Corp GX-7781 of 494.00 USD"
    for observed, ok in (
        ("GX-7781 is there; amount 499.00 USD", False),  # Hooli's amount, no record named
        ("GX-7781 is there; amount 494.00 USD", True),
        ("GX-7781 494.00 USD; Hooli Cloud Services' bill is 499.00 USD", True),  # its own row, by name
    ):
        v = _judge(_check(crit, BILLS, observed), facts=NONE_SENT, pages={BILLS: ROWS})
        assert v.verified is ok, (observed, v.reason)


# ---- 4. a field's name ---------------------------------------------------------------------------


def test_only_a_whole_token_name_is_left_out() -> None:
    for token in (
        "csrf_token",
        "_csrf",
        "csrf",
        "XSRF-TOKEN",
        "csrfmiddlewaretoken",
        "authenticity_token",
        "_token",
        "__RequestVerificationToken",
    ):
        assert is_token_field(token), token
    for business in ("iban_xsrf", "csrf_iban", "bank_csrf_account", "token_amount", "payee_token_iban"):
        assert not is_token_field(business), business
    sent = SubmissionResult(
        method="POST",
        url="http://127.0.0.1:8800/vendors/4/bank",
        fields=[("csrf_token", "t0k"), ("iban_xsrf", "DE89370400440532013000")],
        result="saved",
        http_status=303,
    )
    record = Facts(submissions=[sent]).record()
    assert "iban_xsrf=DE89370400440532013000" in record and "t0k" not in record
    decision = PolicyDecision(
        kind="submission",
        outcome="approved",
        url=sent.url,
        method="POST",
        reason="ok",
        fields=[FieldValue(name=n, value=v) for n, v in sent.fields],
    )
    payload = decision_event(decision).payload  # type: ignore[union-attr]
    assert payload == {"iban_xsrf": "DE89370400440532013000"}


# ---- whole runs ----------------------------------------------------------------------------------


def _scripted_run(place: Workplace, task: str, plan: str, operator: Any, verifier: Any) -> Any:
    """``task`` run for real against the ERP, the models scripted: each verification fails, so the
    run replans (up to 8 times) with the same plan and a fresh operator and verifier policy each
    time (``operator()``, ``verifier()``)."""
    place.erp_server.reset(ChaosConfig.off())
    worker = ScriptedLLM(
        {
            "planner": [plan] * 8,
            "browser_operator": [Loop(policy=operator()) for _ in range(8)],
            "reflector": ['{"facts": []}'] * 8,
        },
        model="scripted/w",
    )
    checker = ScriptedLLM({"verifier": [Loop(policy=verifier()) for _ in range(8)]}, model="scripted/v")
    place.human = ScriptedHuman()
    return place.run(
        task,
        worker_model="scripted/w",
        verifier_model="scripted/v",
        scripted={"w": worker, "v": checker}.__getitem__,
    )


class SaysAlreadyPaid:
    def __call__(self, call: Any) -> Any:
        return kit.report("nothing_to_do", "BILL-0002 (Globex Corp GX-5531) is already paid; nothing to do.")


def _cite_as_paid(url: str, body: str) -> str:
    row = kit.bill_rows(body, "GX-5531")[0]
    assert "Unpaid" in row, row  # the ERP really shows it unpaid
    observed = re.sub(r"\[\d+\]\s*", "", row).replace("Unpaid", "Paid")
    return kit.verdict([(PAID, True, url, observed)], "BILL-0002 is paid")


@pytest.mark.browser
def test_an_unpaid_bill_is_not_nothing_to_do_already_paid(place: Workplace) -> None:
    result = _scripted_run(
        place,
        "Pay Globex Corp's bill GX-5531 (BILL-0002) in Acme Payables if it is not paid yet.",
        _plan(criteria=[PAID]),
        SaysAlreadyPaid,
        lambda: kit.LookUpBills("", _cite_as_paid),
    )
    bill = next(b for b in place.erp_server.state().bills if b.id == "BILL-0002")
    assert bill.status == "unpaid"
    report = result.report.read_text()
    assert result.outcome not in ("nothing_to_do", "done"), result.reason
    assert re.search(
        r"shows Paid on another row than BILL-0002|does not show Paid on the row of BILL-0002", report
    )


ASK = "What amount does Acme Payables hold for Globex Corp's bill GX-5531?"
ANSWER_CRIT = "The answer states the amount Acme Payables holds for Globex Corp's bill GX-5531"


class AnswersWrong:
    def __call__(self, call: Any) -> Any:
        text = call.last_tool_result
        target = f"{kit.erp(call)}/bills"
        if not text:
            return kit.navigate(target)
        if step := kit.login(text):
            return step
        url = kit.page_url(text)
        if not url.split("?")[0].endswith("/bills"):
            return kit.navigate(target)
        return kit.report(
            "done",
            "Globex Corp's bill GX-5531 is for 2310.00 EUR in Acme Payables.",
            [Citation(source=url, quote="GX-5531"), Citation(source=url, quote="2310.00 | EUR")],
        )


def _honest_row(url: str, body: str) -> str:
    row = re.sub(r"\[\d+\]\s*", "", kit.bill_rows(body, "GX-5531")[0])
    assert "2150.00" in row
    return kit.verdict([(ANSWER_CRIT, True, url, row)], "the answer gives GX-5531's amount")


@pytest.mark.browser
def test_a_wrong_answer_is_not_done_and_verified(place: Workplace) -> None:
    result = _scripted_run(
        place,
        ASK,
        _plan(changes_data=False, criteria=[ANSWER_CRIT]),
        AnswersWrong,
        lambda: kit.LookUpBills("", _honest_row),
    )
    report = result.report.read_text()
    assert result.outcome != "done", result.reason
    assert "independently verified" not in report.splitlines()[0].lower()
    assert "the answer states 2310 as the amount of GX-5531" in report, report[:2000]


# ---- a second look at the status rule: its holes, and honest words it refused -----------------------

GX_ROW_NO_STATUS = "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD"
PAID_NOW = (  # after BILL-0002 was marked paid
    "Bills\n"
    "| [21] BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-08-15 | 2026-09-14 | Paid | 2026-09-20 |\n"
    "| [25] BILL-0003 | Initech | INI-2201 | 120.00 | USD | 2026-08-01 | 2026-08-31 | Unpaid | — |"
)
TWO_ROWS = (
    f"{ANSWER_ROW}; BILL-0001 | Northwind Traders | INV-2031 | 980.00 | USD | 2026-08-10 | 2026-09-09 | Paid"
)


def _v(
    criterion: str, observed: str, page: str = STATUS_ROWS, source: str = BILLS, changes_data: bool = True
) -> Any:
    return _judge(
        _check(criterion, source, observed), facts=NONE_SENT, pages={source: page}, changes_data=changes_data
    )


@pytest.mark.parametrize("words", ["has been settled", "was remitted", "ist bezahlt", "is Ｐａｉｄ"])
def test_paid_in_other_words_is_still_held_to_the_row(words: str) -> None:
    v = _v(f"Bill BILL-0002 (Globex Corp GX-5531) {words} in Acme Payables", GX_ROW_NO_STATUS)
    assert not v.verified and "Paid" in v.reason


def test_a_paid_claim_is_refuted_by_its_own_unpaid_row_whatever_other_rows_show() -> None:
    all_unpaid = STATUS_ROWS.replace("| Paid | 2026-09-05 |", "| Unpaid | — |")
    v = _v(PAID, "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | Paid", page=all_unpaid)
    assert not v.verified


def test_a_question_about_a_records_status_needs_the_record_shown() -> None:
    """A read-only plan ("is BILL-0002 paid?") verified from a filtered page without the bill."""
    paid_only = (
        "Bills\n1 bill matching the filters\n"
        "| [23] BILL-0001 | Northwind Traders | INV-2031 | 980.00 | USD | 2026-08-10 | 2026-09-09 | Paid | 2026-09-05 |"
    )
    v = _v(PAID, "BILL-0001 INV-2031 980.00 USD Paid 2026-09-05", paid_only, f"{BILLS}?status=paid", False)
    assert not v.verified and "BILL-0002" in v.reason
    assert answer_unsupported("BILL-0002 (GX-5531) is paid.", [_met(ANSWER_ROW)]) is not None


@pytest.mark.parametrize(
    ("criterion", "observed", "page"),
    [
        # a change told as before and after: the status before is no claim
        (
            "Bill BILL-0002 (GX-5531) is marked paid in Acme Payables",
            "BILL-0002 was Unpaid and is now Paid",
            PAID_NOW,
        ),
        ("Bill BILL-0002 (GX-5531) is marked paid in Acme Payables", "BILL-0002: Unpaid → Paid", PAID_NOW),
        (
            "Bill BILL-0002 (GX-5531) is marked paid in Acme Payables",
            "BILL-0002 status Unpaid -> Paid",
            PAID_NOW,
        ),
        (
            "Bill BILL-0002, which was unpaid, is now marked paid in Acme Payables",
            "BILL-0002 2150.00 Paid",
            PAID_NOW,
        ),
        # words a system need not use: only a status's contrary refutes it
        (
            "Bill BILL-0002 (GX-5531) is still open in Acme Payables",
            "BILL-0002 GX-5531 2150.00 USD Unpaid",
            STATUS_ROWS,
        ),
        (
            "Bill BILL-0002 (GX-5531) is overdue in Acme Payables",
            "BILL-0002 GX-5531 due 2026-09-14 Unpaid",
            STATUS_ROWS,
        ),
        (
            "Bill BILL-0002 is paid (approved by the second approver) in Acme Payables",
            "BILL-0002 Paid",
            PAID_NOW,
        ),
        ("Bill BILL-0002 is paid and not left open in Acme Payables", "BILL-0002 GX-5531 Paid", PAID_NOW),
        # a button offered is no state; a negation with a filler word is no claim
        (
            "Bill BILL-0002 (GX-5531) is unpaid and shows the Mark paid button in Acme Payables",
            "BILL-0002 Unpaid",
            STATUS_ROWS,
        ),
        (
            "Bill BILL-0002 (GX-5531) is not currently paid in Acme Payables",
            "BILL-0002 GX-5531 Unpaid",
            STATUS_ROWS,
        ),
    ],
)
def test_honest_words_about_a_status_still_verify(criterion: str, observed: str, page: str) -> None:
    v = _v(criterion, observed, page)
    assert v.verified, v.reason


def test_a_detail_pages_status_field_is_refuted_only_by_its_contrary() -> None:
    url = "http://127.0.0.1:8800/bills/BILL-0002"
    page = "Bill: BILL-0002\nVendor: Globex Corp\nAmount: 2150.00 USD\nStatus: Unpaid\n## Mark as paid\n[7] Mark paid"
    honest = _v(
        "Bill BILL-0002 is unpaid in Acme Payables",
        "BILL-0002 is Unpaid, so I can open the Mark paid form",
        page,
        url,
    )
    assert honest.verified, honest.reason
    assert not _v("BILL-0002 is recorded", "BILL-0002 is Paid", page, url).verified


@pytest.mark.parametrize(
    ("answer", "observed"),
    [
        ("GX-5531 and INV-2031 total 3130.00 USD", TWO_ROWS),  # a sum of two records
        ("BILL-0002 (GX-5531) is unpaid and overdue since 2026-09-14", ANSWER_ROW),
        ("BILL-0002 (GX-5531) is still open: 2150.00 USD due 2026-09-14", ANSWER_ROW),
        ("BILL-0001 (INV-2031) was paid on 2026-09-05", "BILL-0001 INV-2031 980.00 USD due 2026-09-09 Paid"),
        ("BILL-0002 is Unpaid. To pay it, open BILL-0002 and press Mark paid", ANSWER_ROW),
    ],
)
def test_honest_answers_are_not_refused(answer: str, observed: str) -> None:
    assert answer_unsupported(answer, [_met(observed)]) is None
