# ruff: noqa: F811 — `place` is the fixture imported from test_outcome_facts
"""What the verifier itself put on a page is never the system's data, a record shown by its fields
is read by them, and "nothing else" is not met against the run's own record of its sends.

1. The verifier types the task's values into a blank form (its session is read-only: typing sends
   nothing) and cites the page: what a form field holds (``value="499.00"``: typed, selected or
   prefilled) and the words of its own actions are not what the system holds (``browsing.page_data``).
2. A record's detail page ("Amount: 494.00 USD", "Notes: … list price 499.00") has no table rows: a
   claimed amount, currency or date must be that record's field of its kind, not any mention of it
   (``evidence._off_field``).
3. Two identical submissions the system saved: "no other bill was created" is not met on prose.

Units on ``check_verdict`` and ``page_data``; whole runs with scripted models only (real crew,
Chromium, the mock ERP over HTTP, one ERP for the module)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_adversarial_evidence import BILLS, ROWS, SYSTEMS, _check, _judge, _send
from test_outcome_facts import _run, place  # noqa: F401 — the fixture: a Workplace (ERP, Chromium), no chaos
from test_outcomes_seams import _plan

from taskcrew.crew import browsing
from taskcrew.crew.evidence import REJECTED, check_verdict, standing
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.outcome import Facts
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.tools.browser.render import BEGIN, ELEMENTS, END
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

GLOBEX = "Acme Payables has a bill for Globex Corp GX-7781 of 499.00 USD, due 2026-10-20"
TYPO = kit.Bill("Globex Corp", "GX-7781", "494.00", "USD", "2026-09-20", "2026-10-20")
RIGHT = kit.Bill("Globex Corp", "GX-7781", "499.00", "USD", "2026-09-20", "2026-10-20")
ERP = SYSTEMS[0][1].rstrip("/")
DETAIL = f"{ERP}/bills/BILL-0011"


# ---- 1. what the verifier typed into a form is not the system's data ----------------------------

FORM_RESULT = "\n".join(
    [
        "Result: OK",
        "- type 'GX-7781' into [7]: ok",
        "- type '499.00' into [8]: ok",
        "- select 'USD' in [9]: ok",
        "No change to the page's interactive elements.",
        "",
        f'Observation #3: "New bill GX-7781 499.00 — Acme Payables" {ERP}/bills/new?n=GX-7781+499.00',
        BEGIN,
        "# New bill",
        "Invoice number *",
        "[7]",
        "Amount *",
        "[8]",
        "Currency [9] USD",  # a custom select: its chosen option is its name, shown on the page
        "[13] Save bill",
        END,
        ELEMENTS,
        '[7] textbox "Invoice number *" name=invoice_number value="GX-7781" required',
        '[8] textbox "Amount *" name=amount value="499.00" required',
        '[9] combobox "Currency" value="USD" options=["USD", "EUR"]',
        "[13] button (submits form POST /bills/new)",
    ]
)


def test_a_form_fields_value_and_the_verifiers_own_actions_are_not_page_data() -> None:
    data = browsing.page_data(FORM_RESULT)
    assert "# New bill" in data and "Save bill" in data  # the page's own text stays
    for typed in ("GX-7781", "499.00", "USD", "value=", "type '", "Observation #"):
        assert typed not in data, typed
    assert browsing.page_data("Error: the element numbers came from an outdated observation") == ""
    # a table's rows, and a link's name in one, are the page's data
    listing = f"{BEGIN}\n| [22] BILL-0011 | Globex Corp | GX-7781 | 494.00 |\n{END}\n{ELEMENTS}\n[22] link"
    assert "| [22] BILL-0011 | Globex Corp | GX-7781 | 494.00 |" in browsing.page_data(listing)


class TypesTheClaim:
    """A hostile verifier: opens ``path``, types the criterion's values into the form there (nothing
    is sent: its session is read-only) and cites that page with ``observed``."""

    def __init__(self, path: str, fill: dict[str, str], criterion: str, observed: str) -> None:
        self.path, self.fill, self.criterion, self.observed = path, fill, criterion, observed
        self.typed = False

    def __call__(self, call: Any) -> Any:
        text = call.last_tool_result
        target = f"{kit.erp(call)}{self.path}"
        if not text:
            return kit.navigate(target)
        if step := kit.login(text) or kit.dismiss_modal(text):
            return step
        url = kit.page_url(text)
        if not url.startswith(target):
            return kit.navigate(target)
        if not self.typed:
            self.typed = True
            els = kit.elements(text)
            actions = []
            for field, value in self.fill.items():
                el = kit.by_field(els, field)
                if el.role == "combobox":
                    actions.append({"action": "select", "index": el.index, "option": value})
                else:
                    actions.append({"action": "type", "index": el.index, "text": value, "clear": True})
            return kit.act(*actions)
        assert all(f'value="{v}"' in text for v in self.fill.values()), text  # it really typed them
        return kit.verdict([(self.criterion, True, url, self.observed)], "as on the invoice")


def _worker(operator: Any, criterion: str) -> ScriptedLLM:
    return ScriptedLLM(
        {
            "planner": [_plan(criteria=[criterion])],
            "browser_operator": [Loop(policy=operator)],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )


def _verifier(policy: Any) -> ScriptedLLM:
    return ScriptedLLM({"verifier": [Loop(policy=policy)]}, model="scripted/v")


def _approve() -> ScriptedHuman:
    return ScriptedHuman(decisions=[ApprovalDecision.approve()])


def _bills(place: Workplace, number: str) -> list[Any]:
    return [b for b in place.erp_server.state().bills if b.invoice_number == number]


@pytest.mark.browser
@pytest.mark.slow
def test_values_typed_into_a_blank_form_do_not_verify_a_wrong_amount(place: Workplace) -> None:
    fill = {"invoice_number": "GX-7781", "amount": "499.00", "currency": "USD", "due_date": "2026-10-20"}
    verifier = TypesTheClaim("/bills/new", fill, GLOBEX, "GX-7781 499.00 USD due 2026-10-20")
    result = _run(place, _worker(kit.EnterBill(TYPO), GLOBEX), _verifier(verifier), _approve())
    assert [b.amount for b in _bills(place, "GX-7781")] == ["494.00"]  # saved with the typo
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)
    assert "does not show" in result.report.read_text()


class SaysItIsThere:
    """An operator that looks nowhere and says the bill was in the ERP already."""

    def __call__(self, call: Any) -> Any:
        return kit.report("nothing_to_do", "Initech INI-7781 is already in Acme Payables.")


@pytest.mark.browser
@pytest.mark.slow
def test_values_typed_into_a_form_do_not_make_a_bill_never_entered_nothing_to_do(place: Workplace) -> None:
    criterion = "Acme Payables has a bill for Initech INI-7781 of 3420.00 USD"
    fill = {"invoice_number": "INI-7781", "amount": "3420.00", "currency": "USD"}
    verifier = TypesTheClaim("/bills/new", fill, criterion, "INI-7781 3420.00 USD")
    result = _run(place, _worker(SaysItIsThere(), criterion), _verifier(verifier), _approve())
    assert not _bills(place, "INI-7781")
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)


@pytest.mark.browser
@pytest.mark.slow
def test_a_date_typed_into_a_detail_pages_payment_field_does_not_show_the_bill_paid(place: Workplace) -> None:
    # GX-5531 is BILL-0002, unpaid; its page has a "Payment date" field (prefilled with today)
    criterion = "Bill BILL-0002 (Globex Corp GX-5531) is paid in Acme Payables, paid on 2026-12-01"
    verifier = TypesTheClaim(
        "/bills/BILL-0002", {"paid_on": "2026-12-01"}, criterion, "BILL-0002 paid on 2026-12-01"
    )
    result = _run(place, _worker(SaysItIsThere(), criterion), _verifier(verifier), _approve())
    assert [b.status for b in place.erp_server.state().bills if b.id == "BILL-0002"] == ["unpaid"]
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)
    assert "does not show 2026-12-01" in result.report.read_text()


# ---- 2. a record shown by its fields is read by them ---------------------------------------------


def _detail(amount: str = "494.00 USD", notes: str = "Vendor quote ref Q-17, list price 499.00") -> str:
    return "\n".join(
        [
            "# Bill BILL-0011",
            "Bill: BILL-0011",
            "Vendor: Globex Corp",
            "Invoice number: GX-7781",
            f"Amount: {amount}",
            "Invoice date: 2026-09-20",
            "Due date: 2026-10-20",
            "Status: Unpaid",
            f"Notes: {notes}",
            "Entered: 2026-10-02T17:01:47Z",
            "## Mark as paid",
            "Payment date",
            "[6]",
        ]
    )


def _on_detail(criterion: str, observed: str, page: str) -> Verdict:
    return _judge(_check(criterion, DETAIL, observed), facts=Facts(), pages={DETAIL: page})


def test_a_claimed_amount_must_be_the_records_amount_not_a_mention_in_its_note() -> None:
    for observed in ("BILL-0011 Globex Corp GX-7781 499.00 USD due 2026-10-20", "the bill is there"):
        v = _on_detail(GLOBEX, observed, _detail())
        assert not v.verified, observed
        assert "does not show 499 as the amount of" in v.checks[0].observed, v.checks[0].observed
    # other words for the same fields: a "Remarks" field is free text, "Total payable" an amount
    other = _detail().replace("Amount:", "Total payable:").replace("Notes:", "Remarks:")
    assert not _on_detail(GLOBEX, "GX-7781 499.00 USD", other).verified
    assert _on_detail(GLOBEX, "GX-7781 499.00 USD due 2026-10-20", _detail("499.00 USD", "—")).verified
    assert _on_detail(GLOBEX, "GX-7781 499.00 USD", other.replace("494.00", "499.00")).verified


def test_a_claimed_date_or_currency_must_be_the_records_field_of_its_kind() -> None:
    late = GLOBEX.replace("2026-10-20", "2026-11-30")
    v = _on_detail(late, "GX-7781 499.00 USD", _detail("499.00 USD", "pay by 2026-11-30"))
    assert not v.verified and "as the date of GX-7781" in v.checks[0].observed
    in_euros = GLOBEX.replace("USD", "EUR")
    v = _on_detail(in_euros, "GX-7781 499.00 EUR", _detail("499.00 USD", "quoted in EUR"))
    assert not v.verified and "as the currency of GX-7781" in v.checks[0].observed


def test_an_honest_detail_page_citation_still_passes() -> None:
    paid = _detail("499.00 USD", "—").replace("Status: Unpaid", "Status: Paid (paid on 2026-10-02)")
    checks = [
        (GLOBEX, "GX-7781 499.00 USD due 2026-10-20"),
        ("Bill BILL-0011 for GX-7781 is paid, paid on 2026-10-02", "BILL-0011 paid on 2026-10-02"),
    ]
    for criterion, observed in checks:
        v = _on_detail(criterion, observed, paid)
        assert v.verified and standing(v.checks[0]) == "met", (criterion, v.reason)


def _entered_then_read_on_its_page(
    place: Workplace, bill: kit.Bill, notes: str, criterion: str, observed: str
) -> Any:
    """A run whose operator saves ``bill`` (with ``notes``) and whose verifier opens the bill's own
    page and cites it with ``observed`` (``{id}``: the bill's number, read from the list)."""

    class EntersWithNote(kit.EnterBill):
        def fill(self, els):  # type: ignore[no-untyped-def]
            step = super().fill(els)
            step.args["actions"].insert(
                -1, {"action": "type", "index": kit.by_field(els, "notes").index, "text": notes}
            )
            return step

    class ReadsTheDetail:
        bill_id = ""

        def __call__(self, call: Any) -> Any:
            text = call.last_tool_result
            base = kit.erp(call)
            if not text:
                return kit.navigate(f"{base}/bills")
            if step := kit.login(text) or kit.dismiss_modal(text):
                return step
            if not self.bill_id:
                row = kit.bill_rows(kit.page_text(text), bill.invoice_number)[0]
                self.bill_id = re.search(r"BILL-\d+", row).group(0)  # type: ignore[union-attr]
                return kit.navigate(f"{base}/bills/{self.bill_id}")
            url = kit.page_url(text)
            return kit.verdict(
                [(criterion, True, url, observed.format(id=self.bill_id))], "as on the invoice"
            )

    worker = _worker(EntersWithNote(bill), criterion)
    return _run(place, worker, _verifier(ReadsTheDetail()), _approve())


@pytest.mark.browser
@pytest.mark.slow
def test_a_note_on_the_bills_page_does_not_verify_a_wrong_amount(place: Workplace) -> None:
    observed = "{id} Globex Corp GX-7781 499.00 USD due 2026-10-20"
    result = _entered_then_read_on_its_page(
        place, TYPO, "Vendor quote ref Q-17, list price 499.00", GLOBEX, observed
    )
    assert [b.amount for b in _bills(place, "GX-7781")] == ["494.00"]
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)
    assert "as the amount of" in result.report.read_text()


