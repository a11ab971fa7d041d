"""`taskcrew demo`: the product offline with scripted stand-in models, and the solver reading a task
in a person's own words (not only an eval case's exact text)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from taskcrew.eval.models import load_cases
from taskcrew.eval.solvers import NoRecipe, task_models
from taskcrew.eval.solvers.ledger import MarkPaid, UnpaidReport
from taskcrew.eval.solvers.payables import EnterInvoices, Target
from taskcrew.eval.solvers.tasks import recipe_for_task
from taskcrew.jobs.models import Job, JobOptions
from taskcrew.jobs.scripted import scripted_for


def _targets(task: str) -> list[Target]:
    recipe = recipe_for_task(task)
    assert isinstance(recipe, EnterInvoices), task
    return recipe.targets


def test_the_solver_reads_tasks_in_other_words_than_the_eval_cases() -> None:
    assert _targets("Enter Initech's newest invoice into the ERP.") == [Target("Initech")]
    assert _targets("Please book the most recent invoice from Soylent Foods into Acme Payables") == [
        Target("Soylent Foods")
    ]
    assert _targets("Record invoice VI-3390 from Vandelay Industries in the ERP, thanks.") == [
        Target("Vandelay Industries", "VI-3390")
    ]
    paid = recipe_for_task("Please mark the bill GX-5531 as paid on 3 October 2026.")
    assert isinstance(paid, MarkPaid) and (paid.number, paid.paid_on) == ("GX-5531", "2026-10-03")
    assert isinstance(recipe_for_task("Which bills are unpaid and due before 1 November 2026?"), UnpaidReport)
    # reading about an invoice is not entering it; and what it does not understand it says so
    assert recipe_for_task("What is the latest invoice from Initech about?") is None
    with pytest.raises(NoRecipe, match="they understand entering an invoice"):
        task_models("Write me a poem about invoices")


def test_a_scripted_job_in_own_words_gets_models_and_an_unknown_one_a_clear_error() -> None:
    def job(task: str) -> Job:
        options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")
        return Job.model_validate(
            {
                "id": "j",
                "task": task,
                "status": "queued",
                "submitted_by": "ana",
                "submitted_at": "2026-12-01T10:00:00",
                "options": options,
            }
        )

    assert {c.task for c in load_cases()}.isdisjoint(
        {"Enter Bharat Components' newest invoice into the ERP."}
    )
    factory = scripted_for(job("Enter Bharat Components' newest invoice into the ERP."))
    assert factory("solver").model == "scripted/solver"
    with pytest.raises(LookupError, match="do not understand this task"):
        scripted_for(job("Order new chairs for the office"))


def test_run_without_a_model_points_to_the_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from taskcrew.cli import app

    for name in ("TASKCREW_MODEL", "TASKCREW_VERIFIER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    out = CliRunner().invoke(app, ["run", "Enter the latest invoice from Initech into the ERP"])
    assert out.exit_code == 2 and "no model configured" in out.output
    assert "`taskcrew demo`" in " ".join(out.output.split())
    scripted = CliRunner().invoke(app, ["run", "Pay it", "--model", "scripted/solver"])
    assert scripted.exit_code == 2 and "taskcrew demo" in " ".join(scripted.output.split())


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_demo_runs_the_headline_offline_with_the_terminal_approval(
    tmp_path: Path, eval_knowledge_seed: Path
) -> None:
    """The real CLI: labelled as scripted stand-ins, the approval asked at the terminal (answered
    y on stdin), the bill entered in a fresh demo ERP, verified, a report written."""
    seed = tmp_path / "home" / "demo" / "knowledge-seed"  # seeded once per home, as the demo does
    shutil.copytree(eval_knowledge_seed, seed)
    (seed / ".seeded").write_text("seeded\n")
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    env.pop("TASKCREW_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", "demo", "--runs-dir", str(tmp_path / "runs")],
        input="y\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=840,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "scripted stand-in models — not AI" in out
    assert "Approval needed" in out and "POST http://127.0.0.1:" in out  # asked at the terminal
    assert re.search(r"Verification 1: verified", out)
    assert "done:" in out and "INV-2057" in out and "not AI" in out.split("done:")[-1]
    [report] = (tmp_path / "runs").glob("*/report.md")
    text = report.read_text(encoding="utf-8")
    assert "INV-2057" in text and "scripted/solver" in text
    # who approved, at the terminal and in the report's Approvals list, not only "approved"
    assert re.search(r"approval POST http://127\.0\.0\.1:\d+/bills/new → approved by .+ at the terminal", out)
    approvals = text.split("## Approvals", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"→ \*\*approved\*\* by .+ at the terminal", approvals), approvals


def test_the_demo_console_reads_what_the_demo_worker_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's console is told the folders its worker writes in its own home (its
    TASKCREW_HOME, not the demo process's): the filled form's screenshot, the facts, the routines."""
    from taskcrew import demo
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.routines.store import ENV_VAR as ROUTINES

    monkeypatch.setenv(ROUTINES, str(tmp_path / "company-routines"))  # never the demo's drafts
    env = demo._worker_env(tmp_path)
    folders = demo._worker_folders(tmp_path)
    settings = ConsoleSettings(
        state_dir=tmp_path, runs_dirs=[], eval_dirs=[], users_file=tmp_path / "u", **folders
    )
    worker_home = Path(env["TASKCREW_HOME"])
    assert worker_home != Path(os.environ["TASKCREW_HOME"])
    assert settings.jobs_dir == worker_home / "jobs"  # where LegRunner keeps the screenshots
    assert settings.knowledge_dir == worker_home / "knowledge"
    assert settings.routines_dir == Path(env[ROUTINES]) == worker_home / "routines"
