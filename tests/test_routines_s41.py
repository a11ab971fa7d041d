"""Routines across the legs of a job, and the versions a draft may build on: a round of gaps.

1. A routine file edited between two legs of a job was merged into the draft the resumed leg
   proposed, signed as taskcrew's own, and hidden from the reviewer's diff: the resumed leg loaded
   the version that replayed from its file unchecked. Now a version is the base of a draft (a heal,
   the replay a resumed leg takes back, a reviewer's diff) only through ``RoutineStore.vouched``:
   its acceptance or proposal is signed, and it has the fingerprint the signed checkpoint recorded.
2. A heal kept only the old version's templates: the no-duplicate look (learned by field name from
   the company's read-back rule, which a renamed field no longer matches) and the obstacles the
   healing run did not meet (a session that expired, a 503) were lost. ``distil.merge`` keeps them.
3. A job that parked for its approval (every console or `taskcrew submit` job) resumed in a new run
   folder and learned from that folder alone, which has no file step: it proposed nothing. Now what
   the run did is read across its legs: each leg's facts ride in the job's signed checkpoint
   (``distil.LegFacts``, ``hooks.Progress``), never read back from an earlier folder, and the leg
   that resumes writes them to its own folder, sealed with it (`routines learn` reads them there).
4. A retired version doing the same work was handed back as "already proposed (draft)", and could
   not be accepted: now the same work is proposed again as a new draft.

Whole runs: real Chromium, the demo ERP, a real job database (SQLite); only the models are scripted.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import test_routines_replay
from fixtures_jobs import HEADLINE, SCRIPTED, Workers
from test_routines import INBOX, _routine, _template
from test_routines_replay import new_bills
from test_routines_resume_and_drift import BILL, HandedBackAfter, _job, _leg, whole_run
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.console.routines_page import RoutinesDesk
from taskcrew.jobs import ApprovalDecision, JobOptions, Jobs
from taskcrew.jobs.runner import HandBack, StoreCheckpoints
from taskcrew.knowledge import KnowledgeStore
from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines import hooks
from taskcrew.routines.distil import DistilError, distil, merge
from taskcrew.routines.models import BrowserStep, FieldRule, Obstacle, PageExpect, Routine, Target, Template
from taskcrew.routines.replay import Replayer
from taskcrew.routines.store import RoutineStore, fingerprint
from taskcrew.tools.files import SandboxFiles

world = test_routines_replay.learned
NWT = "Northwind Traders"
MALLORY = "mallory-billing.example"
LEGS_FILE = "earlier_legs.json"  # where a resumed leg's folder keeps what the legs before did (distil)


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _template(SandboxFiles(INBOX), "INV-2057", NWT)


def _mallorys(routine: Routine) -> Routine:
    """``routine`` as Mallory, who can write the routines folder, edits it: a Globex template that
    trusts her mail domain."""
    evil = Template(
        issuer="Globex Corp",
        fields=[
            FieldRule(name="invoice_number", kind="text", anchor="Invoice No.", pattern=r"[A-Z]+\-\d+"),
            FieldRule(name="amount", kind="amount", anchor="TOTAL PAYABLE"),
        ],
        senders=[MALLORY],
        learned_from="inbox/globex.eml",
    )
    return routine.model_copy(update={"templates": [*routine.templates, evil]})


def _note(run_dir: Path) -> str:
    path = run_dir / hooks.NOTE_FILE
    return path.read_text() if path.exists() else ""


# ---------------------------------------------------------------- 1. only a vouched version is a base


def test_a_version_is_vouched_for_only_as_signed_and_as_it_replayed(
    tmp_path: Path, northwind: Template
) -> None:
    store = RoutineStore(tmp_path / "routines")
    v1, _ = store.propose(_routine(northwind))
    assert store.vouched("enter-invoice", 1, fingerprint(v1)) == (v1, "")  # its proposal is signed
    accepted = store.accept("enter-invoice", 1, "os_user:bob")
    assert store.vouched("enter-invoice", 1, fingerprint(accepted))[0] is not None  # its acceptance too
    base, why = store.vouched("enter-invoice", 1, "0" * 32)
    assert base is None and "not the version the run replayed (its fingerprint was 0000" in why, why
    base, why = store.vouched("enter-invoice", 1, "")  # a checkpoint that recorded none
    assert base is None and "the run recorded no fingerprint" in why, why

    store.retire("enter-invoice", None)  # retired, not changed: still what was accepted
    assert store.vouched("enter-invoice", 1, fingerprint(accepted))[0] is not None

    store.save(_mallorys(store.get("enter-invoice", 1)))  # edited in the folder
    base, why = store.vouched("enter-invoice", 1, None)
    assert base is None and "v1's file is not what was accepted or proposed" in why, why
    store.save(_routine(northwind, version=2, source_run="run-2"))  # written by hand
    assert store.vouched("enter-invoice", 2, None)[0] is None
    assert store.vouched("enter-invoice", 7, None) == (None, store.vouched("enter-invoice", 7, None)[1])


def test_a_resumed_leg_takes_no_replay_from_a_file_edited_between_the_legs(
    tmp_path: Path, northwind: Template
) -> None:
    """The leg that resumes reads the version that replayed only as the checkpoint recorded it: an
    edit between the legs voids it (not counted, healed by no draft), and says so."""
    store = RoutineStore(tmp_path / "routines")
    store.propose(_routine(northwind))
    routine = store.accept("enter-invoice", 1, "os_user:bob")
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the latest invoice from Northwind Traders", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    match = SimpleNamespace(recipe=SimpleNamespace(name="enter-invoice"), values={"vendor": NWT})

    def leg(n: int, replayer: Any) -> tuple[Any, hooks.Attached]:
        run_dir = tmp_path / f"leg{n}"
        run_dir.mkdir()
        ctx = SimpleNamespace(
            run_dir=run_dir, replay=replayer, checkpoints=StoreCheckpoints(jobs, job.id, "w1")
        )
        return ctx, hooks._durable(ctx, hooks.Attached(match=match, replayer=replayer, store=store))

    ctx, _ = leg(1, Replayer(routine, {"vendor": NWT}))
    ctx.replay.outcome, ctx.replay.reason = "fell_back", "the form has no invoice_number field"
    ctx.checkpoints.save("plan", {"stage": "plan", "state": {}})
    assert jobs.checkpoint(job.id)["routine"]["fingerprint"] == fingerprint(routine)  # signed with it

    store.save(_mallorys(store.get("enter-invoice", 1)))
    ctx, attached = leg(2, None)  # the edit voids the acceptance: attach gives this leg no replayer
    assert ctx.checkpoints.load() is not None
    assert attached.replayer is None and not attached.resumed
    note = _note(ctx.run_dir)
    assert "the replay an earlier leg ran (enter-invoice v1) is not counted, and no draft heals it" in note
    assert "v1's file is not what was accepted or proposed" in note, note
    assert store.heal_base("enter-invoice") == (None, "")  # nor is it the one that replays now


def test_a_diff_passes_over_a_version_nobody_signed(
    tmp_path: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    store = RoutineStore()
    store.propose(_routine(northwind))
    store.accept("enter-invoice", 1, "os_user:bob")
    store.save(_mallorys(store.get("enter-invoice", 1)))
    store.propose(_routine(northwind, source_run="run-2", based_on=1, summary="healed"))

    base, why = store.diff_base(store.get("enter-invoice", 2))
    assert base is None and why.startswith("no signed version before it (enter-invoice v1's file is not"), why
    diffed = CliRunner().invoke(app, ["routines", "diff", "enter-invoice", "-v", "2"])
    assert (
        diffed.exit_code == 2 and "nothing to compare it with: no signed version before it" in diffed.output
    )
    shown = RoutinesDesk(tmp_path / "routines").show("enter-invoice", 2)
    assert shown is not None and shown.compared_with is None and shown.compared_why == why


# ---------------------------------------------------------------- 2. a heal keeps what it did not see


def test_a_heal_keeps_the_look_and_the_obstacles_the_healing_run_did_not_show(northwind: Template) -> None:
    login = Obstacle(
        kind="login",
        steps=[
            BrowserStep(kind="type", target=Target(role="textbox", name="User"), value="{{secret:ERP_USER}}")
        ],
    )
    look = BrowserStep(kind="open", url="{erp}/bills", expect=PageExpect(path="/bills"))
    form = BrowserStep(kind="open", url="{erp}/bills/new", expect=PageExpect(path="/bills/new"))

    def typed(field: str) -> BrowserStep:
        target = Target(role="textbox", name="Invoice number *", field=field)
        return BrowserStep(kind="type", target=target, value="{invoice_number}")

    old = _routine(
        northwind,
        browser=[look.model_copy(update={"absent": ["{invoice_number}"]}), form, typed("invoice_number")],
        obstacles=[login, Obstacle(kind="expired_session"), Obstacle(kind="unavailable")],
    )
    new = _routine(northwind, version=2, browser=[look, form, typed("vendor_invoice_no")], obstacles=[login])
    healed = merge(old, new)
    assert [s.absent for s in healed.browser] == [["{invoice_number}"], [], []]
    assert [o.kind for o in healed.obstacles] == ["login", "expired_session", "unavailable"]
    assert healed.browser[2].target and healed.browser[2].target.field == "vendor_invoice_no"
    assert healed.based_on == 1
    # what the run learned stands: its own look, and no guard for a value it no longer enters
    own = new.model_copy(update={"browser": [look.model_copy(update={"absent": ["{amount}"]}), form]})
    assert [s.absent for s in merge(old, own).browser] == [["{amount}"], []]
    assert [s.absent for s in merge(old, new.model_copy(update={"browser": [look, form]})).browser] == [
        [],
        [],
    ]


# ---------------------------------------------------------------- 4. retired work comes back


def test_the_same_work_as_a_retired_version_is_proposed_again_and_can_be_accepted(
    tmp_path: Path, northwind: Template
) -> None:
    store = RoutineStore(tmp_path / "routines")
    learned = _routine(northwind)
    store.propose(learned, submitter="ana")
    store.accept("enter-invoice", 1, "os_user:bob")
    again, new = store.propose(learned.model_copy(update={"source_run": "run-2"}), submitter="ana")
    assert (again.version, again.status, new) == (1, "accepted", False)  # the accepted one does it
    store.retire("enter-invoice", None)

    again, new = store.propose(learned.model_copy(update={"source_run": "run-3"}), submitter="ana")
    assert (again.version, again.status, new) == (2, "draft", True)
    store.accept("enter-invoice", 2, "os_user:bob")
    replays = store.accepted("enter-invoice")
    assert replays is not None and replays.version == 2


# ---------------------------------------------------------------- whole runs: legs of a job


def _fresh(world: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RoutineStore:
    """A routines folder of this test's own, holding the world's learned v1, proposed and accepted."""
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    store = RoutineStore()
    store.propose(world["store"].get("enter-invoice", 1))
    store.accept("enter-invoice", 1, "reviewer")
    assert store.accepted("enter-invoice") is not None
    return store


@whole_run
def test_a_routine_edited_between_legs_is_no_part_of_the_draft_the_run_proposes(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    place, case = world["place"], world["case"]
    store = _fresh(world, tmp_path, monkeypatch)
    place.erp_server.reset(ChaosConfig(form_change="rename", shuffle_fields=True, save_faults=[]))
    jobs, job_id = _job(tmp_path, case)
    with pytest.raises(HandBack):  # v1 replayed, fell back at the renamed field; the agent planned
        _leg(place, case, knowledge_store, (jobs, job_id), checkpoints=HandedBackAfter(jobs, job_id, "plan"))
    store.save(_mallorys(store.get("enter-invoice", 1)))

    resumed = _leg(place, case, knowledge_store, (jobs, job_id))

    assert resumed.outcome == "done", resumed.reason
    assert new_bills(place.erp_url) == [BILL]
    draft = store.versions("enter-invoice")[-1]
    written = store.authorship(draft)
    assert draft.version == 2 and written is not None and written.person is None  # taskcrew's own
    assert [t.issuer for t in draft.templates] == [NWT] and draft.based_on is None  # nothing of the edit
    note = _note(resumed.run_dir)
    assert "(enter-invoice v1) is not counted, and no draft heals it: enter-invoice v1's file is not" in note
    assert "proposed enter-invoice v2 (draft)" in note, note
    base, why = store.diff_base(draft)
    assert base is None and "no signed version before it" in why


@whole_run
def test_a_heal_across_legs_keeps_the_duplicate_look_and_the_obstacles(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    place, case = world["place"], world["case"]
    store = _fresh(world, tmp_path, monkeypatch)
    v1 = store.get("enter-invoice", 1)
    guard = [s.absent for s in v1.browser if s.kind == "open"]
    assert guard[0] == ["{invoice_number}"] and {"expired_session", "unavailable"} <= {
        o.kind for o in v1.obstacles
    }
    place.erp_server.reset(ChaosConfig(form_change="rename", shuffle_fields=True, save_faults=[]))
    jobs, job_id = _job(tmp_path, case)
    with pytest.raises(HandBack):
        _leg(place, case, knowledge_store, (jobs, job_id), checkpoints=HandedBackAfter(jobs, job_id, "plan"))

    resumed = _leg(place, case, knowledge_store, (jobs, job_id))

    assert resumed.outcome == "done", resumed.reason
    draft = store.get("enter-invoice", 2)
    assert draft.based_on == 1 and "vendor_invoice_no" in {s.target.field for s in draft.browser if s.target}
    assert [s.absent for s in draft.browser if s.kind == "open"] == guard  # no duplicate, as v1 looked
    assert [o.kind for o in draft.obstacles] == [o.kind for o in v1.obstacles]
    base, why = store.diff_base(draft)
    assert base is not None and base.version == 1 and why == "the version that replays now"


@whole_run
def test_a_run_resumed_after_its_file_step_learns_from_all_its_legs(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    place, case = world["place"], world["case"]
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))  # no routine yet
    store = RoutineStore()
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    jobs, job_id = _job(tmp_path, case)
    runs = set(place.settings.runs_dir.iterdir())
    with pytest.raises(HandBack):  # the file step done; the worker stops (or the job parks) after it
        _leg(
            place, case, knowledge_store, (jobs, job_id), checkpoints=HandedBackAfter(jobs, job_id, "step:1")
        )
    [first] = [p for p in place.settings.runs_dir.iterdir() if p not in runs]
    for name in ("trace.jsonl", "browser_steps.jsonl"):  # an earlier leg's folder is never read
        (first / name).unlink(missing_ok=True)

    resumed = _leg(place, case, knowledge_store, (jobs, job_id))

    assert resumed.outcome == "done", resumed.reason
    assert new_bills(place.erp_url) == [BILL]
    note = _note(resumed.run_dir)
    assert "proposed enter-invoice v1 (draft)" in note, note
    [draft] = store.versions("enter-invoice")
    assert draft.template_for(NWT) is not None and "invoice_number" in draft.values
    legs = json.loads((resumed.run_dir / LEGS_FILE).read_text())
    assert [leg["run"] for leg in legs] == [first.name] and legs[0]["files_read"]

    # `routines learn` reads the same, from the folder its job's signed record sealed
    jobs.finish(job_id, "done", "confirmed", run_dir=str(resumed.run_dir.resolve()))
    assert distil(resumed.run_dir, jobs=jobs).templates == draft.templates
    (resumed.run_dir / LEGS_FILE).write_text(json.dumps(legs).replace("INV-2057", "INV-2058"))
    with pytest.raises(DistilError, match="cannot be learned from: the run folder was changed"):
        distil(resumed.run_dir, jobs=jobs)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(480)
def test_a_parked_and_approved_job_proposes_its_routine(
    workers: Workers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A console or `taskcrew submit` job parks at the save for its approval and resumes from its
    file step's checkpoint in a new run folder: real worker processes, as they run it."""
    folder = tmp_path / "routines"
    workers.env["TASKCREW_ROUTINES"] = str(folder)
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(**SCRIPTED))
    workers.start("worker-a")
    workers.wait_for("the job to park", workers.job_in(job, "waiting", "finished", "failed"))
    [approval] = workers.jobs.approvals("pending")
    workers.jobs.decide(approval.id, ApprovalDecision.approve(), decided_by="bob")
    workers.wait_for("the job to end", workers.job_in(job, "finished", "failed"))
    done = workers.jobs.get(job.id)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
    run_dir = Path(str(done.run_dir))
    assert "proposed enter-invoice v1 (draft)" in _note(run_dir), _note(run_dir)
    [draft] = RoutineStore(folder).versions("enter-invoice")
    assert draft.template_for(NWT) is not None

    monkeypatch.setenv("TASKCREW_JOBS_DB", workers.url)  # `routines learn`, elsewhere: the same legs
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "learned"))
    learned = CliRunner().invoke(app, ["routines", "learn", str(run_dir)])
    assert learned.exit_code == 0 and "proposed enter-invoice v1 (draft)" in learned.output, learned.output
    [again] = RoutineStore().versions("enter-invoice")
    assert again.templates == draft.templates and again.browser == draft.browser


@whole_run
def test_a_replays_report_says_code_wrote_its_steps_and_lists_the_routine_files(
    world: dict[str, Any], tmp_path: Path, knowledge_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    place, case = world["place"], world["case"]
    _fresh(world, tmp_path, monkeypatch)
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    replay = _leg(place, case, knowledge_store)
    assert replay.outcome == "done", replay.reason
    report = replay.report.read_text()
    assert "**The last step's words** (written by the routine's code, not by a model):" in report, report
    assert "a model's account" not in report
    assert "worker `scripted/solver` (not called), verifier" in report
    assert "- `browser_steps.jsonl`: " in report and "- `routine.txt`: " in report
    assert "replayed" in _note(replay.run_dir)