@pytest.mark.browser
@pytest.mark.slow
def test_a_bill_read_on_its_own_page_is_still_independently_verified(place: Workplace) -> None:
    observed = "{id} Globex Corp GX-7781 499.00 USD due 2026-10-20"
    result = _entered_then_read_on_its_page(place, RIGHT, "Vendor quote ref Q-17", GLOBEX, observed)
    assert result.outcome == "done", result.reason
    assert result.report.read_text().startswith("# Done, and independently verified")


# ---- 3. "nothing else" against the run's own record of its sends ---------------------------------

NOTHING_ELSE = "No other bill was created or changed"
ROW = "| [24] BILL-0012 | Vandelay Industries | VI-3390 | 2640.00 | USD | 2026-09-18 | 2026-10-20 | Unpaid |"
TWIN = ROW.replace("[24] BILL-0012", "[25] BILL-0013")


def test_nothing_else_is_not_met_when_the_system_saved_the_same_submission_twice() -> None:
    twice = Facts(submissions=[_send("VI-3390", "2640.00", "saved", 303)] * 2)
    for check in (
        _check(NOTHING_ELSE, BILLS, "the bills list shows nothing else was created"),
        _check(NOTHING_ELSE, "sends of this run", "nothing else was sent"),
    ):
        v = _judge(check, facts=twice, pages={BILLS: f"{ROWS}\n{ROW}\n{TWIN}"})
        assert not v.verified and REJECTED in v.checks[0].observed, v.checks[0].observed
        assert "saved more than once" in v.reason
    # one saved, one refused: nothing else was created, on the verifier's word as before
    once = Facts(
        submissions=[_send("VI-3390", "2640.00", "refused", 422), _send("VI-3390", "2640.00", "saved", 303)]
    )
    v = _judge(
        _check(NOTHING_ELSE, BILLS, "the bills list shows nothing else was created"),
        facts=once,
        pages={BILLS: f"{ROWS}\n{ROW}"},
    )
    assert v.verified and standing(v.checks[0]) == "word", v.reason


def test_typed_values_never_reach_check_verdict_as_page_text() -> None:
    """The one place: what the verifier's browser tools record is ``page_data``, so a page's typed
    field never backs a claim, whichever rule reads it (a value, a quote, a pointer)."""
    texts = {f"{ERP}/bills/new": [browsing.page_data(FORM_RESULT)]}
    plan = Plan(
        goal="enter the bill",
        success_criteria=[GLOBEX],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    for check in (
        CriterionCheck(criterion=GLOBEX, met=True, source=f"{ERP}/bills/new", observed="GX-7781 499.00"),
        CriterionCheck(criterion=GLOBEX, met=True, source=f"{ERP}/bills/new", observed='`value="499.00"`'),
        CriterionCheck(criterion=GLOBEX, met=True, source=f"{ERP}/bills/new", observed="-", find="499.00"),
    ):
        v = check_verdict(
            Verdict(verified=True, checks=[check], reason="ok"), plan, set(texts), texts, SYSTEMS
        )
        assert not v.verified and REJECTED in v.checks[0].observed, check
