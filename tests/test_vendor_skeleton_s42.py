# ruff: noqa: F811 — `approver` is the fixture imported from test_vendor_twins_s42
"""Vendor records a person cannot tell apart, and a vendor list of several pages.

A red team paid look-alike records with no flag: "lnitech" (a small L) beside Initech, "GIobex
Corporation" (a capital I) beside Globex, "Northvvind Traders", "Northwınd Traders" (a dotless ı),
and "Northwind Traders Ltd" beside Northwind Traders, which the replay already took for the same
vendor; and a look-alike record on page 2 of the vendor list, which the gate read one page of.

Now one key compares vendor names for the approval and the replay (``models.name_key``: a
confusables skeleton, legal form aside), and the vendor list is read whole, page after page through
the guarded read, or not at all — and the approver is told the payee was not checked."""

from __future__ import annotations

import pytest
from test_vendor_twins_s42 import VENDORS, approver, bill, chosen, flags_of  # noqa: F401  (fixture)

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.record import VENDOR_PAGES, vendor_list
from taskcrew.approvals.rules import load_rules
from taskcrew.eval import kit
from taskcrew.routines.models import name_key
from taskcrew.routines.replay import options_like

ERP = "http://127.0.0.1:8800"


@pytest.mark.parametrize(
    ("real", "impostor"),
    [
        ("Initech", "lnitech"),
        ("Globex Corporation", "GIobex Corporation"),
        ("Globex", "Gl0bex"),
        ("Northwind Traders", "Northvvind Traders"),
        ("Modern Supplies", "Rnodern Supplies"),
        ("Northwind Traders", "Northw\u0131nd Traders"),  # dotless ı: not a hidden character
        ("Northwind Traders", "N\u043erthwind Traders"),  # Cyrillic о
        ("Northwind Traders", "Northwind Traders Ltd"),
        ("Müller Logistik", "Muller Logistik GmbH"),
    ],
)
def test_a_record_drawn_like_the_payees_is_flagged_and_listed_as_shown(
    approver: Authority, real: str, impostor: str
) -> None:
    known = [real, "Initrode", impostor]
    assert name_key(real) == name_key(impostor)
    said = flags_of(approver, bill(chosen("11", impostor), known)).get("lookalike_vendor", "")
    assert said.startswith("of the vendor records the system lists"), said
    assert f"“{real}”; " in said and ("⟨" in said or f"“{impostor}”" in said), said  # as shown: visible()
    # the replay and the scripted models read the options by the same key: no guess between them
    assert options_like(known, real) == [real, impostor]
    assert kit.choose_option(known, real) is None


@pytest.mark.parametrize(
    ("payee", "known"),
    [
        ("Initech", ["Initech", "Initech Europe GmbH"]),
        ("Unit 4 Supplies", ["Unit 4 Supplies", "Unit 7 Supplies"]),
        ("Northwind Traders", ["Northwind Traders", "Northwind Traders Logistics", "Northwind"]),
        ("Studio A", ["Studio A", "Studio B"]),
    ],
)
def test_distinct_names_stay_distinct(approver: Authority, payee: str, known: list[str]) -> None:
    assert "lookalike_vendor" not in flags_of(approver, bill(chosen("1", payee), known))
    assert kit.choose_option(known, payee) == payee


def test_a_lookalike_alone_is_a_new_vendor_not_the_listed_one(approver: Authority) -> None:
    said = flags_of(approver, bill(chosen("11", "lnitech"), ["Initech", "Globex"]))
    assert said.get("new_vendor", "").startswith("“lnitech” is not among the 2 vendors"), said


def _page(rows: list[str], more: str | None, words: str = "Next page »", rel: bool = False) -> str:
    body = "".join(f"<tr><td>{n}</td></tr>" for n in rows)
    nxt = f'<a href="{more}"{" rel=next" if rel else ""}>{words}</a>' if more else ""
    prev = '<a href="/vendors">« Previous</a> <a href="/vendors?page=9">Last »»</a>'
    return f"<table><tr><th>Vendor</th></tr>{body}</table>{prev}{nxt}"


class Reads:
    """The pages served, and every URL the gate asked for."""

    def __init__(self, pages: dict[str, str]) -> None:
        self.pages = pages
        self.asked: list[str] = []

    def __call__(self, url: str) -> str | None:
        self.asked.append(url)
        return self.pages.get(url)


@pytest.mark.parametrize(
    ("words", "rel"), [("Next page »", False), ("Weiter", False), ("»", False), ("2", True)]
)
def test_a_vendor_list_is_read_page_after_page(approver: Authority, words: str, rel: bool) -> None:
    reads = Reads(
        {
            VENDORS: _page(["Northwind Traders", "Initech"], "/vendors?page=2", words, rel),
            f"{VENDORS}?page=2": _page(["Globex"], "?page=3", words, rel),
            f"{VENDORS}?page=3": _page(["NORTHWIND TRADERS"], "#", words, rel),  # a disabled "Next"
        }
    )
    known, page = vendor_list(f"{ERP}/bills/new", load_rules(), reads)[:2]
    assert known == ["Northwind Traders", "Initech", "Globex", "NORTHWIND TRADERS"] and page == VENDORS
    assert reads.asked == [VENDORS, f"{VENDORS}?page=2", f"{VENDORS}?page=3"]  # never "Last" or back
    assert "lookalike_vendor" in flags_of(approver, bill(chosen("11", "NORTHWIND TRADERS"), known))


@pytest.mark.parametrize(
    "served",
    [
        {f"{VENDORS}?page=2": None},  # page 2 cannot be read (refused by the policy, failed, a login)
        {f"{VENDORS}?page=2": _page(["Globex"], "http://127.0.0.2:8800/vendors?page=3")},  # elsewhere
        {f"{VENDORS}?page=2": _page(["Globex"], "/vendors")},  # back to a page read before
        {f"{VENDORS}?page=2": _page(["Globex"], "?page=3") + '<a href="?page=4">Next</a>'},  # disagree
    ],
)
def test_a_vendor_list_that_cannot_be_read_whole_is_not_read(
    approver: Authority, served: dict[str, str | None]
) -> None:
    pages = {VENDORS: _page(["Northwind Traders", "Initech"], "/vendors?page=2")}
    pages.update({url: html for url, html in served.items() if html is not None})
    known, page = vendor_list(f"{ERP}/bills/new", load_rules(), Reads(pages))[:2]
    assert known is None and page == VENDORS
    flags = flags_of(approver, bill(chosen("1", "Northwind Traders"), known))
    said = flags.get("new_vendor", "")
    assert said.startswith("whether “Northwind Traders” is a vendor the system lists was not checked"), flags
    assert VENDORS in said and "could not be read whole" in said


def test_a_vendor_list_longer_than_the_limit_is_not_read() -> None:
    pages = {
        f"{VENDORS}?page={n}" if n else VENDORS: _page([f"Vendor {n}"], f"/vendors?page={n + 1}")
        for n in range(VENDOR_PAGES + 1)
    }
    reads = Reads(pages)
    assert vendor_list(f"{ERP}/bills/new", load_rules(), reads)[:2] == (None, VENDORS)
    assert len(reads.asked) == VENDOR_PAGES
    pages[f"{VENDORS}?page={VENDOR_PAGES - 1}"] = _page(["Last one"], None)
    known = vendor_list(f"{ERP}/bills/new", load_rules(), Reads(pages)).names
    assert known is not None and len(known) == VENDOR_PAGES and known[-1] == "Last one"
