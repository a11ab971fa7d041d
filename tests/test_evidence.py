"""Evidence that cannot be mistyped: code copies the line the verifier pointed at, and a criterion
about a system's state must be checked on that system."""

from __future__ import annotations

from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.steps import check_verdict

BILLS = "http://127.0.0.1:8800/bills"
MAIL = "Invoice from Northwind Traders.eml"
SYSTEMS = [("Acme Payables", "http://127.0.0.1:8800")]
TEXTS = {
    BILLS: ["Bills\n[21] BILL-0011 | Northwind Traders | INV-2057 | 1284.50 | USD | 2026-10-12 | Unpaid"],
    MAIL: ["Subject: Invoice INV-2057\nTotal payable: USD 1,284.50\n"],
}
CRITERIA = [
    "Acme Payables has exactly one bill for INV-2057 of 1284.50 USD",
    "The amount is the invoice total",
]


def plan() -> Plan:
    return Plan(
        goal="enter the bill",
        success_criteria=CRITERIA,
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )


def judge(*checks: CriterionCheck) -> Verdict:
    verdict = Verdict(verified=True, checks=list(checks), reason="ok")
    return check_verdict(verdict, plan(), set(TEXTS), TEXTS, systems=SYSTEMS)


def test_a_pointer_gets_the_whole_line_copied_by_code() -> None:
    verdict = judge(
        CriterionCheck(
            criterion=CRITERIA[0], met=True, source=BILLS, observed="the row", find="INV-2057 1284.50"
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="total", find="Total payable"),
    )
    assert verdict.verified, verdict.reason
    assert (
        verdict.checks[0].observed
        == "“[21] BILL-0011 | Northwind Traders | INV-2057 | 1284.50 | USD | 2026-10-12 | Unpaid”"
    )
    assert verdict.checks[1].observed == "“Total payable: USD 1,284.50”"


def test_a_pointer_to_words_not_seen_is_rejected() -> None:
    verdict = judge(
        CriterionCheck(criterion=CRITERIA[0], met=True, source=BILLS, observed="x", find="INV-2058"),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="x", find="Total payable"),
    )
    assert not verdict.verified and "never saw 'INV-2058'" in verdict.checks[0].observed


def test_system_state_is_not_taken_from_a_document() -> None:
    verdict = judge(
        CriterionCheck(criterion=CRITERIA[0], met=True, source=MAIL, observed="x", find="INV-2057"),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="x", find="Total payable"),
    )
    assert not verdict.verified
    assert "must be checked on that system's own pages" in verdict.checks[0].observed
    assert verdict.checks[1].met  # a document may show what a document says


def test_a_worker_points_at_its_source_and_code_copies_the_line() -> None:
    import pytest
    from pydantic import ValidationError

    from taskcrew.crew.models import Citation, StepReport
    from taskcrew.crew.steps import resolve_citations

    report = StepReport(
        status="done",
        summary="s",
        sources=[
            Citation(source=MAIL, find="total payable"),
            Citation(source=MAIL, find="Total due 9,999.00"),  # words the file does not have
            Citation(source="behind-a-login", find="x"),
        ],
    )
    resolved = resolve_citations(report, lambda source: TEXTS[source][0] if source in TEXTS else None)
    assert [c.quote for c in resolved.sources] == ["Total payable: USD 1,284.50", "Total due 9,999.00", "x"]
    with pytest.raises(ValidationError, match="needs a quote, or find"):
        Citation(source=MAIL)
