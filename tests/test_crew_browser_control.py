"""Control paths through the real browser and ERP: false claims, policy blocks, a person's rejection."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Citation, Plan, PlanStep
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

pytestmark = pytest.mark.browser

BILL = kit.Bill("Vandelay Industries", "VI-3390", "2640.00", "USD", "2026-09-18", "2026-10-20")
CRITERION = "Acme Payables has a bill for Vandelay Industries VI-3390: 2640.00 USD, due 2026-10-20"
ENTER_PLAN = Plan(
    goal="Enter Vandelay's invoice VI-3390",
    success_criteria=[CRITERION],
    steps=[PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter VI-3390.")],
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


def _run(place: Workplace, task: str, worker: ScriptedLLM, verifier: ScriptedLLM, human: ScriptedHuman):
    place.erp_server.reset(ChaosConfig.off())
    place.human = human
    models = {"w": worker, "v": verifier}
    return place.run(
        task, worker_model="scripted/w", verifier_model="scripted/v", scripted=models.__getitem__
    )


def _honest_verifier(attempts: int) -> ScriptedLLM:
    def look(url: str, body: str) -> str:
        rows = kit.bill_rows(body, "VI-3390")
        ok = bool(rows) and "2640.00" in rows[0]
        return kit.verdict(
            [(CRITERION, ok, url, rows[0] if rows else "no VI-3390 row in the list")], "checked the list"
        )

    return ScriptedLLM(
        {"verifier": [Loop(policy=kit.LookUpBills("", look)) for _ in range(attempts)]}, model="scripted/v"
    )


def test_a_false_completion_claim_is_caught_and_the_run_ends_not_verified(place: Workplace) -> None:
    claim = kit.report("done", "Entered VI-3390 as requested.", bill_id="BILL-0011")  # it did nothing
    worker = ScriptedLLM(
        {"planner": [ENTER_PLAN.model_dump_json()] * 3, "browser_operator": [claim] * 3}, model="scripted/w"
    )
    verifier = _honest_verifier(3)
    result = _run(place, "Enter Vandelay Industries' invoice VI-3390.", worker, verifier, ScriptedHuman())
    worker.assert_complete()
    verifier.assert_complete()
    assert result.outcome == "not_verified" and result.verify_attempts == 3
    assert "no VI-3390 row" in worker.calls_for("planner")[1].prompt  # the reason went back to work
    assert len(place.erp_server.state().bills) == 10
    assert result.report.read_text().startswith("# Not verified")
    assert place.store.facts.count() == 0  # nothing learned from a failed run


def test_policy_blocks_ground_truth_and_foreign_hosts_and_the_model_adapts(place: Workplace) -> None:
    question = Plan(
        goal="Count Stark Logistics' bills",
        success_criteria=["The answer gives the number of Stark Logistics bills shown in Acme Payables"],
        steps=[PlanStep(role="browser_operator", title="Count the bills", instructions="Count.")],
        changes_data=False,
    )
    state = {"n": 0}

    def cheat(call: ScriptedCall) -> ToolCall:
        state["n"] += 1
        return kit.navigate(
            f"{kit.erp(call)}/_debug/state" if state["n"] == 1 else "http://demo@evil.example/x"
        )

    def count(url: str, body: str) -> str:
        rows = [line for line in body.splitlines() if line.startswith("| [") and "Stark Logistics" in line]
        return kit.report(
            "done", f"Stark Logistics has {len(rows)} bills.", [Citation(source=url, quote="Stark")]
        )

    def check(url: str, body: str) -> str:
        rows = [line for line in body.splitlines() if line.startswith("| [") and "Stark Logistics" in line]
        return kit.verdict(
            [(question.success_criteria[0], len(rows) == 2, url, f"{len(rows)} rows")], "counted"
        )

    worker = ScriptedLLM(
        {
            "planner": [question.model_dump_json()],
            "browser_operator": [cheat, cheat, Loop(policy=kit.LookUpBills("", count))],
        },
        model="scripted/w",
    )
    verifier = ScriptedLLM({"verifier": [Loop(policy=kit.LookUpBills("", check))]}, model="scripted/v")
    result = _run(
        place, "How many bills from Stark Logistics are in the ERP?", worker, verifier, ScriptedHuman()
    )
    worker.assert_complete()
    assert result.outcome == "done", result.reason
    first, second = (c.last_tool_result for c in worker.calls_for("browser_operator")[1:3])
    assert "Blocked by policy" in first and "/_debug" in first
    assert "Blocked by policy" in second
    assert "2 bills" in result.answer
    blocked = [
        e
        for e in read_trace(result.run_dir / "trace.jsonl")
        if e.kind == "policy" and e.decision == "blocked"
    ]
    assert len(blocked) >= 2


def test_a_rejected_change_writes_nothing_and_is_reported_honestly(place: Workplace) -> None:
    def rejected(call: ScriptedCall):  # the operator reports the refusal instead of retrying
        if "did not approve" in call.last_tool_result:
            return kit.report("blocked", "The person did not approve saving the bill, so nothing was saved.")
        return enter(call)

    enter = kit.EnterBill(BILL)
    worker = ScriptedLLM(
        {"planner": [ENTER_PLAN.model_dump_json()], "browser_operator": [Loop(policy=rejected)]},
        model="scripted/w",
    )
    human = ScriptedHuman(decisions=[ApprovalDecision.reject("not this week")])
    result = _run(
        place,
        "Enter Vandelay Industries' invoice VI-3390.",
        worker,
        ScriptedLLM({}, model="scripted/v"),
        human,
    )
    worker.assert_complete()
    human.assert_complete()
    assert result.outcome == "rejected"
    assert len(place.erp_server.state().bills) == 10
    request = human.requests[0]
    assert {f.name: f.value for f in request.fields}["amount"] == "2640.00"
    report = result.report.read_text()
    assert report.startswith("# Rejected") and "rejected" in report and "not this week" in report
