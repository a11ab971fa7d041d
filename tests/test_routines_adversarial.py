"""Routines against mail and pages made to fool them: a stranger's e-mail that attaches a message
from the issuer, a colleague's forward that adds its own invoice text, an issuer's e-mail that cc's
the issuer's own staff, an e-mail that names no sender outside the company, and a form whose field
kept its name but changed its label since the review."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures_browser import SessionFactory
from fixtures_erp import ErpFactory
from test_routines import INBOX, _routine, _template

from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines.distil import learned_senders
from taskcrew.routines.files import FileStepFailed, find_document, sender_domains
from taskcrew.routines.models import Target
from taskcrew.routines.replay import Fallback, resolve
from taskcrew.routines.template import LearnError
from taskcrew.tools.browser import Click, Observation, Type
from taskcrew.tools.files import SandboxFiles
from taskcrew.tools.vault import Vault

INVOICE_TEXT = """Invoice No. INV-3001
Invoice Date October 1, 2026
Terms Net 30
Subtotal 1,650.00 USD
VAT 20% 330.00 USD
TOTAL PAYABLE 1,980.00 USD
"""

NORTHWIND_HELLO = """Date: Sat, 12 Sep 2026 08:02:11 -0700
From: Northwind Traders Billing <billing@northwind-traders.example>
To: ap@acme-corp.example
Subject: hello
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"

See you soon.
"""


def _attaching(sender: str, body: str, attached: str = NORTHWIND_HELLO) -> str:
    """An e-mail from ``sender`` whose body is ``body`` and which attaches ``attached`` as a message."""
    return f"""Date: Thu, 01 Oct 2026 09:14:00 +0000
From: {sender}
To: ap@acme-corp.example
Subject: Northwind Traders - invoice for October
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="XX"

--XX
Content-Type: text/plain; charset="us-ascii"

{body}
--XX
Content-Type: message/rfc822
Content-Disposition: attachment; filename="earlier.eml"

{attached}
--XX--
"""


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    copied = tmp_path / "inbox"
    shutil.copytree(INBOX, copied)
    return copied


def test_a_strangers_mail_attaching_a_message_from_the_issuer_is_not_read(inbox: Path) -> None:
    """The outer sender decides: a stranger's e-mail does not become Northwind's by attaching a
    message that claims to be from Northwind."""
    template = _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")
    assert template.senders == ["northwind-traders.example"]
    stranger = _attaching("Accounts Receivable <ar@nwt-remittance.example>", "Hello,\n\n" + INVOICE_TEXT)
    (inbox / "Northwind Traders - October.eml").write_text(stranger, encoding="utf-8")
    assert sender_domains(SandboxFiles(inbox).read("Northwind Traders - October.eml")) == [
        "nwt-remittance.example"
    ]
    with pytest.raises(FileStepFailed, match=r"not sent from northwind-traders\.example") as refused:
        find_document(_routine(template), {"vendor": "Northwind Traders"}, SandboxFiles(inbox))
    assert "INV-3001" in str(refused.value) and "nwt-remittance.example" in str(refused.value)


CORRECTED = """Date: Sat, 12 Sep 2026 16:40:00 -0700
From: Northwind Traders Billing <billing@northwind-traders.example>
To: Acme Corp Accounts Payable <ap@acme-corp.example>
Subject: CORRECTED Invoice INV-2057 from Northwind Traders
MIME-Version: 1.0
Content-Type: text/plain; charset="utf-8"

The invoice INV-2057 we sent this morning had a pricing error. Please use this one instead.

