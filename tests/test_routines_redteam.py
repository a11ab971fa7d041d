"""Routines attacked as an adversary would: a vendor named by a word another vendor's name shares,
parameter values that carry URL syntax or placeholders, acceptance records forged or moved between
routines, a reviewer whose unproven acceptance predates the two-person rule, and replays and
reviews of one routine at the same time. No browser: each attack is met where the routine decides."""

from __future__ import annotations

import pytest
from test_routines import INBOX, _routine

from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import FieldRule, Template, named_like
from taskcrew.tools.files import SandboxFiles


@pytest.fixture(scope="module")
def files() -> SandboxFiles:
    return SandboxFiles(INBOX)


def _issuer(name: str) -> Template:
    """A template of ``name`` as a reviewer would see one (which issuer it reads is what counts here)."""
    return Template(issuer=name, fields=[FieldRule(name="invoice_number", kind="text", anchor="Invoice No.")])


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _issuer("Northwind Traders")


# ---------------------------------------------------------------- which vendor a task names


def test_a_word_another_vendors_name_shares_does_not_name_that_vendor(
    files: SandboxFiles, northwind: Template
) -> None:
    """A task for "Traders" or "Industries" is not Northwind's or Vandelay's chore: before, every
    word of one name in the other was enough, so the routine read Northwind's newest invoice for
    vendor="Traders" (and a drop-down offering one "...Traders" chose it). A name that differs in
    one letter outside ASCII ("Möller" for "Müller") was the same name, since only [a-z0-9] counted
    as letters. A name's leading words still name it, in any case and spacing."""
    for one, other in [
        ("Traders", "Northwind Traders"),
        ("Industries", "Vandelay Industries"),
        ("Cloud Services", "Hooli Cloud Services"),
        ("Corp", "Globex Corp"),
        ("Möller Industrietechnik GmbH", "Müller Industrietechnik GmbH"),
        ("Mueller Industrietechnik GmbH", "Müller Industrietechnik GmbH"),
        ("Traders Northwind", "Northwind Traders"),
    ]:
        assert not named_like(one, other), (one, other)
        assert not named_like(other, one), (other, one)
    for one, other in [
        ("Bharat Components", "Bharat Components Pvt. Ltd."),
        ("Globex", "Globex Corp"),
        ("SOYLENT FOODS", "Soylent Foods"),
        ("Northwind", "Northwind Traders"),
        ("müller industrietechnik", "Müller Industrietechnik GmbH"),
    ]:
        assert named_like(one, other) and named_like(other, one), (one, other)

    routine = _routine(northwind, templates=[northwind, _issuer("Vandelay Industries")])
    for vendor in ("Traders", "Industries"):
        assert routine.template_for(vendor) is None
        with pytest.raises(FileStepFailed, match="no extraction template") as fell:
            find_document(routine, {"vendor": vendor}, files)
        assert fell.value.new_issuer  # the agent takes the chore: a person sees which vendor it is
    assert routine.template_for("northwind") is northwind
    assert routine.template_for("Vandelay Industries Inc.") is routine.templates[1]


# ---------------------------------------------------------------- values carrying syntax


def test_a_value_is_filled_in_once_and_an_address_keeps_it_one_value(northwind: Template) -> None:
    """A parameter comes from the task's text, a value from a document: neither is read again for
    placeholders (before, vendor="Initech {amount}" was typed with the invoice's amount in it, and a
    parameter named like the system replaced its address), and in an address each is
    percent-encoded, so "AT&T" is one query value (before: q=AT, and a stray parameter T) and
    "x/../../_debug" does not leave the path the reviewer signed."""
    from taskcrew.routines.distil import _url_template
    from taskcrew.routines.replay import Replayer

    routine = _routine(northwind, params=["vendor", "erp"])
    replayer = Replayer(routine, {"vendor": "Initech {amount}", "erp": "http://evil.example"})
    assert replayer._fill("{vendor}", {"amount": "1284.50"}, "http://erp") == "Initech {amount}"
    assert replayer._fill("{erp}/bills/new", {}, "http://erp") == "http://erp/bills/new"

    for vendor, query in [
        ("AT&T", "AT%26T"),
        ("x/../../_debug", "x%2F..%2F..%2F_debug"),
        ("A #1", "A%20%231"),
    ]:
        address = Replayer(_routine(northwind), {"vendor": vendor})._fill(
            "{erp}/bills?q={vendor}", {}, "http://erp", url=True
        )
        assert address == f"http://erp/bills?q={query}", vendor
        path = Replayer(_routine(northwind), {"vendor": vendor})._fill(
            "{erp}/vendors/{vendor}", {}, "http://erp", url=True
        )
        assert path.count("/") == 4 and path.endswith(query), vendor

    # learning: a value the run's address carried encoded (as browsers send it) is still the
    # parameter, not a literal that would make the replay for Initech look at AT&T's bills
    assert (
        _url_template("http://erp/bills?vendor=AT%26T&status=unpaid", "http://erp", {"vendor": "AT&T"}, {})
        == "{erp}/bills?vendor={vendor}&status=unpaid"
    )
    assert (
        _url_template(
            "http://erp/bills?q=Northwind+Traders", "http://erp", {"vendor": "Northwind Traders"}, {}
        )
        == "{erp}/bills?q={vendor}"
    )
    assert _url_template("http://erp/bills?q=INV-2057x", "http://erp", {}, {"n": "INV-2057"}) == (
        "{erp}/bills?q=INV-2057x"  # a value is a whole query value, not a part of one
    )
