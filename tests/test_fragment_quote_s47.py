"""A step's quote is checked in code as whole words of the file (``citations.appears_in``), never as
a piece of a word: "84.50 USD" is not in a file that prints "1,284.50 USD", nor "INV-205" in one
that prints "INV-2057" — a fragment of a printed figure would otherwise pass the check that evidence
quoted by a step is in the real document, and the approval screen would name the line it was cut
from (``provenance.quoted_lines`` reads a quote as the check does). The real sandbox e-mail."""

from __future__ import annotations

import pytest

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.citations import check_citations
from taskcrew.crew.models import Citation
from taskcrew.crew.provenance import quoted_lines
from taskcrew.tools.files import SandboxFiles

NAME = "Invoice from Northwind Traders.eml"


@pytest.fixture(scope="module")
def text() -> str:
    said = SandboxFiles(DEFAULT_SANDBOX / "inbox").read(NAME).full_text()
    assert "1,284.50 USD" in said and "INV-2057" in said
    return said


@pytest.mark.parametrize("quote", ["TOTAL PAYABLE 1,284.5", "84.50 USD", "Invoice No. INV-205", "4.50 USD"])
def test_a_fragment_of_a_printed_figure_is_not_found(text: str, quote: str) -> None:
    [check] = check_citations([Citation(source=NAME, quote=quote)], lambda _: text)
    assert check.status == "not_found", quote
    assert quoted_lines(quote, text) == []


@pytest.mark.parametrize("quote", ["1,284.50 USD", "INV-2057", "“1,284.50   USD”", "total payable: 1,284.50"])
def test_whole_words_are_found_whatever_the_punctuation_case_and_spacing(text: str, quote: str) -> None:
    [check] = check_citations([Citation(source=NAME, quote=quote)], lambda _: text)
    assert check.status == "found", quote
    assert quoted_lines(quote, text)
