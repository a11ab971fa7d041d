"""Red-team review 4 of the approval authority and the console: what a person is shown of an
approval is what the authority decides by.

1. bulk approval took items the worklist flagged "new vendor" or "value read by OCR" (the console
   alone judged them; the page offered a checkbox for every approval);
2. the payee (and the invoice number) was whichever field's name matched first: a typed
   "supplier_reference = Northwind Traders" before "vendor_id = 7 (Initrode Ltd)" was shown as the
   payee, and as the invoice number, of a bill paid to Initrode;
3. look-alikes neither marked nor flagged: a word wholly in Cyrillic or Greek letters drawn like
   Latin ones ("АСМЕ Corp"), an amount holding a right-to-left letter ("ا 4 001.00", drawn
   "001.00 4 ا") or a digit of another system ("৪00.00": a Bengali 4, drawn like an 8, read 400).

Each test failed before its fix."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from test_approvals import env, runner  # noqa: F401  (env: the CLI and the authority share a store)
from test_console_redteam import BASE, App, csrf, flash_of

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import assess, load_rules, parse_amount
from taskcrew.approvals.visible import hidden, visible
from taskcrew.cli import app as cli_app
from taskcrew.console.worklist import WorkItem, work_item
from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.tools.human import FieldValue

ERP = "http://127.0.0.1:8800"
KNOWN = ["Northwind Traders", "Contoso Ltd", "Initrode Ltd"]
BOB = Identity(name="bob", proof="token")


def park(
    jobs: Jobs,
    fields: dict[str, str],
    *,
    labels: dict[str, str] | None = None,
    notes: dict[str, str] | None = None,
    url: str = f"{ERP}/bills/new",
    **extra: Any,
) -> Approval:
    """ana's job, parked by its worker on a bill with ``fields`` (a chosen option's ``labels``, the
    gate's ``notes``), as the store parks it."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    labels, notes = labels or {}, notes or {}
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[
            FieldValue(name=k, value=v, label=labels.get(k), note=notes.get(k)) for k, v in fields.items()
        ],
        page_url=url,
        **extra,
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def bill(vendor: str, invoice: str, amount: str = "40.00", **more: str) -> dict[str, str]:
    return {"vendor": vendor, "invoice_number": invoice, "amount": amount, "currency": "EUR", **more}


@pytest.fixture
def approver(tmp_path: Path) -> Iterator[Authority]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    rules = load_rules().model_copy(update={"two_person": "on"})
    yield Authority(jobs, rules, home=tmp_path / "approvals")
    jobs.close()


@pytest.fixture
def console(tmp_path: Path, console_users: Path) -> Iterator[App]:
    made = App(tmp_path, console_users)
    yield made
    made.jobs.close()


def item_of(approver: Authority, approval: Approval) -> WorkItem:
    return work_item(approver.view(approver.jobs.approval(approval.id)), approver.rules, systems={})


def row(page: str, approval_id: str) -> str:
    found = re.search(rf'<tr[^>]*data-approval="{approval_id}".*?</tr>', page, re.S)
    assert found, approval_id
    return found.group(0)


# ---- 1: bulk approval decides by the flags the worklist shows ------------------------------------
def test_bulk_approval_refuses_what_the_worklist_flags_and_the_page_offers_no_checkbox(console: App) -> None:
    new = park(console.jobs, bill("Initrode Ltd", "INV-9"), known_vendors=KNOWN[:2])
    ocr = park(
        console.jobs,
        bill("Northwind Traders", "INV-10"),
        known_vendors=KNOWN,
        notes={"amount": "read by OCR"},
    )
    plain = [park(console.jobs, bill("Northwind Traders", f"INV-{n}"), known_vendors=KNOWN) for n in (11, 12)]
    bob = console.client("bob")
    page = bob.get("/approvals").text
    for flagged, words in ((new, "new vendor"), (ocr, "value read by OCR")):
        assert words in row(page, flagged.id) and 'name="ids"' not in row(page, flagged.id)
    assert all('name="ids"' in row(page, a.id) for a in plain)
    for flagged, why in ((new, "new_vendor: “Initrode Ltd” is not among the 2 vendors"), (ocr, "ocr_value")):
        form = {"ids": [flagged.id, plain[0].id], "csrf": csrf(bob.get("/approvals").text)}
        sent = bob.post("/approvals/bulk", data=form, headers={"origin": BASE})
        told = flash_of(bob, sent.headers["location"])
        assert "Bulk approval refused" in told and f"{flagged.id} is flagged ({why}" in told, told
    assert {console.jobs.approval(a.id).status for a in (new, ocr, *plain)} == {"pending"}
    form = {"ids": [a.id for a in plain], "csrf": csrf(bob.get("/approvals").text)}
    sent = bob.post("/approvals/bulk", data=form, headers={"origin": BASE})
    assert "2 approvals approved" in flash_of(bob, sent.headers["location"])


