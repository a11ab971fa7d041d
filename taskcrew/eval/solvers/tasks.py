"""Which way of working a task in plain words calls for, for tasks that are not an eval case.

The scripted solver knows the eval's cases by their id; a person trying the product (``taskcrew
demo``, ``submit --model scripted/solver``) types their own words. This reads the request's
particulars (vendor, invoice number, day) the way a model would read them, and hands them to the
same general strategies the eval uses, which take every value they enter from the files and pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from taskcrew.eval.solvers.base import Recipe
from taskcrew.eval.solvers.ledger import MarkPaid, UnpaidReport
from taskcrew.eval.solvers.payables import EnterInvoices, Target

_NAME = r"([A-Z0-9][\w&.'’\-]*(?:\s+(?:&\s+)?[A-Z0-9][\w&.'’\-]*)*)"  # capitalised words: a vendor
_NUMBER = r"([A-Z]{2,}[\w\-/]*\d[\w\-/]*)"  # INV-2057, HCS-2026-09
_WRITE = re.compile(r"\b(enter|record|book|add|put|create)\b|\binto\b", re.IGNORECASE)


_LEAD = re.compile(r"^(?:(?:please|enter|record|book|add|put|find|get)\s+)+", re.IGNORECASE)


def _vendor(name: str) -> str:
    return _LEAD.sub("", re.sub(r"['’]s$", "", name.strip().rstrip(".,")))


def _enter_by_number(m: re.Match[str]) -> Recipe:
    return EnterInvoices([Target(_vendor(m[2]), m[1])])


def _enter_latest(m: re.Match[str]) -> Recipe:
    return EnterInvoices([Target(_vendor(m[1]))])


Reader = tuple[re.Pattern[str], bool, Callable[[re.Match[str]], Recipe]]  # pattern, needs a write verb
READERS: list[Reader] = [
    (re.compile(rf"\bbill\s+{_NUMBER}\s+as paid on\s+(.+?)\.?$", re.IGNORECASE), False,
     lambda m: MarkPaid(m[1], m[2])),
    (re.compile(r"\bunpaid\b.*\bdue before\s+(.+?)[?.]", re.IGNORECASE | re.DOTALL), False,
     lambda m: UnpaidReport(m[1])),
    (re.compile(rf"\binvoice\s+{_NUMBER}\s+(?:from|of)\s+{_NAME}"), True, _enter_by_number),
    (re.compile(rf"\b(?:latest|newest|last|most recent)\s+invoice\s+(?:from|of|by)\s+{_NAME}"), True,
     _enter_latest),
    (re.compile(rf"{_NAME}['’]s?\s+(?:latest|newest|last|most recent)\s+invoice"), True, _enter_latest),
]  # fmt: skip

UNDERSTOOD = (
    "entering an invoice ('Enter the latest invoice from <Vendor> into the ERP', 'invoice <number> "
    "from <Vendor>'), marking a bill paid ('Mark the bill <number> as paid on <day>'), and the unpaid "
    "report ('Which bills are unpaid and due before <day>?')"
)


def recipe_for_task(task: str) -> Recipe | None:
    """The strategy for ``task``, or None when the scripted solver does not understand it."""
    text = " ".join(task.split())
    for pattern, needs_write, make in READERS:
        match = pattern.search(text)
        if match is not None and (not needs_write or _WRITE.search(text)):
            return make(match)
    return None
