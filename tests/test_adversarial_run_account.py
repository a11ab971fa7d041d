"""A run's account as every surface shows it, against what is signed: a red-team round.

1. A run folder is not signed. Where its job's signed record said ``done`` and the folder's outcome
   agreed, every other field of the folder — its task, reason, "changed" line, who approved, its
   report — was shown as fact by `runs show`, `runs list`, the console's run page, runs list and the
   job page's "Run progress": a trace edited by someone who can write the runs folder (approved by
   alice, BILL-0004 paid) or another job's verified folder copied over this job's showed under a green
   "done" with no caveat. Now ``Jobs.finish`` seals the folder into the job's signed record as the run
   ends (``Job.run_seal``: each file's SHA-256), and ``eval.runs.RunRecords.of`` (``folder_check``)
   holds it to the seal on every surface: a folder changed since, or another run's, shows the signed
   record's task, outcome, reason and answer, says plainly that the folder was changed after the run
   ended and what it says is not vouched for, names who decided from the signed audit log, and shows
   no report of it. A record from before seals keeps today's showing, marked "not sealed"; one whose
   folder's trace is of another task says the folder is not the job's run.
2. A job row set back to an earlier signed version (``finished done`` on leg 0) read ``signed``,
   ``finished done`` after a later signed retry and a later signed finish (``not_verified`` on leg 1):
   the log was only consulted for jobs still running. Now every read of an ended row holds it to the
   signed audit log (``authority.SignedLog.superseding``, read once per listing): such a row reads
   ``superseded`` on `jobs show`, `jobs list` (and ``--json``), the console's jobs list and job page,
   naming the log's newest entry.

The runs are real (`taskcrew run` in the foreground: real Chromium, the demo ERP over HTTP, the job
store and the signed audit log in SQLite; only the models scripted), the console's pages are fetched
over HTTP by a real browser.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import ConsoleEnv
from fixtures_foreground import BOB, HOOLI, Foreground, Person
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.cli import app as cli
from taskcrew.eval.runs import RunRecords, read_run
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.mock_erp import ErpServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]

runner = CliRunner()
CHANGED = "changed after the run ended"


@pytest.fixture(autouse=True)
def env(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One job store and one approvals folder for `taskcrew run`, the CLI and the console."""
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))


def taskcrew_run(erp: ErpServer, root: Path) -> Any:
    """`taskcrew run` pays the Hooli bill (BILL-0005) for real; the person at the terminal approves."""
    models = scripted_models(HOOLI)
    with Foreground(erp.url, root, Person()) as place:
        return place.taskcrew_run(HOOLI.task, models("solver"), models("auditor"))


def the_job(jobs: Jobs, run_dir: Path) -> Any:
    [job] = [j for j in jobs.list() if j.run_dir == str(run_dir.resolve())]
    return job


def body(page: Any, url: str) -> str:
    page.goto(url)
    return " ".join(page.inner_text("body").split())


def cli_text(*args: str) -> str:
    shown = runner.invoke(cli, list(args))
    assert shown.exit_code == 0, shown.output
    return " ".join(shown.output.split())


