"""Two holes a red team found in the evidence check, and the rules that close them.

1. A dash other than the ASCII hyphen inside an identifier ("BILL–0002", an en dash as Word or
   Outlook writes it; a figure dash, the minus sign, a fullwidth hyphen), an invisible character in
   it ("GX-55<ZWSP>31") or a currency code written against its amount ("USD2310.00", "2310.00EUR")
   made it no identifier (no amount) to any rule: "BILL–0002 of Globex Corp: Paid" was accepted on the
   verifier's word while the row says Unpaid, a bill the page lacks was verified, and an answer's wrong
   amount went through. Now every text the rules compare — criterion, observation, page, answer — goes
   through one normaliser (``evidence.plain``: NFKC, every dash a hyphen, a long one only between
   letters and digits, invisible characters dropped, a glued currency split off), so the claim and the
   page still match each other and honest text (accents, "2.310,00 €", "1–3 days") reads as before.
2. "No other bill was created" was met while the run's own record showed two different bills saved
   (GX-5513, a typo, then GX-5531): only the same submission saved twice was caught. Now code counts
   the records the run touched — the sends the system applied (a create each, a change per record its
   address names) and each before/after difference's record rows added or removed (a changed row
   once) — and rejects a "nothing else" criterion when either exceeds the records the criterion names
   (the plan's, for a bare "no other bill"; none for "nothing was changed").
"""

from __future__ import annotations

import unicodedata

import pytest
from test_adversarial_evidence import BILLS, ERP, NONE_SENT, SYSTEMS, _check, _judge
from test_adversarial_evidence_2 import HOOLI, VANDELAY, _page
from test_adversarial_evidence_6 import ANSWER_ROW, STATUS_ROWS, _met, _v

from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE, answer_unsupported, check_verdict, values
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.outcome import Facts
from taskcrew.tools.submissions import SubmissionResult

DASHES = [
    "\u2013",
    "\u2012",
    "\u2212",
    "\uff0d",
    "\u2014",
    "\ufe63",
]  # en, figure, minus, fullwidth, em, small


# ---- 1. one normaliser for every text the rules compare ------------------------------------------


@pytest.mark.parametrize("dash", DASHES)
@pytest.mark.parametrize("changes_data", [True, False])
def test_an_unpaid_bill_named_with_another_dash_is_not_verified_paid(dash: str, changes_data: bool) -> None:
    bill = f"BILL{dash}0002"
    v = _v(f"Bill {bill} (Globex Corp) is paid in Acme Payables", f"{bill} of Globex Corp: Paid", STATUS_ROWS,
           changes_data=changes_data)  # fmt: skip
    assert not v.verified, (v.reason, v.checks[0].observed)


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\u2060", "\u200e", "\ufeff"])
def test_an_invisible_character_inside_an_identifier_or_status_hides_nothing(hidden: str) -> None:
    v = _v(f"Bill BILL-00{hidden}02 (Globex Corp) is paid in Acme Payables", "BILL-0002: Paid")
    assert not v.verified, v.reason
    v = _v(f"Bill BILL-0002 (Globex Corp) is Pa{hidden}id in Acme Payables", "BILL-0002 Globex Corp")
    assert not v.verified, v.reason


@pytest.mark.parametrize("dash", DASHES)
def test_a_bill_the_page_does_not_show_is_not_verified_when_named_with_another_dash(dash: str) -> None:
    from test_adversarial_evidence import _judge as judge

    crit = f"Acme Payables has a bill for Vandelay Industries VI{dash}3390"
    check = _check(crit, BILLS, "Vandelay Industries' bill is listed")
    v = judge(check, facts=NONE_SENT, pages={BILLS: _page(HOOLI)})  # the list holds no Vandelay bill
    assert not v.verified, (v.reason, v.checks[0].observed)


