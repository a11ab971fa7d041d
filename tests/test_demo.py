"""`taskcrew demo`: the product offline with scripted stand-in models, and the solver reading a task
in a person's own words (not only an eval case's exact text)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
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


def files(folder: Path) -> list[str]:
    """Every file under ``folder`` (none if it does not exist), as relative paths."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


class Output:
    """The demo's stdout as it comes, read on a thread; ``wait_for`` waits on a condition, not a clock."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.text = ""
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._changed:
                self.text += line
                self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        with self._changed:
            found = self._changed.wait_for(lambda: pattern.search(self.text), timeout)
        assert found, f"not printed within {timeout:.0f} s: {pattern.pattern}\n{self.text[-3000:]}"
        return found

    def finish(self, timeout: float) -> str:
        self._thread.join(timeout)
        return self.text


def stop(process: subprocess.Popen[str]) -> None:
    """End a demo a test gave up on as a person would (SIGTERM: it stops its worker and removes its
    folder), and only then for good."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


@dataclass
class DemoUser:
    """A user's environment for the real CLI: their home (with the demo's knowledge seed, seeded
    once per home as the demo does), their own routines and approvals folders named, and a
    temporary folder of their own (where the demo makes its ``taskcrew-demo-*`` folder; a short
    path, as Chromium's socket in it must be)."""

    env: dict[str, str]
    home: Path
    seed: list[str]  # the files of the home before the demo
    tmp: Path

    def assert_nothing_left(self) -> None:
        """The demo wrote nothing to the user's home but the knowledge seed it copies, nothing to
        their routines or approvals folders, and its temporary folder is gone."""
        assert files(self.home) == self.seed
        for named in ("TASKCREW_ROUTINES", "TASKCREW_APPROVALS_DIR"):
            assert files(Path(self.env[named])) == [], named
        assert [p.name for p in self.tmp.glob("taskcrew-demo-*")] == []


@pytest.fixture
def demo_user(tmp_path: Path, eval_knowledge_seed: Path) -> Iterator[DemoUser]:
    seed = tmp_path / "home" / "demo" / "knowledge-seed"
    shutil.copytree(eval_knowledge_seed, seed)
    (seed / ".seeded").write_text("seeded\n")
    tmp = Path(tempfile.mkdtemp(prefix="tmp-"))
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "COLUMNS": "250", "TMPDIR": str(tmp)}
    env |= {"TASKCREW_ROUTINES": str(tmp_path / "company-routines")}
    env |= {"TASKCREW_APPROVALS_DIR": str(tmp_path / "company-approvals")}
    env.pop("TASKCREW_MODEL", None)
    yield DemoUser(env, tmp_path / "home", files(tmp_path / "home"), tmp)
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_demo_runs_the_headline_offline_with_the_terminal_approval(
    tmp_path: Path, demo_user: DemoUser
) -> None:
    """The real CLI: labelled as scripted stand-ins, the approval asked at the terminal (answered
    y on stdin), the bill entered in a fresh demo ERP, verified, a report written. What it learned
    (a routine draft, facts), its approvals key and audit log and CrewAI's storage stayed in its
    own folder, removed as it ended: the user's home and named folders are as they were."""
    done = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", "demo", "--runs-dir", str(tmp_path / "runs")],
        input="y\ny\n",  # the demo ERP answers the first save HTTP 503: it may have saved, asked again
        capture_output=True,
        text=True,
        env=demo_user.env,
        timeout=840,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "scripted stand-in models — not AI" in out
    assert out.count("Task:") == 1  # said once, by the run's progress
    assert "Approval needed" in out and "POST http://127.0.0.1:" in out  # asked at the terminal
    # a save answered HTTP 503 may have been saved: said so, and the same bill is asked again
    unknown = out.index("UNKNOWN whether it was saved (HTTP 503")
    assert out.count("Approval needed") == 2 and out.rindex("Approval needed") > unknown
    assert "asked again: the same request, approved before, got no clear answer" in out[unknown:]
    assert re.search(r"Verification 1: verified", out)
    assert "done:" in out and "INV-2057" in out and "not AI" in out.split("done:")[-1]
    [report] = (tmp_path / "runs").glob("*/report.md")
    text = report.read_text(encoding="utf-8")
    assert "INV-2057" in text and "scripted/solver" in text
    # who approved, at the terminal and in the report's Approvals list, not only "approved"
    assert re.search(r"approval POST http://127\.0\.0\.1:\d+/bills/new → approved by .+ at the terminal", out)
    approvals = text.split("## Approvals", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"→ \*\*approved\*\* by .+ at the terminal", approvals), approvals
    demo_user.assert_nothing_left()
    # the run proposed a routine draft, in the demo's routines folder: not the user's, and it says so
    note = (report.parent / "routine.txt").read_text(encoding="utf-8")
    assert "proposed enter-invoice v1" in note and "the demo's own routines folder" in note, note


