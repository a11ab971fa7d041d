"""Who submitted the run a routine was learned from, when a person has it learned (`taskcrew
routines learn <run dir>`): a red-team round.

A draft a verified run proposes by itself names the run's submitter (``hooks.after_run``), so she
may not accept it while two people decide. `routines learn` named none: mallory submitted a run,
asked bob to have it learned, and accepted the draft herself — the two-person rule kept neither
her nor anyone from approving her own run's routine. Now `learn` takes the submitter from the one
record that vouches for it, the job store's signed record of the job whose run folder it is; the
run folder holds nothing signed about who submitted it. Where no signed record proves who it was
(an operating-system user's job, signed records naming the folder that disagree), the draft says
its run's submitter is NOT PROVEN and, while two people decide, nobody may accept it. Where no
signed record names the folder at all (a run made outside the job store, a record forged in the
job database), `learn` proposes nothing: nothing vouches that the run was done, and nothing says
who submitted it — never the forged record's name, never the run folder's own word.

A real run of the headline chore (real Chromium, the demo ERP over HTTP; only the models
scripted), made once for the file; each test learns from a copy of its run folder, whose job is
recorded through the job store (SQLite) exactly as a worker records it. `routines learn` distils
that real folder (``routines.distil``, nothing replaced); real files, a real operator key and
signed audit log, real tokens and users file.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from routines_world import chore, run_chore, workplace
from test_routines import reviewed
from typer.testing import CliRunner

from taskcrew.approvals import identity
from taskcrew.approvals.identity import TokenStore
from taskcrew.cli import app
from taskcrew.console.auth import add_user
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines import store as routine_store
from taskcrew.routines.distil import distil
from taskcrew.routines.store import RoutineStore

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]

runner = CliRunner()
RUN = "20261002-101500-find-the-latest-invoice-from-northwind-t"
TASK = "Find the latest invoice from Northwind Traders and enter it"
NOT_PROVEN = "is not proven (an operating-system user, taken on her word, or no signed job record says)"
NOTHING_VOUCHES = "nothing vouches that it was: no signed job record names its run folder"


@pytest.fixture(scope="module")
def made_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the headline chore its auditor verified (done): the run folder every test learns
    from a copy of. Its own proposal goes to a routines folder of its own, no test's."""
    tmp = tmp_path_factory.mktemp("made")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKCREW_ROUTINES", str(tmp / "routines"))
        mp.setenv("TASKCREW_APPROVALS_DIR", str(tmp / "approvals"))
        with workplace(tmp) as place:
            done = run_chore(place, chore("Northwind Traders"), chaos=ChaosConfig(save_faults=[]))
    assert done.outcome == "done", done.reason
    return Path(done.run_dir)


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


def _as(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue(name))


def _accept(monkeypatch: pytest.MonkeyPatch, name: str, version: int) -> Any:
    command = reviewed(runner, version)  # the fingerprint `show` prints, read before acting as her
    _as(monkeypatch, name)
    return runner.invoke(app, command)


def _accept_unseen(monkeypatch: pytest.MonkeyPatch, name: str, version: int) -> Any:
    """An acceptance of a version `show` cannot print (none was proposed): any fingerprint."""
    _as(monkeypatch, name)
    return runner.invoke(
        app, ["routines", "accept", "enter-invoice", "-v", str(version), "--fingerprint", "0" * 32]
    )


def _learn(monkeypatch: pytest.MonkeyPatch, name: str, run_dir: Path) -> Any:
    _as(monkeypatch, name)
    return runner.invoke(app, ["routines", "learn", str(run_dir)])


def _run_folder(made: Path, office: Path, name: str = RUN) -> Path:
    """A copy of the real run in the office's runs folder, as its worker left it."""
    folder = office / "runs" / name
    shutil.copytree(made, folder)
    return folder


