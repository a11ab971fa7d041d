"""One amount sent twice with different values ("amount=950.00 … amount=4950.00": a hostile page's
extra input; most systems book the last) is flagged *amounts disagree*, shows every value on the
worklist and the decision page, and is never approved in bulk; honest bodies with several amounts
(net, VAT and total; line items) are not flagged (``rules.Money.disagreeing``). And a Latin letter
drawn like another ASCII one ("ǀNV-2057", U+01C0 for "I") is marked and flagged as hidden
characters, while the letters real names are written with are left as they are
(``visible.LATIN_LOOKALIKE``)."""

from __future__ import annotations

import re

import pytest
from test_console_sources_redteam import BASE, App, app  # noqa: F401  (fixture)

from taskcrew.approvals.rules import assess, load_rules, read_money
from taskcrew.approvals.visible import hidden, visible
from taskcrew.jobs import ApprovalRequest, FieldSource
from taskcrew.tools.human import FieldValue

URL = "http://127.0.0.1:8800/bills/new"


def _rules(fields: list[tuple[str, str]]) -> list[str]:
    return [f.rule for f in assess(fields, URL, load_rules()).flags]


@pytest.mark.parametrize(
    "amounts",
    [
        [("amount", "950.00"), ("amount", "4950.00")],  # the same field twice
        [("amount", "4950.00"), ("amount", "950.00")],
        [("amount", "950.00"), ("Amount", "4950.00")],  # one amount in the rules' reading of names
        [("invoice[amount]", "950.00"), ("invoice.amount", "4950,00")],
        [("amount", "950.00"), ("amount[]", "4950.00")],  # a value beside a list of the same name
    ],
)
def test_one_amount_sent_with_different_values_is_flagged_with_each_value(
    amounts: list[tuple[str, str]],
) -> None:
    fields = [("vendor", "Northwind Traders"), *amounts, ("currency", "EUR")]
    flags = assess(fields, URL, load_rules()).flags
    assert [f.rule for f in flags] == ["unclear_amount"]
    assert flags[0].message.startswith("amounts disagree: check each by hand (")
    assert all(f"{name} = {value}" in flags[0].message for name, value in amounts), flags[0].message
    assert not flags[0].second_approver  # each is under the threshold: one person decides, by hand


def test_an_amount_over_the_threshold_among_them_still_needs_a_second_approver() -> None:
    fields = [("amount", "950.00"), ("amount", "9950.00"), ("currency", "EUR")]
    assert _rules(fields) == ["unclear_amount", "amount_above_threshold"]


@pytest.mark.parametrize(
    "fields",
    [
        [("amount", "950.00"), ("amount", "950.00")],  # the same value twice
        [("amount", "950.00"), ("amount", "950")],
        [("amount", "1.250,00"), ("amount", "1,250.00")],
        [("net_amount", "1000.00"), ("vat_amount", "190.00"), ("total", "1190.00")],  # different fields
        [("subtotal", "1000.00"), ("tax", "190.00"), ("total_amount", "1190.00")],
        [("lines[0].amount", "400.00"), ("lines[1].amount", "600.00"), ("total", "1000.00")],  # a JSON body
        [("lines[][amount]", "400.00"), ("lines[][amount]", "600.00"), ("total", "1000.00")],  # a list
        [("amount[]", "400.00"), ("amount[]", "600.00")],
    ],
)
def test_honest_bodies_with_several_amounts_are_not_flagged(fields: list[tuple[str, str]]) -> None:
    assert _rules([("vendor", "Northwind Traders"), *fields, ("currency", "EUR")]) == []


def test_the_record_amount_the_worker_read_is_no_second_value_of_the_form() -> None:
    """Paying part of a bill: the form's amount and the record's are different readings, each
    judged by the threshold, not one amount sent twice."""
    looked_up = {"amount": "4950.00", "currency": "EUR", "source": "http://127.0.0.1:8800/bills/BILL-7"}
    url = "http://127.0.0.1:8800/bills/BILL-7/pay"
    money = read_money([("amount", "950.00")], load_rules(), looked_up)
    assert len(money.amounts) == 2 and money.disagreeing == []
    assert [f.rule for f in assess([("amount", "950.00")], url, load_rules(), looked_up).flags] == []


