"""Whose invoice a routine reads: a red-team round on issuer names and forged senders.

1. Issuer names that extend one another. ``Routine.template_for`` took the FIRST template whose
   issuer started with the same words as the vendor, in either direction, so "Northwind Traders"
   and "Northwind Traders Logistics" each matched both templates and the templates' order decided:
   a Logistics task read with Northwind's template (Northwind's invoice entered as Logistics' bill),
   and after a heal for Logistics (``distil.merge`` puts the new template first) a Northwind task
   read with Logistics' template, its search finding Logistics' e-mails ("Northwind Traders
   Logistics" contains "Northwind Traders"). Now a vendor gets the template whose issuer IS that
   name, else the one named like it, never one of several (``models.issuer_of``), and a document
   that prints the vendor's name only inside another known issuer's longer name is that issuer's
   (``models.issuers_named``).
2. A forged From. The sender check read the From header alone; a mail whose Reply-To and
   Return-Path are another domain's and whose receiving server reports dmarc=fail passed as
   Northwind's, and the mail reader dropped Return-Path and Authentication-Results, so nobody could
   see them. Now the reader keeps them and ``files.mail_sender`` treats such a mail as an unclear
   sender, in a colleague's forward too.

Real e-mails through the real reader (``SandboxFiles`` over a copy of the demo inbox).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_routines import INBOX, _routine, _template
from test_routines_adversarial import INVOICE_TEXT, _attaching

from taskcrew.routines.files import FileStepFailed, find_document, sender_domains
from taskcrew.routines.models import Template
from taskcrew.tools.files import SandboxFiles

NWT = "Northwind Traders"
LOGISTICS = "Northwind Traders Logistics"


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _template(SandboxFiles(INBOX), "INV-2057", NWT)


@pytest.fixture(scope="module")
def logistics(northwind: Template) -> Template:
    """Logistics' own template: the same labels, its own sender domain."""
    return northwind.model_copy(update={"issuer": LOGISTICS, "senders": ["nwt-logistics.example"]})


def _logistics_mail(number: str, date: str, printed: str) -> str:
    return f"""Date: {date}
From: NWT Logistics Billing <billing@nwt-logistics.example>
To: ap@acme-corp.example
Subject: Invoice {number}
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"

Northwind Traders Logistics

Invoice No. {number}
Invoice Date {printed}
Terms Net 30
Subtotal 100.00 USD
VAT 20% 20.00 USD
TOTAL PAYABLE 120.00 USD
"""


NWT_MENTIONING_LOGISTICS = (
    """Date: Thu, 01 Oct 2026 08:02:11 -0700
From: Northwind Traders Billing <billing@northwind-traders.example>
To: ap@acme-corp.example
Subject: Invoice INV-3001
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"

Hello,

"""
    + INVOICE_TEXT
    + "\nNorthwind Traders - deliveries by our sister company Northwind Traders Logistics\n"
)


# ---------------------------------------------------------------- 1. issuer names that extend one another


def test_a_vendor_gets_the_template_that_is_its_name_whatever_the_order(
    northwind: Template, logistics: Template
) -> None:
    """Before, the first template "named like" the vendor won: with Northwind's first, a Logistics
    task got Northwind's template; with Logistics' first (after a heal), a Northwind task got
    Logistics'. Now the same name wins, in either order; a name like only one of them is that one's;
    a name like both is neither's, and the reason says so plainly."""
    for templates in ([northwind, logistics], [logistics, northwind]):
        routine = _routine(northwind, templates=templates)
        assert routine.template_for(NWT) is northwind
        assert routine.template_for("NORTHWIND-TRADERS") is northwind
        assert routine.template_for(LOGISTICS) is logistics
        assert routine.template_for("Northwind Traders Ltd") is northwind  # like Northwind only
        assert routine.template_for("Northwind") is None  # neither's name: not guessed
    # like two issuers at once (the same name give or take a legal form): neither, and said so
    ltd = northwind.model_copy(update={"issuer": "Northwind Traders Ltd"})
    routine = _routine(
        northwind, templates=[ltd, northwind.model_copy(update={"issuer": "Northwind Traders Inc"})]
    )
    with pytest.raises(FileStepFailed, match="could be any of 2 issuers") as fell:
        find_document(routine, {"vendor": NWT}, SandboxFiles(INBOX))
    assert "Northwind Traders Ltd" in str(fell.value) and "Northwind Traders Inc" in str(fell.value), (
        fell.value
    )
    # one template only: the same name give or take a legal form still gets it, another name does
    # not — before, "Northwind" (and "Northwind Traders Logistics") got Northwind Traders' template
    assert _routine(northwind).template_for("Northwind Traders Ltd") is northwind
    assert _routine(northwind).template_for("Northwind") is None
    assert _routine(northwind).template_for(LOGISTICS) is None


