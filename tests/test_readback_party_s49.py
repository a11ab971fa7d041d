"""A row of the read-back shows a send that names no record only if it shows the party it referred to (s49).

A red team's finding: ``Facts.read_back`` matched a send that named no record by its own identifiers and
one amount; the vendor it was sent for (``vendor_id``, a reference) was left out. So a colleague's
Initech INV-2057 of 1284.50 "showed" this run's Northwind INV-2057 of 1284.50: a refused duplicate
became "may be saved" (the run ``done``), and a save the system dropped stayed "saved" (the run
``done``). Now such a row must also show every party the send referred to, by the chosen option's
label the gate recorded ("Northwind Traders"), as whole words, whatever the case and spacing; where a
reference has no label code can match, the row is the send's as the gate read it (a refusal stays
one, never shown on a guess). Sends naming their record are unchanged; honest sends to the demo ERP
(a create, a payment; over real HTTP, its real list page read before and after) still read as saved.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fixtures_erp import ErpUser
from test_honest_s47 import _decided  # decide() for a verified run that says a claim
from test_readback_s48 import AFTER, BEFORE, BILLS, INITECH, NORTHWIND, _difference
from test_readback_s48 import _send as _send_s48

from taskcrew.crew.changes import describe
from taskcrew.crew.evidence import CHANGES_SOURCE
from taskcrew.crew.outcome import Facts
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.submissions import SubmissionResult

OTHER_VENDOR = ("BILL-0012", "Initech", "INV-2057", "1284.50")  # a colleague's: same number and amount
NORTHWIND_LABEL = {"vendor_id": "Northwind Traders"}  # as the gate recorded the chosen option


def _send(
    result: str, detail: str = "", labels: dict[str, str] | None = None, **more: Any
) -> SubmissionResult:
    """Northwind's INV-2057 of 1284.50 as the gate records it (``test_readback_s48._send``): the vendor
    chosen as option 1, "Northwind Traders" (``labels``); ``detail`` "": an answer naming no record."""
    status = {"saved": 200, "refused": 409}.get(result)
    labelled = NORTHWIND_LABEL if labels is None else labels
    return _send_s48(result, detail, http_status=status, labels=labelled, **more)


DUPLICATE = "Duplicate bill: invoice INV-2057 from Northwind Traders is already entered"


# ---- the finding's two cases ------------------------------------------------------------------


@pytest.mark.parametrize("labels", [NORTHWIND_LABEL, {}], ids=["labelled", "no-label"])
def test_another_vendors_row_does_not_make_a_refused_duplicate_may_be_saved(labels: dict[str, str]) -> None:
    """(a) Northwind's INV-2057 is there; this run's duplicate is refused; a colleague adds Initech's
    INV-2057 of 1284.50 meanwhile. It stays refused and the run changed nothing — also where the gate
    recorded no label for the vendor (never shown on a guess)."""
    facts = Facts(submissions=[_send("refused", DUPLICATE, labels=labels)])
    read = facts.read_back(_difference([NORTHWIND], [NORTHWIND, OTHER_VENDOR]), BEFORE)
    assert read.submissions[0].result == "refused", read.submissions[0]
    outcome, reason = _decided(read)
    assert outcome == "nothing_to_do", (outcome, reason)
    assert "may be saved" not in read.changed_line(), read.changed_line()


def test_another_vendors_row_does_not_show_a_dropped_save() -> None:
    """(b) Saved with no record named in its answer, then dropped by the system; a colleague's Initech
    INV-2057 of 1284.50 is added meanwhile: no row shows it, it may be saved, the run is not verified."""
    facts = Facts(submissions=[_send("saved")])
    read = facts.read_back(_difference([INITECH], [INITECH, OTHER_VENDOR]), BEFORE)
    assert read.submissions[0].result == "unknown" and read.submissions[0].unshown, read.submissions[0]
    outcome, reason = _decided(read)
    assert outcome == "not_verified", (outcome, reason)
    assert "shows no row" in reason, reason


# ---- its own row still shows it ---------------------------------------------------------------


@pytest.mark.parametrize(
    "vendor", ["Northwind Traders", "NORTHWIND   traders", "Northwind Traders (Pty) Ltd"], ids=str
)
def test_its_own_row_shows_it_whatever_the_case_and_spacing(vendor: str) -> None:
    """The row shows the vendor's label as whole words: a saved send stays saved, a refused one whose
    row was added may be saved — beside the colleague's row of another vendor, which shows neither."""
    own = ("BILL-0011", vendor, "INV-2057", "1284.50")
    rows = _difference([INITECH], [INITECH, OTHER_VENDOR, own])
    saved = Facts(submissions=[_send("saved")]).read_back(rows, BEFORE)
    assert saved.submissions[0].result == "saved" and _decided(saved)[0] == "done"
    refused = Facts(submissions=[_send("refused", "Notification service error")]).read_back(rows, BEFORE)
    assert refused.submissions[0].result == "unknown", refused.submissions[0]
    assert "shows a row of it added" in refused.submissions[0].read_back


