"""A value's origin is its own, by its place in the request; a trace never overrides code (session 42).

- The job's trace (``jobs/human.trace``) matched a value to a step's by substring: a step read
  amount = 950.00 from invoice.txt, the form sent 9950.00, code found it nowhere, yet the trace
  named invoice.txt and ``approvals.origins`` let it replace code's "not found": the Amount was
  linked to invoice.txt and the file sealed. One equality rule now says "this value is that found
  value" (``crew.provenance.same_value``, code's), and code's "not found" stands: a trace only adds a
  note beside it.
- Origins were kept by field name: a name sent twice (invoice_number = INV-88 and = INV-4410) showed
  INV-88's line beside INV-4410. An origin now belongs to its field by its place in the request
  (``approvals.origins.field_keys``: the name, or "name #k" for a name sent twice) where it is
  stored, signed and shown.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_console_sources_redteam import App, app  # noqa: F401  (fixture: the console, its store, a sandbox)
from test_origins_s42 import INVOICE, _park, _report, _text
from typer.testing import CliRunner

from taskcrew.approvals.origins import NOT_FOUND, UNTRACED, origins
from taskcrew.approvals.signing import ENV_DIR
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import field_origins
from taskcrew.jobs import Approval, FieldSource, Job
from taskcrew.jobs.human import trace
from taskcrew.tools.human import ApprovalRequest, FieldValue, ValueOrigin

URL = "http://127.0.0.1:8800/bills/new"


def _checkpoint(report: StepReport) -> dict[str, object]:
    step = {"index": 0, "role": "document_reader", "title": "read", "report": report.model_dump(mode="json")}
    return {"state": {"steps_done": [step]}}


def _park_after(made: App, fields: list[FieldValue], report: StepReport) -> Approval:
    """``_park``, the job's checkpoint holding the step that reported ``report`` (what its trace reads)."""
    submit = made.jobs.submit

    def submitted(*args: Any, **kwargs: Any) -> Job:
        job = submit(*args, **kwargs)
        assert made.jobs.save_checkpoint(job.id, {"stage": "run", **_checkpoint(report)})
        return job

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(made.jobs, "submit", submitted)
        return _park(made, fields, report)


def test_a_trace_matches_a_value_only_when_it_is_the_found_value() -> None:
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"amount": "9,950.00", "vendor": "Northwind Traders", "total": "950.00"},
        sources=[Citation(source="invoice.txt", quote="Total: 9,950.00 EUR")],
    )
    checkpoint = _checkpoint(report)
    # "950.00" is held by "9950.00" but is not it; the same value written with a thousands comma is
    text, files = trace(checkpoint, "Enter the invoice", "amount", "19950.00")
    assert (text, files) == (UNTRACED, [])
    text, files = trace(checkpoint, "Enter the invoice", "amount", "9950.00")
    assert files == ["invoice.txt"] and "found amount = 9,950.00" in text
    # a chosen option: its text (``label``) is the value found, never a part of a typed value
    text, _ = trace(checkpoint, "", "vendor", "7 (Northwind Traders)", label="Northwind Traders")
    assert "found vendor = Northwind Traders" in text
    assert trace(checkpoint, "", "vendor", "Initrode (Northwind Traders)")[0] == UNTRACED


def test_a_trace_never_overrides_codes_not_found_it_only_adds_a_note() -> None:
    fields = [FieldValue(name="amount", value="9950.00")]
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=URL,
        fields=fields,
        origins={"amount": ValueOrigin(text=NOT_FOUND)},
    )
    said = "step 1 (document_reader: read) found amount = 950.00, citing invoice.txt"
    shown = origins(
        request, [FieldSource(name="amount", value="9950.00", source=said, files=["invoice.txt"])]
    )
    assert shown["amount"].file is None and shown["amount"].line is None
    assert shown["amount"].text == f"{NOT_FOUND} — the job's trace: {said}"
    # a field code's origins do not mention still shows its trace
    request = request.model_copy(update={"origins": {}})
    shown = origins(
        request, [FieldSource(name="amount", value="9950.00", source=said, files=["invoice.txt"])]
    )
    assert shown["amount"].file == "invoice.txt"


def test_a_value_containing_a_found_one_is_not_sourced_or_sealed_from_its_file(app: App) -> None:  # noqa: F811
    app.inbox("invoice.txt", INVOICE)
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="amount", value="9950.00"),  # a digit added to the 950.00 the step read
        FieldValue(name="currency", value="EUR"),
    ]
    report = _report(
        {"vendor": "Northwind Traders", "amount": "950.00"},
        "Invoice INV-88 from Northwind Traders",
        "Total: 950.00 EUR",
    )
    approval = _park_after(app, fields, report)
    request = approval.request
    assert request is not None and request.origins is not None
    assert request.origins["amount"].text.startswith(NOT_FOUND)
    assert "found vendor = Northwind Traders" in {s.name: s for s in approval.sources}["vendor"].source
    traced = {s.name: s for s in approval.sources}["amount"]
    assert traced.source == UNTRACED and not traced.files, traced
    amount = origins(request, approval.sources)["amount"]
    assert amount.file is None and amount.text.startswith(NOT_FOUND), amount
    page = app.client().get(f"/approvals/{approval.id}").text
    row = re.search(r'<th scope="row" class="fieldname">amount</th>.*?</tr>', page, re.S)
    assert row and "invoice.txt" not in row.group(0) and "not found in any source" in _text(row.group(0))
    assert app.client().get(f"/approvals/{approval.id}/source?field=amount").status_code == 404