def test_every_demo_mode_keeps_its_folders_in_one_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One place names the demo's folders: inside ``in_use`` (the terminal demo; the --console demo
    and its worker) the code's own lookups (routines, approvals key, home, knowledge, temporary
    files) find them, the demo's console is told the same ones, and the user's come back after."""
    import tempfile

    from taskcrew.approvals.signing import approvals_dir
    from taskcrew.config import Paths
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.demo import DemoFolders
    from taskcrew.routines.store import routines_folder

    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "company-routines"))  # never the demo's drafts
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "company-approvals"))
    monkeypatch.delenv("CREWAI_STORAGE_DIR", raising=False)
    users = (Paths.from_env().home, tempfile.gettempdir())
    folders = DemoFolders(tmp_path / "demo")
    with folders.in_use():
        assert Paths.from_env().home == folders.home and folders.home.parent == folders.root
        assert routines_folder() == folders.routines_dir and approvals_dir() == folders.approvals_dir
        assert Paths.from_env().knowledge_dir == folders.knowledge_dir
        assert Path(os.environ["CREWAI_STORAGE_DIR"]) == folders.crewai_dir
        assert tempfile.gettempdir() == str(folders.tmp) and Path(tempfile.mkdtemp()).parent == folders.tmp
        settings = ConsoleSettings(
            state_dir=tmp_path,
            runs_dirs=[],
            eval_dirs=[],
            users_file=tmp_path / "u",
            **folders.console_folders(),
        )
        assert settings.jobs_dir == Paths.from_env().home / "jobs"  # where LegRunner keeps the screenshots
        assert (settings.knowledge_dir, settings.routines_dir) == (folders.knowledge_dir, routines_folder())
        assert settings.approvals_dir == approvals_dir()
    assert (Paths.from_env().home, tempfile.gettempdir()) == users
    assert routines_folder() == tmp_path / "company-routines" and "CREWAI_STORAGE_DIR" not in os.environ


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_demo_interrupted_mid_run_leaves_nothing_behind(tmp_path: Path, demo_user: DemoUser) -> None:
    """Ctrl-C while the terminal demo works: it ends as interrupted (130), its run folder (the
    user's) stays with its report, and its temporary folder (the demo ERP, the copied knowledge
    store, the approvals key) is removed, where before it was kept; the user's folders are as they
    were."""
    import signal

    command = [sys.executable, "-m", "taskcrew.cli", "demo", "--auto-approve", "--no-chaos"]
    process = subprocess.Popen(
        [*command, "--runs-dir", str(tmp_path / "runs")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=demo_user.env,
    )
    output = Output(process)
    try:
        output.wait_for(re.compile(r"^Plan: ", re.MULTILINE), 240)  # the run has begun
        assert len(list(demo_user.tmp.glob("taskcrew-demo-*"))) == 1  # made, and removed below
        process.send_signal(signal.SIGINT)
        assert process.wait(120) == 130, output.text[-3000:]
    finally:
        stop(process)
    out = output.finish(30)
    assert "kept in" not in out
    [report] = (tmp_path / "runs").glob("*/report.md")
    assert "interrupted" in report.read_text(encoding="utf-8").lower()
    demo_user.assert_nothing_left()
