# ruff: noqa: F811 — `approver` is the fixture imported from test_vendor_twins_s42
"""Honest vendors the gate called new or look-alike (red team, honest work, round 4).

1. A vendor list headed in another language ("Lieferant", "Kreditor", "Fournisseur", "Proveedor",
   "Leverancier", "取引先") or just "Name" was read as 0 vendors: every bill said "“Müller & Söhne
   GmbH” is not among the 0 vendors the system lists", and approvers learn to ignore the flag that
   guards against fake vendors. Now the heading words are one list by language
   (``record.VENDOR_WORDS``), a lone "Name" column is the vendors' on a page that says it lists
   vendors, and a page of the list showing no vendor column or select is a list not read — the
   payee "was not checked" — never a list of no vendor.
2. A listed name stored decomposed ("Nestle" and a combining acute) or in fullwidth letters
   ("ＡＢＣ株式会社") was not the payee's "Nestlé" or "ABC株式会社": ``rules.same_name`` now folds
   NFKC, as ``models.name_key`` does. A Cyrillic look-alike is still another name, still flagged.
3. "Siemens AG" beside "Siemens plc" was flagged "2 are called “Siemens AG”" on every bill: two
   records whose plainly written legal forms alone tell them apart are two companies
   (``models.other_entities``). The exact legal form decides the record; a name with no legal form
   or one drawn alike ("Northwind Traders" beside "Northwind Traders Ltd", "Siemens АG") is flagged
   as before.
"""

from __future__ import annotations

import unicodedata

import pytest
from test_vendor_twins_s42 import ERP, VENDORS, approver, bill, chosen, flags_of, park  # noqa: F401  (fixture)

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.record import vendor_list, vendor_names
from taskcrew.approvals.rules import load_rules

BILL = f"{ERP}/bills/new"
LISTED = ["Müller & Söhne GmbH", "Initech"]


def _list_page(heading: str, title: str = "Stammdaten", more: str = "") -> str:
    return (
        f"<html><head><title>{title}</title></head><body><table><tr><th>Nr.</th><th>{heading}</th>"
        "<th>Ort</th></tr><tr><td>70001</td><td>Müller &amp; Söhne GmbH</td><td>Köln</td></tr>"
        f"<tr><td>70002</td><td>Initech</td><td>Austin</td></tr></table>{more}</body></html>"
    )


def _known(pages: dict[str, str]) -> tuple[list[str] | None, str | None]:
    names, page, _ = vendor_list(BILL, load_rules(), pages.get)
    return names, page


# ---- 1: the vendor list's headings -----------------------------------------------------------------
@pytest.mark.parametrize(
    "heading",
    [
        *("Lieferant", "Kreditor", "Lieferantenname", "Name des Lieferanten", "Fournisseur"),
        *("Nom du fournisseur", "Proveedor", "Nombre del proveedor", "Leverancier", "Fornitore"),
        *("Leverantör", "Leverandørnavn", "Toimittajan nimi", "取引先", "取引先名", "仕入先"),
        *("Supplier name:", "VENDOR ▲", "Name", "Nom", "Nombre"),
    ],
)
def test_a_vendor_list_headed_in_any_language_is_read(approver: Authority, heading: str) -> None:
    known, page = _known({VENDORS: _list_page(heading)})
    assert known == LISTED and page == VENDORS, known
    assert "new_vendor" not in flags_of(approver, bill(chosen("7", "Müller & Söhne GmbH"), known))
    said = flags_of(approver, bill(chosen("9", "Hooli"), known)).get("new_vendor", "")
    assert said.startswith("“Hooli” is not among the 2 vendors the system lists"), said


@pytest.mark.parametrize(
    "served",
    [
        {VENDORS: _list_page("Bezeichnung")},  # a heading that names no vendor column
        {VENDORS: "<html><body><h1>Lieferanten</h1><p>Keine Berechtigung</p></body></html>"},
        {
            VENDORS: _list_page("Vendor", more='<a href="/vendors?page=2">Next</a>'),
            f"{VENDORS}?page=2": "<p>…</p>",
        },
        {VENDORS: _list_page("Vendor #")},  # a column of numbers, not of names
    ],
)
def test_a_page_of_the_list_showing_no_vendor_column_is_not_read(
    approver: Authority, served: dict[str, str]
) -> None:
    known, page = _known(served)
    assert known is None and page == VENDORS
    said = flags_of(approver, bill(chosen("7", "Müller & Söhne GmbH"), known)).get("new_vendor", "")
    assert said.startswith("whether “Müller & Söhne GmbH” is a vendor the system lists was not checked"), said
    assert "among the 0 vendors" not in said


def test_a_lone_name_column_is_the_vendors_only_on_a_page_that_says_it_lists_them() -> None:
    erp = "http://erp.example"
    # the address or the title says vendors: its names are read
    assert vendor_names(_list_page("Name"), f"{erp}/kreditoren") == LISTED
    assert vendor_names(_list_page("Name", title="Lieferanten"), f"{erp}/md?view=3") == LISTED
    assert vendor_names(_list_page("Nom", title="Liste des fournisseurs"), f"{erp}/md") == LISTED
    # nothing says whose names they are: not read
    assert vendor_names(_list_page("Name"), f"{erp}/md?view=3") is None
    # two columns of names: which is the vendors' is not guessed
    two = _list_page("Name").replace("<th>Ort</th>", "<th>Nom</th>")
    assert vendor_names(two, f"{erp}/vendors") is None
    # a page with a vendor column: a table of contacts beside it is no vendor list
    contacts = "<table><tr><th>Name</th></tr><tr><td>Hans Meier</td></tr></table>"
    assert vendor_names(_list_page("Lieferant") + contacts, f"{erp}/vendors") == LISTED


