"""A run's hidden values are the run's own (rt_mask8 F1, F2).

b82db40 hides a value a page holds in a password box (``Vault.note_guess(by_page=True)``). The
vault was the Workplace's, and it never forgot: one hostile page opened by one run masked the
invoice number and amount of every later run of the same process (a job worker runs everyone's
jobs in one Workplace) — what its models read, its report, its citation check ("the bill page does
not contain the quoted words") and its approval ("amount: not found in any source"). And every
hidden value read as the one ``{{secret:PAGE_PASSWORD}}``: a wrong amount read like the right one.

Now: each run works with its own view of the vault (``Vault.for_run``: the stored secrets, hidden
values of its own); a page value the run's task names is not hidden (the model has it); redaction is
for text that leaves — code that compares (the citation check, where an approved value came from)
reads the real text (``Vault.reveal``); each distinct hidden page value has its own placeholder,
``PAGE_PASSWORD_1``, ``_2`` … in the order met.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_adversarial import SECRET, Server, serve
from fixtures_browser import SessionFactory

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.browser import Type
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, ScriptedHuman
from taskcrew.tools.vault import UnknownSecretError, Vault

pytestmark = pytest.mark.browser

INV, AMOUNT, WRONG = "INV-5501", "1250.00", "1520.00"
IBAN_OK, IBAN_BAD = "DE89370400440532013000", "DE44500105175407324931"


def _bill(amount: str, iban: str = IBAN_OK) -> str:
    return (
        f"<title>Bill</title><h1>Bill {INV}</h1><p>Vendor: Globex.</p><p>Amount due: {amount} USD.</p>"
        f"<p>Pay to IBAN {iban}</p>"
    )


def _boxes(*values: str) -> str:
    """Password boxes out of sight, holding ``values`` (never in the page's text)."""
    boxes = "".join(f"<input type=password value='{v}'>" for v in values)
    return f"<div style='position:absolute;left:-9999px'>{boxes}</div>"


PAGES = {
    "/promo": "<title>Vendor news</title><h1>Vendor news</h1><p>Nothing new.</p>" + _boxes(INV, AMOUNT),
    "/news": "<title>Vendor news</title><h1>Vendor news</h1><p>Nothing new.</p>"
    + _boxes(AMOUNT, WRONG, IBAN_OK, IBAN_BAD),
    "/bill": _bill(AMOUNT),
    "/wrong": _bill(WRONG, IBAN_BAD),
    "/pay": "<title>Pay</title><h1>Pay a bill</h1><form method=post action=/paid>"
    f"<label>Invoice <input name=invoice value={INV}></label>"
    f"<label>Amount <input name=amount value={AMOUNT}></label>"
    "<input type=hidden name=currency value=USD><button>Pay</button></form>",
    "/paid": "<title>Paid</title><h1>Payment saved</h1>",
}


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    yield from serve(PAGES)


class Person(ScriptedHuman):
    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return ApprovalDecision.approve(by="ana")

    def ask(self, question: str) -> str:
        return "Yes."


def _settings(root: Path, site: Server) -> WorkplaceSettings:
    return WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=site.url,
        runs_dir=root / "runs",
        erp_db=root / "erp.sqlite3",
        knowledge_dir=root / "knowledge",
        chaos=False,
    )


def _read_plan(goal: str, *paths: str, changes: bool = False) -> Plan:
    steps = [PlanStep(role="browser_operator", title=f"Read {p}", instructions="Read it.") for p in paths]
    if changes:
        steps.append(PlanStep(role="browser_operator", title="Pay it", instructions="Pay it."))
    done = f"Bill {INV} is paid" if changes else f"Bill {INV} shows what is due"
    return Plan(goal=goal, success_criteria=[done], steps=steps, changes_data=changes)


def _amount_line(call: ScriptedCall) -> str:
    """The bill's amount line as this model was shown it (placeholders and all)."""
    lines = [line.strip() for line in call.prompt.splitlines() if "Amount due:" in line]
    return lines[-1] if lines else f"Amount due: {AMOUNT} USD."


