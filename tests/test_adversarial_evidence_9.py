"""A count of what a run touched that other words skipped, and an honest run it refused.

1. "No other bill was created" was counted by code only in the words a rule knew: "Exactly 1 bill
   was created … GX-5531", "Only one bill (GX-5531 …) was created", "only one invoice was entered",
   "A single bill was created", "No bill besides/except GX-5531", "GX-5531 is the only bill
   created" each verified a run that had also saved a typo'd GX-5513 bill; "exactly one GX-5531
   bill", "exactly one invoice GX-5531" and "a single bill for invoice GX-5531" verified two bills
   saved for GX-5531. Now the count is not gated on wording: a data-changing plan's verdict is
   never verified when code counts more records the run created or changed (by its sends a system
   applied, or by a before/after difference) than the plan's criteria name
   (``evidence._more_than_planned``), whatever they say — where the plan names its records by no
   identifier and no count, still the verifier's word. The wording rules stay, and read those
   words too, where they narrow further (a plan naming a bill by no identifier).
2. A task that enters GX-5531 and pays it, where the system answers the save with HTTP 200 and no
   redirect and no page is watched, was counted as two records against the plan's one: nothing
   linked the payment of BILL-0013 to the create. A change code cannot link to any record is now
   the record an earlier create of the run made whose answer named none — unless a before/after row
   as it was before the run shows it existed; creates are never merged (two bills entered are two).
A bill's being there is checked on the difference or the bill list the verifier read: the record of
sends shows only what was sent (``evidence.of_sends_only``), so each case citing it for a bill is
now not verified ("not what it holds"), and meets only "no other bill was created".
"""

from __future__ import annotations

import pytest
from test_adversarial_evidence import BILLS, _check
from test_adversarial_evidence_2 import _page
from test_adversarial_evidence_8 import (
    DIFF_SOURCE,
    TYPO_DIFF,
    TYPO_THEN_RIGHT,
    _bill,
    _diff,
    _pay,
    _row,
    _verdict,
)
from test_adversarial_evidence_10 import _judged as judged_with

from taskcrew.crew.evidence import COUNTED, SENDS_SOURCE, check_verdict
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.outcome import Facts
from taskcrew.tools.submissions import SubmissionResult

GLOBEX = "Acme Payables has a bill for Globex Corp GX-5531 of 2150.00 USD"
INITECH = "Acme Payables has a bill for Initech INI-7781 of 3420.00 USD"
NO_OTHER = "No other bill was created or changed"
HOLDS = "not what it holds"  # the record of sends cited for what a system holds
WAYS = [(SENDS_SOURCE, "GX-5531", None), (DIFF_SOURCE, "BILL-0013", TYPO_DIFF)]
SENT = "Data-changing submissions sent"  # the record of sends' line that shows nothing else was sent
# Acme Payables' bill list as the verifier read it, where code watched no page (no before/after)
LISTED = "| BILL-0013 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-09-01 | 2026-10-01 | {status}"
LISTED_INI = "| BILL-0014 | Initech | INI-7781 | 3420.00 | USD | 2026-09-01 | 2026-10-01 | Unpaid"
INI_ROW = "BILL-0014 | Initech | INI-7781 | 3420.00 | USD | 2026-09-01 | 2026-10-01 | Unpaid | —"


def _judged(
    criteria: list[str],
    checks: list[CriterionCheck],
    sends: list[SubmissionResult],
    diff: str | None,
    page: str | None = None,
) -> Verdict:
    """``_verdict``, with the bill list the verifier opened (``page``, at ``BILLS``): a page of the
    system, which code counts nothing on (the count is of the sends, and of ``diff`` if any)."""
    pages = {**({DIFF_SOURCE: diff} if diff else {}), **({BILLS: page} if page else {})}
    return judged_with(criteria, checks, sends, pages)


