"""Evidence that cannot be mistyped: code copies the line the verifier pointed at, and a criterion
about a system's state must be checked on that system."""

from __future__ import annotations

import pytest

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
GLOBEX = "Acme Payables has a bill for Globex Corp GX-7781 of 494.00 USD"


def plan(criteria: list[str] | None = None) -> Plan:
    return Plan(
        goal="enter the bill",
        success_criteria=criteria or CRITERIA,
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


def test_an_invented_row_is_rejected_even_unquoted_and_real_values_match_in_any_format() -> None:
    made_up = judge(
        CriterionCheck(
            criterion=CRITERIA[0],
            met=True,
            source=BILLS,
            observed="BILL-0099 Northwind INV-2057 1284.50 paid",
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="Total payable USD 1,284.50"),
    )
    assert not made_up.verified and "does not show bill-0099" in made_up.checks[0].observed
    real = judge(
        CriterionCheck(
            criterion=CRITERIA[0],
            met=True,
            source=BILLS,
            observed="one row: BILL-0011, INV-2057, 1,284.50 USD, due 12 October 2026",
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="total 1284.5 USD"),
    )
    assert real.verified, real.reason


def test_an_observation_code_cannot_compare_stays_the_verifiers_word_and_is_marked() -> None:
    from taskcrew.crew.evidence import MODELS_WORD

    verdict = judge(
        CriterionCheck(
            criterion=CRITERIA[0], met=True, source=BILLS, observed="the row is there", find="INV-2057"
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="it is the total"),
    )
    assert verdict.verified and verdict.checks[1].observed.endswith(MODELS_WORD)


def test_an_extra_check_code_rejects_does_not_fail_a_criterion_with_a_valid_check() -> None:
    verdict = judge(
        CriterionCheck(criterion=CRITERIA[0], met=True, source=BILLS, observed="x", find="INV-2057"),
        # the same criterion "supported" by the invoice file: rejected (system state), but only extra
        CriterionCheck(criterion=CRITERIA[0], met=True, source=MAIL, observed="x", find="INV-2057"),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="x", find="Total payable"),
    )
    assert verdict.verified, verdict.reason
    assert not verdict.checks[1].met  # kept as evidence, marked rejected


def test_the_reason_names_the_criterion_that_failed_and_never_reads_as_a_success() -> None:
    verdict = check_verdict(
        Verdict(
            verified=True,
            checks=[
                CriterionCheck(criterion=CRITERIA[0], met=True, source=BILLS, observed="x", find="INV-2057"),
                CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="total 9,999.00"),
            ],
            reason="Everything matches the newest invoice and it is unpaid.",
        ),
        plan(),
        set(TEXTS),
        TEXTS,
        systems=SYSTEMS,
    )
    assert not verdict.verified
    assert verdict.reason.startswith(
        "Not verified: criterion 2 (The amount is the invoice total) has no valid check"
    )
    assert "Everything matches" not in verdict.reason and "9999" in verdict.reason


def test_a_failed_read_is_not_opened_and_an_unreadable_cited_file_fails(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from taskcrew.crew.citations import check_citations
    from taskcrew.crew.models import Citation
    from taskcrew.crew.toolbox import Toolbox
    from taskcrew.tools.human import ScriptedHuman

    (tmp_path / "a.txt").write_text("Total payable: USD 1,284.50\n")
    toolbox = Toolbox(sandbox=tmp_path, human=ScriptedHuman(), notes=[])
    read = next(t for t in toolbox.tools_for("verifier") if t.name == "read_file")
    toolbox.begin_verification()
    assert read.run(path="missing.pdf").startswith("ERROR")
    read.run(path="a.txt")
    assert toolbox.visited_sources() == {"a.txt"}
    results = check_citations(
        [
            Citation(source="missing.pdf", quote="1,284.50"),
            Citation(source="a.txt", quote="USD 1,284.50"),
            Citation(source="scan.png", quote="anything"),
        ],
        toolbox.source_text,
    )
    assert [r.status for r in results] == ["not_found", "found", "not_found"]
    (tmp_path / "scan.png").write_bytes(b"not really an image")
    image = check_citations([Citation(source="scan.png", quote="anything")], lambda s: "OCR text")
    assert image[0].status == "unchecked" and "image" in image[0].detail


def test_each_check_is_shown_as_it_stands_a_rejected_one_as_not_counted() -> None:
    from taskcrew.crew.evidence import standing_mark, standing_words

    verdict = judge(
        CriterionCheck(criterion=CRITERIA[0], met=True, source=BILLS, observed="x", find="INV-2057"),
        CriterionCheck(criterion=CRITERIA[0], met=True, source="never-opened.pdf", observed="INV-2057"),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="it is the total"),
    )
    assert verdict.verified, verdict.reason
    assert [standing_words(c) for c in verdict.checks] == [
        "yes",
        "not counted — rejected by code",
        "yes — the verifier's word, not checked by code",
    ]
    assert standing_mark(verdict.checks[1]) not in ("✓", "✗")
    unmet = CriterionCheck(criterion=CRITERIA[1], met=False, source=MAIL, observed="it is not")
    assert (standing_words(unmet), standing_mark(unmet)) == ("NO", "✗")