def _models(
    plan: Plan, seen: list[str], *, pay: bool = False, verify: bool = False
) -> dict[str, ScriptedLLM]:
    """Each plan step opens its page; the step that read /bill cites its amount line as shown; a
    paying plan then submits /pay. The verifier (``verify``) opens /bill itself and quotes it."""
    loops: list[Loop] = []
    for step in plan.steps:
        path = step.title.removeprefix("Read ")
        if step.title == "Pay it":
            todo = [
                lambda c: kit.navigate(kit.intranet(c) + "/pay"),
                lambda c: kit.act({"action": "click", "index": c.element(r"submits form POST /paid")}),
            ]
        else:
            todo = [lambda c, path=path: kit.navigate(kit.intranet(c) + path)]

        def worker(call: ScriptedCall, todo: list[Any] = todo, path: str = path) -> Any:
            seen.append(call.prompt)
            if todo:
                return todo.pop(0)(call)
            if path != "/bill":
                return kit.report("done", "Read.")
            line = _amount_line(call)  # the amount as this model read it
            cite = Citation(source=kit.intranet(call) + "/bill", quote=line)
            return kit.report("done", f"Bill {INV} is due.", [cite], amount=line.split()[2])

        loops.append(Loop(policy=worker))

    def verifier(call: ScriptedCall) -> Any:
        seen.append(call.prompt)
        page = kit.intranet(call) + "/bill"
        if not verify:
            return kit.verdict([(plan.success_criteria[0], False, "page", "not checked")], "no")
        if not call.last_tool_result:
            return ToolCall(name="web_fetch", args={"url": page})
        check = CriterionCheck(
            criterion=plan.success_criteria[0], met=True, source=page, observed=f"Amount due: {AMOUNT} USD."
        )
        return Verdict(verified=True, reason="the page shows it", checks=[check])

    return {
        "w": ScriptedLLM(
            {
                "planner": [plan.model_dump_json()] * 3,
                "browser_operator": loops * 3,
                "reflector": ['{"facts": []}'] * 6,
            },
            model="scripted/w",
        ),
        "v": ScriptedLLM({"verifier": [Loop(policy=verifier)] * 3}, model="scripted/v"),
    }


def _run(place: Workplace, task: str, plan: Plan, seen: list[str], **kw: bool) -> Any:
    models = _models(plan, seen, **kw)
    return place.run(
        task, worker_model="scripted/w", verifier_model="scripted/v", scripted=models.__getitem__
    )


# ---- F1: a later run of the same Workplace ---------------------------------------------------


@pytest.mark.slow
def test_a_page_password_met_by_one_run_is_not_hidden_in_the_next_run_of_the_workplace(
    tmp_path_factory: pytest.TempPathFactory, site: Server
) -> None:
    person = Person()
    later: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACME_ERP_PASSWORD", SECRET)
        with Workplace(_settings(tmp_path_factory.mktemp("place"), site), person) as place:
            place.erp_server.reset(ChaosConfig.off())
            first: list[str] = []
            _run(place, "Read the intranet's vendor news.", _read_plan("Read the news", "/promo"), first)
            assert any("[filled, hidden]" in p for p in first)  # the hostile page was read in run 1
            check = _run(
                place,
                "Check what the intranet's /bill page says is due.",
                _read_plan(f"Check bill {INV}", "/bill"),
                later,
                verify=True,
            )
            paid = _run(
                place,
                f"Pay bill {INV} on the intranet's /pay page.",
                _read_plan(f"Pay bill {INV}", "/bill", changes=True),
                [],
            )
    # what its models read, its trace and its report show the bill's own values
    shown = [line for p in later for line in p.splitlines() if "Amount due" in line]
    assert shown and all(AMOUNT in line and "PAGE_PASSWORD" not in line for line in shown), shown
    for result in (check, paid):
        for name in ("report.md", "trace.jsonl"):
            text = (result.run_dir / name).read_text()
            assert "PAGE_PASSWORD" not in text, [ln for ln in text.splitlines() if "PAGE_PASSWORD" in ln][:3]
    # its honest, cited answer is verified (the citation check read the bill as it is)
    assert check.outcome == "done", (check.outcome, check.reason)
    # and the approval of its payment names where the amount came from
    (ask,) = [r for r in person.requests if any(f.name == "amount" for f in r.fields)]
    origin = [line for line in ask.summary.splitlines() if "amount" in line]
    assert origin and "/bill, line" in origin[0], origin


# ---- rule 2 and rule 4 within one run --------------------------------------------------------


