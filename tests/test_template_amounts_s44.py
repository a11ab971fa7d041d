"""A routine's template reads amounts as the invoice reader does (red team, honest work, round 6).

1. The template read amounts with a hand-written pattern of its own, with no sign and no brackets: the
   issuer's credit memo in its invoice layout ("TOTAL PAYABLE -9,180.00 USD", "(9,180.00) USD",
   "9,180.00- USD") was read as +9180.00 (subtotal and tax lost their signs too, so the sum check held),
   and the replay entered a bill of +9,180.00 USD, "every step matched". Now the template reads the
   line's amounts with the verifier's reader (``documents.provenance.amounts_in``) and the words after
   a label with ``ap.parse_amount``: signed. A total that is zero or negative is no amount owed: the
   replay enters no bill and hands the run to the agent with the reason (``template.not_owed``).
2. The pattern grouped thousands only by "," "." "'" space and no-break space: "CHF 1’234.50" (the
   typographic apostrophe Swiss software prints), "1 234.50" with a narrow no-break or thin space, were
   read as 234.50 by a template learned from an invoice under 1,000 (and 142.00 + 92.50 still summed).
   Now every grouping of ``ap.GROUPS`` is read.
3. After a replay the verifier did not confirm, the agent reworked the run, and the report still
   labelled the agent's (scripted model's) last words "written by the routine's code": now only when the
   replay's own plan is the run's last.

Real files (.eml written with the standard library, read by the project's reader), the routine's own
learn / find_document; the end-to-end case runs Chromium and the demo ERP with scripted models only.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from email.headerregistry import Address
from email.message import EmailMessage
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_routines import INBOX, _routine, _template

from taskcrew.crew.models import RunState, StepRecord, StepReport
from taskcrew.routines.distil import learned_senders
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.replay import Replayer
from taskcrew.routines.template import extract, learn
from taskcrew.tools.files import SandboxFiles

NWT = "Northwind Traders"
MEMO = """Northwind Traders
INVOICE
Invoice No. INV-3002
Invoice Date October 1, 2026
Customer ID ACME-0042
Terms Net 30
Subtotal {s} USD
VAT 20% {v} USD
TOTAL PAYABLE {t} USD
Credit for returned goods, order 4471.
"""
CREDITS = [
    ("-7,650.00", "-1,530.00", "-9,180.00"),
    ("(7,650.00)", "(1,530.00)", "(9,180.00)"),
    ("7,650.00-", "1,530.00-", "9,180.00-"),
    ("\u22127,650.00", "\u22121,530.00", "\u22129,180.00"),  # the minus sign
]


def _memo_mail(body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Date"] = "Thu, 01 Oct 2026 09:14:00 +0000"
    msg["From"] = Address("Northwind Traders Billing", "billing", "northwind-traders.example")
    msg["To"] = Address("Accounts Payable", "ap", "acme-corp.example")
    msg["Subject"] = "Invoice INV-3002 (credit)"
    msg.set_content(body)
    return msg


@pytest.fixture(scope="module")
def northwind() -> object:
    return _template(SandboxFiles(INBOX), "INV-2057", NWT)


@pytest.mark.parametrize(("s", "v", "t"), CREDITS, ids=["minus", "brackets", "trailing-minus", "minus-sign"])
def test_a_credit_memo_is_never_read_as_an_amount_owed(
    tmp_path: Path, northwind: object, s: str, v: str, t: str
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(INBOX, inbox)
    (inbox / "Invoice INV-3002 from Northwind Traders.eml").write_bytes(
        _memo_mail(MEMO.format(s=s, v=v, t=t)).as_bytes()
    )
    if s.startswith("("):
        # the reader reads brackets after a tax rate as an aside ("VAT 20% (1,530.00)": +1530.00, as
        # ``provenance._aside`` does), so the sum check fails: the template reads nothing, the agent decides
        with pytest.raises(FileStepFailed, match="INV-3002"):
            find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
        return
    found = find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-3002"
    assert (found.values["amount"], found.values["subtotal"], found.values["tax"]) == (
        "-9180.00",
        "-7650.00",
        "-1530.00",
    ), found.values
    from taskcrew.routines.template import (
        not_owed,
    )  # new here (imported in the test: fails before, not unread)

    why = not_owed(northwind, found.values)  # type: ignore[arg-type]
    assert why is not None and "-9180.00 USD" in why and "negative" in why and "no bill" in why, why


def test_a_bracketed_total_is_a_credit(northwind: object) -> None:
    text = MEMO.format(s="(7,650.00)", v="(1,530.00)", t="(9,180.00)").replace(
        "VAT 20% (1,530.00)", "VAT 20% -1,530.00"
    )
    assert extract(northwind, text)["amount"] == "-9180.00"  # type: ignore[arg-type]


def test_a_zero_total_is_no_amount_owed(northwind: object) -> None:
    from taskcrew.routines.template import not_owed

    text = MEMO.format(s="0.00", v="0.00", t="0.00")
    values = extract(northwind, text)  # type: ignore[arg-type]
    assert values["amount"] == "0.00"
    assert "zero" in (not_owed(northwind, values) or "")  # type: ignore[arg-type]
    assert not_owed(northwind, {**values, "amount": "9180.00"}) is None  # type: ignore[arg-type]


ZP = "Zürcher Präzision AG"
FIRST = """Guten Tag

