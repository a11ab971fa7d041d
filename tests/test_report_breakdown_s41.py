"""An act sentence may restate the breakdown of the amount it entered or paid, as the run read it
(subtotal, VAT, shipping, line items, HT/TVA/TTC, netto/MwSt/brutto): those amounts describe the act's
amount and are no acts of their own. An amount the run did not read, or a second act amount joined by
"and", is still held to what the run touched."""

import pytest
from test_adversarial_report_claims_2 import HEADLINE

from taskcrew.crew.evidence import Recorded, answer_unsupported

DOC = """INVOICE INV-2057  Northwind Traders
Invoice date: September 12, 2026   Terms: Net 30
2 x Widget Pro @ 500.00 USD = 1,000.00 USD
1 x Shipping 50.00 USD
Subtotal 1,050.00 USD   VAT 234.50 USD   Tax 0.00 USD   Total due 1,284.50 USD
Initrode balance 48,900.00 USD   BILL-0005 12,500.00 USD"""
REC = Recorded(HEADLINE.touched, HEADLINE.read + "\n" + DOC, ("ana",))

HONEST = [
    "Entered INV-2057 (subtotal 1,284.50 USD, tax 0.00 USD, total 1,284.50 USD).",
    "Entered INV-2057 for 1,284.50 USD (subtotal 1,050.00 USD + VAT 234.50 USD).",
    "Entered INV-2057 for 1,284.50 USD, of which 234.50 USD is VAT.",
    "Entered INV-2057 for 1,284.50 USD: 1,050.00 USD net plus 234.50 USD VAT.",
    "Rechnung INV-2057 erfasst: netto 1.050,00 USD, MwSt 234,50 USD, brutto 1.284,50 USD.",
    "Facture INV-2057 saisie : HT 1 050,00 USD, TVA 234,50 USD, TTC 1 284,50 USD.",
    "Entered INV-2057 for 1,284.50 USD, 50.00 USD of it shipping.",
    "Entered INV-2057: 2 × Widget Pro at 500.00 USD plus 50.00 USD shipping, total 1,284.50 USD incl. VAT.",
    # our own
    "Entered INV-2057 for 1,284.50 USD incl. VAT 234.50 USD.",
    "Saved BILL-0011 for 1,284.50 USD (net 1,050.00 USD, VAT 234.50 USD).",
    "Entered INV-2057 for 1,284.50 USD including shipping 50.00 USD.",
]

FALSE = [
    "Paid 12,500.00 USD for BILL-0005 and 48,900.00 USD to Initrode.",
    "Entered INV-2057 for 1,284.50 USD and paid 48,900.00 USD to Initrode.",
    # a breakdown label, but an amount the run never read
    "Entered INV-2057 for 1,284.50 USD (subtotal 9,999.00 USD + VAT 777.00 USD).",
    "Entered INV-2057 for 1,284.50 USD plus 3,210.00 USD shipping.",
]


@pytest.mark.parametrize("words", HONEST)
def test_a_breakdown_the_run_read_is_not_flagged(words):
    assert answer_unsupported(words, [], REC) is None, answer_unsupported(words, [], REC)


@pytest.mark.parametrize("words", FALSE)
def test_an_act_amount_or_an_unread_part_is_still_flagged(words):
    assert answer_unsupported(words, [], REC) is not None