@pytest.mark.parametrize("vendor", ["Northwind", "Northwind Tradersco", "Traders Northwind"], ids=str)
def test_a_row_naming_part_of_the_party_does_not_show_it(vendor: str) -> None:
    """Part of the label, a longer word, or its words out of order: not the party the send chose."""
    rows = _difference([INITECH], [INITECH, ("BILL-0011", vendor, "INV-2057", "1284.50")])
    assert Facts(submissions=[_send("saved")]).read_back(rows, BEFORE).submissions[0].result == "unknown"
    refused = Facts(submissions=[_send("refused", DUPLICATE)]).read_back(rows, BEFORE)
    assert refused.submissions[0].result == "refused"


def test_a_send_that_names_its_record_is_read_as_before() -> None:
    """A send whose answer named BILL-0011 (a redirect) is shown by that record's row, whatever the
    label; an edit and a payment of BILL-0004 by the row of BILL-0004."""
    named = _send("saved", "then showed /bills/BILL-0011", labels={"vendor_id": "Some Other Name"})
    read = Facts(submissions=[named]).read_back(_difference([INITECH], [INITECH, NORTHWIND]), BEFORE)
    assert read.submissions[0].result == "saved"
    changes = [
        SubmissionResult(method="POST", url=f"{BILLS}/BILL-0004/{what}", result="saved", at=AFTER, fields=f)
        for what, f in (
            ("edit", [("amount", "125.00"), ("vendor_id", "2")]),
            ("pay", [("paid_on", "2026-10-01")]),
        )
    ]
    edited = ("BILL-0004", "Initech", "INI-2201", "125.00")
    read = Facts(submissions=changes).read_back(_difference([INITECH], [edited]), BEFORE)
    assert [s.result for s in read.submissions] == ["saved", "saved"]


def test_labels_are_read_through_the_runs_redaction() -> None:
    facts = Facts(submissions=[_send("saved")]).redacted(lambda text: text.replace("Northwind", "[V]"))
    assert facts.submissions[0].labels == {"vendor_id": "[V] Traders"}


# ---- the demo ERP over real HTTP: its list page, read before and after --------------------------


def test_honest_sends_to_the_demo_erp_read_back_as_saved(erp: ErpServer, erp_user: ErpUser) -> None:
    """A person enters Northwind's INV-2057 and pays BILL-0004 on the demo ERP; the gate's record of
    both (the vendor's label as the form's option shows it; the create read as answered with no record
    named, and as answered with its redirect) against the ERP's own bills list read before and after:
    each reads back as saved, and a verified run is done."""
    bills = f"{erp.url}/bills"
    before_page = erp_user.http.get("/bills").text
    taken = datetime.now(UTC)
    label = next(name for name in erp_user.vendor_ids() if name == "Northwind Traders")
    vendor_id = erp_user.vendor_ids()[label]
    created = erp_user.new_bill()
    assert created.status_code == 303, created.text
    new_bill = created.headers["location"]
    assert erp_user.mark_paid("BILL-0004", "2026-10-01").status_code == 303
    after_page = erp_user.http.get("/bills").text
    differences = {f"{CHANGES_SOURCE} {bills}": describe(bills, before_page, after_page, taken)}
    fields = [
        ("vendor_id", vendor_id),
        ("invoice_number", "INV-2057"),
        ("amount", "1284.50"),
        ("currency", "USD"),
        ("invoice_date", "2026-09-12"),
        ("due_date", "2026-10-12"),
    ]
    paid = SubmissionResult(
        method="POST", url=f"{bills}/BILL-0004/pay", fields=[("paid_on", "2026-10-01")], result="saved"
    )
    for detail in ("", f"then showed {new_bill}"):
        create = SubmissionResult(
            method="POST",
            url=f"{bills}/new",
            fields=fields,
            result="saved",
            http_status=303,
            detail=detail,
            labels={"vendor_id": label},
        )
        read = Facts(submissions=[create, paid]).read_back(differences, taken)
        assert [s.result for s in read.submissions] == ["saved", "saved"], read.submissions
        assert _decided(read)[0] == "done"
    # the same create for another vendor is no row of this list: not shown
    other = create.model_copy(update={"detail": "", "labels": {"vendor_id": "Initech"}})
    assert Facts(submissions=[other]).read_back(differences, taken).submissions[0].result == "unknown"