def test_a_word_of_absence_does_not_exempt_the_invented_row_beside_it() -> None:
    # one clause about something absent used to exempt every value of the observation from the check
    invented = judge(
        CriterionCheck(
            criterion=CRITERIA[0],
            met=True,
            source=BILLS,
            observed="BILL-0099 | Northwind Traders | INV-2057 | 1284.50; no other bill for INV-2057",
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="total 1284.5 USD"),
    )
    assert not invented.verified and "bill-0099" in invented.checks[0].observed
    real = judge(
        CriterionCheck(
            criterion=CRITERIA[0],
            met=True,
            source=BILLS,
            observed="BILL-0011, INV-2057, 1284.50 USD, due October 12, 2026; not paid, no other bill for INI-7781",
        ),
        CriterionCheck(criterion=CRITERIA[1], met=True, source=MAIL, observed="total 1284.5 USD"),
    )
    assert real.verified, real.reason


def test_a_records_values_come_from_its_own_row_of_a_table() -> None:
    rows = (
        "Bills\n| [21] BILL-0011 | Globex Corp | GX-7781 | 494.00 | USD | 2026-09-20 | 2026-10-20 | Unpaid\n"
        "| [22] BILL-0005 | Hooli Cloud Services | HCS-2026-09 | 499.00 | USD | 2026-09-03 | 2026-10-03 | Unpaid\n"
        "Total unpaid: 993.00 USD"
    )
    texts = {BILLS: [rows]}

    def checked(observed: str, criterion: str = GLOBEX) -> Verdict:
        check = CriterionCheck(criterion=criterion, met=True, source=BILLS, observed=observed)
        return check_verdict(
            Verdict(verified=True, checks=[check], reason="ok"), plan([criterion]), {BILLS}, texts, SYSTEMS
        )

    stitched = checked("BILL-0011 Globex Corp GX-7781, 499.00 USD, due 2026-10-20")
    assert (
        not stitched.checks[0].met
        and "shows 499 on another row than BILL-0011, GX-7781" in stitched.checks[0].observed
    )
    assert checked("BILL-0011 Globex Corp GX-7781, 494.00 USD, due 2026-10-20").checks[0].met
    assert (
        checked("GX-7781 494.00 USD; HCS-2026-09 499.00 USD; total unpaid 993.00").checks[0].met
    )  # each its row
    assert checked("494.00 USD and 499.00 USD are unpaid").checks[0].met  # no record named: the page
    for dodge in (  # the record named in quotes, or in a clause with a word of absence: still its row
        'the row "GX-7781" shows 499.00 USD',
        "GX-7781 is not paid yet, 499.00 USD",
    ):
        assert not checked(dodge).checks[0].met, dodge
    # an honest statement about each row, one after the other (a neighbour named by vendor only)
    honest = "BILL-0011 Globex Corp GX-7781 494.00 USD; Hooli Cloud Services' bill is still 499.00 USD"
    assert checked(honest).checks[0].met
    # every one of those, true of this page, is no evidence of a record the page does not show
    for other in (honest, "494.00 USD and 499.00 USD are unpaid", "GX-7781 494.00 USD"):
        about_inv = checked(other, CRITERIA[0]).checks[0]
        assert not about_inv.met and "does not show INV-2057" in about_inv.observed, other


