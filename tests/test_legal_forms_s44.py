"""A legal form of several words is one form (red team, honest work, round 6).

"Schmidt GmbH & Co. KG" beside "Schmidt GmbH", or "Müller KG" beside "Müller GmbH & Co. KG", was flagged
as a look-alike record on every bill ("2 are called 'Schmidt GmbH & Co. KG'" when one is): the names were
read with three legal forms ("gmbh", "co", "kg"), and two names are other companies only with one form
each (``models.other_entities``). Now a form of several words is one (``models.MULTI_WORD_FORMS``: "GmbH &
Co. KG", "Sp. z o.o.", "S.à r.l.", "Pvt. Ltd.", "Co., Ltd."), so two names told apart by their legal
forms alone are two companies, as "Siemens AG" and "Siemens plc" are. A form repeated ("Ltd Ltd"), a
limited company qualified ("… Pvt Ltd", "… Co Ltd" beside "… Ltd") and two spellings of one form stay
named alike: a person checks which record is meant.
"""

from __future__ import annotations

import pytest

from taskcrew.approvals.rules import Payee, lookalike_vendor
from taskcrew.routines.models import name_key, named_like, other_entities


@pytest.mark.parametrize(
    ("payee", "listed"),
    [
        ("Schmidt GmbH & Co. KG", ["Schmidt GmbH", "Schmidt GmbH & Co. KG"]),
        ("Schmidt GmbH", ["Schmidt GmbH", "Schmidt GmbH & Co. KG"]),
        ("Müller KG", ["Müller KG", "Müller GmbH & Co. KG"]),
        ("Müller GmbH & Co. KG", ["Müller KG", "Müller GmbH & Co. KG", "Müller AG & Co. KG"]),
        ("Polbud Sp. z o.o.", ["Polbud Sp. z o.o.", "Polbud S.A."]),
        ("Lux Trading S.à r.l.", ["Lux Trading S.à r.l.", "Lux Trading S.A."]),
        ("Foxconn Co., Ltd.", ["Foxconn Co., Ltd.", "Foxconn Inc."]),
    ],
)
def test_names_told_apart_by_a_form_of_several_words_are_two_companies(payee: str, listed: list[str]) -> None:
    assert lookalike_vendor(Payee(fields=[("vendor_id", payee)]), listed, None) is None


@pytest.mark.parametrize(
    ("payee", "listed"),
    [
        (
            "Schmidt GmbH & Co. KG",
            ["Schmidt GmbH & Co. KG", "Schmidt GmbH & Co KG"],
        ),  # one form, two spellings
        ("Schmidt GmbH & Co. KG", ["Schmidt GmbH & Co. KG", "Schmidt GmbH & Co. KG KG"]),  # a form stacked
        ("Schmidt GmbH & Co. KG", ["Schmidt GmbH & Co. KG", "Schmidt GmbH & Cо. KG"]),  # a Cyrillic "о"
        ("Bharat Components Pvt. Ltd.", ["Bharat Components Pvt. Ltd.", "Bharat Components Ltd"]),
        ("Northwind Traders Ltd", ["Northwind Traders Ltd", "Northwind Traders Co., Ltd."]),
    ],
)
def test_one_form_spelled_otherwise_or_stacked_is_still_a_lookalike(payee: str, listed: list[str]) -> None:
    said = lookalike_vendor(Payee(fields=[("vendor_id", payee)]), listed, None)
    assert said is not None and "2 are called" in said, said


def test_a_form_of_several_words_is_one_form_of_the_name() -> None:
    assert other_entities("Schmidt GmbH & Co. KG", "Schmidt GmbH")
    assert other_entities("Müller KG", "Müller GmbH & Co. KG")
    assert other_entities("Polbud Sp. z o.o.", "Polbud S.A.")
    assert not other_entities("Schmidt GmbH & Co. KG", "Schmidt GmbH & Co KG")
    assert not other_entities("Lux S.à r.l.", "Lux SARL")  # the Luxembourg spelling of a SARL
    # the name is the same, give or take the form: a template of "Polbud" reads Polbud Sp. z o.o.'s invoices
    assert named_like("Polbud", "Polbud Sp. z o.o.") and named_like("Lux", "Lux S.à r.l.")
    assert name_key("Schmidt GmbH & Co. KG") == name_key("Schmidt")
    assert not named_like("Schmidt Logistik GmbH & Co. KG", "Schmidt GmbH & Co. KG")  # a word more
