"""Routines: a document printing the vendor's words in another order is not the vendor's (no
browser, no model).

What was found (a red team, with failing proofs): ``models.prints_name`` accepted a line holding
each of the vendor's words as a whole word in ANY order, ``models.issuers_named`` then found no
place printing the name in order and returned nothing, and ``Routine.names`` read "names nobody"
as "nothing to tell by" and took the document. So with both issuers' templates learned from files
on disk (no senders to tell them apart), Unit 7 Supplies' invoice headed "Unit 7 Supplies, 4
Harbour Road" was Unit 4 Supplies' document, and a replay for Unit 4 entered Unit 7's newest
invoice (U7-1002, 9,600.00); "Studio B is a design firm" was Studio A's ("a" is a word); "Studio
Green Ltd" was Green Studio's; and, the same hole through the legal form, Northwind Traders Inc's
invoice was Northwind Traders Ltd's (the in-order test looked for "Northwind Traders Ltd", found
none, and so vouched).

The rule now: a document is the vendor's only where a line prints the vendor's name in order,
word after word, each a whole word (``models._places``, the one test behind ``prints_name`` and
``issuers_named``), and the issuer printed at such a place — the longest known name around it,
else the name with the legal form printed after it — is the vendor's template's issuer. The file
search, which matches each word as a substring anywhere on a line, only finds candidates.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_adversarial_routine_names import UNIT4, UNIT7, VALUES_U4, VALUES_U7, _learned
from test_routines import _routine

from taskcrew.routines import models
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import Routine, Template, issuers_named
from taskcrew.tools.files import SandboxFiles


def _invoice(head: str, number: str, printed: str, total: str, sub: str, vat: str) -> str:
    return f"""{head}

Invoice No. {number}
Invoice Date {printed}
Terms Net 30
Subtotal {sub} USD
VAT 20% {vat} USD
TOTAL PAYABLE {total} USD
"""


def _values(number: str, amount: str, date: str, due: str) -> dict[str, str]:
    return {
        "invoice_number": number,
        "amount": amount,
        "currency": "USD",
        "invoice_date": date,
        "due_date": due,
    }


U7_HEAD = f"{UNIT7}, 4 Harbour Road, Portsmouth"  # every word of "Unit 4 Supplies", not in order
U4_HEAD = f"{UNIT4}, 7 Harbour Road, Portsmouth"  # every word of "Unit 7 Supplies", not in order


def _box(tmp_path: Path, docs: dict[str, str]) -> SandboxFiles:
    box = tmp_path / "files"
    box.mkdir()
    for name, text in docs.items():
        (box / name).write_text(text, encoding="utf-8")
    return SandboxFiles(box)


def _names(text: str, vendor: str, issuers: list[str]) -> bool:
    """``Routine.names`` for a routine with templates of ``issuers``, for ``vendor``'s template."""
    templates = [Template.model_construct(issuer=i) for i in issuers]
    routine = Routine.model_construct(templates=templates)
    template = routine.template_for(vendor)
    assert template is not None, vendor
    return routine.names(text, vendor, template)


# ------------------------------------------------------------------------------ the rule


def test_words_in_another_order_name_nobody() -> None:
    text = _invoice(U7_HEAD, "U7-1002", "October 1, 2026", "9,600.00", "8,000.00", "1,600.00")
    assert not models.prints_name(text, UNIT4)
    assert issuers_named(text, UNIT4, [UNIT7, UNIT4]) == set()
    for issuers in ([UNIT7, UNIT4], [UNIT4, UNIT7], [UNIT4]):
        assert not _names(text, UNIT4, issuers), issuers  # before: Unit 7's invoice was Unit 4's
    assert _names(text, UNIT7, [UNIT7, UNIT4])  # it is Unit 7's
    for line, vendor in [
        ("Studio B is a design firm", "Studio A"),
        ("Studio Green Ltd, 2 Mill Lane", "Green Studio"),
        ("Supplies: Unit 4", UNIT4),
        ("Traders Northwind", "Northwind Traders"),
    ]:
        assert not models.prints_name(line, vendor), (line, vendor)
        assert not _names(line, vendor, [vendor]), (line, vendor)
    assert not _names("Studio B is a design firm", "Studio A", ["Studio A", "Studio B"])
    # a vendor whose name shares words with another's: each document is its own issuer's only
    assert not _names("Unit 4 Supplies, 7 Harbour Road", UNIT7, [UNIT7, UNIT4])
    assert not _names("Green Studio Ltd", "Studio Green", ["Studio Green", "Green Studio"])


