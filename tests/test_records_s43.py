"""Vendor records by key, legal forms, and a line item's text (red team, round 5).

1. An ordinary "#" column (1, 2, 3, the rows sorted by name) was read as the records' keys: a page
   relabelling Globex's option (value 3) "Northwind Traders" was confirmed by row 3, Northwind — the
   payee shown Northwind, no flag, the ERP booked Globex. With the ERP's "/bills?vendor=<id>" links
   too, "3" got two names, was dropped, and the option was read by its label again. Now a record's
   key is only what a form sends for it (a vendor select's option values, the id in the record's own
   link); a display number column's values, and a key with two names, are uncertain ("": unclear),
   and an option sending a value the list does not key is unclear too — shown as sent, never by its
   label. With no vendor list read, or one with no keys at all, the label is read as before.
2. A record "Northwind Traders Ltd Ltd" (or "… Limited Ltd", "… Co Ltd") beside the real "Northwind
   Traders Ltd" was "another entity" and so no look-alike: now two names are other entities only
   when each has exactly one legal form and the two differ.
3. A line item's text in a field named "item", "product", "article", "service" ("Kabel 3×1,5 mm²")
   was flagged hidden_characters: those names are free text now; "item_number", "sku",
   "article_no", "product_code" stay identifiers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_vendor_twins_s42 import bill, chosen, flags_of, park

from taskcrew.approvals import record
from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.rules import assess, load_rules
from taskcrew.jobs import Jobs
from taskcrew.routines.models import other_entities
from taskcrew.tools.human import ApprovalRequest, FieldValue

NAMES = ["Globex Corp", "Initech", "Northwind Traders"]
ERP = "http://127.0.0.1:8800"
# sorted by name, a "#" row-number column; record ids Northwind Traders 1, Globex Corp 3, Initech 4
NUMBERED = """<html><body><h1>Vendors</h1><table>
<tr><th>#</th><th>Vendor</th><th></th></tr>
<tr><td>1</td><td>Globex Corp</td><td><a href="/bills?vendor=3">Bills</a></td></tr>
<tr><td>2</td><td>Initech</td><td><a href="/bills?vendor=4">Bills</a></td></tr>
<tr><td>3</td><td>Northwind Traders</td><td><a href="/bills?vendor=1">Bills</a></td></tr>
</table></body></html>"""
UNLINKED = NUMBERED.replace('<a href="/bills?vendor=3">Bills</a>', "").replace(
    '<a href="/bills?vendor=4">Bills</a>', ""
)
UNLINKED = UNLINKED.replace('<a href="/bills?vendor=1">Bills</a>', "")


@pytest.fixture
def approver(tmp_path: Path) -> Iterator[Authority]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield Authority(jobs, load_rules(), home=tmp_path / "approvals")
    jobs.close()


def records_of(page: str) -> dict[str, str]:
    return record.vendor_records(record._vendor_lists(page, f"{ERP}/vendors"))


def keyed(vendor: FieldValue, records: dict[str, str] | None) -> ApprovalRequest:
    return bill(vendor, NAMES).model_copy(update={"vendor_records": records})


# ---- 1: a record's key is what a form sends for it -----------------------------------------------
def test_a_row_number_column_is_never_a_records_key() -> None:
    assert records_of(NUMBERED) == {"3": "Globex Corp", "4": "Initech", "1": "Northwind Traders", "2": ""}
    assert records_of(UNLINKED) == {"1": "", "2": "", "3": ""}


@pytest.mark.parametrize("page", [NUMBERED, UNLINKED], ids=["with-record-links", "row-number-only"])
def test_a_relabelled_option_beside_a_row_number_column_is_not_read_by_its_label(
    approver: Authority, page: str
) -> None:
    view = approver.view(
        approver.jobs.approval(
            park(approver.jobs, keyed(chosen("3", "Northwind Traders"), records_of(page))).id
        )
    )
    flags = {f.rule: str(f.message) for f in view.assessment.flags}
    assert view.payee.names != ["Northwind Traders"] and "unclear_payee" in flags, (view.payee.names, flags)
    assert bulk_refusal(view) is not None


def test_the_record_links_name_the_option_honestly_chosen(approver: Authority) -> None:
    view = approver.view(
        approver.jobs.approval(
            park(approver.jobs, keyed(chosen("1", "Northwind Traders"), records_of(NUMBERED))).id
        )
    )
    assert view.payee.names == ["Northwind Traders"] and not view.assessment.flags, view.assessment.flags


@pytest.mark.parametrize(
    "records",
    [{"3": "", "1": "Northwind Traders"}, {"7": "Hooli", "1": "Northwind Traders"}],
    ids=["key-with-two-names", "not-keyed"],
)
def test_an_option_the_list_cannot_name_is_unclear(approver: Authority, records: dict[str, str]) -> None:
    flags = flags_of(approver, keyed(chosen("3", "Northwind Traders"), records))
    assert "unclear_payee" in flags and "sends 3" in flags["unclear_payee"], flags


@pytest.mark.parametrize("records", [None, {}])
def test_without_a_keyed_vendor_list_an_option_is_read_by_its_label(
    approver: Authority, records: dict[str, str] | None
) -> None:
    view = approver.view(
        approver.jobs.approval(park(approver.jobs, keyed(chosen("3", "Initech"), records)).id)
    )
    assert view.payee.names == ["Initech"] and not view.assessment.flags, view.assessment.flags


def test_an_option_sending_the_name_it_shows_is_read_by_it(approver: Authority) -> None:
    vendor = FieldValue(name="vendor", value="Initech", label="Initech")
    view = approver.view(approver.jobs.approval(park(approver.jobs, keyed(vendor, records_of(NUMBERED))).id))
    assert view.payee.names == ["Initech"] and not view.assessment.flags, view.assessment.flags


# ---- 2: legal forms ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "impostor", ["Northwind Traders Ltd Ltd", "Northwind Traders Limited Ltd", "Northwind Traders Co Ltd"]
)
def test_a_repeated_or_stacked_legal_form_is_still_a_lookalike(approver: Authority, impostor: str) -> None:
    assert not other_entities(impostor, "Northwind Traders Ltd")
    known = ["Northwind Traders Ltd", impostor, "Globex Corp"]
    assert "lookalike_vendor" in flags_of(approver, bill(FieldValue(name="vendor", value=impostor), known))


def test_one_legal_form_each_that_differ_are_other_entities() -> None:
    assert other_entities("Siemens AG", "Siemens plc")
    assert other_entities("Globex Corporation", "Globex Inc")
    assert not other_entities("Globex Corporation", "Globex Corp")
    assert not other_entities("Bharat Components Pvt Ltd", "Bharat Components Ltd")


# ---- 3: a line item's text -----------------------------------------------------------------------
def hidden(name: str, value: str) -> bool:
    sent = [("vendor", "Northwind Traders"), (name, value), ("amount", "100.00"), ("currency", "EUR")]
    return any(f.rule == "hidden_characters" for f in assess(sent, f"{ERP}/bills/new", load_rules()).flags)


@pytest.mark.parametrize(
    "name",
    [
        "item",
        "product",
        "line_item",
        "article",
        "service",
        "lines[0].item",
        "productName",
        "artikel",
        "leistung",
    ],
)
def test_units_in_a_line_items_text_are_honest(name: str) -> None:
    assert not hidden(name, "Kabel 3×1,5 mm², 250 m")


@pytest.mark.parametrize(
    "name", ["item_number", "sku", "article_no", "product_code", "itemId", "service_date"]
)
def test_an_items_identifier_stays_strict(name: str) -> None:
    assert hidden(name, "KAB-3×1,5")
