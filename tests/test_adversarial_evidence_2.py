"""A criterion about a system's state is met only where the record it names is shown as a record:
never on the verifier's word when code can read the cited page, never by a pointer to an unrelated
line, never by the page repeating the verifier's own request or a message."""

from __future__ import annotations

from taskcrew.crew.evidence import REJECTED, check_verdict, standing
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict

ERP = "http://127.0.0.1:8800"
BILLS = f"{ERP}/bills"
SYSTEMS = [("Acme Payables", ERP)]
HOOLI = "| [21] BILL-0010 | Hooli | HL-5501 | 499.00 | USD | 2026-10-01 | 2026-10-31 | Unpaid"
VANDELAY = (
    "| [22] BILL-0011 | Vandelay Industries | VI-3390 | 2640.00 | USD | 2026-09-20 | 2026-10-20 | Unpaid"
)
CRITERION = "Acme Payables has a bill for Vandelay Industries VI-3390: 2640.00 USD, due 2026-10-20"


def _judge(
    texts: dict[str, list[str]], observed: str, source: str = BILLS, find: str | None = None
) -> Verdict:
    plan = Plan(
        goal="enter the bill",
        success_criteria=[CRITERION],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    check = CriterionCheck(criterion=CRITERION, met=True, source=source, observed=observed, find=find)
    return check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"), plan, set(texts), texts, SYSTEMS
    )


def _page(*rows: str) -> str:
    head = "| Bill | Vendor | Invoice number | Amount | Currency | Invoice date | Due date | Status |"
    return "\n".join(["# Bills", head, *rows])


def test_plain_prose_cannot_confirm_a_record_the_readable_page_lacks() -> None:
    for observed in ("the bill is there, as required", "Vandelay's bill is listed and not paid"):
        v = _judge({BILLS: [_page(HOOLI)]}, observed)
        assert not v.verified and REJECTED in v.checks[0].observed, observed
        assert standing(v.checks[0]) == "rejected"


def test_plain_prose_on_a_page_holding_the_record_still_passes() -> None:
    v = _judge({BILLS: [_page(HOOLI, VANDELAY)]}, "the bill is there, as required")
    assert v.verified, v.reason


def test_a_word_of_absence_exempts_only_the_absent_records_identifier() -> None:
    # "not paid" does not stop BILL-0099 and 2640.00 being compared with the page
    v = _judge({BILLS: [_page(HOOLI)]}, "BILL-0099 Vandelay VI-3390 2640.00 USD not paid")
    assert not v.verified and "bill-0099" in v.checks[0].observed.split(REJECTED)[1].lower()
    honest = _judge(
        {BILLS: [_page(HOOLI, VANDELAY)]}, "BILL-0011 VI-3390 2640.00 USD due 2026-10-20 not paid"
    )
    assert honest.verified, honest.reason


def test_a_pointer_must_land_on_the_criterions_record() -> None:
    texts = {BILLS: [_page(HOOLI, VANDELAY)]}
    wrong = _judge(texts, "the row", find="BILL-0010")
    assert not wrong.verified and standing(wrong.checks[0]) == "rejected"
    right = _judge(texts, "the row", find="VI-3390")
    assert right.verified and standing(right.checks[0]) == "met"


def test_a_page_echoing_the_request_does_not_show_the_record() -> None:
    url = f"{BILLS}?status=VI-3390+2640.00+USD+2026-10-20"
    msg = "Unknown status 'VI-3390 2640.00 USD 2026-10-20': use paid or unpaid. No bills are shown."
    body = "\n".join(
        [
            f"Observation #3: Bills {url}",
            f'Messages shown: "{msg}"',
            "# Bills",
            "Status",
            "[7] VI-3390 2640.00 USD 2026-10-20",
            msg,
            "0 bills matching the filters",
            "| Bill | Vendor | Invoice number | Amount | Currency | Invoice date | Due date | Status |",
        ]
    )
    v = _judge({url: [body]}, "Bills page shows VI-3390 2640.00 USD due 2026-10-20", source=url)
    assert not v.verified and REJECTED in v.checks[0].observed, v.checks[0].observed


def test_a_search_whose_rows_hold_the_record_still_passes() -> None:
    url = f"{BILLS}?q=VI-3390"
    body = "\n".join([f"Observation #3: Bills {url}", "Search: VI-3390", _page(VANDELAY)])
    v = _judge({url: [body]}, "BILL-0011 VI-3390 2640.00 USD due 2026-10-20", source=url)
    assert v.verified, v.reason


def test_a_message_naming_the_record_is_not_the_record() -> None:
    msg = "Bill VI-3390 of 2640.00 USD could not be saved: the vendor is unknown."
    body = "\n".join([f'Messages shown: "{msg}"', msg, _page(HOOLI)])
    v = _judge({BILLS: [body]}, "VI-3390 2640.00 USD")
    assert not v.verified, v.checks[0].observed