def test_a_legal_form_is_read_where_it_is_printed() -> None:
    """Before, ``issuers_named`` looked for the vendor's name WITH its legal form; Northwind Traders
    Inc's invoice printed none of "Northwind Traders Ltd", so nothing told and it was Ltd's."""
    ltd, inc = "Northwind Traders Ltd", "Northwind Traders Inc"
    assert not _names("Northwind Traders Inc, 1 Dock Street", ltd, [ltd, inc])
    assert not _names("NORTHWIND TRADERS INCORPORATED", ltd, [ltd, inc])  # like both: neither's
    assert not _names("Northwind Traders, 1 Dock Street", ltd, [ltd, inc])  # which one: not guessed
    assert _names("Northwind Traders Ltd, 1 Dock Street", ltd, [ltd, inc])
    assert _names("NORTHWIND TRADERS LIMITED", ltd, [ltd])  # one issuer: a legal form written out
    assert _names("Northwind Traders, 1 Dock Street", ltd, [ltd])


def test_honest_spellings_still_name_the_vendor() -> None:
    """Controls (they held before too): the vendor's own name, however it is cased, punctuated or
    its legal form written, beside another's name that shares its words."""
    for line, vendor, issuers in [
        ("Invoice from UNIT 4 SUPPLIES LTD.", UNIT4, [UNIT7, UNIT4]),
        ("unit-4-supplies", UNIT4, [UNIT4, UNIT7]),
        ("REMIT TO GLOBEX CORPORATION", "Globex Corp", ["Globex Corp"]),
        ("Bharat Components Pvt. Ltd., Pune", "Bharat Components", ["Bharat Components Pvt. Ltd."]),
        ("Acme S.A. — Invoice", "Acme", ["Acme S.A."]),
        ("Studio A, 2 Mill Lane", "Studio A", ["Studio A", "Studio B"]),
        ("Green Studio Ltd", "Green Studio", ["Studio Green", "Green Studio"]),
        ("Unit 4 Supplies, 7 Harbour Road", UNIT4, [UNIT7, UNIT4]),
    ]:
        assert models.prints_name(line, vendor), (line, vendor)
        assert _names(line, vendor, issuers), (line, vendor, issuers)


# ------------------------------------------------------------------------------ the replays


def test_a_replay_for_unit_4_never_picks_unit_7s_invoice_with_a_4_in_its_address(tmp_path: Path) -> None:
    """The red team's proof: before, U7-1002 (9,600.00) was entered as Unit 4's newest invoice."""
    files = _box(
        tmp_path,
        {
            "u7-1001.txt": _invoice(U7_HEAD, "U7-1001", "September 1, 2026", "120.00", "100.00", "20.00"),
            "u7-1002.txt": _invoice(
                U7_HEAD, "U7-1002", "October 1, 2026", "9,600.00", "8,000.00", "1,600.00"
            ),
            "u4-0555.txt": _invoice(U4_HEAD, "U4-0555", "September 14, 2026", "60.00", "50.00", "10.00"),
        },
    )
    unit7 = _learned(files, "u7-1001.txt", VALUES_U7, UNIT7)
    unit4 = _learned(files, "u4-0555.txt", VALUES_U4, UNIT4)
    assert unit7.senders == unit4.senders == []  # files on disk: nothing but the name tells them apart
    assert {"u7-1001.txt", "u7-1002.txt", "u4-0555.txt"} <= {h.path for h in files.search(UNIT4).hits}
    for templates in ([unit7, unit4], [unit4, unit7]):
        routine = _routine(templates[0], templates=templates)
        found = find_document(routine, {"vendor": UNIT4}, files)
        assert (found.path, found.values["amount"]) == ("u4-0555.txt", "60.00"), (found.path, found.values)
        # and Unit 7's own replay still picks its own newest, not Unit 4's file with a "7" in it
        found = find_document(routine, {"vendor": UNIT7}, files)
        assert (found.path, found.values["invoice_number"]) == ("u7-1002.txt", "U7-1002"), found


def test_a_replay_for_studio_a_never_picks_studio_bs_invoice(tmp_path: Path) -> None:
    files = _box(
        tmp_path,
        {
            "a-100.txt": _invoice(
                "Studio A, 2 Mill Lane", "SA-100", "September 2, 2026", "240.00", "200.00", "40.00"
            ),
            "b-900.txt": _invoice(
                "Studio B is a design firm, 9 Mill Lane",
                "SB-900",
                "October 2, 2026",
                "7,200.00",
                "6,000.00",
                "1,200.00",
            ),
        },
    )
    studio_a = _learned(
        files, "a-100.txt", _values("SA-100", "240.00", "2026-09-02", "2026-10-02"), "Studio A"
    )
    studio_b = studio_a.model_copy(update={"issuer": "Studio B", "learned_from": "b-900.txt"})
    assert "b-900.txt" in {h.path for h in files.search("Studio A").hits}  # "a" is in every line
    for templates in ([studio_a, studio_b], [studio_b, studio_a], [studio_a]):
        found = find_document(_routine(studio_a, templates=templates), {"vendor": "Studio A"}, files)
        assert (found.path, found.values["amount"]) == ("a-100.txt", "240.00"), (templates, found)
    found = find_document(_routine(studio_b, templates=[studio_a, studio_b]), {"vendor": "Studio B"}, files)
    assert found.values["invoice_number"] == "SB-900", found