def test_a_bank_change_that_names_no_payee_says_so_on_the_worklist_and_its_page(console: App) -> None:
    """The approver of new bank details must know whose account they are: a change that names no
    payee says so (before, the worklist showed "—" and the page only the IBAN and BIC)."""
    bank = {"iban": "DE89370400440532013000", "bic": "COBADEFFXXX"}
    anonymous = park(console.jobs, bank, url=f"{ERP}/vendors/1/bank")
    named = park(console.jobs, {"vendor": "Northwind Traders", **bank}, url=f"{ERP}/vendors/1/bank")
    bob = console.client("bob")
    page = bob.get("/approvals").text
    assert "bank details, no payee named" in row(page, anonymous.id)
    assert "no payee named" not in row(page, named.id) and "Northwind Traders" in row(page, named.id)
    assert 'id="no-payee"' in bob.get(f"/approvals/{anonymous.id}").text
    assert 'id="no-payee"' not in bob.get(f"/approvals/{named.id}").text


def test_the_authority_and_the_cli_judge_the_flags_the_console_shows(env: dict[str, Any]) -> None:  # noqa: F811
    jobs, authority = env["jobs"], env["authority"]
    new = park(jobs, bill("Initrode Ltd", "INV-9"), known_vendors=KNOWN[:2], vendors_page=f"{ERP}/vendors")
    other = park(jobs, bill("Initrode Ltd", "INV-10"), known_vendors=KNOWN[:2])
    (refused,) = authority.bulk_approve([new.id, other.id], BOB)
    assert refused.status == "refused" and f"{new.id} is flagged (new_vendor" in refused.message
    assert {jobs.approval(a.id).status for a in (new, other)} == {"pending"}
    listed = runner.invoke(cli_app, ["approvals", "list"]).output
    assert re.search(rf"{new.id} .*\[new_vendor\]", listed), listed
    shown = runner.invoke(cli_app, ["approvals", "show", new.id]).output.replace("\n  ┆ ", "")  # lines joined
    assert f"risk: “Initrode Ltd” is not among the 2 vendors the system lists ({ERP}/vendors)" in shown
    # one vendor that is new, and one approver: decided one by one as before
    assert authority.decide(new.id, "approve", BOB).status == "decided"


# ---- 2: the payee is the field that picks the vendor ----------------------------------------------
def test_the_payee_is_the_field_that_picks_the_vendor_and_fields_that_disagree_are_flagged(
    approver: Authority,
) -> None:
    sent = {
        "supplier_reference": "Northwind Traders",
        "vendor_id": "7 (Initrode Ltd)",
        "invoice_number": "INV-2057",
    }
    picked = {"vendor_id": "Initrode Ltd"}
    attack = item_of(
        approver, park(approver.jobs, {**sent, "amount": "1284.50"}, labels=picked, known_vendors=KNOWN)
    )
    payees = {kv.label: kv.value for kv in attack.key_values if kv.label.startswith("Payee")}
    assert payees == {"Payee (vendor_id)": "Initrode Ltd", "Payee (supplier_reference)": "Northwind Traders"}
    assert attack.vendor == "Initrode Ltd / Northwind Traders" and "payee" in attack.flag_codes
    assert attack.invoice == "INV-2057"  # never the supplier's reference
    assert next(kv.value for kv in attack.key_values if kv.label == "Invoice number") == "INV-2057"
    assert "unclear_payee" in (attack.bulk_refusal or "")  # no checkbox: decided one by one
    # a reference that names no vendor beside the chosen one: the chosen one is the payee, unflagged
    honest = {**sent, "supplier_reference": "SR-77", "amount": "1284.50"}
    item = item_of(approver, park(approver.jobs, honest, labels=picked, known_vendors=KNOWN))
    assert item.vendor == "Initrode Ltd" and item.flags == [] and item.invoice == "INV-2057"
    assert [(kv.label, kv.value) for kv in item.key_values][:2] == [
        ("Payee", "Initrode Ltd"),
        ("Invoice number", "INV-2057"),
    ]
    # two fields named exactly as the payee that say different things: both shown, flagged
    typed = {"vendor_name": "Northwind Traders", "vendor_id": "7", "amount": "10.00"}
    item = item_of(approver, park(approver.jobs, typed, known_vendors=KNOWN))
    assert "payee" in item.flag_codes and item.vendor == "Northwind Traders / 7"


