"""The scripted solver for recipe cases: which way of working a recipe's request calls for, chosen by
the recipe and filled in from its parameter values (never from the case id or the expected result).

Each entry reuses the general strategies of the other solvers; only "is it entered?" needs its own
small one, a read-only variant of entering invoices.
"""

from __future__ import annotations

from collections.abc import Callable

from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.scripted import ScriptedCall
from taskcrew.eval import kit
from taskcrew.eval.models import EvalCase
from taskcrew.eval.solvers.base import Finding, Recipe, Step, StepScript, judge, visit
from taskcrew.eval.solvers.ledger import MarkPaid, UnpaidReport, claim_text
from taskcrew.eval.solvers.payables import EnterInvoices, Target
from taskcrew.eval.solvers.research import PageAnswer


class CheckEntered(EnterInvoices):
    """Is an invoice (by number, or a vendor's newest) in Acme Payables? Read the files, look, answer."""

    changes_data = False

    def goal(self) -> str:
        return "Tell whether " + " and ".join(t.label for t in self.targets) + " is in Acme Payables"

    def criteria(self) -> list[str]:
        return [f"The answer says whether {t.label} has a bill in Acme Payables" for t in self.targets]

    def steps(self) -> list[Step]:
        reads = super().steps()[: len(self.targets)]
        look = Step(
            "browser_operator",
            "Look for the invoices in Acme Payables and answer",
            "Open the bills list and look for the invoice numbers found in the earlier steps; change nothing.",
            self.answer,
            done_when="it is known which of the invoices are entered",
        )
        return [*reads, look]

    def answer(self, call: ScriptedCall) -> StepScript:
        found = [r.data for r in kit.step_results(call) if r.data.get("invoice_number")]
        report = StepReport.model_validate_json((yield from self.check_bills(call)))
        sources = report.sources or [
            Citation(source=d["file"], quote=d["invoice_number"]) for d in found if d.get("file")
        ]
        summary = report.summary.replace("Nothing to enter: ", "Yes: ").replace(" No bill was created.", "")
        if report.status == "done" and found:
            summary = "No: " + summary
        status = "done" if report.status == "nothing_to_do" else report.status
        return report.model_copy(
            update={"status": status, "summary": summary, "sources": sources}
        ).model_dump_json()

    def audit(self, call: ScriptedCall) -> StepScript:
        claimed = claim_text(call)
        numbers = list(
            dict.fromkeys(
                r.data["invoice_number"] for r in kit.step_results(call) if r.data.get("invoice_number")
            )
        )
        call = yield from visit(call, f"{kit.erp(call)}/bills")
        url, rows = kit.page_url(call.last_tool_result), kit.bill_table(call.last_tool_result)
        if not numbers:
            return judge(call, [Finding(False, url, "the answer names no invoice it looked for")], "")
        findings = []
        for number in numbers:
            hits = [r for r in rows if kit.same_number(r.invoice_number, number)]
            said_yes = any(h.bill_id in claimed for h in hits) and "already entered" in claimed
            said_no = f"no bill yet for {number}" in claimed or (
                "no bill yet for" in claimed and number in claimed
            )
            right = said_yes if hits else said_no
            seen = ", ".join(f"{h.bill_id} ({h.vendor} {h.invoice_number})" for h in hits) or "no bill"
            findings.append(Finding(right, url, f"{number}: the bills list shows {seen}"))
        return judge(call, findings, "The answer matches the bills list.")


def _stems(words: str) -> tuple[str, ...]:
    """Words a sentence about the topic contains ('payment terms' → 'payment', 'term')."""
    return tuple(w.lower().rstrip("s") for w in words.split() if len(w) > 3) or (words,)


Solver = Callable[[dict[str, str], str], Recipe]

RECIPE_SOLVERS: dict[str, Solver] = {
    "enter-invoice": lambda v, task: EnterInvoices([Target(v["vendor"])]),
    "check-invoice": lambda v, task: CheckEntered([Target(v["vendor"], v.get("invoice"))]),
    "mark-paid": lambda v, task: MarkPaid(v["invoice"], v["paid_on"]),
    "unpaid-report": lambda v, task: UnpaidReport(v["due_before"]),
    "vendor-news": lambda v, task: PageAnswer(
        task, f"{v['vendor']} {v['topic']}", (v["vendor"].split()[0],), _stems(v["topic"])
    ),
}
UNSUPPORTED = {("unpaid-report", "per", "vendor"): "the scripted solver totals per currency only"}


def recipe_solver(case: EvalCase) -> Recipe:
    from taskcrew.eval.solvers.registry import NoRecipe

    assert case.recipe is not None
    values = {k: v for k, v in case.recipe.params.items() if isinstance(v, str)}
    for (name, param, value), why in UNSUPPORTED.items():
        if case.recipe.name == name and values.get(param) == value:
            raise NoRecipe(f"case {case.id!r}: {why}")
    solver = RECIPE_SOLVERS.get(case.recipe.name)
    if solver is None:
        raise NoRecipe(
            f"the scripted models have no way to work recipe {case.recipe.name!r}; add one in {__name__}"
        )
    return solver(values, case.task)