def test_names_of_the_same_words_in_another_order_are_two_companies(tmp_path: Path) -> None:
    files = _box(
        tmp_path,
        {
            "gs-1.txt": _invoice(
                "Green Studio Ltd", "GS-1", "September 3, 2026", "120.00", "100.00", "20.00"
            ),
            "sg-2.txt": _invoice(
                "Studio Green Ltd", "SG-2", "October 3, 2026", "4,800.00", "4,000.00", "800.00"
            ),
        },
    )
    green = _learned(files, "gs-1.txt", _values("GS-1", "120.00", "2026-09-03", "2026-10-03"), "Green Studio")
    other = green.model_copy(update={"issuer": "Studio Green", "learned_from": "sg-2.txt"})
    for templates in ([green, other], [other, green], [green]):
        found = find_document(_routine(green, templates=templates), {"vendor": "Green Studio"}, files)
        assert found.values["invoice_number"] == "GS-1", (templates, found)
    found = find_document(_routine(other, templates=[green, other]), {"vendor": "Studio Green"}, files)
    assert found.values["invoice_number"] == "SG-2", found


def test_a_replay_for_acme_co_never_picks_acme_ltds_invoice(tmp_path: Path) -> None:
    """Two issuers the routine knows, named alike but for the legal form. The search for "Acme Co"
    finds Acme Ltd's invoice ("1 Cove Road" holds "co"); before, ``issuers_named`` looked for "Acme
    Co" in order, found none, and Acme Ltd's newer invoice was Acme Co's."""
    files = _box(
        tmp_path,
        {
            "co-1.txt": _invoice(
                "Acme Co, 2 Mill Lane", "AC-1", "September 4, 2026", "120.00", "100.00", "20.00"
            ),
            "ltd-2.txt": _invoice(
                "Acme Ltd, 1 Cove Road", "AL-2", "October 4, 2026", "3,600.00", "3,000.00", "600.00"
            ),
        },
    )
    acme_co = _learned(files, "co-1.txt", _values("AC-1", "120.00", "2026-09-04", "2026-10-04"), "Acme Co")
    acme_ltd = acme_co.model_copy(update={"issuer": "Acme Ltd", "learned_from": "ltd-2.txt"})
    assert "ltd-2.txt" in {h.path for h in files.search("Acme Co").hits}
    for templates in ([acme_co, acme_ltd], [acme_ltd, acme_co]):
        routine = _routine(acme_co, templates=templates)
        found = find_document(routine, {"vendor": "Acme Co"}, files)
        assert found.values["invoice_number"] == "AC-1", (templates, found)
        assert find_document(routine, {"vendor": "Acme Ltd"}, files).values["invoice_number"] == "AL-2"


def test_the_vendors_own_invoice_with_its_legal_form_written_out_still_replays(tmp_path: Path) -> None:
    files = _box(
        tmp_path,
        {
            "g-1.txt": _invoice(
                "Globex Corp, 1 Main Street", "GX-1", "September 5, 2026", "120.00", "100.00", "20.00"
            ),
            "g-2.txt": _invoice("GLOBEX CORPORATION", "GX-2", "October 5, 2026", "60.00", "50.00", "10.00"),
        },
    )
    globex = _learned(files, "g-1.txt", _values("GX-1", "120.00", "2026-09-05", "2026-10-05"), "Globex Corp")
    found = find_document(_routine(globex), {"vendor": "Globex Corp"}, files)
    assert found.values["invoice_number"] == "GX-2", found


def test_a_file_printing_the_name_only_out_of_order_is_no_candidate_at_all(tmp_path: Path) -> None:
    """Nor is such a file read at all: with only Unit 7's invoices (printing Unit 4's words out of
    order) there is no Unit 4 invoice to pick, and the replay says so rather than take one."""
    files = _box(
        tmp_path,
        {
            "u7-1002.txt": _invoice(
                U7_HEAD, "U7-1002", "October 1, 2026", "9,600.00", "8,000.00", "1,600.00"
            ),
            "u4-0555.txt": _invoice(U4_HEAD, "U4-0555", "September 14, 2026", "60.00", "50.00", "10.00"),
        },
    )
    unit4 = _learned(files, "u4-0555.txt", VALUES_U4, UNIT4)
    (tmp_path / "files" / "u4-0555.txt").unlink()
    with pytest.raises(FileStepFailed, match="reads no invoice"):
        find_document(_routine(unit4), {"vendor": UNIT4}, SandboxFiles(tmp_path / "files"))