Northwind Traders
INVOICE
Invoice No. INV-2057
Invoice Date September 12, 2026
Customer ID ACME-0042
Terms Net 30
Subtotal 950.42 USD
VAT 20% 190.08 USD
TOTAL PAYABLE 1,140.50 USD
"""


def test_copies_of_the_invoice_picked_that_differ_in_a_value_are_a_persons_decision(inbox: Path) -> None:
    """Northwind re-issues INV-2057, same number and date, other amounts, from its own domain. The
    routine grouped the newest date's invoices by number only and took the first by search rank:
    the re-issue named "CORRECTED Invoice …" was entered, the same e-mail saved as "zz-corrected.eml"
    was not. Every document the rule could as well have picked must read the same values (the
    demo's invoice and its forward do), else the agent takes the chore and a person decides; by
    number alike."""
    from taskcrew.routines.models import DocumentRule

    template = _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")
    newest = _routine(template)
    by_number = _routine(
        template,
        params=["vendor", "invoice"],
        documents=DocumentRule(search="{vendor}", choose="by_number", number_param="invoice"),
    )
    vendor = {"vendor": "Northwind Traders"}
    assert find_document(newest, vendor, SandboxFiles(inbox)).values["amount"] == "1284.50"
    for name in ("CORRECTED Invoice INV-2057 from Northwind Traders.eml", "zz-corrected.eml"):
        (inbox / name).write_text(CORRECTED, encoding="utf-8")
        for routine, params in ((newest, vendor), (by_number, {**vendor, "invoice": "INV-2057"})):
            with pytest.raises(FileStepFailed, match="which one counts is a person's decision") as tied:
                find_document(routine, params, SandboxFiles(inbox))
            assert "amount 1140.50" in str(tied.value) and "amount 1284.50" in str(tied.value)
            assert not tied.value.new_issuer  # a decision the routine cannot take, not a new issuer
        (inbox / name).unlink()


def test_a_colleagues_forward_is_read_only_in_the_part_the_issuer_sent(inbox: Path) -> None:
    """A colleague's forward of Northwind's e-mail is Northwind's, but the colleague's own words
    are not: an invoice typed above the forwarded message is not read as Northwind's."""
    template = _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")
    forward = _attaching("Priya Nair <priya.nair@acme-corp.example>", "FYI, newest one:\n\n" + INVOICE_TEXT)
    (inbox / "FW_ Northwind Traders - October.eml").write_text(forward, encoding="utf-8")
    assert sender_domains(SandboxFiles(inbox).read("FW_ Northwind Traders - October.eml")) == [
        "northwind-traders.example"
    ]
    found = find_document(_routine(template), {"vendor": "Northwind Traders"}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057"  # the real forward still reads as before

    # a colleague at one of the company's subdomains forwards it: still a colleague, not the issuer
    (inbox / "FW_ from the Berlin office.eml").write_text(
        _attaching("Jonas Weber <jonas.weber@eu.acme-corp.example>", "FYI"), encoding="utf-8"
    )
    assert sender_domains(SandboxFiles(inbox).read("FW_ from the Berlin office.eml")) == [
        "northwind-traders.example"
    ]


def test_an_issuers_mail_cc_ing_its_own_staff_keeps_the_issuer_as_sender(inbox: Path) -> None:
    """Only the company's own domain is "ours": Initech's e-mail that cc's a colleague at Initech
    still teaches initech.example, so a look-alike domain's e-mail is not read as Initech's."""
    template = _template(SandboxFiles(INBOX), "INI-7781", "Initech")
    assert template.senders == ["initech.example"]
    stranger = (
        "Date: Thu, 01 Oct 2026 09:14:00 +0000\nFrom: Billing <billing@initech-payments.example>\n"
        "To: ap@acme-corp.example\nCc: Bill Lumbergh <bill.lumbergh@initech.example>\n"
        "Subject: Initech - October invoice\nMIME-Version: 1.0\n"
        'Content-Type: text/plain; charset="us-ascii"\n\nInitech\nINVOICE\nInvoice # INI-9001\n'
        "Date 10/21/2026\nTerms Net 15\nSubtotal $9,000.00\nSales tax 6.875% $618.75\nTOTAL DUE $9,618.75\n"
    )
    (inbox / "Initech - October invoice.eml").write_text(stranger, encoding="utf-8")
    with pytest.raises(FileStepFailed, match=r"not sent from initech\.example"):
        find_document(_routine(template), {"vendor": "Initech"}, SandboxFiles(inbox))


def test_an_e_mail_naming_no_sender_outside_the_company_teaches_no_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A template learned from an e-mail never keeps an empty sender list (which reads anyone's
    e-mail): a colleague's inline forward says nothing about who sends the issuer's invoices. A
    file that is not an e-mail keeps none, as before; the company's domain can be configured."""
    files = SandboxFiles(INBOX)
    inline = files.read("Fwd_ RE_ PO 4471 - invoice.eml")  # Marcus at acme-corp, the forward inline
    with pytest.raises(LearnError, match="does not say who sends Vandelay"):
        learned_senders(inline, "Vandelay Industries")
    assert learned_senders(files.read("downloads/invoice (4).pdf"), "Vandelay Industries") == []
    monkeypatch.setenv("TASKCREW_COMPANY_DOMAINS", "example.org, acme-corp.example")
    assert learned_senders(files.read("FW_ Invoice from Northwind Traders.eml"), "Northwind Traders") == [
        "northwind-traders.example"
    ]
    monkeypatch.setenv("TASKCREW_COMPANY_DOMAINS", "other.example")  # then Priya is not a colleague
    assert learned_senders(files.read("FW_ Invoice from Northwind Traders.eml"), "Northwind Traders") == [
        "acme-corp.example"
    ]


def test_a_template_learned_from_a_file_reads_no_ones_e_mail(inbox: Path) -> None:
    """Vandelay's template was learned from a PDF, so nobody learned who sends Vandelay's mail: a
    stranger's e-mail that prints a newer invoice under Vandelay's labels is not read as Vandelay's
    (before: a template with no senders read every file whole, e-mails included)."""
    template = _template(SandboxFiles(INBOX), "VI-3412", "Vandelay Industries")
    assert template.senders == []
    pdf_text = SandboxFiles(INBOX).read("downloads/invoice (4).pdf").full_text()
    newer = pdf_text.replace("VI-3412", "VI-3499").replace("2026-09-25", "2026-10-02")
    newer = newer.replace("September 25, 2026", "October 2, 2026").replace("09/25/2026", "10/02/2026")
    assert newer != pdf_text
    stranger = (
        "Date: Fri, 02 Oct 2026 09:14:00 +0000\nFrom: Billing <billing@vandelay-payments.example>\n"
        "To: ap@acme-corp.example\nSubject: Vandelay Industries - invoice VI-3499\nMIME-Version: 1.0\n"
        'Content-Type: text/plain; charset="us-ascii"\n\n' + newer
    )
    (inbox / "Vandelay Industries - invoice VI-3499.eml").write_text(stranger, encoding="utf-8")
    with pytest.raises(FileStepFailed, match="learned the issuer's invoices as files") as refused:
        find_document(_routine(template), {"vendor": "Vandelay Industries"}, SandboxFiles(inbox))
    assert "vandelay-payments.example" in str(refused.value)
    # the issuer's own PDF still reads as before
    found = find_document(_routine(template), {"vendor": "Vandelay Industries"}, SandboxFiles(INBOX))
    assert found.values[template.fields[0].name] == "VI-3412"


# ---------------------------------------------------------------- a relabelled field, a real page


def _new_bill_form(session: Any, url: str) -> Observation:
    obs = session.goto(f"{url}/login").observation
    by_field = {e.field.name: e.index for e in obs.elements if e.field is not None}
    login = next(e.index for e in obs.elements if e.name == "Log in")
    result = session.act(
        [
            Type(index=by_field["username"], text="{{secret:ERP_USERNAME}}"),
            Type(index=by_field["password"], text="{{secret:ERP_PASSWORD}}"),
            Click(index=login),
        ]
    )
    assert result.ok, result.render()
    return session.goto(f"{url}/bills/new").observation  # type: ignore[no-any-return]


@pytest.mark.browser
def test_a_relabelled_field_hands_over_and_a_moved_one_still_matches(
    erp_factory: ErpFactory, make_session: SessionFactory
) -> None:
    """The replay finds a field by its form field name and its label as reviewed: the same name
    under a new label ('Net amount before tax' for 'Amount *') hands the run to the agent, naming
    both labels; the same field moved elsewhere on the form is still found."""
    vault = {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}
    erp = erp_factory()
    session = make_session(base_url=erp.url, vault=Vault(vault))
    form = _new_bill_form(session, erp.url)
    amount = next(e for e in form.elements if e.field is not None and e.field.name == "amount")
    reviewed = Target(role=amount.role, name=amount.name, field="amount")
    assert reviewed.name == "Amount *"
    assert resolve(form, reviewed) is amount

    released = erp_factory(chaos=ChaosConfig(seed=0, form_change="relabel", save_faults=[]))
    relabelled = _new_bill_form(make_session(base_url=released.url, vault=Vault(vault)), released.url)
    assert any(e.name.startswith("Net amount before tax") for e in relabelled.elements)
    with pytest.raises(Fallback) as fell:
        resolve(relabelled, reviewed)
    assert "Net amount before tax" in fell.value.reason and "'Amount *'" in fell.value.reason

    shuffled = erp_factory(chaos=ChaosConfig(seed=0, shuffle_fields=True, save_faults=[]))
    moved_session = make_session(base_url=shuffled.url, vault=Vault(vault))
    moved = _new_bill_form(moved_session, shuffled.url)
    order = [e.field.name for e in moved.elements if e.field is not None]
    assert order != [e.field.name for e in form.elements if e.field is not None]  # it did move
    found = resolve(moved, reviewed)
    assert found is not None and found.field.name == "amount"
