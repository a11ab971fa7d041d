"""A run folder's own files against the job store's signed record of it: a red-team round.

A run folder's trace.jsonl and report.md are not signed. `runs list`/`runs show`, the console's runs
list, run page and job page, and `routines learn` took a run's outcome and its verifier's verdict
from them: one line of the trace edited (run_finished -> done) and one verdict line added (verified)
made all of them say "done / verified" for a run whose job's signed record says it ended "error",
and `routines learn` proposed a routine from that unverified run. Now the job store's signed record
naming the folder is what counts (``eval.runs.RunRecord.judge``): each surface shows its outcome and
says plainly where the folder says otherwise, or that nothing vouches for a run no signed record
names; `routines learn` needs a signed record that says done.

And the console found a run by its folder NAME only: two worker hosts, each with its own runs
folder, can make runs of the same name, so a job's page told another job's run and /runs hid one of
them. Now a job's page opens the folder its record names, and /runs lists both, each its own link.

Real runs of the headline chore (real Chromium, the demo ERP; only the models scripted), made once
for the file; their jobs are recorded through the job store exactly as a worker records them.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from routines_world import chore, run_chore, workplace
from test_console_redteam import App
from typer.testing import CliRunner

from taskcrew.cli import app as cli
from taskcrew.crew.models import CriterionCheck, Verdict
from taskcrew.crew.trace import VerdictEvent
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.mock_erp import ChaosConfig
from taskcrew.routines.distil import DistilError, distil

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]

runner = CliRunner()
NAME = "20261205-163102-find-the-latest-invoice-from-northwind-t"


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of the headline chore: one its auditor verified (done), one whose verifier never gave
    a verdict (error: not verified, though the bill was saved)."""
    tmp = tmp_path_factory.mktemp("made")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKCREW_ROUTINES", str(tmp / "routines"))
        mp.setenv("TASKCREW_APPROVALS_DIR", str(tmp / "approvals"))
        with workplace(tmp) as place:
            case = chore("Northwind Traders")
            done = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
            assert done.outcome == "done", done.reason
            place.erp_server.reset(ChaosConfig(save_faults=[]))
            erred = place.run(
                case.task,
                worker_model="scripted/solver",
                verifier_model="scripted/sloppy",
                scripted=scripted_models(case),
                human=CaseHuman(case.human),
                criteria=case.criteria,
            )
            assert erred.outcome == "error", erred.reason
    return {"done": done.run_dir, "error": erred.run_dir}


class Office:
    def __init__(self, root: Path, users: Path) -> None:
        self.root = root
        self.made = App(root, users)
        self.jobs: Jobs = self.made.jobs
        self.runs = root / "runs"

    def place(self, run: Path, where: Path | None = None, name: str | None = None) -> Path:
        """A copy of a made run in the runs folder (or ``where``), as its worker left it."""
        folder = (where or self.runs) / (name or run.name)
        shutil.copytree(run, folder)
        return folder

    def job(self, run_dir: Path, outcome: str, reason: str, who: str = "ana") -> str:
        """The job that ran in ``run_dir``, recorded as a worker records it: signed by the store."""
        job = self.jobs.submit(
            "Find the latest invoice from Northwind Traders and enter it",
            submitted_by=who,
            submitted_proof="console",
            options=JobOptions(),
            enqueue=False,
        )
        self.jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
        self.jobs.finish(job.id, outcome, reason, leg=0, answer="", run_dir=str(run_dir))
        return job.id


@pytest.fixture
def office(tmp_path: Path, console_users: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Office]:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    (tmp_path / "runs").mkdir()
    made = Office(tmp_path, console_users)
    yield made
    made.jobs.close()