Zürcher Präzision AG
Rechnung Nr. ZP-2026-101
Rechnungsdatum 01.09.2026
Zahlbar bis 01.10.2026
Zwischensumme CHF 850.00
MWST 8.1% CHF 68.85
Total CHF 918.85
"""


def _zp_mail(day: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Date"] = f"{day} 09:14:00 +0000"
    msg["From"] = Address(ZP, "rechnungen", "zuercher-praezision.example")
    msg["To"] = Address("Accounts Payable", "ap", "acme-corp.example")
    msg["Subject"] = "Rechnung Zürcher Präzision AG"
    msg.set_content(body)
    return msg


@pytest.mark.parametrize("mark", ["\u2019", "\u02bc", "\u2032", "'", "\u202f", "\u2009", "\u00a0", ","])
@pytest.mark.parametrize(("subtotal", "tax", "total"), [("1{m}142.00", "92.50", "1{m}234.50"),
                                                       ("11{m}545.00", "935.00", "12{m}480.00")])  # fmt: skip
def test_the_next_invoice_is_read_with_its_thousands(
    tmp_path: Path, mark: str, subtotal: str, tax: str, total: str
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "Rechnung ZP-2026-101.eml").write_bytes(_zp_mail("Tue, 01 Sep 2026", FIRST).as_bytes())
    files = SandboxFiles(inbox)
    content = files.read("Rechnung ZP-2026-101.eml")
    values = {"invoice_number": "ZP-2026-101", "amount": "918.85", "currency": "CHF",
              "invoice_date": "2026-09-01", "due_date": "2026-10-01"}  # fmt: skip
    template = learn(content.full_text(), values, ZP, "Rechnung ZP-2026-101.eml")
    template.senders = learned_senders(content, ZP)
    assert "total_is_subtotal_plus_tax" in template.checks
    body = (
        FIRST.replace("ZP-2026-101", "ZP-2026-118")
        .replace("01.09.2026", "15.09.2026")
        .replace("01.10.2026", "15.10.2026")
        .replace("CHF 850.00", "CHF " + subtotal.format(m=mark))
        .replace("CHF 68.85", "CHF " + tax)
        .replace("CHF 918.85", "CHF " + total.format(m=mark))
    )
    (inbox / "Rechnung ZP-2026-118.eml").write_bytes(_zp_mail("Tue, 15 Sep 2026", body).as_bytes())
    found = find_document(_routine(template), {"vendor": ZP}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "ZP-2026-118"
    assert found.values["amount"] == total.format(m="").replace(",", ""), found.values
    assert found.values["currency"] == "CHF"


def test_a_template_learned_from_a_grouped_total_reads_it_back(tmp_path: Path) -> None:
    """Learning finds the total where the reader reads it: "Total CHF 1’234.50" is 1234.50."""
    text = FIRST.replace("CHF 850.00", "CHF 1\u2019142.00").replace("CHF 68.85", "CHF 92.50")
    text = text.replace("CHF 918.85", "CHF 1\u2019234.50")
    values = {"invoice_number": "ZP-2026-101", "amount": "1234.50", "currency": "CHF",
              "invoice_date": "2026-09-01", "due_date": "2026-10-01"}  # fmt: skip
    template = learn(text, values, ZP, "Rechnung ZP-2026-101.eml")
    assert "total_is_subtotal_plus_tax" in template.checks
    assert extract(template, text)["amount"] == "1234.50"


def test_words_after_a_label_that_write_several_amounts_are_not_read(northwind: object) -> None:
    """Several amounts after the total's label: the template does not guess which (the agent reads it)."""
    text = MEMO.format(s="7,650.00", v="1,530.00", t="9,180.00").replace(
        "TOTAL PAYABLE 9,180.00 USD", "TOTAL PAYABLE 12.345 USD or 9,180.00 USD"
    )
    with pytest.raises(ValueError, match="TOTAL PAYABLE"):
        extract(northwind, text)  # type: ignore[arg-type]