def _checks(criteria: list[str], source: str, finds: list[str]) -> list[CriterionCheck]:
    """A check per criterion on ``source`` at the next of ``finds``; "no other bill" on the record of
    sends, which shows it."""
    found = iter(finds)
    return [
        _check(c, SENDS_SOURCE, "-", find=SENT) if c == NO_OTHER else _check(c, source, "-", find=next(found))
        for c in criteria
    ]


def _no_redirect(s: SubmissionResult) -> SubmissionResult:
    """The save answered HTTP 200 with the new bill's page: no "then showed" names the record."""
    return s.model_copy(update={"http_status": 200})


def _held(v: Verdict, source: str) -> None:
    """An honest run: verified where its bills were checked on what the system holds (a before/after
    difference, a page of it); never on the record of its sends, which shows only what it sent."""
    if source == SENDS_SOURCE:
        assert not v.verified and HOLDS in v.reason, v.reason
    else:
        assert v.verified, (source, v.reason)


# ---- 1. the count, whatever the words --------------------------------------------------------------


@pytest.mark.parametrize(
    "criterion",
    [
        "Exactly 1 bill was created in Acme Payables, for Globex Corp GX-5531",
        "Only one bill (GX-5531 from Globex Corp) was created in Acme Payables",
        "Acme Payables has a bill for Globex Corp GX-5531 and only one invoice was entered",
        "A single bill was created in Acme Payables: Globex Corp GX-5531",
        "No bill besides Globex Corp GX-5531 was created in Acme Payables",
        "No bills except Globex Corp GX-5531 were created in Acme Payables",
        "Globex Corp GX-5531 is the only bill created in Acme Payables",
        GLOBEX,  # no words of "nothing else" at all: the plan names one bill
    ],
)
@pytest.mark.parametrize("source,find,diff", WAYS, ids=["sends", "diff"])
def test_a_typod_bill_is_counted_whatever_the_words(
    criterion: str, source: str, find: str, diff: str | None
) -> None:
    """The record of the sends still counts the typo'd bill, but shows no bill held: one bill entered
    verifies on the before/after difference only."""
    v = _verdict([criterion], _check(criterion, source, "-", find=find), TYPO_THEN_RIGHT, diff)
    assert not v.verified and "something else was created or changed" in v.reason, (source, v.reason)
    assert source != SENDS_SOURCE or HOLDS in v.reason, v.reason
    # one bill entered, in the same words: verified on the difference; the record of sends holds nothing
    one = _diff([_row("BILL-0013")]) if diff else None
    v = _verdict([criterion], _check(criterion, source, "-", find=find), [_bill("GX-5531")], one)
    _held(v, source)


def test_the_count_names_the_record_the_plan_did_not() -> None:
    """The bill checked on the difference: the only fault is the count of the sends, naming GX-5513;
    checked on the record of sends, that is rejected too, and the count is still added."""
    v = _verdict([GLOBEX], _check(GLOBEX, DIFF_SOURCE, "-", find="BILL-0013"), TYPO_THEN_RIGHT, TYPO_DIFF)
    assert v.reason.startswith("Not verified: something else was created or changed"), v.reason
    assert "GX-5513, which the plan did not name" in v.reason and "GX-5531," not in v.reason, v.reason
    counted = [c for c in v.checks if c.criterion == COUNTED]
    assert len(counted) == 1 and not counted[0].met and counted[0].source == SENDS_SOURCE, v.checks
    # the bill checked on the record of sends: not what Acme Payables holds, and still counted
    v = _verdict([GLOBEX], _check(GLOBEX, SENDS_SOURCE, "-", find="GX-5531"), TYPO_THEN_RIGHT, None)
    assert not v.verified and HOLDS in v.reason, v.reason
    assert "GX-5513, which the plan did not name" in v.reason, v.reason
    counted = [c for c in v.checks if c.criterion == COUNTED]
    assert len(counted) == 1 and not counted[0].met and counted[0].source == SENDS_SOURCE, v.checks