def forge(run: Path) -> None:
    """What someone who can write the runs folder does: the run "done", a verified verdict before it,
    and a report that says so."""
    out = []
    for line in (run / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["kind"] == "run_finished":
            verdict = Verdict(
                verified=True,
                checks=[
                    CriterionCheck(criterion="bill entered", met=True, source="/bills", observed="BILL-0011")
                ],
                reason="Verified: the bill is in the ERP.",
            )
            out.append(VerdictEvent(at=event["at"], attempt=1, verdict=verdict).model_dump_json())
            event["outcome"], event["reason"] = "done", "Verified: the bill BILL-0011 is in Acme Payables."
            line = json.dumps(event)
        out.append(line)
    (run / "trace.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    (run / "report.md").write_text("# Done — verified by the verifier\n", encoding="utf-8")


def text(page: str) -> str:
    """The page's words: an inline span or line-break hint (a record id kept whole) adds no space."""
    page = re.sub(r"</?(?:span|wbr)\b[^>]*>", "", page)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_a_forged_trace_does_not_make_a_run_its_signed_record_says_ended_error_done(
    office: Office, real_runs: dict[str, Path]
) -> None:
    run = office.place(real_runs["error"])
    job_id = office.job(run, "error", "Verifier could not finish")
    forge(run)
    assert office.jobs.get(job_id).record_trust == "signed" and office.jobs.get(job_id).outcome == "error"
    contradiction = f"The run folder says done and verified; the signed record of job {job_id} says error"

    listed = runner.invoke(cli, ["runs", "list", "--runs-dir", str(office.runs)])
    assert listed.exit_code == 0, listed.output
    assert re.search(rf"{run.name}\s+error\b", listed.output), listed.output
    assert contradiction in " ".join(listed.output.split()), listed.output
    shown = runner.invoke(cli, ["runs", "show", run.name, "--runs-dir", str(office.runs)])
    assert "outcome: error — Verifier could not finish" in shown.output, shown.output
    assert contradiction in " ".join(shown.output.split()), shown.output

    client = office.made.client("ana")
    runs_page = text(client.get("/runs").text)
    assert f"{run.name} error" in runs_page, runs_page
    # its folder was changed after the job sealed it: the list says so, and the signed outcome only
    assert "error (signed) · folder changed" in runs_page, runs_page
    assert "Its folder changed after the run ended: rely on the job's signed record." in runs_page
    run_page = client.get(f"/runs/{run.name}").text
    assert re.search(r'id="run-status"[^>]*>error \(signed\) · folder changed<', run_page), run_page
    shown_text = text(run_page)
    # the folder was changed after the job sealed it: the warning says so first, and what the
    # folder claims is set against the signed record inside its collapsed account
    assert "This run's folder was changed after the run ended" in shown_text
    assert "they claim done and verified; the signed record says error" in shown_text
    # the folder's own ending and verdict stay readable, marked as its word and never as success
    assert "finished: done (the run folder's word; the signed job record says error)" in shown_text
    assert (
        "verifier (attempt 1): verified (the run folder's word; the signed job record says error)"
        in shown_text
    )
    assert "What the changed folder says (not vouched for)" in shown_text  # its verdict among it
    assert "It says verified:" in shown_text
    assert "Verified: Verified: the bill" not in shown_text
    job_page = text(client.get(f"/jobs/{job_id}").text)
    assert "This run's folder was changed after the run ended" in job_page, job_page
    assert "finished: done (the run folder's word; the signed job record says error)" in job_page


def test_routines_learn_needs_a_signed_record_that_says_done(
    office: Office, real_runs: dict[str, Path]
) -> None:
    forged = office.place(real_runs["error"])
    job_id = office.job(forged, "error", "Verifier could not finish")
    forge(forged)
    with pytest.raises(DistilError, match=f"the signed record of job {job_id} says it ended error"):
        distil(forged)
    learned = runner.invoke(cli, ["routines", "learn", str(forged)])
    assert learned.exit_code == 2, learned.output
    assert f"was not verified: the signed record of job {job_id} says it ended error" in learned.output
    assert not (office.root / "routines").exists() or not list((office.root / "routines").glob("*.yaml"))

    outside = office.place(real_runs["done"], office.root / "elsewhere")  # a genuine verified run, no job
    refused = runner.invoke(cli, ["routines", "learn", str(outside)])
    assert refused.exit_code == 2, refused.output
    assert "nothing vouches that it was: no signed job record names its run folder" in refused.output

    ran = office.place(real_runs["done"])
    office.job(ran, "done", "Each invoice is in Acme Payables exactly once")
    proposed = runner.invoke(cli, ["routines", "learn", str(ran)])
    assert proposed.exit_code == 0 and "proposed enter-invoice v1 (draft)" in proposed.output, proposed.output


def test_a_run_no_signed_record_names_says_nothing_vouches_for_it(
    office: Office, real_runs: dict[str, Path]
) -> None:
    run = office.place(real_runs["done"])
    listed = runner.invoke(cli, ["runs", "list", "--runs-dir", str(office.runs)])
    flat = " ".join(listed.output.split())
    assert re.search(rf"{run.name}\s+done\b", listed.output), listed.output  # its details stay readable
    assert "Nothing vouches for this outcome: no signed job record names its run folder" in flat, flat
    client = office.made.client("ana")
    page = text(client.get(f"/runs/{run.name}").text)
    assert "Nothing vouches for this outcome" in page
    assert "verified (the run folder's word; nothing signed vouches for it)" in page
    assert "The run folder's own verdict, which nothing signed vouches for" in page
    listed_page = text(client.get("/runs").text)
    assert f"{run.name} done" in listed_page
    assert "Nothing signed vouches for this outcome: it is the run folder's own word." in listed_page


def test_runs_of_one_name_in_two_runs_folders_are_each_their_own(
    office: Office, real_runs: dict[str, Path]
) -> None:
    host_a = office.place(real_runs["done"], office.root / "hostA" / "runs", NAME)
    host_b = office.place(real_runs["error"], office.root / "hostB" / "runs", NAME)
    b = office.job(host_b, "error", "Verifier could not finish")
    a = office.job(host_a, "done", "Each invoice is in Acme Payables exactly once")
    client = office.made.client("ana")

    for job_id, own, other in (
        (b, "finished: error", "finished: done"),
        (a, "finished: done", "finished: error"),
    ):
        page = client.get(f"/jobs/{job_id}").text
        assert own in page and other not in page, (job_id, text(page))
        link = re.search(r'<a href="(/runs/[^"#]+)">', page)
        assert link is not None
        assert own in client.get(link.group(1)).text  # its link opens its own run
    assert "ScriptError" in client.get(f"/jobs/{b}").text  # B's own ending: its verifier failed

    runs = client.get("/runs").text
    links = re.findall(rf'href="(/runs/{NAME}[^"]*)"', runs)
    assert len(links) == 2 and len(set(links)) == 2, links
    endings = sorted("finished: done" in client.get(h).text for h in links)
    assert endings == [False, True]
    for href in links:  # each its own screenshots
        assert client.get(f"{href}/files/final_page.png").status_code == 200
    assert client.get(f"/runs/{NAME}").status_code == 404  # the bare name is no longer one run


def test_the_runs_page_reads_the_job_store_once(
    office: Office, real_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs that never ended (killed) ask the job store about their jobs: once for the page, not
    once a run."""
    for i in range(4):
        run = office.place(real_runs["error"], name=f"2026120{i}-101500-killed")
        lines = (run / "trace.jsonl").read_text(encoding="utf-8").splitlines()
        (run / "trace.jsonl").write_text(
            "\n".join(x for x in lines if '"run_finished"' not in x) + "\n", encoding="utf-8"
        )
    reads: list[Any] = []
    real = office.jobs.list
    monkeypatch.setattr(office.jobs, "list", lambda *a, **k: reads.append(a) or real(*a, **k))
    page = text(office.made.client("ana").get("/runs").text)
    assert page.count("interrupted") >= 4, page
    assert len(reads) == 1, reads


def test_a_run_older_than_the_newest_records_read_is_still_vouched_for(
    office: Office, real_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list of runs reads the newest ``RUNS_LOOKED_UP`` job records; one run (`routines learn`,
    `runs show`) is looked up by its folder however old its job is: a busy office's month-old
    verified run was "nothing vouches", and could not be learned from."""
    monkeypatch.setattr("taskcrew.eval.runs.RUNS_LOOKED_UP", 2)
    ran = office.place(real_runs["done"], name="20261001-0900_50%_northwind")  # LIKE's wildcards in it
    office.job(ran, "done", "Each invoice is in Acme Payables exactly once", who="bob")
    decoy = office.place(
        real_runs["done"], name="20261001-0900X50%Xnorthwind"
    )  # matched by '_' as a wildcard
    for _ in range(3):  # newer jobs, none of them naming the run
        office.job(office.runs / "elsewhere", "done", "other work")

    shown = runner.invoke(cli, ["runs", "show", str(ran)])
    assert shown.exit_code == 0, shown.output
    assert "Nothing vouches" not in " ".join(shown.output.split()), shown.output
    assert "Nothing vouches" in " ".join(runner.invoke(cli, ["runs", "show", str(decoy)]).output.split())
    proposed = runner.invoke(cli, ["routines", "learn", str(ran)])
    assert proposed.exit_code == 0 and "proposed enter-invoice v1 (draft)" in proposed.output, proposed.output