# ---- 3: look-alike words and amounts --------------------------------------------------------------
def test_a_word_of_look_alike_letters_beside_latin_ones_is_marked_and_flagged(approver: Authority) -> None:
    for value, word in (("АСМЕ Corp", "АСМЕ"), ("ΤΟΚΥΟ ΕΧΡΟΚΤ Co", "ΕΧΡΟΚΤ"), ("INV-2০57", "INV-2০57")):
        assert visible(value) != value and "⟨" in visible(value), value
        # the word is quoted as it is shown, its look-alike letters marked (not drawn as Latin ones)
        quoted = [h.split(" in “", 1)[1].removesuffix("”") for h in hidden(value)]
        assert quoted and all("⟨" in q and q in visible(value) for q in quoted), (value, quoted)
        assert word not in quoted, quoted
    assert visible("АСМЕ Corp").startswith("⟨Cyrillic А U+0410⟩⟨Cyrillic С U+0421⟩⟨Cyrillic М U+041C⟩")
    # a name wholly in its own script, or a word with a letter no Latin one looks like: left as is
    for honest in ("ООО «Ромашка»", "АСМЕ", "Ελληνικά Α.Ε.", "Ромашка LLC", "ΑΒΓ Corp", "৪০০ টাকা"):
        assert visible(honest) == honest and hidden(honest) == [], honest
    rules = load_rules()
    flags = assess([("vendor", "АСМЕ Corp"), ("amount", "120.00")], f"{ERP}/bills/new", rules).flags
    assert [f.rule for f in flags] == ["hidden_characters"] and "Cyrillic А U+0410" in flags[0].message
    item = item_of(approver, park(approver.jobs, bill("ΤΟΚΥΟ ΕΧΡΟΚΤ Co", "INV-6")))
    assert "hidden" in item.flag_codes and "hidden_characters" in (item.bulk_refusal or "")


def test_combining_marks_drawn_over_a_latin_letter_or_digit_are_marked_and_flagged() -> None:
    """ "INV-1\u0301" reads "INV-1´", a U+0336 overlay strikes a payee through, stacked marks bury a
    value: a mark NFC does not compose onto a Latin letter or a digit is shown and flagged."""
    for value, mark in (
        ("INV-1\u0301", "U+0301"),
        ("N\u0336orthwind", "U+0336"),
        ("Mu\u0308\u0308ller", "U+0308"),
    ):
        assert f"⟨{mark}⟩" in visible(value) and mark in hidden(value), value
    flags = assess(
        [("vendor", "Z\u0351a\u0353lgo Ltd"), ("amount", "120.00")], f"{ERP}/bills/new", load_rules()
    ).flags
    assert [f.rule for f in flags] == ["hidden_characters"]
    # an accent written as a separate mark composes; a script's own marks sit on its own letters
    for honest in ("Mu\u0308ller GmbH", "Cafe\u0301", "नमस्ते Traders", "مُحَمَّد", "שָׁלוֹם"):
        assert "⟨" not in visible(honest) and hidden(honest) == [], honest


@pytest.mark.parametrize(
    ("amount", "why"),
    [
        ("৪00.00", "a digit other than 0-9: Bengali Digit Four U+09EA"),  # drawn like 800.00; was 400.00
        ("ا 4 001.00", "a right-to-left letter"),  # drawn "001.00 4 ا"; was 4001.00
        ("٤٠٠.00", "a digit other than 0-9"),  # Arabic-Indic
        ("4OO.00", "a letter"),  # Latin capital O for zeros
        ("9OOO.00", "a letter"),  # three of them: no currency code (was read as 9.00)
    ],
)
def test_an_amount_in_other_digits_or_with_a_letter_is_unreadable_for_two_people(
    approver: Authority, amount: str, why: str
) -> None:
    assert parse_amount(amount) is None
    item = item_of(
        approver, park(approver.jobs, bill("Northwind Traders", "INV-3", amount), known_vendors=KNOWN)
    )
    assert item.amount is None and item.limit is None and "unreadable" in item.flag_codes
    assert item.view.needs_two and why in next(f.detail for f in item.flags if f.code == "unreadable")
    # shaped like money in a field the rules do not know by name: unreadable too
    shaped = assess([("betrag", "৪,000.00")], f"{ERP}/bills/new", load_rules()).flags
    assert "unreadable_amount" in [f.rule for f in shaped]


def test_amounts_in_ascii_digits_with_a_currency_read_as_before() -> None:
    for text, value in (("1 234,56 EUR", "1234.56"), ("€ 9 800,50", "9800.50"), ("USD 1,250.00", "1250.00")):
        assert parse_amount(text) == Decimal(value), text
    assert parse_amount("\u202e4,001\u202c") == Decimal("4001")  # hidden characters: flagged as such
    assert visible("৪00.00") == "⟨Bengali ৪ U+09EA⟩00.00"
