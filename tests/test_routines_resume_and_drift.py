"""A replay resumed in a later leg of a job, a reworked replay as a whole run, and an issuer that
changed its invoice numbers' style as well as its layout: a round of gaps.

1. A durable job whose worker stopped after the replay (its leg handed back at the "plan"
   checkpoint) was resumed by a leg with a fresh replayer that never ran: the replay was counted
   neither a success nor a fallback (a routine that kept failing after resumes was never flagged),
   and a clean replay was reflected on. Now the replay's progress is saved with the run's
   checkpoints and read back by the leg that resumes, which counts it — once per run, whichever
   leg (or legs) finish it (``hooks.Progress``, ``RoutineStore.count_once``).
2. A replay the verifier rejected and the agent reworked is a fallback and the run reflects: until
   now only ``hooks.after_run`` was tested with stand-ins; here it is a whole run.
3. A newer invoice of the issuer in a new layout and a new number style ("NWT/2026/0042" where the
   template reads INV-2057) was passed over for the older one: the rule looked for numbers of the
   template's shape only. Now a number the file prints as an invoice number, in any style, stops it.

Whole runs: real Chromium, the demo ERP, a real job database (SQLite); only the models are scripted.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import test_routines_replay
from test_adversarial_routines_replay_2 import NEW_LAYOUT
from test_routines import INBOX, _routine, _template
from test_routines_replay import new_bills, roles_called

from taskcrew.crew.run import RunResult, run_task
from taskcrew.crew.trace import read_trace
from taskcrew.eval import kit
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.models import EvalCase
from taskcrew.eval.solvers import scripted_models
from taskcrew.eval.solvers.base import AuditorBrain, ScriptedCall, brain_llm
from taskcrew.eval.solvers.registry import solver_recipe
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import HandBack, StoreCheckpoints, StoreIntents, readback_rules
from taskcrew.knowledge import KnowledgeStore
from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines import hooks
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import Template
from taskcrew.routines.replay import Fallback, Replayer
from taskcrew.routines.store import RoutineStore
from taskcrew.tools.files import SandboxFiles
from taskcrew.tools.intents import IntentLog

# a workplace whose headline chore the agent ran once and whose draft it proposed (a module fixture)
world = test_routines_replay.learned
WHOLE_RUN = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]
NWT = "Northwind Traders"
BILL = ("Northwind Traders", "INV-2057", "1284.50", "USD", "2026-09-12", "2026-10-12")


# ---------------------------------------------------------------- whole runs: legs of a job


class HandedBackAfter(StoreCheckpoints):
    """A leg's checkpoints whose worker is stopping: the leg is handed back right after ``stage``
    is saved (``HandBack``, as ``LegRunner`` does when it drains)."""

    def __init__(self, jobs: Jobs, job_id: str, stage: str) -> None:
        self.saved = ""
        super().__init__(jobs, job_id, "w1", hand_back=lambda: self.saved == stage)

    def save(self, stage: str, state: dict[str, Any]) -> None:
        self.saved = stage
        super().save(stage, state)


def whole_run(test: Any) -> Any:
    for mark in WHOLE_RUN:
        test = mark(test)
    return test


def _job(tmp_path: Path, case: EvalCase) -> tuple[Jobs, str]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit(case.task, submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    return jobs, job.id


def _leg(
    place: Any, case: EvalCase, knowledge: Any, job: tuple[Jobs, str] | None = None, **kw: Any
) -> RunResult:
    """One leg of the chore on the ERP as it is (not reset), with a knowledge store (the reflector
    is asked only when there is one); of the job ``job`` as ``LegRunner`` runs it — its stages
    checkpointed (``checkpoints``, given) and its sends in the job's intent log."""
    settings = place.run_settings(
        case.task, worker_model="scripted/solver", verifier_model="scripted/auditor", criteria=case.criteria
    )
    scripted = kw.get("scripted") or scripted_models(case)
    res = place.resources(scripted=scripted, human=CaseHuman(case.human), store=knowledge)
    if job is not None:
        jobs, job_id = job
        res.checkpoints = kw.get("checkpoints") or StoreCheckpoints(jobs, job_id, "w1")
        res.browser.policy.intents = IntentLog(StoreIntents(jobs, job_id), job_id, readback_rules(place))
    return run_task(settings, res)


