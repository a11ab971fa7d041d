"""One vendor record shown on more than one row of a vendor list, or offered twice by a drop-down, is
one record: a supplier's two site rows (the same number and link), a "Recently paid" table above
"All vendors", a "Recent" group of a vendor drop-down above "All" (the same option value twice).
The approval's vendor list (``record.vendor_names``) flagged the one Northwind Traders as "payee
named like another vendor record" (and so refused --auto-approve, and a whole bulk), and a
routine's replay (``replay.choose_option``) refused the one option offered twice. A record is known
by its key (an option's value, a row's link or number, else the whole row): only a name shown with
two keys in one list is two records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_vendor_twins_s42 import approver, bill, chosen, flags_of, park  # noqa: F401 — the fixture

from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.record import vendor_names
from taskcrew.routines.replay import choose_option, no_option
from taskcrew.tools.browser.models import SelectOption

NWT = "Northwind Traders"
ONE_RECORD = {
    "supplier_sites": f"""<table><tr><th>No.</th><th>Vendor</th><th>Site</th></tr>
<tr><td>1</td><td><a href="/vendors/1">{NWT}</a></td><td>HQ</td></tr>
<tr><td>1</td><td><a href="/vendors/1">{NWT}</a></td><td>Remit-to</td></tr>
<tr><td>2</td><td><a href="/vendors/2">Initech</a></td><td>HQ</td></tr></table>""",
    "sites_by_number": f"""<table><tr><th>Vendor ID</th><th>Vendor</th><th>Site</th></tr>
<tr><td>1</td><td>{NWT}</td><td>HQ</td></tr><tr><td>1</td><td>{NWT}</td><td>Remit-to</td></tr>
<tr><td>2</td><td>Initech</td><td>HQ</td></tr></table>""",
    "recent_table_and_all": f"""<h2>Recently paid</h2><table><tr><th>Vendor</th><th>Paid</th></tr>
<tr><td>{NWT}</td><td>40.00</td></tr></table><h2>All vendors</h2><table><tr><th>Vendor</th><th>Country</th>
</tr><tr><td>{NWT}</td><td>US</td></tr><tr><td>Initech</td><td>US</td></tr></table>""",
    "select_recent_group": f"""<select name=vendor_id><option value="">Choose a vendor…</option>
<optgroup label="Recent"><option value="1">{NWT}</option></optgroup><optgroup label="All">
<option value="1">{NWT}</option><option value="2">Initech</option></optgroup></select>""",
}
TWO_RECORDS = {
    "two_links": f"""<table><tr><th>Vendor</th><th>City</th></tr>
<tr><td><a href="/vendors/1">{NWT}</a></td><td>Seattle</td></tr>
<tr><td><a href="/vendors/11">{NWT}</a></td><td>Seattle</td></tr></table>""",
    "two_numbers": f"""<table><tr><th>No.</th><th>Vendor</th></tr>
<tr><td>1</td><td>{NWT}</td></tr><tr><td>11</td><td>{NWT}</td></tr></table>""",
    "two_rows_no_key": f"""<table><tr><th>Vendor</th><th>Bills</th></tr>
<tr><td>{NWT}</td><td>3</td></tr><tr><td>{NWT}</td><td>0</td></tr></table>""",
    "select_two_values": f"""<select name=vendor_id><optgroup label="Recent"><option value="1">{NWT}</option>
</optgroup><optgroup label="All"><option value="1">{NWT}</option><option value="11">{NWT}</option>
</optgroup></select>""",
    # another spelling is another listed name, compared by the rule as before
    "lookalike_spelling": f"""<table><tr><th>Vendor</th></tr>
<tr><td><a href="/vendors/1">{NWT}</a></td></tr><tr><td><a href="/vendors/11">NORTHWIND TRADERS</a></td></tr>
</table>""",
}


@pytest.mark.parametrize("shape", list(ONE_RECORD))
def test_one_record_on_two_rows_is_one_vendor_and_no_lookalike(approver: Authority, shape: str) -> None:  # noqa: F811
    known = vendor_names(f"<html><body>{ONE_RECORD[shape]}</body></html>")
    assert known == [NWT, "Initech"], known
    request = bill(chosen("1", NWT), known)
    view = approver.view(approver.jobs.approval(park(approver.jobs, request).id))
    assert "lookalike_vendor" not in {f.rule for f in view.assessment.flags}, view.assessment.flags
    assert "lookalike_vendor" not in (bulk_refusal(view) or "")  # one such item no longer stops a bulk
    assert approver.payee_refusal(request) is None  # nor --auto-approve


@pytest.mark.parametrize("shape", list(TWO_RECORDS))
def test_a_name_with_two_record_keys_is_still_two_records(approver: Authority, shape: str) -> None:  # noqa: F811
    known = vendor_names(f"<html><body>{TWO_RECORDS[shape]}</body></html>")
    assert len(known) == 2, known
    flags = flags_of(approver, bill(chosen("1", NWT), known))
    assert "lookalike_vendor" in flags, flags


def _drop_down(*options: tuple[str, str]) -> SimpleNamespace:
    return SimpleNamespace(
        field=SimpleNamespace(options=[SelectOption(label=x, value=v) for x, v in options])
    )


def test_a_replay_takes_the_one_record_a_drop_down_offers_twice() -> None:
    recent_and_all = _drop_down(("— choose —", ""), (NWT, "1"), ("Initech", "2"), (NWT, "1"), ("Globex", "3"))
    assert choose_option(recent_and_all, NWT) == NWT
    # the same record under two spellings is one choice too: the first label, which selects it
    assert choose_option(_drop_down((NWT, "1"), ("NORTHWIND TRADERS", "1")), NWT) == NWT
    # two records of one name (two values) are still not guessed between
    twins = _drop_down((NWT, "1"), ("Initech", "2"), (NWT, "11"))
    assert choose_option(twins, NWT) is None
    assert no_option(twins, NWT).startswith(f"has 2 options that could be {NWT!r}")
