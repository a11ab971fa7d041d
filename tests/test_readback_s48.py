"""Code's read-back of the systems is read once and every reader reads it (a red team's round, s48).

F2: the verifier was given the gate's reading of a send, not code's read-back (its record of sends,
the lines it may cite), and a send read as saved that the read-back shows no row of still ended a
verified run "done". Now ``steps.read_back`` reads the watched pages once per verification and at the
finish, keeps the reading on the run (``RunContext.checked_facts``), and the verifier's record, the
verdict's check, the outcome (``decide``: such a run is ``not_verified``, its reason naming the
read-back), the answer and the report all read that.
F3: a row showed a send when it shared ONE identifier with it: a colleague's bill of another vendor
with the same invoice number "showed" a dropped send, and turned a refused duplicate into "may be
saved". Now a row shows a send by the record the send named, else by all its own identifiers and an
amount it sent, and one row shows one send (``Facts.read_back``).
F4: the report said "result: saved" under Submissions and let "Saved bill BILL-0011" stand for a bill
code's read-back did not find. Now the read-back's verdict stands beside the gate's, and the last
step's words are held to what the read-back shows.
Units on ``Facts.read_back`` and ``decide``; whole runs with scripted models only (real crew,
Chromium, the demo ERP over HTTP)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from routines_world import chore, run_chore, workplace
from test_honest_s47 import _decided  # decide() for a verified run that says a claim

from taskcrew.crew.changes import describe
from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.outcome import Facts
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM
from taskcrew.eval import kit
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.solvers import WorkerBrain, brain_llm, solver_recipe
from taskcrew.eval.solvers.payables import Slips
from taskcrew.mock_erp import ChaosConfig, bill_pages, fetch_state
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.submissions import SubmissionResult

ERP = "http://127.0.0.1:8800"
BILLS = f"{ERP}/bills"
BEFORE = datetime(2026, 9, 30, 9, 0, tzinfo=UTC)
AFTER = BEFORE + timedelta(seconds=5)
ROW = "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>USD</td><td>Unpaid</td></tr>"
SEEDED = {f"BILL-{i:04d}" for i in range(1, 11)}
INITECH = ("BILL-0004", "Initech", "INI-2201", "120.00")
NORTHWIND = ("BILL-0011", "Northwind Traders", "INV-2057", "1284.50")
COLLEAGUES = ("BILL-0012", "Initech", "INV-2057", "75.00")  # another vendor's own INV-2057


def _difference(before: list[tuple[str, ...]], after: list[tuple[str, ...]]) -> dict[str, str]:
    def page(rows: list[tuple[str, ...]]) -> str:
        return "<html><body><table>" + "".join(ROW.format(*r) for r in rows) + "</table></body></html>"

    return {f"{CHANGES_SOURCE} {BILLS}": describe(BILLS, page(before), page(after), BEFORE)}


def _send(result: str, detail: str = "", amount: str = "1284.50", at: datetime = AFTER, **more: Any) -> Any:
    fields = [("vendor_id", "1"), ("invoice_number", "INV-2057"), ("amount", amount), ("currency", "USD")]
    status = more.pop("http_status", {"saved": 303, "refused": 409}.get(result))
    return SubmissionResult(
        method="POST",
        url=f"{BILLS}/new",
        fields=fields,
        result=result,
        http_status=status,
        detail=detail,
        at=at,
        **{"labels": {"vendor_id": "Northwind Traders"}, **more},
    )


# ---- F3: which row shows which send -------------------------------------------------------------


@pytest.mark.parametrize("detail", ["then showed /bills/BILL-0011", ""])
def test_a_colleagues_bill_with_the_same_invoice_number_does_not_show_a_dropped_send(detail: str) -> None:
    """Northwind's INV-2057 is saved (303 → BILL-0011), then dropped; a colleague enters Initech's own
    INV-2057 meanwhile. By the record the answer named, or (no record named) by its amount, the
    colleague's row is not this send's."""
    facts = Facts(submissions=[_send("saved", detail)])
    read = facts.read_back(_difference([INITECH], [INITECH, COLLEAGUES]), BEFORE)
    assert read.submissions[0].result == "unknown", read.submissions[0]
    assert read.submissions[0].unshown and "shows no row of it" in read.changed_line()
    # its own row shows it, by the record named or by all its identifiers and its amount
    shown = facts.read_back(_difference([INITECH], [INITECH, NORTHWIND, COLLEAGUES]), BEFORE)
    assert shown.submissions[0].result == "saved" and not shown.unshown


def test_a_send_that_named_its_record_is_shown_only_by_that_records_row() -> None:
    """The answer named BILL-0013: a row BILL-0011 with the same vendor, number and amount (entered by
    someone else) is another record."""
    facts = Facts(submissions=[_send("saved", "then showed /bills/BILL-0013")])
    read = facts.read_back(_difference([INITECH], [INITECH, NORTHWIND]), BEFORE)
    assert read.submissions[0].result == "unknown"


def test_a_colleagues_row_does_not_turn_a_refused_duplicate_into_may_be_saved() -> None:
    """The run's save is refused as a duplicate (Northwind's INV-2057 is there already); a colleague's
    Initech INV-2057 added meanwhile is no row of it: the run stays "nothing to do", not "done"."""
    refused = _send("refused", "Duplicate bill: invoice INV-2057 from Northwind Traders is already entered")
    facts = Facts(submissions=[refused])
    read = facts.read_back(_difference([NORTHWIND], [NORTHWIND, COLLEAGUES]), BEFORE)
    assert read.submissions[0].result == "refused"
    assert _decided(read)[0] == "nothing_to_do"
    # its own values on a row added: it may be saved (a save answered with an error)
    again = facts.read_back(_difference([INITECH], [INITECH, NORTHWIND]), BEFORE)
    assert again.submissions[0].result == "unknown" and _decided(again)[0] == "done"


def test_one_row_shows_one_send() -> None:
    """Two saves of INV-2057 read as saved, one row: one of them is not in the system. A refusal after
    a save of the same bill stays a refusal (the row is the save's)."""
    first, second = _send("saved"), _send("saved", at=AFTER + timedelta(seconds=1))
    read = Facts(submissions=[first, second]).read_back(_difference([INITECH], [INITECH, NORTHWIND]), BEFORE)
    assert [s.result for s in read.submissions] == ["saved", "unknown"]
    assert _decided(read)[0] == "not_verified"
    refused = _send("refused", "Duplicate bill", at=AFTER + timedelta(seconds=2))
    both = Facts(submissions=[refused.model_copy(update={"at": AFTER}), second])
    read = both.read_back(_difference([INITECH], [INITECH, NORTHWIND]), BEFORE)
    assert [s.result for s in read.submissions] == ["refused", "saved"]


def test_sends_naming_the_same_record_share_its_row() -> None:
    """An edit of BILL-0004 and then its payment: one changed row shows both."""
    sends = [
        SubmissionResult(method="POST", url=f"{BILLS}/BILL-0004/{what}", result="saved", at=AFTER, fields=f)
        for what, f in (("edit", [("amount", "125.00")]), ("pay", [("paid_on", "2026-10-01")]))
    ]
    paid = ("BILL-0004", "Initech", "INI-2201", "125.00")
    read = Facts(submissions=sends).read_back(_difference([INITECH], [paid]), BEFORE)
    assert [s.result for s in read.submissions] == ["saved", "saved"]


# ---- F2: the outcome from code's read-back ------------------------------------------------------


@pytest.mark.parametrize("claim", ["done", "nothing_to_do"])
def test_a_verified_run_whose_saved_send_the_read_back_does_not_show_is_not_verified(claim: str) -> None:
    facts = Facts(submissions=[_send("saved", "then showed /bills/BILL-0011")])
    assert _decided(facts, claim)[0] == "done"  # the gate's reading alone
    read = facts.read_back(_difference([INITECH], [INITECH]), BEFORE)
    outcome, reason = _decided(read, claim)
    assert outcome == "not_verified", (outcome, reason)
    assert "code's read-back" in reason and "shows no row" in reason, reason


# ---- whole runs: real crew, Chromium and the demo ERP over HTTP; only the models scripted ---------

RECORD = re.compile(r'Source "sends of this run":\n(.*?)(?:\n\n|\Z)', re.DOTALL)
CRITERIA = [
    "Exactly one bill was created in Acme Payables for the latest invoice from Northwind Traders, with vendor, "
    "invoice number, total amount, currency, invoice date, due date as the invoice states",
    "No other bill was created or changed",
]


def _drop_new_bills(monkeypatch: pytest.MonkeyPatch, colleague: bool = False) -> list[str]:
    """The ERP shows a new Northwind bill once (303 → its page), then loses it; ``colleague``: and a
    colleague enters Initech's own invoice INV-2057 (75.00) meanwhile. Returns the bills dropped."""
    real_detail = bill_pages.BillPages.detail
    dropped: list[str] = []

    def detail(self: Any, visit: Any, bill_id: str) -> Any:
        response = real_detail(self, visit, bill_id)
        bill = self._ledger.bill(bill_id)
        if bill_id in SEEDED or bill is None or bill.vendor != "Northwind Traders":
            return response
        conn = self._ledger._conn
        conn.execute("DELETE FROM bills WHERE seq = ?", (int(bill_id.split("-")[1]),))
        if colleague and not dropped:
            conn.execute(
                "INSERT INTO bills (vendor_id, invoice_number, invoice_number_key, amount_cents, currency,"
                " invoice_date, due_date, status, paid_on, created_at, notes) SELECT id, 'INV-2057', 'INV2057',"
                " 7500, 'USD', '2026-09-20', '2026-10-20', 'unpaid', NULL, '2026-10-02T09:00:00Z', NULL"
                " FROM vendors WHERE name = 'Initech'"
            )
        conn.commit()
        dropped.append(bill_id)
        return response

    monkeypatch.setattr(bill_pages.BillPages, "detail", detail)
    return dropped


@pytest.fixture
def lazy_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The headline chore as free text (the criteria the planner's own, ``CRITERIA``), the worker
    the scripted solver, the verifier lazy: it opens nothing and cites the line of the gate's record
    of sends that names the bill, whatever it says. Returns (result, bills of the run, prompts)."""
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    prompts: list[str] = []

    def lazy(call: ScriptedCall) -> str:
        prompts.append(call.task_text)
        found = RECORD.search(call.task_text)
        assert found is not None, "the gate's record is in the verifier's prompt"
        line = next(ln for ln in found.group(1).splitlines() if ln.startswith("- "))
        checks = [
            dict(criterion=c, met=True, source=SENDS_SOURCE, observed=f"“{line.removeprefix('- ')}”")
            for c in kit.criteria(call)
        ]
        return json.dumps(
            dict(verified=True, checks=checks, reason="Confirmed on the record of this run's sends.")
        )

    def run() -> tuple[Any, list[Any], list[str]]:
        case = chore("Northwind Traders")
        recipe = solver_recipe(case)
        recipe.slips = Slips()
        recipe.criteria = lambda: list(CRITERIA)  # type: ignore[method-assign]
        worker = brain_llm(WorkerBrain(recipe), "scripted/solver")
        auditor = ScriptedLLM({"verifier": [lazy] * 12}, model="scripted/auditor")
        with workplace(tmp_path) as place:
            place.erp_server.reset(ChaosConfig(save_faults=[]))
            result = place.run(
                "Please " + case.task[0].lower() + case.task[1:],
                worker_model="scripted/solver",
                verifier_model="scripted/auditor",
                scripted=lambda n: auditor if n in ("auditor", "scripted/auditor") else worker,
                human=CaseHuman(case.human),
                criteria=[],
            )
            bills = [b for b in fetch_state(place.erp_server.url).bills if b.id not in SEEDED]
        return result, bills, prompts

    return run


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_dropped_bill_is_not_done_and_the_report_says_what_code_read_back(
    lazy_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ERP accepts the bill (303 → BILL-0011), shows it once and loses it; the verifier cites the
    record of sends. Before: the record it was given said "saved", the run ended "done", and the
    report said "result: saved", "done and independently checked", and let "Saved bill BILL-0011" stand."""
    dropped = _drop_new_bills(monkeypatch)
    result, bills, prompts = lazy_run()
    assert dropped and not bills
    record = RECORD.search(prompts[0])
    assert record is not None
    sends = [ln for ln in record.group(1).splitlines() if ln.startswith("- ")]
    assert sends and all("— saved —" not in ln for ln in sends), sends  # as code read it back
    assert "UNKNOWN whether it was saved" in sends[0] and "shows no row of it" in sends[0], sends[0]
    assert result.outcome == "not_verified", (result.outcome, result.reason)
    report = (result.run_dir / "report.md").read_text()
    assert "This was done and independently checked" not in report
    submitted = [ln for ln in report.splitlines() if "→ result:" in ln]
    assert submitted and "as code read the system back: UNKNOWN whether it was saved" in submitted[0], (
        submitted
    )
    assert re.search(r"Not supported by what this run recorded:\*\* .*BILL-\d+ was saved", report), report


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_bill_the_list_does_not_show_is_not_done_whatever_the_verifier_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ERP saves the bill, but its list (the page code reads back) does not show it; the verifier
    opens the bill's own page and cites it, and code accepts that verdict. The read-back found no row
    of a send read as saved: the run is not_verified, the reason names the read-back."""
    bill = kit.Bill("Vandelay Industries", "VI-3390", "2640.00", "USD", "2026-09-18", "2026-10-18")
    criterion = "Acme Payables has a bill for Vandelay Industries VI-3390 of 2640.00 USD"
    real_bills = bill_pages.BillPages.bills

    def bills(self: Any, visit: Any) -> Any:  # a list that lags: only the bills it had
        real = self._ledger.bills
        monkeypatch.setattr(self._ledger, "bills", lambda where: [b for b in real(where) if b.id in SEEDED])
        try:
            return real_bills(self, visit)
        finally:
            monkeypatch.setattr(self._ledger, "bills", real)

    monkeypatch.setattr(bill_pages.BillPages, "bills", bills)

    def look(call: ScriptedCall) -> Any:
        text = call.last_tool_result
        named = re.search(r"then showed (/bills/BILL-\d+)", call.task_text)
        assert named is not None, "the record of sends names the bill the answer showed"
        if step := kit.login(text):
            return step
        url = kit.page_url(text)
        if not url.endswith(named.group(1)):
            return kit.navigate(kit.erp(call) + named.group(1))
        body = kit.page_text(text)
        shown = [ln for ln in body.splitlines() if re.search(r"VI-3390|2,?640\.00", ln)]
        return kit.verdict([(criterion, True, url, " / ".join(shown))], "the bill's own page shows it")

    worker = ScriptedLLM(
        {
            "planner": [
                Plan(
                    goal="Enter Vandelay's invoice VI-3390",
                    success_criteria=[criterion],
                    steps=[
                        PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter it.")
                    ],
                    changes_data=True,
                ).model_dump_json()
            ],
            "browser_operator": [Loop(policy=kit.EnterBill(bill))],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    verifier = ScriptedLLM({"verifier": [Loop(policy=look) for _ in range(3)]}, model="scripted/v")
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        place.erp_server.reset(ChaosConfig.off())
        place.human = ScriptedHuman(decisions=[ApprovalDecision.approve()])
        result = place.run(
            "Enter Vandelay Industries' invoice VI-3390.",
            worker_model="scripted/w",
            verifier_model="scripted/v",
            scripted={"w": worker, "v": verifier}.__getitem__,
        )
        held = [b for b in fetch_state(place.erp_server.url).bills if b.invoice_number == "VI-3390"]
    assert len(held) == 1  # it is in the ERP: only the page code reads back does not show it
    report = (result.run_dir / "report.md").read_text()
    assert "Verifier's evidence" in report and result.reason, result.reason
    assert result.outcome == "not_verified", (result.outcome, result.reason)
    assert "code's read-back" in result.reason and "shows no row" in result.reason, result.reason


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_colleagues_bill_does_not_make_a_dropped_bill_saved_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The honest scripted solver and auditor; the ERP drops every Northwind bill it saves, and a
    colleague enters Initech's INV-2057 meanwhile. Before, that row "showed" every dropped send: the
    report's first line said "3 change(s) saved"."""
    dropped = _drop_new_bills(monkeypatch, colleague=True)
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        result = run_chore(place, chore("Northwind Traders"), chaos=ChaosConfig(save_faults=[]))
        bills = [
            (b.vendor, b.invoice_number)
            for b in fetch_state(place.erp_server.url).bills
            if b.id not in SEEDED
        ]
    assert dropped and bills == [("Initech", "INV-2057")]
    head = (result.run_dir / "report.md").read_text().splitlines()[0]
    assert "change(s) saved" not in head and "may be saved" in head, head
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)