@pytest.mark.parametrize(
    "answer",
    [
        "GX\u20135531 is for 2310.00 EUR",
        "GX\u22125531 is for 2310.00 EUR",
        "GX\uff0d5531 is for 2310.00 EUR",
        "GX\u20145531 is for 2310.00 EUR",
        "GX-55\u200b31 is for 2310.00 EUR",  # a zero-width space inside the identifier
        "GX-5531 is for USD2310.00",  # the currency written against the amount
        "GX-5531 is for EUR2,310.00",
        "GX-5531 is for 2310.00EUR",
        "GX-5531 is for 2150.00EUR",  # the right amount, the wrong currency
        "GX-5531 from Globex Corp\u20142310.00 EUR",  # an em dash before the amount, no spaces
        "ＧＸ－５５３１ is for ２３１０.００ ＥＵＲ",  # fullwidth
    ],
)
def test_an_answers_wrong_amount_is_caught_whatever_dash_or_spacing(answer: str) -> None:
    # the verified evidence shows GX-5531 as 2150.00 USD
    assert answer_unsupported(answer, [_met(ANSWER_ROW)]) is not None, answer


def test_honest_answers_with_other_dashes_and_glued_currencies_still_pass() -> None:
    for honest in (
        "GX\u20135531 is for 2150.00 USD",
        "GX-5531 is for USD2150.00, due 2026-09-14",
        "GX-5531 is for 2150.00USD; payment terms 1–3 days",
        "Globex Corp — GX-5531 — 2150.00 USD",
        "GX-5531 from Globex Corp\u20142150.00 USD",
    ):
        assert answer_unsupported(honest, [_met(ANSWER_ROW)]) is None, honest


def test_the_normaliser_leaves_honest_text_as_it_reads() -> None:
    from taskcrew.crew.evidence import plain

    assert plain("BILL\u20130002") == plain("BILL\u22120002") == "BILL-0002"
    assert (
        plain("the bill\u2014BILL-0002\u2014is unpaid") == "the bill\u2014BILL-0002\u2014is unpaid"
    )  # prose
    assert plain("INV\u20142057 Bill\u20140002") == "INV-2057 Bill-0002"  # a code joined to digits
    assert plain("Globex Corp\u20142150.00 USD") == "Globex Corp\u20142150.00 USD"  # an amount after a word
    assert plain("USD2310.00 and 2310.00EUR") == "USD 2310.00 and 2310.00 EUR"
    assert plain("GBP2026-001 CAD3D-1") == "GBP2026-001 CAD3D-1"  # identifiers starting like a code
    assert values("2.310,00 €") == {"2310", "¤EUR"}
    assert values("1–3 days") == set()  # a range of small numbers: no values
    assert "2026-10-15" in values("12–15 October 2026") and "2026-09-30" in values("2026-09-01–2026-09-30")
    assert values(unicodedata.normalize("NFD", "Société Générale SG-1001")) == {"sg-1001"}


SG_ROW = "| [24] BILL-0003 | Société Générale | SG-1001 | 1284.50 | EUR | 2026-09-01 | 2026-10-01 | Unpaid"


@pytest.mark.parametrize(
    "criterion,observed,page",
    [
        # an en dash in a date range or in prose, an em dash around a clause
        ("Bill BILL-0002 (GX-5531) is unpaid in Acme Payables",
         "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | Unpaid; invoiced 2026-08-15–2026-09-14, terms 1–3 days",
         STATUS_ROWS),
        ("Bill BILL-0002 (GX-5531) is unpaid in Acme Payables",
         "the bill\u2014BILL-0002\u2014is Unpaid: 2150.00 USD", STATUS_ROWS),
        # the en-dashed identifier of a record the page shows as the criterion says
        ("Bill BILL\u20130002 (Globex Corp) is unpaid in Acme Payables", "BILL\u20130002 GX\u20135531 2150.00 USD Unpaid",
         STATUS_ROWS),
        # a vendor's name with accents (decomposed in the observation), an amount as Europe writes it
        ("Acme Payables has a bill for Société Générale SG-1001 of 1.284,50 €",
         unicodedata.normalize("NFD", "BILL-0003 | Société Générale | SG-1001 | 1.284,50 € | Unpaid"),
         _page(SG_ROW, VANDELAY)),
        ("Acme Payables has a bill for Société Générale SG\u20131001 of EUR1,284.50", "SG-1001 EUR1,284.50",
         _page(SG_ROW, VANDELAY)),
    ],
)  # fmt: skip
def test_honest_claims_with_other_dashes_accents_and_currencies_still_verify(
    criterion: str, observed: str, page: str
) -> None:
    v = _v(criterion, observed, page)
    assert v.verified, v.reason