def _job_ran(jobs: Jobs, submitter: str, run_dir: Path, proof: str = "token") -> str:
    """A job ``submitter`` submitted (``proof``: with her token, else an OS user's word), whose run
    ended verified in ``run_dir``, as a worker records it: the store signs the record with its run
    folder."""
    job = jobs.submit(
        TASK, submitted_by=submitter, submitted_proof=proof, options=JobOptions(), enqueue=False
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


def _claims_ana(run_dir: Path, other: str) -> None:
    """The run folder's own word (anyone who can write the runs folder writes it): ana submitted it,
    as her job ``other``."""
    (run_dir / "report.md").write_text(f"Submitted by: ana (job {other})\n", encoding="utf-8")
    (run_dir / "job.json").write_text(json.dumps({"id": other, "submitted_by": "ana"}), encoding="utf-8")


def _nothing_proposed(monkeypatch: pytest.MonkeyPatch, who: tuple[str, ...]) -> None:
    """No version was written, so there is nothing `show` prints and nothing anyone may accept."""
    assert RoutineStore().versions("enter-invoice") == []
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert shown.exit_code == 2 and "no routine named 'enter-invoice'" in shown.output, shown.output
    for name in who:
        refused = _accept_unseen(monkeypatch, name, 1)
        assert refused.exit_code != 0 and "accepted" not in refused.output, refused.output
    assert RoutineStore().accepted("enter-invoice") is None


def test_the_submitter_of_a_learned_run_may_not_accept_its_routine(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's job ran; bob has its run learned. Before, the draft named no submitter, and mallory
    accepted it herself. Now it names her, from her job's signed record: she may not; ana may."""
    run_dir = _run_folder(made_run, office)
    job_id = _job_ran(jobs, "mallory", run_dir)
    learned = _learn(monkeypatch, "bob", run_dir)
    assert learned.exit_code == 0, learned.output
    hers = _accept(monkeypatch, "mallory", 1)
    assert hers.exit_code == 1, hers.output
    assert "mallory submitted the run enter-invoice v1 was learned from" in hers.output, hers.output
    assert RoutineStore().accepted("enter-invoice") is None

    assert "submitted by mallory" in learned.output and job_id in learned.output, learned.output
    draft = RoutineStore().get("enter-invoice", 1)
    assert draft.source_run == run_dir.name and draft.browser, draft  # what the real run did
    assert [t.issuer for t in draft.templates] == ["Northwind Traders"]
    written = RoutineStore().authorship(draft)
    assert written is not None and (written.by, written.submitter) == ("token:bob", "mallory")
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert "written by: token:bob; that run was submitted by mallory (signed)" in shown.output, shown.output
    assert _accept(monkeypatch, "ana", 1).exit_code == 0
    accepted = RoutineStore().accepted("enter-invoice")
    assert accepted is not None and accepted.source_submitter == "mallory"


def test_a_run_an_os_user_submitted_has_no_proven_submitter(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory ran the job as the shared OS account "clerk" (`taskcrew run` without a token: an OS
    user's word). Before, the draft named "clerk" as the run's proven submitter and mallory, whose
    login is not "clerk", accepted it with her own token. Now nobody may accept it while two people decide, as
    the approvals authority refuses such a job's two-person approvals."""
    run_dir = _run_folder(made_run, office)
    job = jobs.submit(
        "Enter the newest Northwind invoice", submitted_by="clerk", options=JobOptions(), enqueue=False
    )
    assert job.submitted_proof == "os_user"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "done", "entered and verified", leg=0, run_dir=str(run_dir.resolve()))
    said = routine_store.run_submitter(run_dir, jobs)
    assert said.name is None and "os user clerk" in said.said, said
    learned = _learn(monkeypatch, "bob", run_dir)
    assert learned.exit_code == 0 and "NOT PROVEN" in learned.output, learned.output
    for name in ("mallory", "ana"):
        refused = _accept(monkeypatch, name, 1)
        assert refused.exit_code == 1 and "is not proven" in refused.output, refused.output
        assert NOT_PROVEN in refused.output, refused.output
    assert _accept(monkeypatch, "bob", 1).exit_code == 1  # (bob wrote it)
    assert RoutineStore().accepted("enter-invoice") is None

    assert "its submitter NOT PROVEN" in learned.output and "clerk" in learned.output, learned.output
    assert "nobody may accept it" in learned.output, learned.output
    assert RoutineStore().get("enter-invoice", 1).source_submitter == routine_store.UNPROVEN_SUBMITTER
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert "who submitted that run is NOT PROVEN" in shown.output, shown.output


def test_a_job_record_forged_in_the_database_does_not_say_who_submitted_the_run(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's own job names her; someone with write access to the job database makes it say ana
    submitted it. The record no longer checks out, so it vouches for nobody: not that the run was
    done (`learn` proposes nothing), not who submitted it (never ana); nobody — mallory, ana, or
    bob — may accept anything learned from it."""
    run_dir = _run_folder(made_run, office)
    job_id = _job_ran(jobs, "mallory", run_dir)
    doc = _raw(jobs, job_id)
    doc["submitted_by"] = "ana"
    _write(jobs, job_id, doc)
    assert jobs.get(job_id).record_trust != "signed"
    said = routine_store.run_submitter(run_dir, jobs)
    assert said.name is None and "ana" not in said.said, said
    learned = _learn(monkeypatch, "bob", run_dir)
    assert learned.exit_code == 2, learned.output
    assert NOTHING_VOUCHES in learned.output and "ana" not in learned.output, learned.output
    _nothing_proposed(monkeypatch, ("mallory", "ana", "bob"))


def test_a_forged_record_naming_her_run_folder_does_not_make_it_another_s(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's job ran in the folder and its signed record says so; she makes ana's record (of
    another run) name her folder too in the job database. The forged record is not signed: the
    draft names mallory, who may not accept it; ana may. Her folder made to say ana submitted it
    is changed after her job sealed it: nothing is learned from it at all."""
    run_dir = _run_folder(made_run, office)
    mine = _job_ran(jobs, "mallory", run_dir)
    anas = _job_ran(jobs, "ana", _run_folder(made_run, office, "20261001-090000-another-run"))
    doc = _raw(jobs, anas)
    doc["run_dir"] = str(run_dir.resolve())
    _write(jobs, anas, doc)
    _claims_ana(run_dir, anas)
    refused = _learn(monkeypatch, "bob", run_dir)
    assert refused.exit_code == 2 and "changed after the run ended" in refused.output, refused.output
    _nothing_proposed(monkeypatch, ("mallory", "ana", "bob"))
    (run_dir / "job.json").unlink()  # the folder as her job sealed it
    shutil.copy2(made_run / "report.md", run_dir / "report.md")
    learned = _learn(monkeypatch, "bob", run_dir)
    assert learned.exit_code == 0, learned.output
    assert "submitted by mallory" in learned.output and mine in learned.output, learned.output
    assert anas not in learned.output and "ana" not in learned.output, learned.output
    hers = _accept(monkeypatch, "mallory", 1)
    assert hers.exit_code == 1, hers.output
    assert "mallory submitted the run enter-invoice v1 was learned from" in hers.output, hers.output
    assert _accept(monkeypatch, "ana", 1).exit_code == 0
    accepted = RoutineStore().accepted("enter-invoice")
    assert accepted is not None and accepted.source_submitter == "mallory"


def test_signed_records_that_disagree_about_who_submitted_the_run_prove_nobody(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two signed records name one run folder, mallory's job and ana's, both done: the run was
    verified, but who submitted it is not proven, so while two people decide nobody — mallory, ana,
    or bob — may accept what was learned from it."""
    run_dir = _run_folder(made_run, office)
    _job_ran(jobs, "mallory", run_dir)
    _job_ran(jobs, "ana", run_dir)
    said = routine_store.run_submitter(run_dir, jobs)
    assert said.name is None and "disagree (ana, mallory)" in said.said, said
    learned = _learn(monkeypatch, "bob", run_dir)
    assert learned.exit_code == 0, learned.output
    for who in ("mallory", "ana"):  # (bob wrote it)
        refused = _accept(monkeypatch, who, 1)
        assert refused.exit_code == 1, refused.output
        assert NOT_PROVEN in refused.output, refused.output
    assert _accept(monkeypatch, "bob", 1).exit_code == 1
    assert RoutineStore().accepted("enter-invoice") is None

    assert "its submitter NOT PROVEN" in learned.output, learned.output
    assert "submitted by ana" not in learned.output and "submitted by mallory" not in learned.output
    assert "nobody may accept it" in learned.output, learned.output
    draft = RoutineStore().get("enter-invoice", 1)
    assert draft.source_submitter == routine_store.UNPROVEN_SUBMITTER
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert "who submitted that run is NOT PROVEN" in shown.output, shown.output


def test_the_run_folders_own_word_is_not_who_submitted_it(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run made outside the job store: its folder says whatever its writer put there (a report
    naming ana, a job id of another job). Only a signed record counts, and none names the folder:
    `learn` proposes nothing from it, and says so. The same folder once an OS user's signed job names
    it: the run was done, but who submitted it is still not the folder's word — not proven, so
    nobody may accept the draft while two people decide; the routine says why."""
    run_dir = _run_folder(made_run, office)
    other = _job_ran(jobs, "ana", _run_folder(made_run, office, "20261001-090000-another-run"))
    _claims_ana(run_dir, other)
    assert routine_store.run_submitter(run_dir, jobs).name is None
    outside = _learn(monkeypatch, "mallory", run_dir)
    assert outside.exit_code == 2 and NOTHING_VOUCHES in outside.output, outside.output
    assert "submitted by ana" not in outside.output and other not in outside.output, outside.output
    _nothing_proposed(monkeypatch, ("ana", "bob"))

    _job_ran(jobs, "clerk", run_dir, proof="os_user")  # mallory's `taskcrew run` as the OS user clerk
    learned = _learn(monkeypatch, "mallory", run_dir)
    assert learned.exit_code == 0, learned.output
    for who in ("ana", "bob"):
        refused = _accept(monkeypatch, who, 1)
        assert refused.exit_code == 1 and "nobody may accept it" in refused.output, refused.output
    assert "its submitter NOT PROVEN" in learned.output, learned.output
    assert "submitted by ana" not in learned.output and other not in learned.output, learned.output
    assert RoutineStore().get("enter-invoice", 1).source_submitter == routine_store.UNPROVEN_SUBMITTER


def test_the_not_proven_mark_is_signed_and_learning_the_runs_job_proposes_anew(
    office: Path, jobs: Jobs, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Learning the same work from a run its job's record names (mallory, with her token) is not
    "already proposed" by a draft whose run's submitter is not proven (an OS user's job): the new
    draft names its submitter, and a colleague may accept it. The mark cannot be taken out of the
    file: the proposal signs it, so a file without it has no author that checks out."""
    os_run = _run_folder(made_run, office)
    _job_ran(jobs, "clerk", os_run, proof="os_user")
    first = _learn(monkeypatch, "bob", os_run)
    assert first.exit_code == 0 and "proposed enter-invoice v1" in first.output, first.output
    store = RoutineStore()
    assert store.get("enter-invoice", 1).source_submitter == routine_store.UNPROVEN_SUBMITTER

    ran = _run_folder(made_run, office, "20261003-101500-find-the-latest-invoice-from-northwind-t")
    _job_ran(jobs, "mallory", ran)
    again = _learn(monkeypatch, "bob", ran)  # v1 intact: the same work, but its submitter not proven
    assert again.exit_code == 0 and "proposed enter-invoice v2" in again.output, again.output
    assert store.get("enter-invoice", 2).source_submitter == "mallory"

    path = office / "routines" / "enter-invoice.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["source_submitter"] = None
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert store.authorship(store.get("enter-invoice", 1)) is None  # the mark removed: no author
    refused = _accept(monkeypatch, "ana", 1)
    assert refused.exit_code == 1 and "who wrote enter-invoice v1 is not proven" in refused.output

    assert "already does this" in _learn(monkeypatch, "bob", ran).output
    assert _accept(monkeypatch, "mallory", 2).exit_code == 1
    assert _accept(monkeypatch, "ana", 2).exit_code == 0


def test_an_acceptance_of_a_run_whose_submitter_is_not_proven_does_not_outlast_one_person(
    office: Path, made_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one person decides, ana accepts the version a run proposed by itself (written by
    taskcrew) whose submitter is not proven: an OS user's job, maybe her own. Once a second person
    decides, it does not replay: the rule, as it is now, cannot tell that run's submitter from her."""
    alone = office / "alone.yaml"
    users = yaml.safe_load((office / "users.yaml").read_text(encoding="utf-8"))
    alone.write_text(
        yaml.safe_dump({"users": [u for u in users["users"] if u["name"] == "ana"]}), encoding="utf-8"
    )
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(alone))
    run_dir = _run_folder(made_run, office)
    # what the run's own proposal learns (``hooks.after_run``: the run checked its own verdict) and
    # whom it names: the worker's run of an OS user's job names her as proven only if she was
    learned = distil(run_dir, require_verified=False)
    submitter = identity.submitter_as_proven("clerk", "os_user")
    assert submitter == routine_store.UNPROVEN_SUBMITTER
    store = RoutineStore()
    store.propose(learned, submitter=submitter)
    assert _accept(monkeypatch, "ana", 1).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.source_submitter == routine_store.UNPROVEN_SUBMITTER
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(office / "users.yaml"))  # bob and mallory join
    assert store.accepted("enter-invoice") is None
    problem = store.acceptance_problem(store.get("enter-invoice", 1))
    assert problem is not None and "who submitted the run enter-invoice v1 was learned from" in problem