@pytest.mark.slow
def test_within_a_run_code_compares_the_real_text_and_the_tasks_own_values_stay_readable(
    tmp_path_factory: pytest.TempPathFactory, site: Server
) -> None:
    """The run reads the hostile page, then the bill, then pays it. The amount (not in the task) is
    hidden from the models from then on, also on the bill — its step cites the amount line as it read
    it, placeholder and all; the approval still names that line as the amount's origin (the quote
    and the page compared as the page held them). The invoice number, which the task names, was
    never hidden."""
    person = Person()
    seen: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACME_ERP_PASSWORD", SECRET)
        with Workplace(_settings(tmp_path_factory.mktemp("place"), site), person) as place:
            place.erp_server.reset(ChaosConfig.off())
            result = _run(
                place,
                f"Pay bill {INV} on the intranet's /pay page.",
                _read_plan(f"Pay bill {INV}", "/promo", "/bill", changes=True),
                seen,
            )
    (ask,) = [r for r in person.requests if any(f.name == "amount" for f in r.fields)]
    assert {f.name: f.value for f in ask.fields}["amount"] == AMOUNT  # the approval shows it as sent
    origin = [line for line in ask.summary.splitlines() if "amount" in line]
    assert origin and "/bill, line" in origin[0], origin
    assert any(f"# Bill {INV}" in p for p in seen), "the invoice number the task names was hidden"
    bill = [line for p in seen for line in p.splitlines() if "Amount due" in line]
    assert bill and all(AMOUNT not in line and "{{secret:PAGE_PASSWORD_1}}" in line for line in bill), bill
    assert all("PAGE_PASSWORD_2" not in p for p in seen)
    trace = (result.run_dir / "trace.jsonl").read_text()
    assert AMOUNT not in (result.run_dir / "report.md").read_text()
    assert all(AMOUNT not in line for line in trace.splitlines() if json.loads(line)["kind"] != "approval")


# ---- F2: one placeholder per value -------------------------------------------------------------


def test_a_wrong_amount_and_bank_account_do_not_read_like_the_right_ones(
    make_session: SessionFactory, site: Server
) -> None:
    vault = Vault({"ERP_PASSWORD": SECRET})
    session = make_session(base_url=site.url, vault=vault)
    session.goto(site.url + "/news")
    right = session.goto(site.url + "/bill").observation.text
    wrong = session.goto(site.url + "/wrong").observation.text
    assert right != wrong, f"the right and the wrong bill read alike:\n{right}\n---\n{wrong}"
    assert "{{secret:PAGE_PASSWORD_1}} USD" in right and "{{secret:PAGE_PASSWORD_2}} USD" in wrong
    assert "IBAN {{secret:PAGE_PASSWORD_3}}" in right and "IBAN {{secret:PAGE_PASSWORD_4}}" in wrong
    # none is typed: the model never knew them
    box = session.goto(site.url + "/pay").observation
    amount = next(e.index for e in box.elements if e.name == "Amount")
    result = session.act([Type(index=amount, text="{{secret:PAGE_PASSWORD_2}}", clear=True)])
    assert not result.ok and "never typed" in result.render(), result.render()


def test_hidden_values_are_the_runs_own_and_code_can_read_them_back() -> None:
    place = Vault({"ERP_PASSWORD": SECRET})
    run, other = place.for_run(), place.for_run()
    run.note_guess(AMOUNT, by_page=True)
    run.note_guess(WRONG, by_page=True)
    run.note_guess(AMOUNT, by_page=True)  # met again: the same placeholder
    run.note_guess("typed-guess-1")  # the model's own guess
    masked = run.redact(f"{AMOUNT} or {WRONG}, typed-guess-1, {SECRET}")
    assert masked == (
        "{{secret:PAGE_PASSWORD_1}} or {{secret:PAGE_PASSWORD_2}}, {{secret:TYPED_SECRET}}, {{secret:ERP_PASSWORD}}"
    )
    assert run.reveal(masked) == f"{AMOUNT} or {WRONG}, typed-guess-1, {{{{secret:ERP_PASSWORD}}}}"
    for view in (place, other, place.for_run()):  # the workplace and every other run: stored secrets only
        assert (
            view.redact(f"{AMOUNT} typed-guess-1 {SECRET}")
            == f"{AMOUNT} typed-guess-1 {{{{secret:ERP_PASSWORD}}}}"
        )
        with pytest.raises(UnknownSecretError, match="none in this session"):
            view.substitute("{{secret:TYPED_SECRET}}")
    # a value the run's task names is the model's already
    told = place.for_run()
    told.know(f"Pay bill {INV} for {AMOUNT}")
    told.note_guess(AMOUNT, by_page=True)
    told.note_guess(WRONG, by_page=True)
    assert told.redact(f"{AMOUNT} {WRONG}") == f"{AMOUNT} {{{{secret:PAGE_PASSWORD_1}}}}"
    assert re.fullmatch(r"\S+", told.redact(WRONG))