# ---- 2. "nothing else": the records the run touched, counted by code -------------------------------

DIFF_SOURCE = f"{CHANGES_SOURCE} {BILLS}"
CRITERION = "Acme Payables has a bill for Globex Corp GX-5531 and no other bill was created"
GLOBEX = "| Globex Corp | {number} | {amount} | USD | 2026-09-01 | 2026-10-01 | {status} | —"


def _send(url: str, fields: list[tuple[str, str]], detail: str = "") -> SubmissionResult:
    return SubmissionResult(
        method="POST", url=url, fields=fields, result="saved", http_status=303, detail=detail
    )


def _bill(number: str, amount: str = "2150.00", detail: str = "") -> SubmissionResult:
    fields = [("vendor_id", "2"), ("invoice_number", number), ("amount", amount), ("currency", "USD")]
    return _send(f"{ERP}/bills/new", fields, detail)


def _pay(bill: str) -> SubmissionResult:
    return _send(f"{ERP}/bills/{bill}/pay", [("paid_on", "2026-10-02")])


def _row(bill: str, number: str = "GX-5531", amount: str = "2150.00", status: str = "Unpaid") -> str:
    return f"{bill} " + GLOBEX.format(number=number, amount=amount, status=status)


def _initech(bill: str, number: str = "INI-7781", amount: str = "3420.00", status: str = "Unpaid") -> str:
    return f"{bill} | Initech | {number} | {amount} | USD | 2026-09-01 | 2026-10-01 | {status} | —"


def _listed(*rows: str) -> dict[str, str]:
    """The system's own bills list as the verifier read it (no before/after difference watched)."""
    return {BILLS: _page(*(f"| {row}" for row in rows))}


def _diff(added: list[str], removed: list[str] = []) -> str:  # noqa: B006 — never changed
    return "\n".join(
        [
            f"Before/after difference of {BILLS} (read by code before the first change at 10:00:00 UTC, and now):",
            f"Lines of the page added ({len(added) + 1}):",
            "+ 14 bills",
            *(f"+ {row}" for row in added),
            f"Lines removed or changed ({len(removed) + 1}; as they were before):",
            "- 12 bills",
            *(f"- {row}" for row in removed),
            "Lines unchanged: 40 (of all the page's text: menus, labels and table rows alike)",
        ]
    )


