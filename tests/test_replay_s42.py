"""Routines: what a replay chooses, types and learns must be the one thing it can be.

1. A drop-down option is chosen only when exactly one option could be the value (its label folded,
   or named like it): a look-alike vendor record ("NORTHWIND TRADERS", "Northwind  Traders", a
   record named exactly "Bharat Components" beside Bharat Components Pvt. Ltd.) hands the run to the
   agent, naming every candidate; end to end on real Chromium and the real ERP.
2. A typed value is learned from a run only when exactly one parameter or document value is it: an
   invoice due on receipt (its date twice) or a bill without tax (its total twice) is refused.
3. A value the vendor's template does not read (a template kept from before a heal that added a
   value) is never typed as its placeholder: the replay's file work hands over, and ``fill`` raises.
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace
from typing import Any

import pytest
import test_routines_replay
from routines_world import chore, run_chore
from test_routines import INBOX, _routine

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.trace import read_trace
from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines.distil import (
    DistilError,
    _url_template,
    browser_steps,
    describe_routine,
    document_values,
    merge,
)
from taskcrew.routines.files import find_document
from taskcrew.routines.models import BrowserStep, PageExpect, Routine, Target, fill
from taskcrew.routines.recording import ActRecord, Addressed
from taskcrew.routines.replay import Fallback, Replayer, choose_option, no_option
from taskcrew.routines.template import learn
from taskcrew.tools.files import SandboxFiles

learned = test_routines_replay.learned  # the headline chore learned once (module fixture)

NWT = "Northwind Traders"


# ---------------------------------------------------------------- 1. one option that could be it


def _drop_down(*labels: str) -> SimpleNamespace:
    return SimpleNamespace(
        field=SimpleNamespace(options=[SimpleNamespace(label=x, value=str(i)) for i, x in enumerate(labels)])
    )


@pytest.mark.parametrize(
    ("labels", "value"),
    [
        (["Initech", "NORTHWIND TRADERS", NWT], NWT),  # the same name in capitals, listed first
        (["Initech", "Northwind  Traders", NWT], NWT),  # another spacing
        (
            ["Bharat Components", "Bharat Components Pvt. Ltd."],
            "Bharat Components",
        ),  # exact beside legal form
        (["Globex", "Globex Corp"], "GLOBEX"),
        ([NWT, NWT], NWT),  # two records of one name
    ],
)
def test_a_drop_down_with_two_options_that_could_be_the_value_chooses_neither(
    labels: list[str], value: str
) -> None:
    element = _drop_down(*labels)
    assert choose_option(element, value) is None
    said = no_option(element, value)
    assert said.startswith(f"has 2 options that could be {value!r}"), said
    assert all(repr(o) in said for o in labels if o != "Initech"), said


def test_the_one_option_that_could_be_the_value_is_still_chosen() -> None:
    erp = _drop_down(
        "Initech", NWT, "Bharat Components Pvt. Ltd.", "Globex Corp", "Northwind Traders Logistics"
    )
    assert choose_option(erp, "northwind  TRADERS") == NWT
    assert choose_option(erp, "Bharat Components") == "Bharat Components Pvt. Ltd."
    assert choose_option(erp, "GLOBEX") == "Globex Corp"
    assert choose_option(_drop_down("USD", "EUR", "INR"), "USD") == "USD"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("lookalike", ["NORTHWIND TRADERS", "Northwind  Traders"])
def test_a_replay_hands_over_when_a_look_alike_vendor_record_is_in_the_erp(
    learned: dict[str, Any], lookalike: str
) -> None:
    place, store = learned["place"], learned["store"]
    if store.accepted("enter-invoice") is None:
        store.accept("enter-invoice", 1, "reviewer")
    before = store.accepted("enter-invoice")
    assert before is not None
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    with sqlite3.connect(place.erp_server.db_path) as db:  # listed before the real record (binary order)
        db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (lookalike,))

    run = run_chore(place, chore(NWT), reset=False)  # the ERP was reset above, the look-alike added
    events = read_trace(run.run_dir / "trace.jsonl")
    at = next(i for i, e in enumerate(events) if e.kind == "control" and e.action == "routine:fallback")
    reason = events[at].reason
    # the replay chose neither record: it stopped at the vendor drop-down, before anything was asked or sent
    assert "(field vendor_id) has 2 options that could be 'Northwind Traders'" in reason, reason
    assert not [e for e in events[:at] if e.kind == "approval"]
    # the agent's planner is told why (the replan's reason), and the routine's record counts the fallback
    replans = [e for e in events[at:] if e.kind == "plan" and e.replan]
    assert replans and "options that could be 'Northwind Traders'" in replans[0].reason
    counted = store.get("enter-invoice", before.version)
    assert counted.fallbacks == before.fallbacks + 1
    assert "options that could be" in counted.last_fallback


# ---------------------------------------------------------------- 2. one source for a typed value

ERP = "http://127.0.0.1:8123"
FORM = f"{ERP}/bills/new"


def _typed(field: str, label: str, text: str) -> ActRecord:
    return ActRecord(
        action={"action": "type", "text": text},
        target=Addressed(role="textbox", name=label, field=field),
        page_url=FORM,
    )


def _run(typed: dict[str, str]) -> SimpleNamespace:
    """browser_steps.jsonl of a verified run that entered one bill with ``typed`` (field: text)."""
    records = [
        ActRecord(action={"action": "navigate", "url": FORM}, page_url=FORM, after_url=FORM),
        ActRecord(
            action={"action": "select", "option": "Hooli Cloud Services"},
            target=Addressed(role="combobox", name="Vendor", field="vendor_id"),
            page_url=FORM,
        ),
        *(_typed(field, field.replace("_", " ").capitalize(), text) for field, text in typed.items()),
        ActRecord(
            action={"action": "click"},
            target=Addressed(role="button", name="Save bill"),
            page_url=FORM,
            after_url=f"{ERP}/bills/BILL-0011",
            decisions=[("approved", "POST", FORM)],
        ),
    ]
    return SimpleNamespace(records=records, erp=ERP, sandbox=DEFAULT_SANDBOX)


PARAMS = {"vendor": "Hooli Cloud Services"}
BILL = {
    "invoice_number": "HCS-2026-11",
    "amount": "120.00",
    "invoice_date": "2026-09-30",
    "due_date": "2026-10-30",
}


def test_a_due_date_equal_to_the_invoice_date_is_refused_naming_both() -> None:
    reported = {**BILL, "due_date": BILL["invoice_date"]}  # due on receipt
    with pytest.raises(DistilError) as refused:
        browser_steps(_run(reported), PARAMS, document_values(reported, PARAMS))  # type: ignore[arg-type]
    said = str(refused.value)
    assert "'2026-09-30' is both the document value invoice_date and the document value due_date" in said
    assert "typed into textbox 'Invoice date' (field invoice_date)" in said
    assert "Learn the routine from a run where invoice_date, due_date differ" in said


def test_a_total_equal_to_the_subtotal_is_refused_when_the_amount_is_typed() -> None:
    reported = {**BILL, "subtotal": "120.00", "tax": "0.00"}  # no tax: the total printed twice
    with pytest.raises(DistilError, match="both the document value amount and the document value subtotal"):
        browser_steps(_run(BILL), PARAMS, document_values(reported, PARAMS))  # type: ignore[arg-type]


def test_values_that_differ_are_each_learned_as_their_own() -> None:
    steps, _ = browser_steps(_run(BILL), PARAMS, document_values(BILL, PARAMS))  # type: ignore[arg-type]
    learned_as = {s.target.field: s.value for s in steps if s.target and s.kind == "type"}
    assert learned_as == {f: f"{{{f}}}" for f in BILL}
    assert next(s.value for s in steps if s.kind == "select") == "{vendor}"


def test_an_address_value_that_is_two_values_is_refused() -> None:
    values = {"invoice_date": "2026-09-30", "due_date": "2026-09-30"}
    with pytest.raises(
        DistilError, match="both the document value invoice_date and the document value due_date"
    ):
        _url_template(f"{ERP}/bills?due=2026-09-30", ERP, PARAMS, values)
    assert _url_template(f"{ERP}/bills?due=2026-09-30", ERP, PARAMS, {"due_date": "2026-09-30"}) == (
        "{erp}/bills?due={due_date}"
    )


# ---------------------------------------------------------------- 3. a value the template does not read

PAGE = PageExpect(path="/bills/new")


def _field(field: str, label: str, value: str) -> BrowserStep:
    return BrowserStep(
        kind="type", target=Target(role="textbox", name=label, field=field), value=value, expect=PAGE
    )


@pytest.fixture(scope="module")
def healed() -> Routine:
    """v2 healed by Initech's run, which filled a new "Purchase order" field with the PO its
    invoice prints: Initech's template reads po_number, v1's Northwind template (kept) does not."""
    files = SandboxFiles(INBOX)
    nw = files.read("Invoice from Northwind Traders.eml")
    base = {"invoice_number": "INV-2057", "amount": "1284.50", "invoice_date": "2026-09-12"}
    northwind = learn(nw.full_text(), base, NWT, nw.path)
    northwind.senders = ["northwind-traders.example"]
    ini = files.read("Re_ September invoice.eml")
    initech_values = {"invoice_number": "INI-7781", "amount": "3420.00", "invoice_date": "2026-09-20"}
    initech = learn(ini.full_text(), {**initech_values, "po_number": "4500097"}, "Initech", ini.path)
    initech.senders = ["initech.example"]
    common = [
        BrowserStep(kind="open", url="{erp}/bills/new", expect=PAGE),
        _field("invoice_number", "Invoice number", "{invoice_number}"),
        _field("amount", "Amount", "{amount}"),
        _field("invoice_date", "Invoice date", "{invoice_date}"),
    ]
    v1 = _routine(northwind, values=sorted(base), browser=common)
    learned_v2 = _routine(
        initech,
        version=2,
        values=sorted([*initech_values, "po_number"]),
        browser=[*common, _field("purchase_order", "Purchase order", "{po_number}")],
    )
    return merge(v1, learned_v2)


def test_a_replay_hands_over_when_the_vendors_template_does_not_read_a_value_its_steps_enter(
    healed: Routine,
) -> None:
    assert healed.template_for(NWT) is not None  # kept: the heal does not lose other issuers
    ctx = SimpleNamespace(toolbox=SimpleNamespace(files=SandboxFiles(INBOX)))
    with pytest.raises(Fallback) as fell:
        Replayer(healed, {"vendor": NWT})._files(ctx, state=None)  # type: ignore[arg-type]
    assert "does not read po_number from" in fell.value.reason, fell.value.reason
    assert fell.value.remaining[0] == "find and read the document"
    assert any("{po_number}" in s for s in fell.value.remaining)
    # the reviewer is shown it too
    shown = describe_routine(healed)
    assert "   reads no po_number: a replay for Northwind Traders hands over to the agent" in shown
    assert not any("a replay for Initech hands over" in line for line in shown)


def test_the_healed_routine_is_valid_and_still_reads_every_value_for_the_issuer_that_taught_it(
    healed: Routine,
) -> None:
    again = Routine.model_validate(healed.model_dump())  # healing is not refused by the routine's checks
    assert again.uses() == ["invoice_number", "amount", "invoice_date", "po_number"]
    found = find_document(again, {"vendor": "Initech"}, SandboxFiles(INBOX))
    assert found.values["po_number"] == "4500097"


def test_a_placeholder_with_no_value_is_never_typed(healed: Routine) -> None:
    from taskcrew.routines.models import Unfilled

    with pytest.raises(Unfilled, match=r"no value for \{po_number\}"):
        fill("{po_number}", {"amount": "1.00"})
    assert fill("{erp}/bills?n={invoice_number}", {"invoice_number": "A&B"}, system="http://e", url=True) == (
        "http://e/bills?n=A%26B"
    )
    # the replayer's own filling hands over from the step that would type it
    replayer = Replayer(healed, {"vendor": NWT})
    with pytest.raises(Fallback, match=r"no value for \{po_number\}") as fell:
        replayer._fill("{po_number}", {"amount": "1.00"}, "http://erp", at=4)
    assert fell.value.remaining == [healed.browser[4].describe()]
