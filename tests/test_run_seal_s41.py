"""A run folder is held to the seal its job's ending made, on every ending and for every reader.

1. `taskcrew audit --run` read a past run's success criteria and sends straight from its folder: a
   folder edited after its job sealed it was "re-checked … verified". It is now read through the one
   seal check (``eval.runs.RunRecords.of``, as ``routines.distil.vouched_done``): a folder changed
   since, or one no signed job record names, is refused, saying to audit the criteria as a claim.
2. Only ``Jobs.finish`` sealed: a job cancelled (or failed) ended with its run folder unsealed, and
   an edit of it read as the run's own account. Every ending seals now (``Jobs._update``); a leg whose
   job was cancelled while its run still wrote seals its folder again once the run is over
   (``Jobs.seal_run``), so the honest folder never reads "changed after the run ended"; a run's trace
   takes no line after its ``run_finished`` (a thread abandoned at an interrupt adds nothing).
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from fixtures_foreground import BOB, HOOLI, Foreground, Person
from test_cli_run import FILE, run_file_question
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.cli import app
from taskcrew.crew.audit import criteria_from_run
from taskcrew.crew.errors import AuditError
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.scripted import ScriptedLLM, ToolCall
from taskcrew.crew.trace import ControlEvent, PlanMade, RunFinished, RunStarted, Tracer, read_trace
from taskcrew.eval.runs import RunRecords, read_run
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import Stopped
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest

runner = CliRunner()
TASK = "Pay BILL-0005 to Hooli"
KEPT = "BILL-0005 is marked paid in the ERP"
WEAK = "The file about CO-55120 can be read"
NO_SYSTEMS = ["--erp-url", "http://127.0.0.1:0", "--intranet-url", ""]


@pytest.fixture
def store(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Jobs:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    return Jobs.open()


def _folder(runs: Path, name: str = "20261206-120000-pay-bill-0005") -> Path:
    """A run folder as a run leaves it: its start, its plan (with its success criteria), its end."""
    run = runs / name
    trace = Tracer(run / "trace.jsonl")
    trace.emit(RunStarted(task=TASK, worker_model="w", verifier_model="v"))
    step = PlanStep(role="browser_operator", title="Pay it", instructions="Pay BILL-0005.")
    trace.emit(PlanMade(plan=Plan(goal="Pay", success_criteria=[KEPT], steps=[step], changes_data=True)))
    trace.emit(_finished("done", "Paid BILL-0005; verified"))
    (run / "report.md").write_text(f"# Done\n\n**Task:** {TASK}\n", encoding="utf-8")
    return run


def _finished(outcome: str, reason: str) -> RunFinished:
    return RunFinished(
        outcome=outcome,
        reason=reason,
        llm_calls=3,
        input_tokens=1,
        output_tokens=1,
        cost_usd=None,
        seconds=1.0,
    )


def _running(jobs: Jobs, run: Path | None) -> str:
    job = jobs.submit(
        TASK, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    if run is not None:
        jobs.note_run_dir(job.id, str(run.resolve()), leg=0)
    return job.id


def _weaken(run: Path, criterion: str) -> None:
    """Someone with write access to the runs folder rewrites the run's success criteria."""
    lines = []
    for line in (run / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["kind"] == "plan":
            event["plan"]["success_criteria"] = [criterion]
        lines.append(json.dumps(event))
    (run / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---- 1. audit --run --------------------------------------------------------------------------------
def test_audit_of_a_run_folder_edited_after_its_seal_is_refused_and_says_what_to_do(
    isolated_home: Path,
) -> None:
    result, _ = run_file_question()  # `taskcrew run`: a foreground job, sealed as it finished
    run = Path(result.output.split("Report: ")[1].split()[0]).parent
    assert RunRecords.read(folder=run).of(run).altered == ""
    _weaken(run, WEAK)

    auditor = ScriptedLLM(
        {
            "verifier": [
                ToolCall(name="read_file", args={"path": FILE}),
                Verdict(
                    verified=True,
                    checks=[CriterionCheck(criterion=WEAK, met=True, source=FILE, observed="CN-104")],
                    reason="The file can be read.",
                ),
            ]
        }
    )
    with FakeOpenAIServer(auditor) as a:
        audited = runner.invoke(
            app,
            ["audit", "--run", str(run), "--verifier-model", f"auditor@{a.base_url}", *NO_SYSTEMS],
        )
    said = " ".join(audited.output.split())
    assert audited.exit_code != 0 and auditor.calls == [], said  # before: "verified", exit 0
    assert f"run {run.name} cannot be audited" in said and "changed after the run ended" in said, said
    assert "give them as a claim" in said and "taskcrew audit" in said, said


def test_audit_of_a_run_folder_no_signed_record_names_is_refused_with_its_criteria_as_a_claim(
    store: Jobs, tmp_path: Path
) -> None:
    run = _folder(tmp_path / "runs")  # an eval's or a demo's run, or a folder copied in: no job names it
    audited = runner.invoke(
        app,
        ["audit", "--run", str(run), "--verifier-model", "v@http://127.0.0.1:9/v1", *NO_SYSTEMS],
    )
    said = " ".join(audited.output.split())
    assert audited.exit_code != 0, said
    assert "nothing vouches that its folder is its run's own" in said and "no signed job record" in said
    assert f"Its trace lists, unvouched: {KEPT}" in said and "give them as a claim" in said, said


def test_audit_reads_a_sealed_run_and_an_older_unsealed_one_as_its_record_vouches(
    store: Jobs, tmp_path: Path
) -> None:
    sealed = _folder(tmp_path / "runs")
    store.finish(_running(store, sealed), "done", "Paid", leg=0)
    task, criteria = criteria_from_run(sealed, store)
    assert (task, list(criteria), criteria.unsealed) == (TASK, [KEPT], False)
    assert list(criteria.sends) == [f"sends of run {sealed.name}"]

    older = _folder(tmp_path / "runs", "20261001-090000-pay-bill-0005")  # finished before seals
    store.finish(_running(store, older), "done", "Paid", leg=0, run_seal=None, run_seal_format=0)
    _, criteria = criteria_from_run(older, store)
    assert list(criteria) == [KEPT] and criteria.unsealed  # its task checks out: audited, said older

    _weaken(sealed, WEAK)
    with pytest.raises(AuditError, match="changed after the run ended"):
        criteria_from_run(sealed, store)


# ---- 2. every ending seals --------------------------------------------------------------------------
@pytest.mark.parametrize("ending", ["cancelled", "failed"])
def test_a_run_folder_is_sealed_by_any_ending_and_an_edit_of_it_is_told(
    store: Jobs, tmp_path: Path, ending: str
) -> None:
    run = _folder(tmp_path / "runs")
    job_id = _running(store, run)
    if ending == "cancelled":
        Authority(store).act_on_job(job_id, "cancel", BOB)  # bob's cancel lands as the run ends
    else:
        store.mark(job_id, "failed", only_if=("running",), leg=0, reason="the ERP was down")
    job = store.get(job_id)
    assert job.status == ending and job.run_seal is not None, job  # before: no seal
    assert not read_run(run, RunRecords.read(store)).altered

    (run / "report.md").write_text("# Done\n\nPaid BILL-0005; approved by alice.\n", encoding="utf-8")
    after = read_run(run, RunRecords.read(store))
    assert after.altered and "changed after the run ended" in after.note, after.note


def test_a_leg_cancelled_while_its_run_still_wrote_seals_its_folder_as_the_run_left_it(
    store: Jobs, tmp_path: Path
) -> None:
    """The cancel seals the folder as it is then; the run goes on writing until it stops (its end,
    its report); its leg seals it again once the run is over (``seal_run``, called by the runner and
    the foreground as their leg ends, however it ended)."""
    run = _folder(tmp_path / "runs")
    job_id = _running(store, run)
    Authority(store).act_on_job(job_id, "cancel", BOB)
    with (run / "report.md").open("a", encoding="utf-8") as fh:  # the run, still going, writes on
        fh.write("\nStopped: the job was cancelled by bob.\n")
    assert read_run(run, RunRecords.read(store)).altered  # as the cancel sealed it: not the run's end
    store.seal_run(job_id, run)
    assert not read_run(run, RunRecords.read(store)).altered

    other = _folder(tmp_path / "runs", "20261206-130000-pay-bill-0005")
    running = _running(store, other)
    store.seal_run(running, other)  # a job still running is not sealed by its leg: its ending seals it
    assert store.get(running).run_seal is None


def test_a_runs_trace_takes_no_line_after_its_run_finished(tmp_path: Path) -> None:
    run = _folder(tmp_path / "runs")
    trace = Tracer(run / "trace.jsonl")
    trace.emit(RunStarted(task=TASK, worker_model="w", verifier_model="v"))
    trace.emit(_finished("interrupted", "stopped by SIGINT"))
    trace.emit(ControlEvent(action="end:done", reason="a thread abandoned at the interrupt, late"))
    events = read_trace(run / "trace.jsonl")
    assert events[-1].kind == "run_finished" and not any(e.kind == "control" for e in events)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_foreground_run_cancelled_by_a_colleague_mid_run_is_sealed_as_it_ended(
    isolated_home: Path, tmp_path: Path, erp: ErpServer
) -> None:
    """`taskcrew run` pays the Hooli bill; while the person at the terminal is asked to approve the
    payment, bob cancels the job in the console. The run goes on to its end (nothing is sent) and the
    job reads cancelled: its run folder is sealed as the run left it (not as it was when bob's cancel
    landed), and an edit of it afterwards is told."""

    def at_prompt(request: ApprovalRequest, asked: int) -> None:
        if asked == 1:
            jobs = Jobs.open()
            [job] = jobs.list()
            Authority(jobs).act_on_job(job.id, "cancel", BOB)
            jobs.close()

    models = scripted_models(HOOLI)
    # its next checkpoint may find the job cancelled: the run stops there (Stopped)
    with Foreground(erp.url, tmp_path, Person(at_prompt)) as place, suppress(Stopped):
        place.taskcrew_run(HOOLI.task, models("solver"), models("auditor"))
    jobs = Jobs.open()
    [job] = jobs.list()
    assert job.status == "cancelled" and job.run_dir and job.run_seal is not None, job  # before: none
    run = Path(job.run_dir)
    honest = read_run(run, RunRecords.read(jobs))
    assert not honest.altered and "changed after" not in honest.note, honest.note

    (run / "report.md").write_text("# Run report\n\nPaid BILL-0005; approved by alice.\n", encoding="utf-8")
    edited = read_run(run, RunRecords.read(jobs))
    assert edited.altered and "changed after the run ended (report.md" in edited.note, edited.note
    jobs.close()