def _verdict(
    criteria: list[str],
    check: CriterionCheck | list[CriterionCheck],
    sends: list[SubmissionResult],
    diff: str | None,
    pages: dict[str, str] | None = None,
) -> Verdict:
    facts = Facts(submissions=sends)
    texts = {
        SENDS_SOURCE: [facts.record()],
        **({DIFF_SOURCE: [diff]} if diff else {}),
        **{url: [text] for url, text in (pages or {}).items()},
    }
    plan = Plan(
        goal="enter the Globex bill",
        success_criteria=criteria,
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    verdict = Verdict(verified=True, checks=check if isinstance(check, list) else [check], reason="ok")
    return check_verdict(verdict, plan, set(texts), texts, SYSTEMS, applied=facts.applied_lines())


TYPO_THEN_RIGHT = [_bill("GX-5513"), _bill("GX-5531")]
TYPO_DIFF = _diff([_row("BILL-0012", "GX-5513"), _row("BILL-0013")])


ON_DIFF = "+ BILL-0013 | Globex Corp | GX-5531 | 2150.00 | USD; no other bill was created"
ON_SENDS = "invoice_number=GX-5531, amount=2150.00; no other bill was created"
HOLDS = "not what it holds"  # the record of sends shows no record is there (test_honest_s47)


@pytest.mark.parametrize(
    "source,observed,find,diff",
    [
        (DIFF_SOURCE, ON_DIFF, None, TYPO_DIFF),
        (DIFF_SOURCE, "-", "BILL-0013", TYPO_DIFF),
        (SENDS_SOURCE, ON_SENDS, None, TYPO_DIFF),
        (SENDS_SOURCE, ON_SENDS, None, None),  # no page watched: the record of the sends alone
    ],
)
def test_no_other_bill_is_not_verified_when_two_bills_were_saved(
    source: str, observed: str, find: str | None, diff: str | None
) -> None:
    check = CriterionCheck(criterion=CRITERION, met=True, source=source, observed=observed, find=find)
    v = _verdict([CRITERION], check, TYPO_THEN_RIGHT, diff)
    assert Facts(submissions=TYPO_THEN_RIGHT).changed_line().startswith("2 change(s) saved")
    assert not v.verified and "something else was created or changed" in v.reason, v.reason


def test_a_bare_no_other_bill_is_held_to_the_records_the_plan_names() -> None:
    criteria = [
        "Acme Payables has a bill for Globex Corp GX-5531 of 2150.00 USD",
        "No other bill was created",
    ]
    bill = _check(criteria[0], DIFF_SOURCE, "-", find="BILL-0013")
    v = _verdict(
        criteria, [bill, _check(criteria[1], DIFF_SOURCE, "-", find="BILL-0013")], TYPO_THEN_RIGHT, TYPO_DIFF
    )
    assert not v.verified and "criterion 2" in v.reason and "criterion 1" not in v.reason, v.reason
    v = _verdict(criteria, [bill, _check(criteria[1], DIFF_SOURCE, "-", find="BILL-0013")], TYPO_THEN_RIGHT[1:],
                 _diff([_row("BILL-0013")]))  # fmt: skip
    assert v.verified, v.reason


def test_the_same_invoice_number_saved_twice_with_different_amounts_is_two_bills() -> None:
    sends = [_bill("GX-5531", "2510.00"), _bill("GX-5531")]
    diff = _diff([_row("BILL-0012", amount="2510.00"), _row("BILL-0013")])
    for source, find in ((DIFF_SOURCE, "BILL-0013"), (SENDS_SOURCE, "GX-5531")):
        check = _check(CRITERION, source, "-", find=find)
        v = _verdict([CRITERION], check, sends, diff)
        assert not v.verified and "something else" in v.reason, (source, v.reason)


def test_a_criterion_naming_its_bill_by_the_amount_is_held_to_one_bill_too() -> None:
    """Read on the before/after difference; the record of sends shows no bill is there at all."""
    criterion = "Acme Payables has a bill for Globex Corp of 2150.00 USD and no other bill was created"
    check = _check(criterion, DIFF_SOURCE, "-", find="2150.00")
    v = _verdict([criterion], check, TYPO_THEN_RIGHT, TYPO_DIFF)
    assert not v.verified and "but the criterion names 1: something else" in v.reason, v.reason
    v = _verdict([criterion], check, TYPO_THEN_RIGHT[1:], _diff([_row("BILL-0013")]))
    assert v.verified, v.reason
    on_sends = _check(criterion, SENDS_SOURCE, "-", find="GX-5531")
    for sends in (TYPO_THEN_RIGHT, TYPO_THEN_RIGHT[1:]):
        v = _verdict([criterion], on_sends, sends, None)
        assert not v.verified and HOLDS in v.reason, v.reason


def test_nothing_changed_is_not_met_when_a_change_was_applied() -> None:
    criterion = "Nothing was changed in any system"
    check = _check(criterion, SENDS_SOURCE, "-", find="Data-changing submissions sent")
    v = _verdict([criterion], check, [_pay("BILL-0002")], None)
    assert not v.verified and "something else" in v.reason, v.reason
    v = _verdict([criterion], check, [], None)  # an honest read-only run
    assert v.verified, v.reason


def test_paying_another_bill_too_is_something_else_changed() -> None:
    criterion = "Bill BILL-0002 (GX-5531) is paid in Acme Payables and nothing else was changed"
    diff = _diff(
        [_row("BILL-0002", status="Paid"), _row("BILL-0001", "INV-2031", "980.00", "Paid")],
        [_row("BILL-0002"), _row("BILL-0001", "INV-2031", "980.00")],
    )
    check = _check(criterion, DIFF_SOURCE, "-", find="BILL-0002")
    v = _verdict([criterion], check, [_pay("BILL-0002"), _pay("BILL-0001")], diff)
    assert not v.verified and "something else" in v.reason, v.reason


@pytest.mark.parametrize(
    "sends,diff,pages",
    [
        ([_bill("GX-5531")], _diff([_row("BILL-0013")]), None),  # one bill entered, one row added
        # no page watched: the bill read on the system's list, the records counted on the sends alone
        ([_bill("GX-5531")], None, _listed(_row("BILL-0013"))),
        # entered, then paid: the bill's page the save showed names the record the payment changes …
        (
            [_bill("GX-5531", detail="then showed /bills/BILL-0013"), _pay("BILL-0013")],
            None,
            _listed(_row("BILL-0013", status="Paid")),
        ),
        # … or the difference shows the new bill's row with what was sent
        ([_bill("GX-5531"), _pay("BILL-0013")], _diff([_row("BILL-0013", status="Paid")]), None),
        # on a shared system, a colleague's job added a bill meanwhile: not this run's
        ([_bill("GX-5531")], _diff([_row("BILL-0012", "INI-7781", "3420.00"), _row("BILL-0013")]), None),
        # a send that names no record and sends no field (a logout) made none
        ([_bill("GX-5531"), _send(f"{ERP}/logout", [])], _diff([_row("BILL-0013")]), None),
        # a refused first try, then the bill saved
        (
            [_bill("GX-5531").model_copy(update={"result": "refused", "http_status": 422}), _bill("GX-5531")],
            _diff([_row("BILL-0013")]),
            None,
        ),
    ],
)
def test_one_bill_entered_and_nothing_else_still_verifies(
    sends: list[SubmissionResult], diff: str | None, pages: dict[str, str] | None
) -> None:
    """Verified on the before/after difference or the system's own list; never on the record of sends,
    which shows no bill is there (it still counts the records for "no other bill")."""
    source = DIFF_SOURCE if diff else BILLS
    v = _verdict([CRITERION], _check(CRITERION, source, "-", find="BILL-0013"), sends, diff, pages)
    assert v.verified, (source, v.reason)
    v = _verdict([CRITERION], _check(CRITERION, SENDS_SOURCE, "-", find="GX-5531"), sends, diff, pages)
    assert not v.verified and HOLDS in v.reason, v.reason


def test_paying_the_bill_named_and_nothing_else_still_verifies() -> None:
    criterion = "Bill BILL-0002 (GX-5531) is paid in Acme Payables and nothing else was changed"
    diff = _diff([_row("BILL-0002", status="Paid")], [_row("BILL-0002")])
    v = _verdict(
        [criterion], _check(criterion, DIFF_SOURCE, "-", find="BILL-0002"), [_pay("BILL-0002")], diff
    )
    assert v.verified, v.reason
    two = "Bills BILL-0002 and BILL-0001 are paid in Acme Payables and nothing else was changed"
    diff = _diff(
        [_row("BILL-0002", status="Paid"), _row("BILL-0001", "INV-2031", "980.00", "Paid")],
        [_row("BILL-0002"), _row("BILL-0001", "INV-2031", "980.00")],
    )
    check = _check(two, DIFF_SOURCE, "-", find="BILL-0002")
    v = _verdict([two], check, [_pay("BILL-0002"), _pay("BILL-0001")], diff)
    assert v.verified, v.reason


def test_a_bare_no_other_bill_with_one_bill_saved_still_verifies() -> None:
    """A bare "No other bill was created" with one bill saved, read on the gate's record."""
    facts = Facts(submissions=[_bill("GX-5531")])
    v = _judge(_check("No other bill was created", SENDS_SOURCE, "-", find="submissions sent"), facts=facts)
    assert v.verified, v.reason


@pytest.mark.parametrize(
    "criterion",
    ["No bill was created", "No new bill was added in Acme Payables", "No other bill was created"],
)
def test_no_bill_created_still_verifies_a_payment_that_changed_one(criterion: str) -> None:
    """A criterion about creating only: a payment changed a bill and created none (a change is not a
    create); two bills entered still contradict "no other bill was created"."""
    check = _check(criterion, SENDS_SOURCE, "-", find="Data-changing submissions sent")
    diff = _diff([_row("BILL-0002", status="Paid")], [_row("BILL-0002")])
    v = _verdict([criterion], check, [_pay("BILL-0002")], diff)
    assert v.verified, v.reason
    if "other" in criterion:
        criteria = ["Acme Payables has a bill for Globex Corp GX-5531", criterion]
        checks = [_check(criteria[0], SENDS_SOURCE, "-", find="GX-5531"), check]
        v = _verdict(criteria, checks, [_bill("GX-5513"), _bill("GX-5531")], None)
        assert not v.verified and "something else" in v.reason, v.reason


def test_a_bare_no_other_bill_allows_a_planned_bill_named_by_no_identifier() -> None:
    """The eval's two-invoices chore: one bill named by its number, the other as "the latest invoice
    from Initech"; both entered. Two records were planned, so "No other bill" is met (found when a
    whole-run sweep ended this honest run not verified). How many bills "the latest invoice from
    Initech" is, code cannot count: the verifier's word (a third bill is not caught by code here).
    The bills are read on the before/after difference; "No other bill" still on the record of sends."""
    criteria = [
        "Acme Payables has exactly one bill for invoice GX-5531 from Globex Corp",
        "Acme Payables has exactly one bill for the latest invoice from Initech",
        "No other bill was created or changed",
    ]
    sources = (DIFF_SOURCE, DIFF_SOURCE, SENDS_SOURCE)
    finds = ("BILL-0013", "INI-7781", "Data-changing submissions sent")
    checks = [_check(c, s, "-", find=f) for c, s, f in zip(criteria, sources, finds, strict=True)]
    two = [_bill("GX-5531"), _bill("INI-7781", "3420.00")]
    diff = _diff([_row("BILL-0013"), _initech("BILL-0014")])
    v = _verdict(criteria, checks, two, diff)
    assert v.verified, v.reason
    on_sends = [
        _check(c, SENDS_SOURCE, "-", find=f)
        for c, f in zip(criteria[:2], ("GX-5531", "INI-7781"), strict=True)
    ]
    v = _verdict(criteria, [*on_sends, checks[2]], two, diff)
    assert not v.verified and HOLDS in v.reason, v.reason


@pytest.mark.parametrize(
    "criterion",
    [
        "Acme Payables has a bill for Globex Corp GX-5531 and only one bill was created",
        "Exactly one new bill was added in Acme Payables, for Globex Corp GX-5531",
        "Acme Payables has a bill for Globex Corp GX-5531 and no additional bill was created",
        "Acme Payables has a bill for Globex Corp GX-5531; no bills other than it were created",
        "Acme Payables has a bill for Globex Corp GX-5531 and no duplicate bill was entered",
        "Acme Payables has a bill for Globex Corp GX-5531 and no more bills were created",
    ],
)
def test_a_duplicate_bill_is_caught_whatever_words_say_nothing_else(criterion: str) -> None:
    """The same claim in the words a planner writes (found: each let the typo'd bill through). Read on
    the before/after difference; the record of sends shows no bill is there, one bill or two."""
    check = _check(criterion, DIFF_SOURCE, "-", find="BILL-0013")
    v = _verdict([criterion], check, TYPO_THEN_RIGHT, TYPO_DIFF)
    assert not v.verified and "but the criterion names 1: something else" in v.reason, v.reason
    one = [_bill("GX-5531")]
    v = _verdict([criterion], check, one, _diff([_row("BILL-0013")]))
    assert v.verified, v.reason
    on_sends = _check(criterion, SENDS_SOURCE, "-", find="GX-5531")
    for sends, diff in ((TYPO_THEN_RIGHT, None), (one, _diff([_row("BILL-0013")]))):
        v = _verdict([criterion], on_sends, sends, diff)
        assert not v.verified and HOLDS in v.reason, v.reason


@pytest.mark.parametrize(
    "criteria",
    [
        ["The Globex Corp and Initech bills are paid in Acme Payables", "No other bill was changed"],
        ["The Globex Corp bill and the Initech bill are paid in Acme Payables and nothing else was changed"],
    ],
)
def test_two_bills_named_by_vendor_only_and_paid_still_verify(criteria: list[str]) -> None:
    """How many bills the plan is about, code cannot count here: not a guess of one (found: two
    honest payments ended not verified). "Paid" is read on the before/after difference, not on the
    record of sends; a bare "No other bill was changed" still is."""
    sends = [_pay("BILL-0002"), _pay("BILL-0001")]
    diff = _diff(
        [_row("BILL-0002", status="Paid"), _initech("BILL-0001", "INI-2201", "120.00", "Paid")],
        [_row("BILL-0002"), _initech("BILL-0001", "INI-2201", "120.00")],
    )
    rest = [_check(c, SENDS_SOURCE, "-", find="Data-changing submissions sent") for c in criteria[1:]]
    v = _verdict(criteria, [_check(criteria[0], DIFF_SOURCE, "-", find="BILL-0002"), *rest], sends, diff)
    assert v.verified, v.reason
    v = _verdict(criteria, [_check(criteria[0], SENDS_SOURCE, "-", find="BILL-0002"), *rest], sends, diff)
    assert not v.verified and HOLDS in v.reason, v.reason


EXACTLY = "Acme Payables has exactly one bill for invoice GX-5531 from Globex Corp, for 2150.00 USD"


@pytest.mark.parametrize("source,find", [(SENDS_SOURCE, "GX-5531"), (DIFF_SOURCE, "BILL-0013")])
def test_exactly_one_bill_for_an_invoice_is_not_met_by_two(source: str, find: str) -> None:
    """The planner's own words for each bill: two bills saved for GX-5531 (a wrong amount, then the
    right one) met "exactly one bill for invoice GX-5531" (found on review). On the record of sends,
    the check is rejected first: it shows no bill is there."""
    sends = [_bill("GX-5531", "2510.00"), _bill("GX-5531")]
    diff = _diff([_row("BILL-0012", amount="2510.00"), _row("BILL-0013")])
    v = _verdict([EXACTLY], _check(EXACTLY, source, "-", find=find), sends, diff)
    assert not v.verified, v.reason
    assert ("the criterion says 1" if source == DIFF_SOURCE else HOLDS) in v.reason, v.reason


INITECH = "Acme Payables has exactly one bill for invoice INI-7781 from Initech, for 3420.00 USD"


@pytest.mark.parametrize(
    "sends,diff,pages,other",
    [
        ([_bill("GX-5531")], _diff([_row("BILL-0013")]), None, None),
        # entered and then paid: one bill, changed once (no page watched: read on the system's list)
        (
            [_bill("GX-5531", detail="then showed /bills/BILL-0013"), _pay("BILL-0013")],
            None,
            _listed(_row("BILL-0013", status="Paid")),
            None,
        ),
        # another invoice entered too (the plan's other bill): not a bill for GX-5531 (the plan names it:
        # a bill the plan does not name is something else, test_adversarial_evidence_9)
        (
            [_bill("GX-5531"), _bill("INI-7781", "3420.00")],
            None,
            _listed(_row("BILL-0013"), _initech("BILL-0014")),
            INITECH,
        ),
    ],
)
def test_exactly_one_bill_for_an_invoice_still_verifies_one(
    sends: list[SubmissionResult], diff: str | None, pages: dict[str, str] | None, other: str | None
) -> None:
    """Verified on the before/after difference or the system's own list, never on the record of sends."""
    criteria = [EXACTLY, *([other] if other else [])]
    source = DIFF_SOURCE if diff else BILLS
    checks = [
        _check(c, source, "-", find=f) for c, f in zip(criteria, ("BILL-0013", "BILL-0014"), strict=False)
    ]
    v = _verdict(criteria, checks, sends, diff, pages)
    assert v.verified, v.reason
    checks = [
        _check(c, SENDS_SOURCE, "-", find=f) for c, f in zip(criteria, ("GX-5531", "INI-7781"), strict=False)
    ]
    v = _verdict(criteria, checks, sends, diff, pages)
    assert not v.verified and HOLDS in v.reason, v.reason
