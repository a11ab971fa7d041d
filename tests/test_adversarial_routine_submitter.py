"""Who submitted the run a routine was learned from, when a person has it learned (`taskcrew
routines learn <run dir>`): a red-team round.

A draft a verified run proposes by itself names the run's submitter (``hooks.after_run``), so she
may not accept it while two people decide. `routines learn` named none: mallory submitted a run,
asked bob to have it learned, and accepted the draft herself — the two-person rule kept neither
her nor anyone from approving her own run's routine. Now `learn` takes the submitter from the one
record that vouches for it, the job store's signed record of the job whose run folder it is; the
run folder holds nothing signed about who submitted it. Where no signed record names the folder
(a run made outside the job store, a record forged in the job database), the draft says its run's
submitter is NOT PROVEN and, while two people decide, nobody may accept it.

Real files, a real operator key and signed audit log, real tokens and users file, a real job store
(SQLite); the distillation of the run folder is replaced by the routine it would learn (no browser).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_routines import _routine, reviewed
from typer.testing import CliRunner

from taskcrew.approvals.identity import TokenStore
from taskcrew.cli import app
from taskcrew.console.auth import add_user
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.routines import store as routine_store
from taskcrew.routines.models import Template
from taskcrew.routines.store import RoutineStore

runner = CliRunner()


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    """Three users (the two-person rule is on: `two_person: auto`), the approvals key and audit log,
    the routines folder and the job store in a temporary home; no token yet."""
    for name in ("ana", "bob", "mallory"):
        add_user(tmp_path / "users.yaml", name, f"{name}-secret-1")
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "users.yaml"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    monkeypatch.delenv("TASKCREW_RISK_RULES", raising=False)
    return tmp_path


@pytest.fixture
def jobs(office: Path) -> Iterator[Jobs]:
    store = Jobs.open()
    yield store
    store.close()


@pytest.fixture
def learns(northwind: Template, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`routines learn` distils the run folder it is given into the Northwind routine (the run's
    trace is not what this round is about); ``summary`` changes what it learns."""
    learned: dict[str, Any] = {"summary": ""}

    def distil(run_dir: Path) -> Any:
        return _routine(northwind, source_run=run_dir.name, summary=learned["summary"])

    monkeypatch.setattr("taskcrew.routines.distil.distil", distil)
    learned["routine"] = lambda: _routine(northwind, source_run="run-outside-the-job-store")
    return learned


def _as(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue(name))


def _accept(monkeypatch: pytest.MonkeyPatch, name: str, version: int) -> Any:
    command = reviewed(runner, version)  # the fingerprint `show` prints, read before acting as her
    _as(monkeypatch, name)
    return runner.invoke(app, command)


def _run_folder(office: Path, name: str = "20261002-101500-find-the-latest-invoice-from-northwind-t") -> Path:
    folder = office / "runs" / name
    folder.mkdir(parents=True)
    return folder


def _job_ran(jobs: Jobs, submitter: str, run_dir: Path) -> str:
    """A job ``submitter`` submitted (with her token), whose run ended verified in ``run_dir``, as a
    worker records it: the store signs the record with its run folder."""
    job = jobs.submit(
        "Find the latest invoice from Northwind Traders and enter it",
        submitted_by=submitter,
        submitted_proof="token",
        options=JobOptions(),
        enqueue=False,
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "done", "entered and verified", leg=0, run_dir=str(run_dir.resolve()))
    return job.id


def _raw(jobs: Jobs, job_id: str) -> dict[str, Any]:
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        (doc,) = db.execute("SELECT doc FROM taskcrew_jobs WHERE id = ?", (job_id,)).fetchone()
    return dict(json.loads(doc))


def _write(jobs: Jobs, job_id: str, doc: dict[str, Any]) -> None:
    """What someone with write access to the job database does."""
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        db.execute("UPDATE taskcrew_jobs SET doc = ? WHERE id = ?", (json.dumps(doc), job_id))


