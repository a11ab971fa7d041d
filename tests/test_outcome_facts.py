"""The outcome of whole runs comes from facts (what was sent, what the system answered, the verdict),
never from the last step's word. Scripted models; real crew, Chromium, ERP and files."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator

import pytest
from fixtures_console import ConsoleEnv
from rich.console import Console

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.progress import ProgressPrinter
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.eval.runs import read_run
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VANDELAY = kit.Bill("Vandelay Industries", "VI-3390", "2640.00", "USD", "2026-09-18", "2026-10-20")
GLOBEX = kit.Bill("Globex Corp", "GX-7781", "310.00", "USD", "2026-09-20", "2026-10-20")
CRITERION = "Acme Payables has a bill for Vandelay Industries VI-3390: 2640.00 USD, due 2026-10-20"


def _plan(title: str, *, criteria: list[str] | None = None, steps: int = 1) -> Plan:
    return Plan(
        goal="Enter Vandelay's invoice VI-3390",
        success_criteria=criteria or [CRITERION],
        steps=[
            PlanStep(role="browser_operator", title=f"{title} {i + 1}", instructions="As the title says.")
            for i in range(steps)
        ],
        changes_data=True,
    )


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workplace]:
    root = tmp_path_factory.mktemp("place")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        runs_dir=root / "runs",
        erp_db=root / "erp.sqlite3",
        knowledge_dir=root / "knowledge",
        chaos=False,
    )
    with Workplace(settings, ScriptedHuman()) as workplace:
        yield workplace


def _run(place: Workplace, worker: ScriptedLLM, verifier: ScriptedLLM, human: ScriptedHuman):
    place.erp_server.reset(ChaosConfig.off())
    place.human = human
    models = {"w": worker, "v": verifier}
    return place.run(
        "Enter Vandelay Industries' invoice VI-3390.",
        worker_model="scripted/w",
        verifier_model="scripted/v",
        scripted=models.__getitem__,
    )


def _verifier(*meets: bool) -> ScriptedLLM:
    """A verifier that opens the bills list and cites the VI-3390 row it saw (``meets``: per attempt)."""

    def judge(met: bool):
        def look(url: str, body: str) -> str:
            rows = kit.bill_rows(body, "VI-3390")
            seen = rows[0] if rows else "no VI-3390 row in the list"
            return kit.verdict([(CRITERION, met and bool(rows), url, seen)], "checked the bills list")

        return look

    return ScriptedLLM(
        {"verifier": [Loop(policy=kit.LookUpBills("", judge(m))) for m in meets]}, model="scripted/v"
    )


def _nothing_left(url: str, body: str) -> str:
    row = kit.bill_rows(body, "VI-3390")[0]
    return kit.report(
        "nothing_to_do",
        "VI-3390 is already in Acme Payables; nothing is left to do.",
        [Citation(source=url, quote=row)],
    )


def test_a_run_that_saved_a_bill_is_done_even_when_its_last_step_found_nothing_left_to_do(
    place: Workplace,
) -> None:
    # the recipe run: saved, one failed verification, a replan whose step finds it in place
    worker = ScriptedLLM(
        {
            "planner": [_plan("Enter the bill").model_dump_json(), _plan("Check the bill").model_dump_json()],
            "browser_operator": [
                Loop(policy=kit.EnterBill(VANDELAY)),
                Loop(policy=kit.LookUpBills("", _nothing_left)),
            ],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    verifier = _verifier(False, True)
    result = _run(place, worker, verifier, ScriptedHuman(decisions=[ApprovalDecision.approve()]))
    worker.assert_complete()
    verifier.assert_complete()
    assert len([b for b in place.erp_server.state().bills if b.invoice_number == "VI-3390"]) == 1
    assert result.outcome == "done", result.reason
    report = result.report.read_text()
    first = report.splitlines()[0]
    assert first.startswith("# Done") and "1 change(s) saved: POST " in first and "/bills/new" in first
    assert "Nothing needed to change" not in report
    assert result.answer.startswith("1 change(s) saved")  # the facts first, then the step's words
    assert "1 change(s) saved" in read_run(result.run_dir).changed  # what `runs list` shows


def test_a_run_that_sent_nothing_is_nothing_to_do_on_the_gates_record_and_shows_checks_as_they_stand(
    place: Workplace, console_env: ConsoleEnv
) -> None:
    # a read-back run: nothing sent, the state was already in place. "No bill was created or
    # changed" is checked on the gate's record of the run's sends (code-made, citable); a supporting
    # check citing a file the verifier never opened is rejected by code and must be shown as "not
    # counted" everywhere (terminal, report, console), never as a ✗/NO under "verified"
    existing = next(b for b in place.erp_server.state().bills)
    criterion = f"Acme Payables has a bill for {existing.vendor} {existing.invoice_number}"
    nothing = "No bill was created or changed"
    never_opened = f"Inbox/{existing.vendor} {existing.invoice_number}.pdf"

    def found(url: str, body: str) -> str:
        row = kit.bill_rows(body, existing.invoice_number)[0]
        return kit.report("nothing_to_do", "It is already entered.", [Citation(source=url, quote=row)])

    def check(url: str, body: str) -> str:
        rows = kit.bill_rows(body, existing.invoice_number)
        checks = [
            CriterionCheck(
                criterion=criterion, met=bool(rows), source=url, observed=rows[0] if rows else "-"
            ),
            CriterionCheck(
                criterion=nothing, met=True, source="sends of this run", observed="-", find="submissions sent"
            ),
            CriterionCheck(
                criterion="The amount matches the invoice document",
                met=True,
                source=never_opened,
                observed=f"Total {existing.amount}",
            ),
        ]
        return Verdict(verified=True, checks=checks, reason="it is there").model_dump_json()

    worker = ScriptedLLM(
        {
            "planner": [_plan("Check the bill", criteria=[criterion, nothing]).model_dump_json()],
            "browser_operator": [Loop(policy=kit.LookUpBills("", found))],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    verifier = ScriptedLLM({"verifier": [Loop(policy=kit.LookUpBills("", check))]}, model="scripted/v")
    screen = io.StringIO()
    place.erp_server.reset(ChaosConfig.off())
    place.human = ScriptedHuman()
    result = place.run(
        "Enter Vandelay Industries' invoice VI-3390.",
        worker_model="scripted/w",
        verifier_model="scripted/v",
        scripted={"w": worker, "v": verifier}.__getitem__,
        listeners=[ProgressPrinter(Console(file=screen, width=200, color_system=None))],
    )
    verifier.assert_complete()
    assert result.outcome == "nothing_to_do", result.reason
    report = result.report.read_text()
    assert report.splitlines()[0].endswith("— Nothing was changed in any system")
    # the gate's record is in the verifier's prompt, and code copied its line as the evidence
    assert "Data-changing submissions sent: none" in verifier.calls_for("verifier")[0].task_text
    assert "| yes | sends of this run | “Data-changing submissions sent: none” |" in report
    # the rejected check, as it stands, in every place that shows it
    shown = screen.getvalue()
    line = next(ln for ln in shown.splitlines() if "The amount matches the invoice document" in ln)
    assert "✗" not in line and "✓" not in line and "not counted — rejected by code" in line, line
    row = next(ln for ln in report.splitlines() if ln.startswith("| The amount matches the invoice"))
    assert "| not counted — rejected by code |" in row and "| NO |" not in row, row
    assert "Not confirmed: The amount matches" not in report  # a caveat that would contradict the outcome
    assert "A check code rejected (not counted as evidence): The amount matches" in report
    shutil.copytree(result.run_dir, console_env.runs / result.run_dir.name)
    page = console_env.page_as("ana")
    page.goto(f"{console_env.url}/runs/{result.run_dir.name}")
    rows = page.locator("#criteria tbody tr")
    assert rows.filter(has_text="The amount matches").locator("td").nth(1).inner_text() == (
        "not counted — rejected by code"
    )
    assert rows.filter(has_text=criterion).locator("td").nth(1).inner_text() == "yes"
    assert page.locator("#changed").inner_text() == "Nothing was changed in any system"
    page.goto(f"{console_env.url}/runs")  # the list says what each run changed
    assert "Nothing was changed in any system" in page.locator("#runs tbody tr").first.inner_text()


def test_a_run_that_says_done_but_changed_nothing_is_not_reported_as_done(place: Workplace) -> None:
    # the step claims it entered the bill, but nothing left the gate: the bill the verifier finds was
    # there before the run, so the run did not do it — "Done" would report more than happened
    existing = next(b for b in place.erp_server.state().bills)
    criterion = f"Acme Payables has a bill for {existing.vendor} {existing.invoice_number}"

    def claims(url: str, body: str) -> str:
        row = kit.bill_rows(body, existing.invoice_number)[0]
        return kit.report("done", "I entered the bill.", [Citation(source=url, quote=row)])

    def check(url: str, body: str) -> str:
        rows = kit.bill_rows(body, existing.invoice_number)
        return kit.verdict([(criterion, bool(rows), url, rows[0] if rows else "none")], "it is there")

    worker = ScriptedLLM(
        {
            "planner": [_plan("Enter the bill", criteria=[criterion]).model_dump_json()],
            "browser_operator": [Loop(policy=kit.LookUpBills("", claims))],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    verifier = ScriptedLLM({"verifier": [Loop(policy=kit.LookUpBills("", check))]}, model="scripted/v")
    result = _run(place, worker, verifier, ScriptedHuman())
    assert result.outcome == "nothing_to_do", result.reason
    assert "this run changed nothing" in result.reason
    report = result.report.read_text()
    assert report.splitlines()[0].endswith("— Nothing was changed in any system")
    assert "This was done" not in report


def test_a_rejected_second_change_does_not_hide_the_first_one_that_was_saved(place: Workplace) -> None:
    plan = Plan(
        goal="Enter two invoices",
        success_criteria=[CRITERION, "Acme Payables has a bill for Globex Corp GX-7781"],
        steps=[
            PlanStep(role="browser_operator", title="Enter VI-3390", instructions="Enter it."),
            PlanStep(role="browser_operator", title="Enter GX-7781", instructions="Enter it."),
        ],
        changes_data=True,
    )
    worker = ScriptedLLM(
        {
            "planner": [plan.model_dump_json()],
            "browser_operator": [Loop(policy=kit.EnterBill(VANDELAY)), Loop(policy=kit.EnterBill(GLOBEX))],
        },
        model="scripted/w",
    )
    human = ScriptedHuman(decisions=[ApprovalDecision.approve(), ApprovalDecision.reject("not Globex")])
    result = _run(place, worker, ScriptedLLM({}, model="scripted/v"), human)
    human.assert_complete()
    assert result.outcome == "rejected", result.reason
    report = result.report.read_text()
    assert "1 change(s) saved" in report.splitlines()[0]
    assert "Nothing was changed" not in report and "nothing was written" not in report
    assert "what the run did save before that is listed under Submissions" in report