def test_the_count_is_added_to_a_verdict_that_failed_anyway() -> None:
    check = _check(GLOBEX, SENDS_SOURCE, "-", find="GX-5531").model_copy(update={"met": False})
    v = _verdict([GLOBEX], check, TYPO_THEN_RIGHT, None)
    assert not v.verified and "criterion 1" in v.reason and "which the plan did not name" in v.reason, (
        v.reason
    )


@pytest.mark.parametrize(
    "criterion",
    [
        "Acme Payables has exactly one GX-5531 bill from Globex Corp",
        "Acme Payables has exactly 1 bill for invoice GX-5531",
        "Acme Payables has exactly one invoice GX-5531 from Globex Corp",
        "Acme Payables has a single bill for invoice GX-5531 from Globex Corp",
        "Acme Payables has a bill for Globex Corp GX-5531",  # no count stated: the plan names one
    ],
)
def test_two_bills_for_the_same_invoice_are_counted(criterion: str) -> None:
    sends = [_bill("GX-5531", "2510.00"), _bill("GX-5531")]
    diff = _diff([_row("BILL-0012", amount="2510.00"), _row("BILL-0013")])
    for source, find in ((DIFF_SOURCE, "BILL-0013"), (SENDS_SOURCE, "GX-5531")):
        v = _verdict([criterion], _check(criterion, source, "-", find=find), sends, diff)
        assert not v.verified, (source, "two GX-5531 bills verified:", v.reason)


LATEST = "Acme Payables has a bill for the latest invoice from Initech"  # names it by no identifier


TWICE = [_bill("GX-5531", "2510.00"), _bill("GX-5531")]
TWICE_DIFF = _diff([_row("BILL-0012", amount="2510.00"), _row("BILL-0013")])
THREE = [_bill("GX-5513"), _bill("GX-5531"), _bill("INI-7781", "3420.00")]
THREE_DIFF = _diff([_row("BILL-0012", "GX-5513"), _row("BILL-0013"), INI_ROW])
TWO_SENT = [_bill("GX-5531"), _bill("INI-7781", "3420.00")]
TWO_DIFF = _diff([_row("BILL-0013"), INI_ROW])


@pytest.mark.parametrize(
    "criterion,sends,diff,why",
    [
        # the plan's count cannot be told (the Initech bill by no identifier): the wording rules narrow
        ("Acme Payables has exactly one GX-5531 bill from Globex Corp", TWICE, TWICE_DIFF, "the criterion says 1"),
        ("Acme Payables has a single bill for invoice GX-5531 from Globex Corp", TWICE, TWICE_DIFF,
         "the criterion says 1"),
        ("Exactly two bills were created in Acme Payables", THREE, THREE_DIFF, "the criterion names 2"),
    ],
)  # fmt: skip
def test_the_words_still_narrow_where_the_plan_cannot_be_counted(
    criterion: str, sends: list[SubmissionResult], diff: str, why: str
) -> None:
    """Checked on the difference, the wording rules narrow; on the record of sends, a bill's being
    there is not shown at all."""
    criteria = [criterion, LATEST]
    latest = "INI-7781" if "INI-7781" in str(sends) else "GX-5531"
    for source, honest_diff in ((DIFF_SOURCE, TWO_DIFF), (SENDS_SOURCE, None)):
        checks = [_check(criterion, source, "-", find="GX-5531"), _check(LATEST, source, "-", find=latest)]
        v = _verdict(criteria, checks, sends, diff if source == DIFF_SOURCE else None)
        assert not v.verified and (why if source == DIFF_SOURCE else HOLDS) in v.reason, (source, v.reason)
        checks[1] = _check(LATEST, source, "-", find="INI-7781")
        _held(_verdict(criteria, checks, TWO_SENT, honest_diff), source)


# the eval's two-invoices chore, in the planner's own words
TWO = [
    "Acme Payables has exactly one bill for invoice GX-5531 from Globex Corp",
    "Acme Payables has exactly one bill for the latest invoice from Initech",
    NO_OTHER,
]


