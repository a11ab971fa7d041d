"""The scripted models' reading skills on real tool output, the case human, and the recipe registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.llm import ModelConfigError
from taskcrew.crew.scripted import ScriptedCall
from taskcrew.eval import kit
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.models import EvalCase, Expectation, HumanScript, load_cases
from taskcrew.eval.solvers import SCRIPTED_MODELS, SLOPPY_SLIPS, SOLVER, scripted_models
from taskcrew.eval.solvers.documents import distinct, documents_in, invoices_in, latest
from taskcrew.tools.files import SandboxFiles
from taskcrew.tools.human import ApprovalRequest


@pytest.fixture(scope="module")
def files() -> SandboxFiles:
    return SandboxFiles(DEFAULT_SANDBOX / "inbox")


def _read(files: SandboxFiles, path: str) -> str:
    return files.read_file(path).to_text()


def test_an_invoice_is_read_by_its_printed_labels(files: SandboxFiles) -> None:
    [invoice] = invoices_in(
        "Invoice from Northwind Traders.eml", _read(files, "Invoice from Northwind Traders.eml")
    )
    assert (invoice.issuer, invoice.number, invoice.date) == (
        "Northwind Traders",
        "INV-2057",
        "September 12, 2026",
    )
    assert (invoice.terms_text, invoice.amount_text, invoice.subtotal) == (
        "Net 30",
        "1,284.50 USD",
        "1,070.42 USD",
    )
    assert (
        invoice.number_line == "Invoice No. INV-2057" and invoice.total_line == "TOTAL PAYABLE 1,284.50 USD"
    )


@pytest.mark.parametrize(
    ("path", "number", "amount", "terms"),
    [
        ("Tax Invoice.eml", "INV/2026/0917", "Rs. 1,28,450.00", "Net 45"),
        (
            "Rechnung zu Ihrer Bestellung 4500123.eml",
            "RE-2026-0412",
            "1.284,50 EUR",
            "zahlbar innerhalb 14 Tagen netto",
        ),
        ("Fwd_ RE_ PO 4471 - invoice.eml", "VI-3390", "2,640.00 USD", "Due date: 2026-10-20"),
        ("downloads/invoice.pdf", "GX-5531", "2,150.00 USD", "Due date: Oct 5, 2026"),
        ("Re_ September invoice.eml", "INI-7781", "$3,420.00", "Net 15"),
    ],
)
def test_invoices_in_every_layout(
    files: SandboxFiles, path: str, number: str, amount: str, terms: str
) -> None:
    [invoice] = invoices_in(path, _read(files, path))
    assert (invoice.number, invoice.amount_text, invoice.terms_text) == (number, amount, terms)


def test_not_every_document_is_an_invoice(files: SandboxFiles) -> None:
    assert (
        invoices_in(
            "Friendly reminder - open balance.eml", _read(files, "Friendly reminder - open balance.eml")
        )
        == []
    )
    quote = "Initech - quote for 2027 support renewal.eml"
    assert invoices_in(quote, _read(files, quote)) == []
    [memo] = documents_in(
        "Credit memo for your account.eml", _read(files, "Credit memo for your account.eml")
    )
    assert (memo.heading, memo.number, memo.references, memo.is_invoice) == (
        "CREDIT MEMO",
        "CN-104",
        ["CO-55120"],
        False,
    )
    assert memo.amount_text == "-150.00 USD"


def test_a_forwarded_copy_is_the_same_invoice_and_same_day_invoices_are_ambiguous(
    files: SandboxFiles,
) -> None:
    northwind = [
        i
        for path in ("Invoice from Northwind Traders.eml", "FW_ Invoice from Northwind Traders.eml")
        for i in invoices_in(path, _read(files, path))
    ]
    assert [i.forwarded for i in northwind] == [False, True]
    [original] = distinct(northwind[::-1])  # whichever file came first, the original is kept
    assert (original.number, original.path) == ("INV-2057", "Invoice from Northwind Traders.eml")
    hooli = [
        i
        for path in ("Your Hooli invoice is ready.eml", "Your Hooli invoices are ready.eml")
        for i in invoices_in(path, _read(files, path))
    ]
    assert sorted(i.number for i in latest(distinct(hooli))) == ["HCS-2026-10A", "HCS-2026-10B"]


def test_search_and_listing_results_are_read_back(files: SandboxFiles) -> None:
    found = files.search_files("Soylent").to_text()
    assert kit.search_paths(found) == [
        "notes/AP weekly sync 2026-09-29.md",
        "notes/vendor contacts.csv",
        "scans/SCAN_0001.pdf",  # read by OCR
    ]
    assert ("downloads/invoice (3).pdf", "damaged file") in kit.unreadable_paths(found)
    assert kit.search_lines(found)[0][1].startswith("- Soylent sends paper scans")
    listed = kit.listed_files(files.list_files().to_text())
    urgent = next(e for e in listed if e.path == "URGENT action required before close.eml")
    assert (urgent.kind, urgent.date[:10], urgent.subject) == (
        "email",
        "2026-10-01",
        "URGENT: action required before close",
    )


def test_names_match_the_erp_options() -> None:
    vendors = [
        "Choose a vendor…",
        "Bharat Components Pvt. Ltd.",
        "Globex Corp",
        "Müller Industrietechnik GmbH",
    ]
    assert kit.choose_option(vendors, "GLOBEX CORPORATION") == "Globex Corp"
    assert kit.choose_option(vendors, "Müller Industrietechnik GmbH") == "Müller Industrietechnik GmbH"
    assert kit.choose_option(vendors, "Stark Logistics") is None
    assert kit.same_number("GX5531", "gx-5531") and not kit.same_number("GX-5531", "GX-5532")


PROMPT = """Current Task: You are doing step 3 of 3 of a larger task.

