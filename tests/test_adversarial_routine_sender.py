"""Who sent an e-mail, as a routine judges it: a red-team round on the From header.

A routine reads an issuer's invoice only from the domains it learned the issuer sends from
(``Template.senders``), judged by ``routines.files.sender_domain``. That check read the header as
the mail reader rendered it, and the reader's parser "repairs" a header it cannot read: ``From:
billing@northwind-traders.example <ar@evil.example>`` (an unquoted display name that is an
address) was rendered ``billing@northwind-traders.example`` — the display name taken for the
address, the address the mail came from dropped — so anyone's e-mail passed for Northwind's, and
the routine entered its invoice as Northwind's newest. The same for two angle-bracket addresses, an
unclosed ``<``, an address with a comment showing another one, two From lines, a group.

Now the reader keeps an address header as written whenever its parser would change it (a defect, a
comment), and the check reads the one address two parsers agree on, with no other address shown
anywhere in the header — display name, comment, RFC 2047 encoded word, look-alike "＠" — and only
ASCII: anything else is "an unclear sender", a stranger's mail.

Real e-mails through the real reader (``SandboxFiles`` over a copy of the demo inbox); the template
is Northwind's, learned from the demo inbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_routines import INBOX, _routine, _template
from test_routines_adversarial import INVOICE_TEXT

from taskcrew.routines.distil import learned_senders
from taskcrew.routines.files import FileStepFailed, find_document, sender_domain, sender_domains
from taskcrew.routines.models import Template
from taskcrew.routines.template import LearnError
from taskcrew.tools.documents.mail import read_email
from taskcrew.tools.files import SandboxFiles

NORTHWIND = "northwind-traders.example"

# From headers that must never read as Northwind's (each: why)
SPOOFED = {
    "billing@northwind-traders.example <ar@evil.example>": "an unquoted display name that is an address",
    "Northwind Traders <billing@northwind-traders.example> <ar@evil.example>": "two angle-bracket addresses",
    "<billing@northwind-traders.example><ar@evil.example>": "two angle-bracket addresses, no name",
    "<ar@evil.example> billing@northwind-traders.example": "an address after the angle-bracket one",
    "billing@northwind-traders.example <ar@evil.example": "an unclosed angle bracket",
    "billing\\@northwind-traders.example <ar@evil.example>": "an escaped @ in an unquoted name",
    '"billing@northwind-traders.example" <ar@evil.example>': "a quoted display name that is an address",
    '"Northwind" <billing@northwind-traders.example> (ar@evil.example)': "a comment showing another address",
    "ar@evil.example (billing@northwind-traders.example)": "a comment showing the issuer's address",
    "(billing@northwind-traders.example) ar@evil.example": "a leading comment showing the issuer's address",
    "=?utf-8?q?billing=40northwind-traders.example?= <ar@evil.example>": "an encoded-word display name",
    "=?utf-8?b?YmlsbGluZ0Bub3J0aHdpbmQtdHJhZGVycy5leGFtcGxl?= <ar@evil.example>": "a base64 encoded word",
    "=?utf-8?q?Northwind_=3Cbilling=40northwind-traders.example=3E?= <ar@evil.example>": "an encoded <address>",
    "=?utf-8?q?=3Cbilling=40northwind-traders.example=3E?=": "an encoded word that is all of it",
    "ar@evil.example (=?utf-8?q?billing=40northwind-traders.example?=)": "an encoded word in a comment",
    "billing\uff20northwind-traders.example <ar@evil.example>": "a full-width @ in the display name",
    "=?utf-8?q?billing=EF=BC=A0northwind-traders.example?= <ar@evil.example>": "an encoded full-width @",
    "Northwind Traders: billing@northwind-traders.example;": "group syntax",
    "Northwind Traders: ar@evil.example, billing@northwind-traders.example;": "a group of two",
    "billing@northwind-traders.example, ar@evil.example": "two addresses",
    "<@northwind-traders.example:ar@evil.example>": "a source route through the issuer's domain",
    "Northwind Traders <billing@northwind-trad\u0435rs.example>": "a Cyrillic e in the domain",
    "Northwind Traders <billing@northwind-traders.exam\u0440le>": "a Cyrillic r in the domain",
    "Northwind Traders <billing@\uff4eorthwind-traders.example>": "a full-width letter in the domain",
    "billing@northwind-traders.example@evil.example": "two @",
    "Northwind Traders": "no address at all",
}
# From headers that are Northwind's (a display name in any script, quoted, encoded, or a comment
# without an address) — the check is no blanket refusal
GENUINE = [
    "Northwind Traders Billing <billing@northwind-traders.example>",
    "billing@northwind-traders.example",
    '"billing@northwind-traders.example" <billing@northwind-traders.example>',
    "=?utf-8?q?Northwind_Traders_M=C3=BCller?= <billing@northwind-traders.example>",
    "Northwind Traders (Billing) <billing@northwind-traders.example>",
    '"Traders, Northwind" <billing@northwind-traders.example>',
]


def _mail(sender: str, body: str = "Hello,\n\nsee you soon.\n", extra: str = "") -> bytes:
    return (
        f"Date: Thu, 01 Oct 2026 09:14:00 +0000\r\nFrom: {sender}\r\n{extra}To: ap@acme-corp.example\r\n"
        "Subject: Invoice INV-3001 from Northwind Traders\r\nMIME-Version: 1.0\r\n"
        'Content-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'
        f"{body}"
    ).encode()


def _sender(sender: str, extra: str = "") -> str:
    """The From header as the mail reader gives it to every check."""
    return read_email(_mail(sender, extra=extra), "mail.eml").headers.sender


@pytest.fixture(scope="module")
def northwind() -> Template:
    template = _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")
    assert template.senders == [NORTHWIND]
    return template


@pytest.mark.parametrize("header", list(SPOOFED), ids=list(SPOOFED.values()))
def test_a_header_that_does_not_say_plainly_who_sent_it_is_no_ones_domain(header: str) -> None:
    """As the reader gives it (and as written), the header names no domain of Northwind's: an
    unclear sender, or the real address's domain (not the issuer's)."""
    for seen in (_sender(header), header):
        assert sender_domain(seen) != NORTHWIND, seen
        assert sender_domain(seen) in ("", "evil.example"), seen


@pytest.mark.parametrize("header", GENUINE)
def test_the_issuers_own_header_still_reads_as_the_issuers(header: str) -> None:
    assert sender_domain(_sender(header)) == NORTHWIND


def test_the_reader_shows_the_header_as_written_not_as_repaired() -> None:
    """What the agent and the person are shown is what the mail says: both addresses, not the
    parser's guess at one."""
    assert _sender("billing@northwind-traders.example <ar@evil.example>") == (
        "billing@northwind-traders.example <ar@evil.example>"
    )
    assert _sender("Northwind <billing@northwind-traders.example> (ar@evil.example)").endswith(
        "(ar@evil.example)"
    )
    assert _sender("=?utf-8?q?Northwind_Traders?= <billing@northwind-traders.example>") == (
        "Northwind Traders <billing@northwind-traders.example>"  # an encoded name still decoded
    )