def test_two_invoices_planned_and_two_created_verify() -> None:
    """Each bill checked on what Acme Payables holds (its bill list, no page watched; or the
    before/after difference), "no other bill" on the record of sends; the bills themselves checked
    on that record: not verified."""
    listed = _page(LISTED.format(status="Unpaid"), LISTED_INI)
    for criteria in (TWO, [GLOBEX, INITECH], [GLOBEX, INITECH, NO_OTHER]):
        v = _judged(criteria, _checks(criteria, BILLS, ["GX-5531", "INI-7781"]), TWO_SENT, None, listed)
        assert v.verified, (criteria, v.reason)
        checks = _checks(criteria, DIFF_SOURCE, ["BILL-0013", "BILL-0014"])
        assert _verdict(criteria, checks, TWO_SENT, TWO_DIFF).verified, criteria
        on_sends = _checks(criteria, SENDS_SOURCE, ["GX-5531", "INI-7781"])
        for diff in (None, TWO_DIFF):
            _held(_verdict(criteria, on_sends, TWO_SENT, diff), SENDS_SOURCE)


def test_a_third_bill_beside_two_planned_is_counted() -> None:
    """A bill the planner names by a count only ("exactly one bill for the latest invoice from
    Initech") is one record: a typo'd third bill is something else (before: the verifier's word)."""
    three = [_bill("GX-5513"), _bill("GX-5531"), _bill("INI-7781", "3420.00")]
    finds = ["GX-5531", "INI-7781", "Data-changing submissions sent"]
    checks = [_check(c, SENDS_SOURCE, "-", find=f) for c, f in zip(TWO, finds, strict=True)]
    v = _verdict(TWO, checks, three, None)
    assert not v.verified and "GX-5513" in v.reason, v.reason


@pytest.mark.parametrize(
    "criteria",
    [
        ["Each of the two Initech invoices has exactly one bill in Acme Payables"],  # "each": not a count
        # a count of the Globex bills only, after its verb: not of them all
        ["Exactly one bill was created in Acme Payables for Globex Corp", INITECH],
        ["Only one invoice was entered, from Globex Corp", LATEST],
        ["The Globex Corp bill and the Initech bill are entered in Acme Payables"],
        ["Acme Payables has a bill for the latest invoice from Initech", GLOBEX],
    ],
)
def test_honest_plans_naming_bills_by_no_identifier_or_by_a_count_of_some_verify(criteria: list[str]) -> None:
    """Two bills entered where the plan names one by no identifier (how many: the verifier's word) or
    counts the bills of one vendor only: never a count of all. Checked on the bill list or the
    difference; on the record of sends, not what the system holds."""
    listed = _page(LISTED.format(status="Unpaid"), LISTED_INI)
    for source, diff, page in (
        (BILLS, None, listed),
        (DIFF_SOURCE, TWO_DIFF, None),
        (SENDS_SOURCE, None, None),
    ):
        checks = [_check(c, source, "-", find="INI-7781" if "Initech" in c else "GX-5531") for c in criteria]
        _held(_judged(criteria, checks, TWO_SENT, diff, page), source)


def test_a_read_only_plan_is_not_counted() -> None:
    """A plan that changes nothing: the per-criterion rules read its claims (a question's answer)."""
    facts_sends = [_bill("GX-5531"), _bill("GX-5513")]

    facts = Facts(submissions=facts_sends)
    texts = {SENDS_SOURCE: [facts.record()]}
    plan = Plan(
        goal="tell whether GX-5531 is entered",
        success_criteria=["The answer says whether Globex Corp GX-5531 has a bill"],
        steps=[PlanStep(role="browser_operator", title="look", instructions="look")],
        changes_data=False,
    )
    check = CriterionCheck(criterion=plan.success_criteria[0], met=True, source=SENDS_SOURCE, observed="-",
                           find="GX-5531")  # fmt: skip
    v = check_verdict(Verdict(verified=True, checks=[check], reason="ok"), plan, set(texts), texts,
                      applied=facts.applied_lines())  # fmt: skip
    assert not any(c.criterion == COUNTED for c in v.checks), v.reason