def test_the_submitter_of_a_learned_run_may_not_accept_its_routine(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's job ran; bob has its run learned. Before, the draft named no submitter, and mallory
    accepted it herself. Now it names her, from her job's signed record: she may not; ana may."""
    run_dir = _run_folder(office)
    job_id = _job_ran(jobs, "mallory", run_dir)
    _as(monkeypatch, "bob")
    learned = runner.invoke(app, ["routines", "learn", str(run_dir)])
    assert learned.exit_code == 0, learned.output
    hers = _accept(monkeypatch, "mallory", 1)
    assert hers.exit_code == 1, hers.output
    assert "mallory submitted the run enter-invoice v1 was learned from" in hers.output, hers.output
    assert RoutineStore().accepted("enter-invoice") is None

    assert "submitted by mallory" in learned.output and job_id in learned.output, learned.output
    draft = RoutineStore().get("enter-invoice", 1)
    written = RoutineStore().authorship(draft)
    assert written is not None and (written.by, written.submitter) == ("token:bob", "mallory")
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert "written by: token:bob; that run was submitted by mallory (signed)" in shown.output, shown.output
    assert _accept(monkeypatch, "ana", 1).exit_code == 0
    accepted = RoutineStore().accepted("enter-invoice")
    assert accepted is not None and accepted.source_submitter == "mallory"


def test_a_run_an_os_user_submitted_has_no_proven_submitter(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory ran the job as the shared OS account "clerk" (`taskcrew run` without a token: an OS
    user's word). Before, the draft named "clerk" as the run's proven submitter and mallory, whose
    login is not "clerk", accepted it with her own token. Now nobody may accept it while two people decide, as
    the approvals authority refuses such a job's two-person approvals."""
    run_dir = _run_folder(office)
    job = jobs.submit(
        "Enter the newest Northwind invoice", submitted_by="clerk", options=JobOptions(), enqueue=False
    )
    assert job.submitted_proof == "os_user"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "done", "entered and verified", leg=0, run_dir=str(run_dir.resolve()))
    said = routine_store.run_submitter(run_dir, jobs)
    assert said.name is None and "os user clerk" in said.said, said
    _as(monkeypatch, "bob")
    learned = runner.invoke(app, ["routines", "learn", str(run_dir)])
    assert learned.exit_code == 0 and "NOT PROVEN" in learned.output, learned.output
    for name in ("mallory", "ana"):
        refused = _accept(monkeypatch, name, 1)
        assert refused.exit_code == 1 and "is not proven" in refused.output, refused.output
    assert RoutineStore().accepted("enter-invoice") is None


def test_a_job_record_forged_in_the_database_does_not_say_who_submitted_the_run(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's own job names her; someone with write access to the job database makes it say ana
    submitted it. The record no longer checks out, so it vouches for nobody: the draft's submitter
    is not proven, and while two people decide nobody — mallory, ana, or bob — may accept it."""
    run_dir = _run_folder(office)
    job_id = _job_ran(jobs, "mallory", run_dir)
    doc = _raw(jobs, job_id)
    doc["submitted_by"] = "ana"
    _write(jobs, job_id, doc)
    _as(monkeypatch, "bob")
    learned = runner.invoke(app, ["routines", "learn", str(run_dir)])
    assert learned.exit_code == 0, learned.output
    for who in ("mallory", "ana"):  # (bob wrote it)
        refused = _accept(monkeypatch, who, 1)
        assert refused.exit_code == 1, refused.output
        assert (
            "is not proven (an operating-system user, taken on her word, or no signed job record says)"
            in refused.output
        ), refused.output
    assert _accept(monkeypatch, "bob", 1).exit_code == 1
    assert RoutineStore().accepted("enter-invoice") is None

    assert "its submitter NOT PROVEN" in learned.output and "ana" not in learned.output, learned.output
    assert "nobody may accept it" in learned.output, learned.output
    draft = RoutineStore().get("enter-invoice", 1)
    assert draft.source_submitter == routine_store.UNPROVEN_SUBMITTER
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert "who submitted that run is NOT PROVEN" in shown.output, shown.output


def test_the_run_folders_own_word_is_not_who_submitted_it(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run made outside the job store: its folder says whatever its writer put there (a report
    naming ana, a job id of another job). Only a signed record counts, and none names the folder,
    so nobody may accept the draft while two people decide; the routine says why."""
    run_dir = _run_folder(office)
    other = _job_ran(jobs, "ana", _run_folder(office, "20261001-090000-another-run"))
    (run_dir / "report.md").write_text(f"Submitted by: ana (job {other})\n", encoding="utf-8")
    (run_dir / "job.json").write_text(json.dumps({"id": other, "submitted_by": "ana"}), encoding="utf-8")
    _as(monkeypatch, "mallory")
    learned = runner.invoke(app, ["routines", "learn", str(run_dir)])
    assert learned.exit_code == 0, learned.output
    for who in ("ana", "bob"):
        refused = _accept(monkeypatch, who, 1)
        assert refused.exit_code == 1 and "nobody may accept it" in refused.output, refused.output
    assert "its submitter NOT PROVEN" in learned.output, learned.output
    assert RoutineStore().get("enter-invoice", 1).source_submitter == routine_store.UNPROVEN_SUBMITTER


def test_the_not_proven_mark_is_signed_and_learning_the_runs_job_proposes_anew(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark cannot be taken out of the file: the proposal signs it, so a file without it has no
    author that checks out. Learning the same work from a run its job's record names is not "already
    proposed": the new draft names its submitter, and a colleague may accept it."""
    outside = _run_folder(office)
    _as(monkeypatch, "bob")
    assert runner.invoke(app, ["routines", "learn", str(outside)]).exit_code == 0
    path = office / "routines" / "enter-invoice.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["source_submitter"] = None
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    store = RoutineStore()
    assert store.authorship(store.get("enter-invoice", 1)) is None  # the mark removed: no author
    refused = _accept(monkeypatch, "ana", 1)
    assert refused.exit_code == 1 and "who wrote enter-invoice v1 is not proven" in refused.output

    ran = _run_folder(office, "20261003-101500-find-the-latest-invoice-from-northwind-t")
    _job_ran(jobs, "mallory", ran)
    _as(monkeypatch, "bob")
    again = runner.invoke(app, ["routines", "learn", str(ran)])
    assert again.exit_code == 0 and "proposed enter-invoice v2" in again.output, again.output
    assert store.get("enter-invoice", 2).source_submitter == "mallory"
    assert "already does this" in runner.invoke(app, ["routines", "learn", str(ran)]).output
    assert _accept(monkeypatch, "mallory", 2).exit_code == 1
    assert _accept(monkeypatch, "ana", 2).exit_code == 0


def test_an_acceptance_of_a_run_whose_submitter_is_not_proven_does_not_outlast_one_person(
    office: Path, jobs: Jobs, learns: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one person decides, ana accepts a version learned from a run no signed record names
    (maybe her own; written by taskcrew, as the mark reads when `learn` leaves it). Once a second
    person decides, it does not replay: the rule, as it is now, cannot tell that run's submitter
    from her."""
    alone = office / "alone.yaml"
    users = yaml.safe_load((office / "users.yaml").read_text(encoding="utf-8"))
    alone.write_text(
        yaml.safe_dump({"users": [u for u in users["users"] if u["name"] == "ana"]}), encoding="utf-8"
    )
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(alone))
    store = RoutineStore()
    store.propose(learns["routine"](), submitter=routine_store.UNPROVEN_SUBMITTER)
    assert _accept(monkeypatch, "ana", 1).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.source_submitter == routine_store.UNPROVEN_SUBMITTER
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(office / "users.yaml"))  # bob and mallory join
    assert store.accepted("enter-invoice") is None
    problem = store.acceptance_problem(store.get("enter-invoice", 1))
    assert problem is not None and "who submitted the run enter-invoice v1 was learned from" in problem