def test_after_a_heal_for_logistics_a_northwind_task_enters_northwinds_invoice(
    inbox: Path, northwind: Template, logistics: Template
) -> None:
    """The routine healed for Logistics keeps Logistics' template first. Before, a Northwind task
    read with Logistics' template, the search for "Northwind Traders" found Logistics' newer invoice
    (its name contains Northwind's) and it was entered as Northwind's bill. Now the task reads with
    Northwind's template, and Logistics' e-mail — which prints "Northwind Traders" only inside
    "Northwind Traders Logistics" — is not Northwind's document: Northwind's own newest is entered."""
    (inbox / "Invoice LOG-88.eml").write_text(
        _logistics_mail("LOG-88", "Sat, 03 Oct 2026 08:02:11 -0700", "October 3, 2026"), encoding="utf-8"
    )
    healed = _routine(northwind, templates=[logistics, northwind])
    found = find_document(healed, {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057" and found.stranger is None, found
    # and Logistics' own task reads its own invoice, from its own sender
    found = find_document(healed, {"vendor": LOGISTICS}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "LOG-88" and found.stranger is None, found


def test_a_logistics_task_never_enters_northwinds_invoice(
    inbox: Path, northwind: Template, logistics: Template
) -> None:
    """Northwind's template first. Before, a Logistics task read Northwind's newer INV-3001 (which
    mentions its sister company) with Northwind's template, as trusted, and entered it as
    Logistics'; and without that e-mail, Logistics' own invoice was refused as a stranger's every
    time. Now Logistics' template reads: its own invoice is entered; Northwind's e-mail, naming
    Logistics too, is not from Logistics' sender, so the agent and a person decide."""
    routine = _routine(northwind, templates=[northwind, logistics])
    (inbox / "Invoice LOG-77.eml").write_text(
        _logistics_mail("LOG-77", "Fri, 25 Sep 2026 08:02:11 -0700", "September 25, 2026"), encoding="utf-8"
    )
    found = find_document(routine, {"vendor": LOGISTICS}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "LOG-77" and found.stranger is None, found

    (inbox / "Invoice INV-3001.eml").write_text(NWT_MENTIONING_LOGISTICS, encoding="utf-8")
    with pytest.raises(FileStepFailed, match=r"INV-3001 but was not sent from nwt-logistics\.example"):
        find_document(routine, {"vendor": LOGISTICS}, SandboxFiles(inbox))
    # while for Northwind's task that e-mail is Northwind's (it names Northwind on its own too)
    found = find_document(routine, {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-3001" and found.stranger is None, found


# ---------------------------------------------------------------- 2. a forged From

FORGED_HEADERS = (
    "Received: from mail.nwt-remittance.example (mail.nwt-remittance.example [203.0.113.66])\n"
    "Authentication-Results: mx.acme-corp.example; spf=fail smtp.mailfrom=nwt-remittance.example; "
    "dkim=none; dmarc=fail (p=reject; dis=none) header.from=northwind-traders.example\n"
    "Return-Path: <bounce@nwt-remittance.example>\n"
)


def _northwind_mail(extra: str = "", reply_to: str = "", body: str = INVOICE_TEXT) -> str:
    reply = f"Reply-To: {reply_to}\n" if reply_to else ""
    return (
        f"Date: Thu, 01 Oct 2026 09:14:00 +0000\n{extra}"
        f"From: Northwind Traders Billing <billing@northwind-traders.example>\n{reply}"
        "To: ap@acme-corp.example\nSubject: Invoice INV-3001 from Northwind Traders\nMIME-Version: 1.0\n"
        f'Content-Type: text/plain; charset="utf-8"\n\nHello,\n\n{body}'
    )


FORGED = _northwind_mail(FORGED_HEADERS, "Accounts Receivable <ar@nwt-remittance.example>")
NAME = "Invoice INV-3001 from Northwind Traders.eml"


def test_a_forged_from_is_an_unclear_sender_and_everyone_sees_why(inbox: Path, northwind: Template) -> None:
    """Before, the routine read the forged mail as Northwind's newest invoice (19,800 paid to
    whoever wrote it), and the reader dropped its Return-Path and Authentication-Results. Now the
    reader keeps them (as text the agent and the person read) and the routine goes to the agent,
    the reason saying what contradicts the From; nor does such a mail teach a sender."""
    (inbox / NAME).write_text(FORGED, encoding="utf-8")
    content = SandboxFiles(inbox).read(NAME)
    assert content.email is not None
    headers = content.email.headers
    assert headers.return_path == "<bounce@nwt-remittance.example>"
    assert len(headers.authentication_results) == 1 and "dmarc=fail" in headers.authentication_results[0]
    shown = content.full_text()
    assert "Return-Path: <bounce@nwt-remittance.example>" in shown
    assert "Authentication-Results: mx.acme-corp.example; spf=fail" in shown
    assert sender_domains(content) == []
    with pytest.raises(
        FileStepFailed, match=r"INV-3001 but was not sent from northwind-traders\.example"
    ) as fell:
        find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    said = str(fell.value)
    for fact in (
        "ar@nwt-remittance.example (its Reply-To)",
        "bounce@nwt-remittance.example (its Return-Path)",
    ):
        assert fact in said, said
    assert "dmarc=fail for northwind-traders.example" in said and "may be forged" in said, said
    assert fell.value.new_issuer

    # no blanket refusal: replies and bounces to the issuer's own domain (or one under it), passing
    # checks, a failure reported for another domain only, an empty return address
    extra = (
        "Authentication-Results: mx.acme-corp.example; spf=pass smtp.mailfrom=bounce.northwind-traders.example;"
        " dkim=pass header.d=northwind-traders.example; dmarc=pass header.from=northwind-traders.example\n"
        "Authentication-Results: relay.example; dkim=fail header.d=mailer.example\n"
        "Return-Path: <b-123@bounce.northwind-traders.example>\n"
    )
    (inbox / NAME).write_text(_northwind_mail(extra, "AR <ar@northwind-traders.example>"), encoding="utf-8")
    found = find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-3001" and found.stranger is None, found
    (inbox / NAME).write_text(_northwind_mail("Return-Path: <>\n"), encoding="utf-8")
    assert sender_domains(SandboxFiles(inbox).read(NAME)) == ["northwind-traders.example"]


@pytest.mark.parametrize(
    ("extra", "reply_to", "why"),
    [
        ("", "ar@nwt-remittance.example", "its Reply-To"),
        ("Return-Path: <bounce@nwt-remittance.example>\n", "", "its Return-Path"),
        (
            "Authentication-Results: mx.acme-corp.example; dmarc=fail header.from=northwind-traders.example\n",
            "",
            "dmarc=fail",
        ),
        (
            "Authentication-Results: mx.acme-corp.example; spf=fail smtp.mailfrom=billing@northwind-traders.example\n",
            "",
            "spf=fail",
        ),
        (
            "Authentication-Results: mx.acme-corp.example;\n dkim=fail (bad signature) header.d=northwind-traders.example\n",
            "",
            "dkim=fail",
        ),
        ("Authentication-Results: mx.acme-corp.example; spf=pass; dmarc=fail\n", "", "dmarc=fail"),
        ("", '"billing@northwind-traders.example" <ar@evil.example>', "ar@evil.example"),
    ],
    ids=[
        "reply-to",
        "return-path",
        "dmarc",
        "spf",
        "dkim-folded",
        "no-domain-named",
        "reply-to-display-name",
    ],
)
def test_each_contradiction_alone_makes_the_sender_unclear(
    inbox: Path, northwind: Template, extra: str, reply_to: str, why: str
) -> None:
    (inbox / NAME).write_text(_northwind_mail(extra, reply_to), encoding="utf-8")
    with pytest.raises(FileStepFailed, match="not sent from northwind-traders") as fell:
        find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert why in str(fell.value), fell.value


def test_a_colleagues_forward_is_judged_by_the_same_rule(inbox: Path, northwind: Template) -> None:
    """A colleague forwarding the forged mail: before, the attached message's From alone made it
    Northwind's part, read and entered. Now the attached message is judged as any mail is. And a
    "colleague" whose own mail fails DMARC for the company's domain is no colleague: the Northwind
    mail it carries is not read either. A genuine forward still is."""
    forward = _attaching("Priya Nair <priya.nair@acme-corp.example>", "FYI", FORGED)
    (inbox / "FW_ Northwind Traders - October.eml").write_text(forward, encoding="utf-8")
    assert sender_domains(SandboxFiles(inbox).read("FW_ Northwind Traders - October.eml")) == []
    with pytest.raises(FileStepFailed, match="INV-3001 but was not sent from northwind-traders") as fell:
        find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert "its Reply-To" in str(fell.value), fell.value

    fake_colleague = _attaching(
        "Priya Nair <priya.nair@acme-corp.example>", "FYI", _northwind_mail()
    ).replace(
        "From: Priya",
        "Authentication-Results: mx.acme-corp.example; dmarc=fail header.from=acme-corp.example\nFrom: Priya",
        1,
    )
    (inbox / "FW_ Northwind Traders - October.eml").write_text(fake_colleague, encoding="utf-8")
    assert sender_domains(SandboxFiles(inbox).read("FW_ Northwind Traders - October.eml")) == []
    with pytest.raises(FileStepFailed, match=r"dmarc=fail for acme-corp\.example"):
        find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))

    genuine = _attaching("Priya Nair <priya.nair@acme-corp.example>", "FYI", _northwind_mail())
    (inbox / "FW_ Northwind Traders - October.eml").write_text(genuine, encoding="utf-8")
    found = find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-3001" and found.stranger is None, found


def test_the_reader_keeps_delivery_headers_bounded(inbox: Path) -> None:
    """What the reader keeps of a mail's delivery is text of a bounded size, however many headers:
    the topmost (the company's own server's) first."""
    many = "".join(f"Authentication-Results: mx{i}.example; spf=pass {'x' * 5000}\n" for i in range(30))
    (inbox / NAME).write_text(
        _northwind_mail(many + "Return-Path: <" + "b" * 5000 + "@x.example>\n"), encoding="utf-8"
    )
    content = SandboxFiles(inbox).read(NAME)
    shown = content.full_text()
    assert "Authentication-Results: mx0.example; spf=pass" in shown and "Return-Path: <bbb" in shown
    assert "mx29.example" not in shown and len(shown) < 30_000, len(shown)