def _record(version: int) -> StepRecord:
    return StepRecord(
        index=0,
        role="file_reader",
        title="the step",
        plan_version=version,
        report=StepReport(status="done", summary="s"),
    )


def test_the_report_says_code_wrote_the_last_words_only_when_no_agent_worked_after_the_replay(
    northwind: object,
) -> None:
    from taskcrew.crew.report import _routine_wrote

    replayer = Replayer(_routine(northwind), {"vendor": NWT})
    replayer.outcome = "replayed"
    ctx = SimpleNamespace(replay=replayer)
    replayed = RunState(plan_version=1, steps_done=[_record(1), _record(1)])
    assert _routine_wrote(ctx, replayed)  # type: ignore[arg-type]
    reworked = RunState(plan_version=3, steps_done=[_record(1), _record(1), _record(3)])
    assert not _routine_wrote(ctx, reworked)  # type: ignore[arg-type]
    replayer.outcome = "fell_back"
    assert not _routine_wrote(ctx, replayed)  # type: ignore[arg-type]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_replayed_credit_memo_is_handed_to_the_agent_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from routines_world import chore, run_chore

    from taskcrew.config import WorkplaceSettings
    from taskcrew.crew.trace import read_trace
    from taskcrew.crew.workplace import Workplace
    from taskcrew.eval.human import CaseHuman
    from taskcrew.eval.models import HumanScript
    from taskcrew.homes import DEFAULT_SANDBOX
    from taskcrew.mock_erp import ChaosConfig, fetch_state
    from taskcrew.routines.store import RoutineStore

    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    sandbox = tmp_path / "sandbox"
    shutil.copytree(DEFAULT_SANDBOX, sandbox, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    settings = WorkplaceSettings(erp_url="http://127.0.0.1:0", intranet_url=None, runs_dir=tmp_path / "runs",
                                 erp_db=tmp_path / "erp.sqlite3", knowledge_dir=tmp_path / "knowledge",
                                 use_knowledge=False, sandbox=sandbox)  # fmt: skip
    with Workplace(settings, CaseHuman(HumanScript())) as place:
        case = chore(NWT)
        first = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        assert first.outcome == "done", first.reason
        RoutineStore().accept("enter-invoice", 1, "reviewer")
        body = MEMO.format(s="-7,650.00", v="-1,530.00", t="-9,180.00")
        (sandbox / "inbox" / "Invoice INV-3002 from Northwind Traders.eml").write_bytes(
            _memo_mail(body).as_bytes()
        )
        run = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        events = read_trace(run.run_dir / "trace.jsonl")
        said = [
            (e.action, e.reason) for e in events if e.kind == "control" and e.action.startswith("routine:")
        ]
        bills = [
            b
            for b in fetch_state(place.erp_url).bills
            if b.invoice_number == "INV-3002" and Decimal(str(b.amount)) > 0
        ]
        assert not bills, bills  # no bill of +9,180.00 USD for a credit
        assert ("routine:replayed", "enter-invoice v1: every step matched") not in said, said
        [fell] = [reason for action, reason in said if action == "routine:fallback"]
        assert "-9180.00 USD" in fell and "no bill" in fell, fell
        report = (run.run_dir / "report.md").read_text()
        assert "written by the routine's code" not in report