def _newest_run(place: Any, before: set[Path]) -> Path:
    made = [p for p in place.settings.runs_dir.iterdir() if p.is_dir() and p not in before]
    assert len(made) == 1, made
    return made[0]


def _accepted(store: RoutineStore) -> Any:
    store.accept("enter-invoice", 1, "reviewer")
    routine = store.accepted("enter-invoice")
    assert routine is not None and routine.version == 1
    return routine


@whole_run
def test_a_clean_replay_resumed_by_a_later_leg_is_counted_once_and_not_reflected_on(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    place, case, store = world["place"], world["case"], world["store"]
    before = _accepted(store)
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    jobs, job_id = _job(tmp_path, case)
    runs = set(place.settings.runs_dir.iterdir())

    with pytest.raises(HandBack):  # the worker stops after the replay's "plan" checkpoint
        _leg(place, case, knowledge_store, (jobs, job_id), checkpoints=HandedBackAfter(jobs, job_id, "plan"))
    first = _newest_run(place, runs)
    assert new_bills(place.erp_url) == [BILL]  # the replay entered the bill in the first leg
    assert not (first / hooks.NOTE_FILE).exists() or "v1:" not in (first / hooks.NOTE_FILE).read_text()

    resumed = _leg(place, case, knowledge_store, (jobs, job_id))  # the next leg resumes

    assert resumed.outcome == "done", resumed.reason
    assert new_bills(place.erp_url) == [BILL]
    assert set(roles_called(resumed.run_dir)) == {"verifier"}  # no reflection on a clean replay
    counted = store.get("enter-invoice", 1)
    assert (counted.successes, counted.fallbacks) == (before.successes + 1, before.fallbacks)
    note = (resumed.run_dir / hooks.NOTE_FILE).read_text()
    assert "routine enter-invoice v1: replayed (replayed in an earlier leg of this job)" in note, note


@whole_run
def test_a_replay_that_fell_back_and_was_resumed_counts_as_a_fallback(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    place, case, store = world["place"], world["case"], world["store"]
    before = _accepted(store)
    place.erp_server.reset(ChaosConfig(form_change="rename", shuffle_fields=True, save_faults=[]))
    jobs, job_id = _job(tmp_path, case)

    with pytest.raises(HandBack):  # the replay fell back and the agent planned; then the stop
        _leg(place, case, knowledge_store, (jobs, job_id), checkpoints=HandedBackAfter(jobs, job_id, "plan"))
    assert new_bills(place.erp_url) == []

    resumed = _leg(place, case, knowledge_store, (jobs, job_id))

    assert resumed.outcome == "done", resumed.reason
    assert new_bills(place.erp_url) == [BILL]
    counted = store.get("enter-invoice", 1)
    assert counted.fallbacks == before.fallbacks + 1, counted
    assert counted.fallbacks_in_a_row == before.fallbacks_in_a_row + 1
    assert counted.successes == before.successes and "invoice_number" in counted.last_fallback
    note = (resumed.run_dir / hooks.NOTE_FILE).read_text()
    assert "routine enter-invoice v1: fell_back (replayed in an earlier leg of this job)" in note, note
    assert "invoice_number" in note


# ---------------------------------------------------------------- whole run: a reworked replay


class RejectsTheFirstCheck:
    """The scripted auditor, except that its first verification rejects what it is shown."""

    def __init__(self, case: EvalCase) -> None:
        self.auditor = AuditorBrain(solver_recipe(case))
        self.checks = 0

    def __call__(self, call: ScriptedCall) -> Any:
        if call.role == "verifier" and kit.is_first_call(call):
            self.checks += 1
            if self.checks == 1:
                return kit.verdict(
                    [("The bill is in the ERP as the invoice prints it", False, "(none)", "not checked")],
                    "the bill's amount could not be confirmed on the ERP's own page",
                )
        return self.auditor(call)


@whole_run
def test_a_replay_the_verifier_rejected_is_reworked_counted_a_fallback_and_reflected_on(
    world: dict[str, Any], knowledge_store: KnowledgeStore
) -> None:
    place, case, store = world["place"], world["case"], world["store"]
    before = _accepted(store)
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    models = scripted_models(case)
    strict = RejectsTheFirstCheck(case)

    def scripted(name: str) -> Any:
        return brain_llm(strict, "scripted/auditor") if name == "auditor" else models(name)

    run = _leg(place, case, knowledge_store, scripted=scripted)

    assert run.outcome in ("done", "nothing_to_do"), run.reason
    assert run.verify_attempts == 2 and strict.checks == 2
    assert new_bills(place.erp_url) == [BILL]  # the rework entered nothing twice
    events = read_trace(run.run_dir / "trace.jsonl")
    assert [e.action for e in events if e.kind == "control" and e.action.startswith("routine:")] == [
        "routine:replay",
        "routine:replayed",
    ]
    roles = roles_called(run.run_dir)
    assert "planner" in roles  # the agent reworked it
    assert "reflector" in roles  # and, verified, the run reflected: it is the agent's run now
    counted = store.get("enter-invoice", 1)
    assert (counted.successes, counted.fallbacks) == (before.successes, before.fallbacks + 1)
    assert counted.fallbacks_in_a_row == before.fallbacks_in_a_row + 1
    said = counted.last_fallback
    assert said.startswith("the independent verifier did not confirm the replay: "), said
    assert "The bill is in the ERP as the invoice prints it: not checked" in said, said
    note = (run.run_dir / hooks.NOTE_FILE).read_text()
    assert "routine enter-invoice v1: fell_back (the independent verifier did not confirm" in note, note


# ---------------------------------------------------------------- once per run, whatever the legs


def _state(outcome: str, verified: bool = True) -> Any:
    return SimpleNamespace(
        outcome=outcome,
        outcome_reason="confirmed" if verified else "stopped",
        verdicts=[SimpleNamespace(verified=verified, reason="confirmed")] if verified else [],
    )


def test_a_replay_is_counted_once_however_many_legs_end_its_run(tmp_path: Path, northwind: Template) -> None:
    """Leg 1 replays and is interrupted (Ctrl-C: `jobs retry` resumes it): not counted; leg 2
    resumes and finishes: counted; leg 3, which took the job over and finished it too: not again."""
    store = RoutineStore(tmp_path / "routines")
    store.save(_routine(northwind).model_copy(update={"status": "accepted"}))
    routine = store.get("enter-invoice", 1)
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the latest invoice from Northwind Traders", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    match = SimpleNamespace(recipe=SimpleNamespace(name="enter-invoice"), values={"vendor": NWT})

    def leg(n: int) -> tuple[Any, hooks.Attached]:
        run_dir = tmp_path / f"leg{n}"
        run_dir.mkdir()
        ctx = SimpleNamespace(
            run_dir=run_dir,
            replay=Replayer(routine, {"vendor": NWT}),  # a fresh one, as attach gives every leg
            checkpoints=StoreCheckpoints(jobs, job.id, "w1"),
            toolbox=SimpleNamespace(files=None),
            submitted_by="ana",
        )
        attached = hooks._durable(ctx, hooks.Attached(match=match, replayer=ctx.replay, store=store))
        return ctx, attached

    ctx, attached = leg(1)
    assert ctx.checkpoints.load() is None  # the first leg: nothing to resume
    ctx.replay.outcome = "replayed"  # every step matched
    ctx.checkpoints.save("plan", {"stage": "plan", "state": {}})  # signed by the job store
    hooks.after_run(ctx, _state("interrupted", verified=False), attached)
    assert store.get("enter-invoice", 1).successes == 0
    assert "not counted yet: the run was interrupted" in (ctx.run_dir / hooks.NOTE_FILE).read_text()

    for n in (2, 3):
        ctx, attached = leg(n)
        assert ctx.checkpoints.load() is not None
        assert ctx.replay.outcome == "replayed" and attached.resumed  # read back from the checkpoint
        hooks.after_run(ctx, _state("done"), attached)
    counted = store.get("enter-invoice", 1)
    assert (counted.successes, counted.fallbacks) == (1, 0)
    assert "counted already by another leg" in (ctx.run_dir / hooks.NOTE_FILE).read_text()


# ---------------------------------------------------------------- 3. a new number style too

STYLES = ["NWT/2026/0042", "30017", "NW-2026-0042A"]


@pytest.mark.parametrize("number", STYLES)
def test_a_newer_invoice_in_a_new_number_style_is_not_passed_over(
    inbox: Path, northwind: Template, number: str, tmp_path: Path
) -> None:
    path = inbox / "Your invoice from Northwind Traders.eml"
    mail = NEW_LAYOUT.replace("INV-3001", number)
    path.write_text(mail.format(date="Thu, 01 Oct 2026 09:14:00 +0000"), encoding="utf-8")
    routine = _routine(northwind)
    with pytest.raises(FileStepFailed) as fell:
        find_document(routine, {"vendor": NWT}, SandboxFiles(inbox))
    said = str(fell.value)
    assert said.startswith(
        f"{path.name} is Northwind Traders's, sent 2026-10-01, and prints {number} as an invoice number"
    ), said
    assert "newer invoice than INV-2057" in said and not fell.value.new_issuer

    # the replay hands the run to the agent, and the run's routine.txt says why
    replayer = Replayer(routine, {"vendor": NWT})
    ctx = SimpleNamespace(toolbox=SimpleNamespace(files=SandboxFiles(inbox)))
    with pytest.raises(Fallback) as stopped:
        replayer._files(ctx, state=None)
    replayer.outcome, replayer.reason = "fell_back", stopped.value.reason  # as the Flow's call records it
    store = RoutineStore(tmp_path / "routines")
    store.save(routine.model_copy(update={"status": "accepted"}))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run = SimpleNamespace(run_dir=run_dir, toolbox=SimpleNamespace(files=None), submitted_by="ana")
    attached = hooks.Attached(match=SimpleNamespace(), replayer=replayer, store=store)
    hooks.after_run(run, _state("done"), attached)
    note = (run_dir / hooks.NOTE_FILE).read_text()
    assert f"fell_back (file work: {path.name} is Northwind Traders's" in note and number in note, note
    assert store.get("enter-invoice", 1).fallbacks_in_a_row == 1  # a defect of the routine, not growth

    # the same e-mail sent before the newest invoice the template reads cannot be newer: not asked
    path.write_text(mail.format(date="Thu, 03 Sep 2026 09:14:00 +0000"), encoding="utf-8")
    found = find_document(routine, {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057"


def test_a_later_mail_about_the_invoice_read_in_a_new_layout_does_not_stop_the_rule(
    inbox: Path, northwind: Template
) -> None:
    """A reminder printing "Invoice # INV-2057" (the invoice picked) and "invoice for PO 4471"
    names no other invoice: the rule still picks INV-2057."""
    reminder = NEW_LAYOUT.replace("INV-3001", "INV-2057").replace(
        "new look!", "new look! Invoice for PO 4471."
    )
    (inbox / "Reminder.eml").write_text(
        reminder.format(date="Thu, 01 Oct 2026 09:14:00 +0000"), encoding="utf-8"
    )
    found = find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057"


def test_hoolis_newer_invoices_with_a_letter_after_the_number_are_not_passed_over() -> None:
    """The demo inbox: Hooli's routine learned from HCS-2026-09 (a shape of digits only) passed over
    the later e-mail with HCS-2026-10A and HCS-2026-10B for it."""
    files = SandboxFiles(INBOX)
    hooli = "Hooli Cloud Services"
    template = _template(files, "HCS-2026-09", hooli)
    with pytest.raises(FileStepFailed) as fell:
        find_document(_routine(template), {"vendor": hooli}, files)
    assert "HCS-2026-10A, HCS-2026-10B as an invoice number" in str(fell.value), fell.value