def edit_folder(run: Path) -> None:
    """A colleague with write access to the runs folder (no signing key): who approved and what was
    paid rewritten in the trace, and a report that says so."""
    out = []
    for line in (run / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["kind"] == "approval":
            event["by"] = "alice"
            event["payload"] = {**event["payload"], "amount": "48,900.00"}
        if event["kind"] == "run_finished":
            event["reason"] = (
                "Paid BILL-0004 (48,900.00 to Initrode); approved by alice, verified in the ERP."
            )
            event["changed"] = "1 change(s) saved: POST /bills/BILL-0004/pay [amount=48900.00]"
        out.append(json.dumps(event))
    (run / "trace.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    report = (run / "report.md").read_text(encoding="utf-8")
    (run / "report.md").write_text(
        "# done — 1 change(s) saved: POST /bills/BILL-0004/pay — approved by alice\n\n" + report,
        encoding="utf-8",
    )


def test_a_real_run_is_sealed_and_an_edit_of_its_folder_is_shown_as_not_vouched_for(
    tmp_path: Path, erp: ErpServer, console_env: ConsoleEnv
) -> None:
    result = taskcrew_run(erp, tmp_path)
    assert result.outcome == "done", result.reason
    run = Path(result.run_dir)
    job = the_job(console_env.jobs, run)
    assert job.record_trust == "signed" and job.outcome == "done"
    # sealed as the run ended: its account, and what the run wrote after its report (routines)
    assert job.run_seal is not None and {"trace.jsonl", "report.md"} <= set(job.run_seal.files)
    from taskcrew.eval.runs import folder_check

    assert folder_check(run, [job]) == ("", False)  # nothing written after the seal

    # as it was left: shown whole, no note
    shown = cli_text("runs", "show", run.name, "--runs-dir", str(console_env.runs))
    assert CHANGED not in shown and "Nothing vouches" not in shown and "BILL-0005" in shown
    page = console_env.page_as("bob")
    run_page = body(page, f"{console_env.url}/runs/{run.name}")
    assert CHANGED not in run_page and "Report" in run_page

    edit_folder(run)
    assert console_env.jobs.get(job.id).record_trust == "signed"  # the record is untouched
    shown = cli_text("runs", "show", run.name, "--runs-dir", str(console_env.runs))
    listed = cli_text("runs", "list", "--runs-dir", str(console_env.runs))
    run_page = body(page, f"{console_env.url}/runs/{run.name}")
    job_page = body(page, f"{console_env.url}/jobs/{job.id}")
    runs_page = body(page, f"{console_env.url}/runs")
    for where, text in (
        ("runs show", shown),
        ("runs list", listed),
        ("run page", run_page),
        ("job page", job_page),
        ("runs page", runs_page),
    ):
        assert CHANGED in text, (where, text)
        assert "approved by alice" not in text and "BILL-0004" not in text, (where, text)
    for where, text in (("runs show", shown), ("run page", run_page), ("job page", job_page)):
        assert "not vouched for" in text, (where, text)
        assert f"the signed record of job {job.id}" in text, (where, text)
    # the signed record's own account: its task, its reason, its answer; the folder's report withheld
    assert HOOLI.task in shown and job.reason.split(";")[0][:40] in shown
    assert "report.md is not shown" in shown
    assert "Answer (the signed job record's)" in run_page and "Decisions in the signed audit log" in run_page
    # who approved, as the folder's (collapsed) account says it: never the name it gives
    page.goto(f"{console_env.url}/runs/{run.name}")
    assert "approved by someone the run folder names (not vouched for)" in page.content()
    learned = runner.invoke(cli, ["routines", "learn", str(run)])  # nor a routine learned from it
    assert learned.exit_code == 2 and "cannot be learned from" in learned.output, learned.output


def test_another_jobs_run_folder_copied_over_a_jobs_own_is_not_shown_as_its_run(
    tmp_path: Path, erp: ErpServer, console_env: ConsoleEnv
) -> None:
    first = taskcrew_run(erp, tmp_path)  # pays BILL-0005
    second = taskcrew_run(erp, tmp_path)  # the bill is paid already: this run changes nothing
    assert first.outcome == "done", first.reason
    a, b = Path(first.run_dir), Path(second.run_dir)
    job_b = the_job(console_env.jobs, b)
    assert job_b.outcome == second.outcome and job_b.run_seal is not None
    shutil.rmtree(b)
    shutil.copytree(a, b)  # A's verified run, in B's place

    page = console_env.page_as("bob")
    job_page = body(page, f"{console_env.url}/jobs/{job_b.id}")
    run_page = body(page, f"{console_env.url}/runs/{b.name}")
    shown = cli_text("runs", "show", b.name, "--runs-dir", str(console_env.runs))
    for where, text in (("job page", job_page), ("run page", run_page), ("runs show", shown)):
        assert CHANGED in text and "another run's folder was put in its place" in text, (where, text)
        assert f"its outcome ({second.outcome})" in text, (where, text)
    assert f"outcome: {second.outcome}" in shown


def test_a_record_from_before_seals_is_marked_and_one_naming_another_tasks_folder_says_so(
    tmp_path: Path, erp: ErpServer
) -> None:
    result = taskcrew_run(erp, tmp_path)
    run = Path(result.run_dir)
    jobs = Jobs.open()
    mine = the_job(jobs, run)
    # the same run recorded as a version before seals recorded it: no seal in its signed record
    old = jobs.submit(
        HOOLI.task, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(old.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(old.id, "done", mine.reason, leg=0, answer=mine.answer, run_dir=str(run), run_seal=None)
    other = tmp_path / "elsewhere" / run.name
    shutil.copytree(run, other)
    foreign = jobs.submit(
        "Enter the latest invoice from Initech",
        submitted_by="ana",
        submitted_proof="console",
        options=JobOptions(),
        enqueue=False,
    )
    jobs.mark(foreign.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(foreign.id, "done", "Entered INI-7781", leg=0, answer="", run_dir=str(other), run_seal=None)

    records = RunRecords.read(jobs)
    swapped = read_run(other, records)
    assert f"is not job {foreign.id}'s run" in swapped.note and "another task" in swapped.note, swapped.note
    assert swapped.task == "Enter the latest invoice from Initech" and swapped.altered and not swapped.changed
    only_old = RunRecords([jobs.get(old.id)], keys=jobs.keys)
    said = read_run(run, only_old)  # the same task: today's showing, marked as not sealed
    assert said.unsealed and not said.note and said.outcome == "done" and said.task == HOOLI.task
    assert "not sealed" in cli_text("runs", "show", str(run))
    jobs.close()


def _raw(db: str, job_id: str) -> tuple[str, int, str]:
    with sqlite3.connect(db) as c:
        row = c.execute("SELECT doc, leg, status FROM taskcrew_jobs WHERE id=?", (job_id,)).fetchone()
    return str(row[0]), int(row[1]), str(row[2])


def _set_back(db: str, job_id: str, row: tuple[str, int, str]) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE taskcrew_jobs SET doc=?, leg=?, status=? WHERE id=?", (*row, job_id))
        c.execute("DELETE FROM taskcrew_job_events WHERE job_id=? AND seq > 3", (job_id,))


def _finished_done(jobs: Jobs, task: str = "Pay BILL-0004 to Initrode") -> str:
    job = jobs.submit(
        task, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "done", "Paid BILL-0004; verified", leg=0, answer="1 change(s) saved: pay BILL-0004")
    return job.id


def test_a_job_row_set_back_to_an_earlier_signed_done_reads_superseded_everywhere(
    console_env: ConsoleEnv,
) -> None:
    jobs = console_env.jobs
    db = jobs.url.removeprefix("sqlite:///")
    job_id = _finished_done(jobs)
    done_row = _raw(db, job_id)
    Authority(jobs).act_on_job(job_id, "retry", BOB)  # bob doubts it
    leg = jobs.leg(job_id)
    jobs.mark(job_id, "running", only_if=("queued",), leg=leg, worker="w2")
    jobs.finish(job_id, "not_verified", "The ERP shows BILL-0004 unpaid", leg=leg, answer="")
    assert jobs.get(job_id).record_trust == "signed"  # the honest newest row
    _set_back(db, job_id, done_row)  # a database writer restores the earlier row

    got = jobs.get(job_id)
    assert (got.record_trust, got.status, got.outcome) == ("superseded", "finished", "superseded")
    assert "finished not_verified on leg 1" in got.reason
    shown = cli_text("jobs", "show", job_id)
    assert '"record_trust": "superseded"' in shown and "finished not_verified on leg 1" in shown
    assert '"outcome": "done"' not in shown
    listed = cli_text("jobs", "list")
    assert f"{job_id} finished superseded" in listed and "not the job's latest record" in listed
    [as_json] = json.loads(runner.invoke(cli, ["jobs", "list", "--json"]).output)
    assert as_json["record_trust"] == "superseded" and as_json["outcome"] == "superseded"

    page = console_env.page_as("bob")
    job_page = body(page, f"{console_env.url}/jobs/{job_id}")
    assert "rolled back — latest signed: not_verified" in job_page and "finished: done" not in job_page
    assert "finished not_verified on leg 1" in job_page
    jobs_page = body(page, f"{console_env.url}/jobs")
    assert "rolled back — latest signed: not_verified" in jobs_page and "finished: done" not in jobs_page
    assert "finished not_verified on leg 1" in page.content()  # the detail, one click away


def test_the_signed_logs_newest_end_decides_and_honest_rows_stay_signed(tmp_path: Path) -> None:
    jobs = Jobs.open()
    db = jobs.url.removeprefix("sqlite:///")
    authority = Authority(jobs)
    # retried, the new leg not ended yet: the earlier "done" row put back reads superseded by the retry
    retried = _finished_done(jobs)
    row = _raw(db, retried)
    authority.act_on_job(retried, "retry", BOB)
    _set_back(db, retried, row)
    assert jobs.get(retried).record_trust == "superseded"
    assert "was retried by bob after leg 0" in jobs.get(retried).reason

    # honest histories stay signed: retried and finished on the new leg; cancelled; failed
    again = _finished_done(jobs)
    authority.act_on_job(again, "retry", BOB)
    jobs.mark(again, "running", only_if=("queued",), leg=1, worker="w2")
    jobs.finish(again, "done", "Paid again", leg=1, answer="")
    cancelled = jobs.submit(
        "Pay BILL-0003", submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    authority.act_on_job(cancelled.id, "cancel", BOB)
    failed = jobs.submit(
        "Pay BILL-0002", submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(failed.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.mark(failed.id, "failed", only_if=("running",), leg=0, reason="the ERP was down")
    for job_id in (again, cancelled.id, failed.id):
        assert jobs.get(job_id).record_trust == "signed", jobs.get(job_id).reason
    # the failed job cancelled (its approvals taken back), its row set back to "failed"
    failed_row = _raw(db, failed.id)
    authority.act_on_job(failed.id, "cancel", BOB)
    _set_back(db, failed.id, failed_row)
    assert jobs.get(failed.id).record_trust == "superseded"
    assert "was cancelled by bob" in jobs.get(failed.id).reason
    jobs.close()


def test_a_listing_reads_the_signed_audit_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskcrew.approvals.authority import SignedLog

    jobs = Jobs.open()
    for _ in range(30):
        _finished_done(jobs)
    reads: list[int] = []
    real = SignedLog.read.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(SignedLog, "read", classmethod(lambda cls, keys: reads.append(1) or real(cls, keys)))
    listed = jobs.list()
    assert len(listed) == 30 and all(j.record_trust == "signed" for j in listed)
    assert len(reads) == 1
    jobs.close()