def _park(console: App, fields: list[tuple[str, str]]) -> str:
    job = console.jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="console")
    console.jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=URL,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        page_url=URL,
        summary="Save the bill",
    )
    sources = [FieldSource(name=n, value=v, source="the page's form as filled") for n, v in fields]
    approval = console.jobs.park(job.id, kind="approval", key=f"k-{job.id}", request=request, sources=sources)
    console.jobs.mark(job.id, "waiting", only_if=("running",))
    return approval.id


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_second_amount_is_shown_on_every_surface_and_kept_out_of_bulk_approval(app: App) -> None:  # noqa: F811
    sent = [("vendor", "Northwind Traders"), ("amount", "950.00"), ("currency", "EUR"), ("amount", "4950.00")]
    ids = [_park(app, [*sent, ("invoice_number", f"INV-{i}")]) for i in (1, 2)]
    bob = app.client()
    page = bob.get("/approvals").text
    row = re.search(rf'<tr[^>]*data-approval="{ids[0]}".*?</tr>', page, re.S)
    assert row
    assert "950.00 / 4950.00 EUR" in _text(row.group(0)) and "amounts disagree" in _text(row.group(0))
    assert f'name="ids" value="{ids[0]}"' not in row.group(0)  # not offered for bulk approval
    decision = bob.get(f"/approvals/{ids[0]}").text
    key = re.search(r'<table id="key-values".*?</table>', decision, re.S)
    assert key and "950.00 / 4950.00 EUR" in _text(key.group(0))
    assert "amounts disagree: check each by hand (amount = 950.00; amount = 4950.00" in _text(decision)
    assert "(amount 4950.00 EUR is within 5000.00 EUR)" in _text(decision)  # judged by the largest
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token
    bob.post("/approvals/bulk", data={"csrf": token.group(1), "ids": ids}, headers={"origin": BASE})
    assert [app.jobs.approval(i).status for i in ids] == ["pending", "pending"]


LOOKALIKES = {
    "\u01c0NV-2057": "⟨Latin letter dental click ǀ U+01C0⟩NV-2057",  # for I
    "G\u01c0obex Corp": "G⟨Latin letter dental click ǀ U+01C0⟩obex Corp",  # for l
    "\u0196NV-2057": "⟨Latin capital letter iota Ɩ U+0196⟩NV-2057",
    "Nest\u01c0é SA": "Nest⟨Latin letter dental click ǀ U+01C0⟩é SA",  # an accent beside it hides nothing
    # opening a word of letters too: drawn exactly as "I" ("Initech"), unlike ǁ and ǃ
    "\u01c0nitech Corp": "⟨Latin letter dental click ǀ U+01C0⟩nitech Corp",
    "Gɩɩobex": "G⟨Latin small letter iota ɩ U+0269⟩⟨Latin small letter iota ɩ U+0269⟩obex",
    "ſoftware Ltd": "⟨Latin small letter long s ſ U+017F⟩oftware Ltd",  # drawn like "f"
    "INV-2Ʒ57": "INV-2⟨Latin capital letter ezh Ʒ U+01B7⟩57",  # drawn like "3"
    "\u026aNV-2057": "⟨small capital I U+026A⟩NV-2057",  # the IPA ones, as before
}


@pytest.mark.parametrize(("value", "shown"), LOOKALIKES.items())
def test_a_latin_letter_drawn_like_another_is_marked_and_flagged(value: str, shown: str) -> None:
    assert visible(value) == shown
    assert visible(shown) == shown  # shown once, never marked again
    assert hidden(value)
    flags = assess([("invoice_number", value), ("amount", "120.00")], URL, load_rules()).flags
    assert [f.rule for f in flags] == ["hidden_characters"]


@pytest.mark.parametrize(
    "honest",
    [
        "Müller GmbH",
        "Łódź Sp. z o.o.",
        "Ærø ApS",
        "Straße 5",
        "Señor Ñandú",
        "Sabancı Holding",  # Turkish: the dotless i
        "Đồng Nai",
        "Kabɩyɛ",  # an African alphabet's iota beside its other letters
        "Ĳssel BV",
        "Acme ǀ Corp",  # a look-alike alone passes for no letter
        "ǁKaras Regional Council",  # Khoekhoe clicks opening a word (Namibia)
        "ǃNara Lodge",
    ],
)
def test_letters_real_names_are_written_with_are_left_as_they_are(honest: str) -> None:
    assert visible(honest) == honest and not hidden(honest)
    assert _rules([("vendor", honest), ("amount", "120.00")]) == []


def test_a_lookalike_invoice_number_is_marked_on_the_worklist(app: App) -> None:  # noqa: F811
    approval = app.park(
        {
            "vendor": "Northwind Traders",
            "invoice_number": "\u01c0NV-2057",
            "amount": "1250.00",
            "currency": "EUR",
        },
        "",
    )
    row = re.search(
        rf'<tr[^>]*data-approval="{approval.id}".*?</tr>', app.client().get("/approvals").text, re.S
    )
    assert row
    cells = _text(row.group(0))
    assert "⟨Latin letter dental click ǀ U+01C0⟩NV-2057" in cells and "hidden characters" in cells