Success criteria for the whole task:
- Acme Payables has exactly one bill for INV-2057
- No other bill was created or changed

Results of earlier steps:
- Step 1 [file_reader] Find and read the latest invoice from Northwind Traders → done: INV-2057 in the e-mail.
  data: target=Northwind Traders; invoice_number=INV-2057; amount=1284.50
- Step 2 [browser_operator] Check Acme Payables for bills already entered → done: no bill yet.

THIS STEP: Enter the latest invoice from Northwind Traders into Acme Payables
"""


def test_the_prompt_is_read_like_a_model_reads_it() -> None:
    call = ScriptedCall(role="browser_operator", messages=[{"role": "user", "content": PROMPT}], tools=[])
    assert kit.step_title(call) == "Enter the latest invoice from Northwind Traders into Acme Payables"
    assert kit.is_first_call(call)
    first, second = kit.step_results(call)
    assert (first.number, first.role, first.status) == (1, "file_reader", "done")
    assert first.data == {"target": "Northwind Traders", "invoice_number": "INV-2057", "amount": "1284.50"}
    assert second.data == {} and second.summary == "no bill yet."
    assert kit.criteria(call) == [
        "Acme Payables has exactly one bill for INV-2057",
        "No other bill was created or changed",
    ]
    assert kit.person_answer("The person answered: Enter HCS-2026-10A only.") == "Enter HCS-2026-10A only."


def test_the_case_human_follows_its_script_and_records_everything() -> None:
    request = ApprovalRequest(kind="form_submission", method="POST", url="http://erp/bills/new")
    human = CaseHuman(HumanScript(answers=["first", "second"], default_answer="no idea"))
    assert [human.ask(q) for q in ("a?", "b?", "c?")] == ["first", "second", "no idea"]
    assert human.approve(request).approved and human.questions == ["a?", "b?", "c?"]
    rejecting = CaseHuman(HumanScript(approvals="reject"))
    decision = rejecting.approve(request)
    assert not decision.approved and decision.outcome == "reject"
    assert rejecting.requests == [request]


def test_every_case_has_a_scripted_recipe_and_the_sloppy_slips_are_real_cases() -> None:
    ids = {c.id for c in load_cases()}
    plain = {c.id for c in load_cases() if c.recipe is None}  # recipe cases: solved by their recipe
    assert plain == set(SOLVER), "a new case needs a recipe in taskcrew/eval/solvers/registry.py"
    assert set(SLOPPY_SLIPS) < ids
    for case in load_cases():
        factory = scripted_models(case)
        for name in SCRIPTED_MODELS:
            assert factory(name).model == f"scripted/{name}"


def test_unknown_scripted_models_and_cases_are_clear_errors(tmp_path: Path) -> None:
    case = next(c for c in load_cases() if c.id == "research-sum-of-squares")
    with pytest.raises(ModelConfigError, match="unknown scripted model 'scripted/genius'"):
        scripted_models(case)("genius")
    stranger = EvalCase(id="brand-new-case", task="Do something new.", expect=Expectation(outcomes=["done"]))
    with pytest.raises(ModelConfigError, match="no recipe for case 'brand-new-case'"):
        scripted_models(stranger)("solver")


def test_the_auditor_does_not_blame_a_run_for_rows_a_colleagues_job_added_meanwhile() -> None:
    """On a shared ERP another job's bill shows in the before/after difference. "No other bill was
    created" is then judged on the gate's record of what this run sent: met when every send is for
    the task's record, not met when one send is for another record."""
    from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE
    from taskcrew.eval.solvers.base import what_changed

    diff = (
        "Lines of the page added (2):\n"
        "+ | BILL-0012 | Initech | INI-7781 | 3420.00 | USD | 2026-09-20 | 2026-10-05 | Unpaid | —\n"
        "+ | BILL-0013 | Northwind Traders | INV-2057 | 1284.50 | USD | 2026-09-12 | 2026-10-12 | Unpaid | —"
    )

    def sends(*numbers: str) -> str:
        lines = [f"Data-changing submissions sent: {len(numbers)}"]
        lines += [
            f"- POST http://127.0.0.1:8800/bills/new [vendor_id=3, invoice_number={n}] — saved"
            for n in numbers
        ]
        return "\n".join(lines)

    def call(sent: str, changes: str = diff) -> ScriptedCall:
        text = f'Source "{CHANGES_SOURCE} http://127.0.0.1:8800/bills":\n{changes}\n\nSource "{SENDS_SOURCE}":\n{sent}\n\n'
        return ScriptedCall(role="verifier", messages=[{"role": "user", "content": text}], tools=[])

    mine = what_changed(call(sends("INI-7781")), ["INI-7781"])
    assert mine is not None and mine.met and mine.source == SENDS_SOURCE
    assert "“Data-changing submissions sent: 1”" in mine.observed
    slashed = diff.replace("INI-7781", "INV/2026/0917")  # a number with slashes, as Bharat's
    mine = what_changed(call(sends("INV/2026/0917"), slashed), ["INV/2026/0917"])
    assert mine is not None and mine.met, mine.observed
    assert not what_changed(call(sends("INI-77810")), ["INI-7781"]).met  # type: ignore[union-attr]
    theirs = what_changed(call(sends("INI-7781", "INV-2057")), ["INI-7781"])
    assert theirs is not None and not theirs.met and "did not touch" in theirs.observed