def test_the_gates_record_keeps_each_sends_values_on_its_line() -> None:
    """A record's values come from its own row of code's before/after read-back; the gate's record of
    sends, what the run sent, is no evidence of the values a system holds at all."""
    from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE
    from taskcrew.crew.outcome import Facts
    from taskcrew.tools.submissions import SubmissionResult

    bills = (
        ("BILL-0011", "Globex Corp", "GX-7781", "494.00"),
        ("BILL-0012", "Hooli Cloud Services", "HCS-2026-09", "499.00"),
    )
    facts = Facts(
        submissions=[
            SubmissionResult(
                method="POST",
                url=f"{BILLS}/new",
                fields=[("invoice_number", n), ("amount", a)],
                result="saved",
            )
            for _, _, n, a in bills
        ]
    )
    diff_source = f"{CHANGES_SOURCE} {BILLS}"
    diff = "\n".join(
        [
            f"Before/after difference of {BILLS} (read by code before the first change at 10:00:00 UTC, and now):",
            f"Lines of the page added ({len(bills) + 1}):",
            "+ 12 bills",
            *(f"+ {b} | {vendor} | {n} | {a} | USD | Unpaid" for b, vendor, n, a in bills),
            "Lines removed or changed (1; as they were before):",
            "- 10 bills",
            "Lines unchanged: 40 (of all the page's text: menus, labels and table rows alike)",
        ]
    )

    def checked(observed: str, criterion: str = GLOBEX, source: str = diff_source) -> CriterionCheck:
        check = CriterionCheck(criterion=criterion, met=True, source=source, observed=observed)
        verdict = Verdict(verified=True, checks=[check], reason="ok")
        texts = {SENDS_SOURCE: [facts.record()], diff_source: [diff]}
        checked = check_verdict(
            verdict, plan([criterion]), set(texts), texts, SYSTEMS, applied=facts.applied_lines()
        )
        return checked.checks[0]

    assert checked("BILL-0011 GX-7781 494.00 USD").met
    stitched = checked("BILL-0011 GX-7781 499.00 USD")  # HCS-2026-09's amount
    assert not stitched.met and "on another row than BILL-0011, GX-7781" in stitched.observed, (
        stitched.observed
    )
    other = checked("BILL-0011 GX-7781 494.00 USD", CRITERIA[0])  # true, but of another record
    assert not other.met and "does not show INV-2057" in other.observed, other.observed
    # the record of sends: what was sent, never what the ERP holds, even quoted from its own line
    for observed in ("GX-7781 amount=494.00 — saved", "GX-7781 amount=499.00 — saved"):
        sent = checked(observed, source=SENDS_SOURCE)
        assert not sent.met and "not what it holds" in sent.observed, sent.observed


@pytest.mark.parametrize(
    "criterion",
    [  # positive claims about what the ERP holds, whose words merely include a word of absence
        "Acme Payables has exactly one bill for Invoice No. INV-2057 of 1284.50",
        "Acme Payables has exactly one bill for INV-2057 of 1284.50, not marked paid",
        "A bill for INV-2057 of 1284.50 exists in Acme Payables with no duplicate",
    ],
)
def test_a_refused_send_is_no_evidence_of_a_bill_whatever_the_criterions_words(criterion: str) -> None:
    from taskcrew.crew.evidence import SENDS_SOURCE
    from taskcrew.crew.outcome import Facts
    from taskcrew.tools.submissions import SubmissionResult

    fields = [("vendor", "Northwind Traders"), ("invoice_number", "INV-2057"), ("amount", "1284.50")]
    refused = Facts(
        submissions=[
            SubmissionResult(
                method="POST", url=f"{BILLS}/new", fields=fields, result="refused", http_status=422
            )
        ]
    )
    observed = "POST /bills/new invoice_number=INV-2057 amount=1284.50 for Northwind Traders"
    check = CriterionCheck(criterion=criterion, met=True, source=SENDS_SOURCE, observed=observed)
    one = Plan(goal="enter", success_criteria=[criterion], steps=plan().steps, changes_data=True)
    texts = {SENDS_SOURCE: [refused.record()]}
    verdict = check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"),
        one,
        {SENDS_SOURCE},
        texts,
        SYSTEMS,
        applied=refused.applied_lines(),
    )
    assert not verdict.verified, verdict.checks[0].observed


@pytest.mark.parametrize(
    "criterion",
    [
        "The Northwind bill INV-2057 of 1284.50 USD is paid",
        "INV-2057 is posted with amount 1284.50",
        "INV-2057 for 1284.50 USD is booked",
        "The invoice INV-2057 is registered, 1284.50 USD",
        "INV-2057 (1284.50 USD) is settled",
        "INV-2057 is submitted for 1284.50",
        "Invoice INV-2057 is stored with its total 1284.50",
    ],
)
def test_a_claim_that_a_system_did_something_is_not_taken_from_a_document(criterion: str) -> None:
    """A data-changing run that sent nothing: a criterion that says what a system did to a record
    (without naming the system or any other state word) is read on the system, not in the e-mail
    that mentions the same invoice and amount."""
    changing = plan().model_copy(update={"success_criteria": [criterion]})
    check = CriterionCheck(criterion=criterion, met=True, source=MAIL, observed="INV-2057 1,284.50")
    verdict = check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"), changing, set(TEXTS), TEXTS, systems=SYSTEMS
    )
    assert not verdict.verified and "must be checked on that system's own pages" in verdict.checks[0].observed
    on_system = check.model_copy(update={"source": BILLS, "observed": "INV-2057 1284.50"})
    verdict = check_verdict(
        Verdict(verified=True, checks=[on_system], reason="ok"), changing, set(TEXTS), TEXTS, systems=SYSTEMS
    )
    if " paid" in criterion or "settled" in criterion:  # a status is a value too ("settled" is paid):
        # the row says Unpaid (test_adversarial_evidence_6)
        assert not verdict.verified and "does not show Paid on the row of INV-2057" in verdict.reason
        return
    assert verdict.verified, verdict.reason