def test_two_from_lines_are_both_shown_and_neither_is_the_sender() -> None:
    """The parser took the first From line; a mail with two names two senders."""
    shown = _sender("billing@northwind-traders.example", extra="From: ar@evil.example\r\n")
    assert "billing@northwind-traders.example" in shown and "ar@evil.example" in shown
    assert sender_domain(shown) == ""


def test_the_address_in_angle_brackets_is_who_sent_it() -> None:
    """A display name without an address is the sender's own words: the domain is the real one."""
    assert sender_domain(_sender("Northwind Traders Billing <ar@evil.example>")) == "evil.example"
    assert sender_domain(_sender("Northwind Traders <billing@xn--northwind-trders-7ib.example>")) == (
        "xn--northwind-trders-7ib.example"  # a look-alike in punycode is another domain
    )


@pytest.mark.parametrize(
    "header",
    [
        "billing@northwind-traders.example <ar@evil.example>",
        "Northwind Traders <billing@northwind-traders.example> <ar@evil.example>",
        '"Northwind" <billing@northwind-traders.example> (ar@evil.example)',
        "Northwind Traders: billing@northwind-traders.example;",
    ],
)
def test_a_strangers_invoice_under_such_a_header_is_not_entered_as_the_issuers(
    inbox: Path, northwind: Template, header: str
) -> None:
    """A newer "Northwind" invoice (INV-3001, October 1) from such a header: before, the routine
    read it as Northwind's and picked it over INV-2057. Now it is a stranger's: the run goes to the
    agent, the reason naming the unclear sender."""
    (inbox / "Invoice INV-3001 from Northwind Traders.eml").write_bytes(_mail(header, INVOICE_TEXT))
    content = SandboxFiles(inbox).read("Invoice INV-3001 from Northwind Traders.eml")
    assert sender_domains(content) == []
    with pytest.raises(FileStepFailed, match=r"not sent from northwind-traders\.example") as refused:
        find_document(_routine(northwind), {"vendor": "Northwind Traders"}, SandboxFiles(inbox))
    assert "INV-3001" in str(refused.value) and "an unclear sender" in str(refused.value), refused.value
    with pytest.raises(LearnError, match="does not say who sends"):  # nor does it teach a sender
        learned_senders(content, "Northwind Traders")