# ---- 2. entered, then paid: one record ------------------------------------------------------------

PAY = [GLOBEX, NO_OTHER]


@pytest.mark.parametrize(
    "sends,diff",
    [
        # no redirect, no page watched: nothing links the payment to the create, and it is one bill
        ([_no_redirect(_bill("GX-5531")), _pay("BILL-0013")], None),
        # … with a redirect naming the new bill
        ([_bill("GX-5531", detail="then showed /bills/BILL-0013"), _pay("BILL-0013")], None),
        # … or the difference showing the new bill paid
        ([_no_redirect(_bill("GX-5531")), _pay("BILL-0013")], _diff([_row("BILL-0013", status="Paid")])),
    ],
)
@pytest.mark.parametrize("criteria", [PAY, PAY[:1]], ids=["no-other", "plain"])
def test_enter_then_pay_verifies(
    sends: list[SubmissionResult], diff: str | None, criteria: list[str]
) -> None:
    """The bill checked on what Acme Payables holds: its bill list where no page is watched, else the
    difference; "no other bill" on the record of sends. The bill on that record: not verified."""
    source, page = (BILLS, _page(LISTED.format(status="Paid"))) if diff is None else (DIFF_SOURCE, None)
    _held(_judged(criteria, _checks(criteria, source, ["GX-5531"]), sends, diff, page), source)
    _held(_judged(criteria, _checks(criteria, SENDS_SOURCE, ["GX-5531"]), sends, diff), SENDS_SOURCE)


@pytest.mark.parametrize(
    "criteria", [[GLOBEX], [GLOBEX, NO_OTHER], [GLOBEX + " and no other bill was created"]]
)
def test_one_bill_created_verifies(criteria: list[str]) -> None:
    """The bill checked on its bill list (no page watched) or on the difference: verified; on the
    record of sends: not what Acme Payables holds."""
    listed = _page(LISTED.format(status="Unpaid"))
    for send in (_bill("GX-5531"), _no_redirect(_bill("GX-5531"))):
        for diff in (None, _diff([_row("BILL-0013")])):
            source, page = (BILLS, listed) if diff is None else (DIFF_SOURCE, None)
            _held(_judged(criteria, _checks(criteria, source, ["GX-5531"]), [send], diff, page), source)
            _held(_judged(criteria, _checks(criteria, SENDS_SOURCE, ["GX-5531"]), [send], diff), SENDS_SOURCE)


@pytest.mark.parametrize("criteria", [PAY, PAY[:1]], ids=["no-other", "plain"])
def test_two_bills_entered_without_a_redirect_are_still_two(criteria: list[str]) -> None:
    """The payment is taken for one create's record; the other create is still a record of its own."""
    finds = ["GX-5531", "Data-changing submissions sent"]
    checks = [_check(c, SENDS_SOURCE, "-", find=f) for c, f in zip(criteria, finds, strict=False)]
    sends = [_no_redirect(_bill("GX-5513")), _no_redirect(_bill("GX-5531")), _pay("BILL-0013")]
    v = _verdict(criteria, checks, sends, None)
    assert not v.verified and "something else" in v.reason, v.reason


def test_paying_a_bill_that_was_there_before_is_not_taken_for_the_new_one() -> None:
    """The difference shows BILL-0002 as it was before the run: the payment changed another bill."""
    sends = [_no_redirect(_bill("GX-5531")), _pay("BILL-0002")]
    diff = _diff(
        [_row("BILL-0002", "GX-1100", "700.00", "Paid")],
        [_row("BILL-0002", "GX-1100", "700.00")],
    )  # the list's first page: the new bill is not on it
    for criteria in (PAY, PAY[:1]):
        finds = ["GX-5531", "Data-changing submissions sent"]
        checks = [_check(c, SENDS_SOURCE, "-", find=f) for c, f in zip(criteria, finds, strict=False)]
        v = _verdict(criteria, checks, sends, diff)
        assert not v.verified and "BILL-0002" in v.reason, v.reason
