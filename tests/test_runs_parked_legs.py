"""A job that waits for an approval runs in two legs, each in its own run folder: the first parks
(its run never ends), the second does the work. The parked leg's folder says what it is — parked
while the job waits, then "continued" with the run its job went on in — the same in `runs list`,
`runs show`, the console's runs list and its run page, by one rule (``RunRecords.state``, from the
job store's signed record). A real worker leg (LegRunner, scripted models, real Chromium, the demo
ERP over HTTP, a real SQLite job store), the real CLI and the real console."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import ConsoleEnv, shot
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX, WorkplaceSettings
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.tools.human import AutoApproveHuman

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]
SCRIPTED = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")
runner = CliRunner()


@dataclass
class Office:
    env: ConsoleEnv
    place: Workplace


@pytest.fixture(scope="module")
def office(
    tmp_path_factory: pytest.TempPathFactory,
    console_users: Path,
    console_chromium: Any,
    eval_knowledge_seed: Path,
) -> Iterator[Office]:
    """A worker host and its console: one job database, one runs folder."""
    root = tmp_path_factory.mktemp("parked-office")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKCREW_JOBS_DB", f"sqlite:///{root / 'jobs.sqlite3'}")
        mp.setenv("TASKCREW_APPROVALS_DIR", str(root / "approvals"))
        mp.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
        mp.delenv("TASKCREW_TOKEN", raising=False)
        env = ConsoleEnv(root, console_users, console_chromium)
        shutil.copytree(eval_knowledge_seed, root / "knowledge")
        settings = WorkplaceSettings(
            erp_url="http://127.0.0.1:0",
            intranet_url=None,
            sandbox=DEFAULT_SANDBOX,
            runs_dir=env.runs,
            erp_db=root / "erp.sqlite3",
            knowledge_dir=root / "knowledge",
            chaos=False,
        )
        try:
            with Workplace(settings, AutoApproveHuman()) as place:
                yield Office(env, place)
        finally:
            env.close()


def _leg(office: Office, job_id: str) -> str:
    jobs = office.env.jobs
    return LegRunner(jobs, office.place, "w1", scripted=scripted_for).run_leg(job_id, jobs.leg(job_id))


def _cli(*args: str) -> str:
    out = runner.invoke(app, list(args))
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def _console(office: Office, page: Any, run: Path, name: str) -> tuple[str, str, str]:
    """The run's badge on the runs list, and its badge and reason on its own page (1366×768); the
    list says under the task what its page says."""
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{office.env.url}/runs")
    row = page.locator("#runs tr", has_text=run.name)
    listed, said = row.locator(".badge").inner_text(), " ".join(row.locator(".run-now").inner_text().split())
    shot(page, f"{name}-runs-1366")
    page.goto(f"{office.env.url}/runs/{run.name}")
    shot(page, f"{name}-run-1366")
    reason = page.locator("#run-reason").inner_text()
    assert said == " ".join(reason.split())
    return listed, page.locator("#run-status").inner_text(), reason


def test_a_parked_leg_says_it_parked_and_where_its_job_went_on_on_every_surface(office: Office) -> None:
    jobs, runs = office.env.jobs, str(office.env.runs)
    office.place.erp_server.reset()
    task = next(c for c in load_cases() if c.id == "northwind-headline").task
    job = jobs.submit(task, submitted_by="ana", submitted_proof="console", options=SCRIPTED)
    assert _leg(office, job.id) == "waiting"
    [approval] = jobs.approvals("pending", job_id=job.id)
    first = Path(str(jobs.get(job.id).run_dir))
    # its trace ends with what it is (the folder's own word: it names the job and the approval)
    last = json.loads((first / "trace.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert (last["kind"], last["action"]) == ("control", "parked")
    assert f"waiting for approval {approval.id} of job {job.id}" in last["reason"]

    # while it waits: parked, on every surface, in the same words (the CLI names its command)
    waits = f"job {job.id} is waiting for approval {approval.id}"
    assert f"parked: {waits}; `taskcrew approvals list` shows it" in _cli("runs", "list", "--runs-dir", runs)
    shown = _cli("runs", "show", first.name, "--runs-dir", runs)
    assert f"outcome: unfinished — parked: {waits}; `taskcrew approvals list` shows it" in shown
    page = office.env.page_as("bob")
    listed, status, reason = _console(office, page, first, "parked-waiting")
    assert (listed, status) == ("parked", "parked")
    assert reason.startswith(f"{waits}; open it in Approvals") and "`" not in reason
    link = page.locator("#run-reason a")
    assert link.inner_text() == "Approvals" and link.get_attribute("href") == f"/approvals/{approval.id}"

    # decided: the job goes on in a new leg, a new run folder, and ends done
    decided = Authority(jobs).decide(approval.id, "approve", Identity(name="bob", proof="console"))
    assert decided.status == "decided", decided.message
    assert _leg(office, job.id) == "finished"
    done = jobs.get(job.id)
    second = Path(str(done.run_dir))
    assert done.outcome == "done" and second != first

    went_on = f"this leg parked for approval {approval.id}; job {job.id} went on in run {second.name} (finished: done)"
    listed_cli = _cli("runs", "list", "--runs-dir", runs)
    assert f"continued: {went_on}" in listed_cli and "interrupted" not in listed_cli
    assert f"{second.name} done" in listed_cli
    assert f"outcome: unfinished — continued: {went_on}" in _cli("runs", "show", str(first))
    page.reload()
    listed, status, reason = _console(office, page, first, "parked-continued")
    assert (listed, status) == ("continued", "continued")
    assert reason.startswith(went_on)
    assert page.locator("#vouch").count() == 0  # it claims no outcome: nothing to warn of
