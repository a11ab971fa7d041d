"""The headline task end to end: scripted models drive the real crew, browser, ERP (with chaos) and files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Citation, Plan, PlanStep, Reflection
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import fetch_state
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASK = (
    "Find the latest invoice from Northwind Traders, extract the amount and due date, enter it into our "
    "internal system, and tell me once it is done."
)
BILL = kit.Bill("Northwind Traders", "INV-2057", "1284.50", "USD", "2026-09-12", "2026-10-12")
CRITERIA = [
    "Acme Payables has exactly one bill for Northwind Traders INV-2057: 1284.50 USD, invoice date "
    "2026-09-12, due 2026-10-12",
    "No other bill was created or changed",
]
RECIPE = (  # the task reads as the recipe enter-invoice, so the run keeps its criterion too
    "Acme Payables has exactly one bill for the newest invoice from Northwind Traders, with the invoice "
    "number, total amount, currency, invoice date and due date the invoice states"
)
PLAN = Plan(
    goal="Enter Northwind Traders' latest invoice into Acme Payables",
    success_criteria=CRITERIA,
    steps=[
        PlanStep(role="file_reader", title="Find and read the latest Northwind invoice", instructions="..."),
        PlanStep(
            role="browser_operator", title="Check Acme Payables for an existing bill", instructions="..."
        ),
        PlanStep(role="browser_operator", title="Enter the bill", instructions="..."),
    ],
    changes_data=True,
)
INVOICE_FILE = "Invoice from Northwind Traders.eml"
LESSON = "Acme Payables can expire the session on save: log in again and re-enter the form."


def _file_reader_answer(call: ScriptedCall) -> str:
    assert "2026-10-12" in call.last_tool_result  # the due-date tool's derivation
    return kit.report(
        "done",
        "Latest Northwind invoice is INV-2057 (the newer reminder is not an invoice). Total payable "
        "1,284.50 USD incl. VAT; terms Net 30 from 2026-09-12.",
        [Citation(source=INVOICE_FILE, quote="INV-2057")],
        invoice_number="INV-2057",
        amount="1284.50",
        currency="USD",
        invoice_date="2026-09-12",
        due_date="2026-10-12",
    )


def _no_duplicate(url: str, body: str) -> str:
    assert not kit.bill_rows(body, "INV-2057")
    return kit.report("done", "No bill for INV-2057 exists yet.", [Citation(source=url, quote="INV-2031")])


def before_after(call: ScriptedCall) -> tuple[str, list[str], list[str]]:
    """The before/after difference code gave the verifier: its source name, rows added and removed."""
    match = re.search(r'Source "(before/after [^"]+)":\n(.*?)(?:\n\n|\Z)', call.task_text, re.DOTALL)
    assert match, "the verifier was given no before/after difference"
    rows = match.group(2).splitlines()
    return (
        match.group(1),
        [r[2:] for r in rows if r.startswith("+ ")],
        [r[2:] for r in rows if r.startswith("- ")],
    )


def _verifier_policy() -> Loop:
    seen: dict[str, ScriptedCall] = {}

    def verify(url: str, body: str) -> str:
        rows = kit.bill_rows(body, "INV-2057")
        row = rows[0] if rows else "(no row)"
        ok = len(rows) == 1 and "1284.50" in row and "2026-10-12" in row
        source, added, removed = before_after(seen["call"])
        new_bills = [r for r in added if "BILL-" in r]
        untouched = (
            len(new_bills) == 1 and "INV-2057" in new_bills[0] and not any("BILL-" in r for r in removed)
        )
        return kit.verdict(
            [
                (RECIPE, ok, url, row),
                (CRITERIA[0], ok, url, row),
                (
                    CRITERIA[1],
                    untouched,
                    source,
                    f"the only bill row added: “{new_bills[0] if new_bills else '-'}”; no bill row removed or changed",
                ),
            ],
            "The bills list shows the new bill with the expected values, and nothing else changed."
            if ok and untouched
            else "Bill not found as expected.",
        )

    look = kit.LookUpBills("", verify)

    def policy(call: ScriptedCall):  # type: ignore[no-untyped-def]
        seen["call"] = call
        return look(call)

    return Loop(policy=policy)


def _scripts() -> tuple[ScriptedLLM, ScriptedLLM]:
    worker = ScriptedLLM(
        {
            "planner": [PLAN.model_dump_json()],
            "file_reader": [
                ToolCall(name="search_files", args={"query": "Northwind"}),
                ToolCall(name="read_file", args={"path": INVOICE_FILE}),
                ToolCall(
                    name="compute_due_date", args={"invoice_date": "12 September 2026", "terms": "Net 30"}
                ),
                _file_reader_answer,
            ],
            "browser_operator": [
                Loop(policy=kit.LookUpBills("", _no_duplicate)),
                Loop(policy=kit.EnterBill(BILL, first_amount="1,284.50")),
            ],
            "reflector": [
                Reflection(
                    facts=[
                        LESSON,
                        "Check the bills list for the invoice number first.",
                        "Enter the total incl. tax.",
                    ]
                )
            ],
        },
        model="scripted/worker",
    )
    verifier = ScriptedLLM({"verifier": [_verifier_policy()]}, model="scripted/verifier")
    return worker, verifier


def test_headline_task_survives_every_fault_and_enters_exactly_one_correct_bill(tmp_path: Path) -> None:
    worker, verifier = _scripts()
    # the first entry (amount "1,284.50") refused, the corrected one; after its HTTP 503 (it may have
    # saved) the same bill is asked again (``Policy.sent``)
    human = ScriptedHuman(decisions=[ApprovalDecision.approve()] * 3)
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        runs_dir=tmp_path / "runs",
        erp_db=tmp_path / "erp.sqlite3",
        knowledge_dir=tmp_path / "knowledge",
    )
    models = {"worker": worker, "verifier": verifier}
    with Workplace(settings, human) as place:
        result = place.run(
            TASK,
            worker_model="scripted/worker",
            verifier_model="scripted/verifier",
            scripted=models.__getitem__,
        )
        state = fetch_state(place.erp_url)
        facts = place.store.facts.all()

    worker.assert_complete()
    verifier.assert_complete()
    human.assert_complete()
    assert result.outcome == "done", result.reason

    # exactly one correct bill, nothing else touched
    new = [b for b in state.bills if b.id not in {f"BILL-{i:04d}" for i in range(1, 11)}]
    assert [(b.vendor, b.invoice_number, b.amount, b.currency, b.invoice_date, b.due_date) for b in new] == [
        ("Northwind Traders", "INV-2057", "1284.50", "USD", "2026-09-12", "2026-10-12")
    ]
    assert state.chaos.counters.sessions_expired == 1 and state.chaos.counters.service_unavailable == 1

    # approvals showed the exact values; the second (corrected) one is what got saved
    fields = [{f.name: f.value for f in r.fields} for r in human.requests]
    assert fields[0]["amount"] == "1,284.50" and fields[1]["amount"] == "1284.50"
    assert len(fields) == 3 and fields[2] == fields[1]  # the retry after the 503, asked again
    assert fields[1]["invoice_number"] == "INV-2057" and fields[1]["due_date"] == "2026-10-12"
    # and where each value came from: the cited file and its line, or the step that reported it
    origins = human.requests[1].summary
    # the invoice number is printed in the subject, the body and the attachment: each line named
    [said] = [line for line in origins.splitlines() if "invoice_number = INV-2057" in line]
    assert said.startswith("  invoice_number = INV-2057: Invoice from Northwind Traders.eml, line"), said
    assert "ambiguous" not in said, said
    assert "due_date = 2026-10-12: step 1 (file_reader) reported it as 'due_date'" in origins

    # the secret never reached a model, the trace or the report
    trace = (result.run_dir / "trace.jsonl").read_text()
    report = result.report.read_text()
    prompts = json.dumps([c.messages for c in worker.calls + verifier.calls])
    for text in (trace, report, prompts):
        assert "demo123" not in text
    assert "{{secret:ERP_PASSWORD}}" in prompts  # the model typed the placeholder
    assert "Done, and independently verified" in report
    # the first line says what changed in the system; each submission says whether it was applied
    first_line = report.splitlines()[0]
    assert "— 1 change(s) saved: POST http" in first_line and "/bills/new" in first_line, first_line
    assert "bounced to the login page" in report and "UNKNOWN whether it was saved (HTTP 503" in report
    assert "saved — the system accepted it (HTTP 303" in report
    # "nothing else changed" was checked on the before/after difference of the bills list, by code
    evidence = report.split("## Verifier's evidence")[1].split("\n\n")[1]
    assert "| No other bill was created or changed | yes | before/after http" in evidence, evidence
    events = read_trace(result.run_dir / "trace.jsonl")
    bounced = [e for e in events if e.kind == "tool_call" and "bounced to the login page" in e.result]
    assert bounced and all(not e.result.startswith("Result: OK") for e in bounced)
    # after the save with no clear answer (the 503) the operator looked in the bills list before
    # sending it again, as the result told it to
    acts = [e for e in events if e.kind == "tool_call" and e.tool == "browser_act"]
    after = next(i for i, e in enumerate(acts) if "UNKNOWN whether it was saved" in e.result) + 1
    looked = acts[after].args["actions"][0]
    assert looked["action"] == "navigate" and looked["url"].endswith("/bills"), looked
    first = report.split("## Verifier")[0]  # the answer to the person comes first
    assert first.index("## Answer") < first.index("**Submissions**") < first.index("**Caveats:**")
    assert first.count("sent again (already approved)") + first.count("**approved** by the person asked") == 4
    assert "HTTP 503" in trace and "422" in trace
    assert (result.run_dir / "final_page.png").stat().st_size > 1000

    # every role's prompt names only tools that role has
    assert_prompts_name_only_their_tools(worker.calls + verifier.calls)

    # the planner was given the company's procedures; the reflector stored at most 3 facts, with provenance
    assert "duplicate" in worker.calls_for("planner")[0].prompt.lower()
    assert len(facts) == 3 and LESSON in [f.text for f in facts]
    assert all(p.run_id == result.run_dir.name for f in facts for p in f.provenance)


def tools_named(text: str, names: set[str]) -> set[str]:
    """The tool names a prompt mentions as tools (a one-word name only as `name`, "name tool" or name(…))."""
    found = set()
    for name in names:
        if "_" in name:
            pattern = rf"\b{re.escape(name)}\b"
        else:
            pattern = rf"`{re.escape(name)}`|\b{re.escape(name)} tool\b|\b{re.escape(name)}\(|['\"]{re.escape(name)}['\"] tool"
        if re.search(pattern, text):
            found.add(name)
    return found


def assert_prompts_name_only_their_tools(calls: list[ScriptedCall]) -> None:
    names = {t for c in calls for t in c.tools}
    roles = set()
    for call in calls:
        prompt = "\n".join(
            str(m.get("content") or "") for m in call.messages if m.get("role") in ("system", "user")
        )
        extra = tools_named(prompt, names) - set(call.tools)
        assert not extra, (
            f"the {call.role} prompt names {sorted(extra)}, tools it does not have ({call.tools})"
        )
        roles.add(call.role)
    assert {"planner", "file_reader", "browser_operator", "verifier", "reflector"} <= roles