def test_a_vendor_list_with_no_rows_is_a_list_of_no_vendor() -> None:
    empty = "<table><tr><th>Lieferant</th></tr></table>"
    assert _known({VENDORS: empty}) == ([], VENDORS)  # read: the system lists none yet


def test_a_vendor_select_named_in_another_language_is_read() -> None:
    select = (
        '<select name="lieferant_id"><option value="70001">Müller &amp; Söhne GmbH</option>'
        '<option value="70002">Initech</option></select>'
    )
    assert _known({VENDORS: select}) == (LISTED, VENDORS)


# ---- 2: names compared after NFKC ------------------------------------------------------------------
NAMES = ["Nestlé S.A.", "Müller & Söhne GmbH", "Škoda Auto a.s.", "ＡＢＣ株式会社"]


@pytest.mark.parametrize("payee", ["Nestlé S.A.", "Müller & Söhne GmbH", "Škoda Auto a.s.", "ABC株式会社"])
def test_a_listed_name_stored_decomposed_or_fullwidth_is_the_payees(approver: Authority, payee: str) -> None:
    page = "<table><tr><th>Vendor</th></tr>" + "".join(
        f"<tr><td>{unicodedata.normalize('NFD', n)}</td></tr>" for n in NAMES
    )
    known = vendor_names(page + "</table>")
    assert known is not None and len(known) == len(NAMES)
    assert flags_of(approver, bill(chosen("3", payee), known)) == {}


def test_a_cyrillic_lookalike_is_still_another_name(approver: Authority) -> None:
    known = [unicodedata.normalize("NFD", n) for n in NAMES]
    impostor = "N\u0435stlé S.A."  # a Cyrillic е
    flags = flags_of(approver, bill(chosen("11", impostor), known))
    assert flags.get("new_vendor", "").startswith("“N⟨Cyrillic е U+0435⟩stlé S.A.” is not among"), flags
    assert "hidden_characters" in flags, flags
    # listed beside the real one, it is a look-alike record of it, whichever the bill picks
    for picked in ("Nestlé S.A.", impostor):
        flags = flags_of(approver, bill(chosen("11", picked), [*known, impostor]))
        assert "2 are called" in flags.get("lookalike_vendor", ""), flags


# ---- 3: two companies of one group ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("payee", "listed"),
    [
        ("Siemens AG", ["Siemens AG", "Siemens plc", "Initech"]),
        ("Siemens plc", ["Siemens AG", "Siemens plc", "Initech"]),
        ("Robert Bosch GmbH", ["Robert Bosch GmbH", "Robert Bosch Ltd", "Initech"]),
        ("ROBERT BOSCH LTD", ["Robert Bosch GmbH", "Robert Bosch Ltd.", "Initech"]),
        ("Siemens AG", ["Siemens A.G.", "Siemens plc"]),  # one form, punctuated
    ],
)
def test_two_legal_entities_of_one_group_are_two_vendors(
    approver: Authority, payee: str, listed: list[str]
) -> None:
    assert flags_of(approver, bill(chosen("3", payee), listed)) == {}


@pytest.mark.parametrize(
    ("payee", "listed", "alike"),
    [
        ("Siemens", ["Siemens AG", "Siemens plc"], 2),  # no legal form: which company is not said
        ("Siemens AG", ["Siemens AG", "Siemens plc", "Siemens"], 2),  # one listed with none
        ("Siemens AG", ["Siemens AG", "Siemens plc", "Siemens \u0410G"], 2),  # a Cyrillic А in "АG"
        ("Siemens AG", ["Siemens AG", "S\u0456emens plc"], 2),  # a Cyrillic і in the name
        ("Globex Corp", ["Globex Corp", "Globex Corporation"], 2),  # one legal form, written out
        ("Northwind Traders", ["Northwind Traders", "Northwind Traders Ltd"], 2),
        ("Müller GmbH", ["Müller GmbH", "Muller AG"], 2),  # names differing in a letter too
    ],
)
def test_names_a_legal_form_does_not_tell_apart_are_still_flagged(
    approver: Authority, payee: str, listed: list[str], alike: int
) -> None:
    said = flags_of(approver, bill(chosen("3", payee), listed)).get("lookalike_vendor", "")
    assert f"{alike} are called" in said, said


def test_another_legal_form_of_a_group_is_a_new_vendor(approver: Authority) -> None:
    flags = flags_of(approver, bill(chosen("3", "Siemens GmbH"), ["Siemens AG", "Siemens plc"]))
    assert set(flags) == {"new_vendor"} and flags["new_vendor"].startswith("“Siemens GmbH” is not among"), (
        flags
    )


def test_an_option_relabelled_as_its_sister_company_is_flagged(approver: Authority) -> None:
    records = {"1": "Siemens AG", "2": "Siemens plc"}
    request = bill(chosen("2", "Siemens AG"), list(records.values()))
    parked = park(approver.jobs, request.model_copy(update={"vendor_records": records}))
    view = approver.view(approver.jobs.approval(parked.id))
    assert view.payee.names == ["Siemens plc"]  # the record the option sends, by its listed name
    said = {f.rule: str(f.message) for f in view.assessment.flags}.get("unclear_payee", "")
    assert "“Siemens plc”" in said and "showed that option as “Siemens AG”" in said, said