def test_field_keys_tell_a_name_sent_twice_apart() -> None:
    from taskcrew.approvals.origins import field_keys

    assert field_keys(["vendor", "n", "amount", "n"]) == ["vendor", "n #1", "amount", "n #2"]
    # a field named as another's key has none: no field is given another's origin
    assert field_keys(["n", "n", "n #2"]) == ["n #1", None, None]


def test_a_name_sent_twice_shows_each_values_own_origin_everywhere(
    app: App,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app.inbox("invoice.txt", INVOICE)
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="invoice_number", value="INV-88"),
        FieldValue(name="invoice_number", value="INV-4410"),  # no line of the file shows it
        FieldValue(name="amount", value="950.00"),
    ]
    report = _report(
        {"invoice_number": "INV-88"}, "Invoice INV-88 from Northwind Traders", "Total: 950.00 EUR"
    )
    approval = _park(app, fields, report)
    request = approval.request
    assert request is not None and request.origins is not None
    assert (request.origins["invoice_number #1"].file, request.origins["invoice_number #1"].line) == (
        "invoice.txt",
        1,
    )
    assert request.origins["invoice_number #2"].file is None
    assert request.origins["invoice_number #2"].text.startswith(NOT_FOUND)
    assert "invoice_number" not in request.origins
    # the summary's block: each value with its own origin
    block = request.summary.split("where the values come from:\n", 1)[1]
    assert f"  invoice_number = INV-4410: {NOT_FOUND}" in block.splitlines()
    # the console: one row a field, each with its own origin; the link names the field's key
    client = app.client()
    page = client.get(f"/approvals/{approval.id}").text
    rows = re.findall(r'<th scope="row" class="fieldname">invoice_number</th>.*?</tr>', page, re.S)
    assert len(rows) == 2
    assert "invoice.txt, line 1" in _text(rows[0]) and "INV-88" in rows[0]
    assert "invoice.txt" not in rows[1] and "not found in any source" in _text(rows[1])
    assert (
        client.get(f"/approvals/{approval.id}/source", params={"field": "invoice_number #1"}).status_code
        == 200
    )
    assert (
        client.get(f"/approvals/{approval.id}/source", params={"field": "invoice_number #2"}).status_code
        == 404
    )
    # `taskcrew approvals show`
    monkeypatch.setenv(ENV_DIR, str(app.root / "approvals"))
    from taskcrew.cli import app as cli_app

    out = CliRunner().invoke(cli_app, ["approvals", "show", approval.id, "--db", app.jobs.url]).output
    said = [line.strip() for line in out.splitlines() if line.strip().startswith("invoice_number")]
    assert f"invoice_number #2: from {NOT_FOUND}" in said, out
    assert not any(line.startswith("invoice_number #2: from invoice.txt") for line in said), out


def test_a_request_stored_by_name_reads_as_before() -> None:
    """Origins stored by field name (before names sent twice were told apart): a name sent once
    reads the same; a name sent twice lends neither value the one origin kept."""
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="invoice_number", value="INV-88"),
        FieldValue(name="invoice_number", value="INV-4410"),
    ]
    line_1 = ValueOrigin(text="invoice.txt, line 1 (cited in step 1)", file="invoice.txt", line=1)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=URL,
        fields=fields,
        origins={"vendor": line_1, "invoice_number": line_1},
    )
    shown = origins(request, [])
    assert (shown["vendor"].file, shown["vendor"].line) == ("invoice.txt", 1)
    assert "invoice_number #1" not in shown and "invoice_number #2" not in shown
    # the field_origins the run carries: by key
    found = field_origins(fields, [(1, "document_reader", _report({}, "Invoice INV-88 from Northwind Traders"))],
                          {"invoice.txt": INVOICE}.get)  # fmt: skip
    assert sorted(found) == ["invoice_number #1", "invoice_number #2", "vendor"]
    # a request parked before origins were data: each line of the block is its own value's
    legacy = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=URL,
        fields=fields,
        summary="where the values come from:\n"
        "  vendor = Northwind Traders: invoice.txt, line 1 (cited in step 1)\n"
        "  invoice_number = INV-88: invoice.txt, line 1 (cited in step 1)\n"
        f"  invoice_number = INV-4410: {NOT_FOUND}",
    )
    shown = origins(legacy, [])
    assert shown["invoice_number #1"].line == 1 and shown["invoice_number #2"].file is None
