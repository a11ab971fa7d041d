"""Workers on machines whose clocks disagree: a worker id, a job's holder and a model's 429 pause are
judged by the job database's clock, never by one worker's; and a mistyped job database path is said,
not silently created. Real job store (SQLite; Postgres too when TASKCREW_TEST_PG is set), real CLI; a
wrong clock is this process's clock shifted (taskcrew's ``utcnow``, as on a host whose clock is off),
time passing is the database's clock read later (no sleeps)."""

from __future__ import annotations

import contextlib
import os
import pty
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.jobs import Jobs, JobStoreError, models
from taskcrew.jobs.backoff import SharedBackoff
from taskcrew.jobs.identity import IdHolder, WorkerIdInUse
from taskcrew.jobs.worker import WorkerSettings, watch

runner = CliRunner()
TASK = "Enter the Northwind invoice into the ERP."


@contextmanager
def clock_off(seconds: float) -> Iterator[None]:
    """This process's clock ``seconds`` off (every taskcrew module's ``utcnow``), as on a host whose
    clock is wrong; SQLite's and the test's own clocks are untouched."""
    real = models.utcnow

    def skewed() -> datetime:
        return real() + timedelta(seconds=seconds)

    with pytest.MonkeyPatch.context() as patch:
        for name, module in list(sys.modules.items()):
            if name.startswith("taskcrew") and getattr(module, "utcnow", None) is real:
                patch.setattr(module, "utcnow", skewed)
        yield


@contextmanager
def later(store: Jobs, seconds: float) -> Iterator[None]:
    """``seconds`` pass for ``store`` without waiting for them: its database clock and this process's
    clock both read that much later."""
    real = getattr(store, "db_now", models.utcnow)
    with pytest.MonkeyPatch.context() as patch, clock_off(seconds):
        patch.setattr(store, "db_now", lambda: real() + timedelta(seconds=seconds), raising=False)
        yield


PG = os.environ.get("TASKCREW_TEST_PG")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.skipif(not PG, reason="no PG"))])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new job database: SQLite, or a fresh Postgres database (its clock is the server's)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
        return
    assert PG
    name = f"taskcrew_clocks_{secrets.token_hex(4)}"
    admin = sa.create_engine(PG, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    yield sa.engine.make_url(PG).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _sql(url: str, statement: str, **values: Any) -> list[Any]:
    """A statement run on the job database itself, as someone with access to it would."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement), values)
            return list(result.all()) if result.returns_rows else []
    finally:
        engine.dispose()


def _running_on(holder: Jobs, worker: str, *, beat: bool = True) -> str:
    """A job a worker has claimed (as ``LegRunner`` claims it, on this process's clock) and, given
    ``beat``, beat for once."""
    job = holder.submit(TASK, submitted_by="ana", enqueue=False)
    holder.mark(
        job.id,
        "running",
        only_if=("queued",),
        leg=0,
        worker=worker,
        started_at=models.utcnow(),
        beat=True,  # by the database's clock, whatever this host's says
    )
    if beat:
        holder.heartbeat(job.id, worker)
    return job.id


def test_a_live_worker_whose_clock_is_behind_keeps_its_job(url: str, isolated_home: Path) -> None:
    """t3 part 1: worker wa's clock is 30 s behind; a healthy worker's watch loop (15 s) and a person's
    CLI 30 s ahead must not read it as silent: no takeover, no `orphaned` note, no retry."""
    holder, watcher = Jobs.open(url), Jobs.open(url)
    with clock_off(-30):
        job_id = _running_on(holder, "wa")
    watch(watcher, WorkerSettings(url=url, worker_id="wb", stale_after_s=15))
    job = watcher.get(job_id)
    assert (job.status, job.worker, watcher.leg(job_id)) == ("running", "wa", 0)
    assert "taken_over" not in [e.kind for e in watcher.events(job_id)]

    with clock_off(+30):  # a person's machine 30 s ahead
        listed = runner.invoke(app, ["jobs", "list", "--db", url])
        retried = runner.invoke(app, ["jobs", "retry", job_id, "--db", url])
    assert listed.exit_code == 0 and job_id in listed.output and "orphaned" not in listed.output, (
        listed.output
    )
    assert retried.exit_code == 2 and "orphaned (holder gone)" in retried.output, retried.output
    assert watcher.get(job_id).worker == "wa" and watcher.leg(job_id) == 0


def test_a_dead_worker_whose_clock_was_ahead_is_taken_over_after_stale_after(url: str) -> None:
    """t11: a worker 90 s ahead claims a job and is killed; with --stale-after 30 its job goes back on
    the queue once the database's clock has moved 30 s past its claim, not 120 s. (Margins of many
    seconds: the real clock also moves between the claim and the watch, by over a second under load.)"""
    holder, watcher = Jobs.open(url), Jobs.open(url)
    with clock_off(+90):
        job_id = _running_on(holder, "wa-ahead", beat=False)  # killed before its first beat
    settings = WorkerSettings(url=url, worker_id="wb", stale_after_s=30)
    with later(watcher, 2):
        watch(watcher, settings)
    assert watcher.get(job_id).status == "running"  # 2 s: not yet
    with later(watcher, 45):
        watch(watcher, settings)
    job = watcher.get(job_id)
    assert job.status == "queued" and watcher.leg(job_id) == 1
    assert [e.detail for e in watcher.events(job_id) if e.kind == "taken_over"] == ["from wa-ahead"]


def test_a_holder_that_beats_after_the_watcher_read_keeps_its_job(url: str) -> None:
    """The watcher judged the job's heartbeat stale; the holder beat right after that read: the
    takeover compares and sets the heartbeat it judged, so the live holder keeps its job."""
    holder, watcher = Jobs.open(url), Jobs.open(url)
    job_id = _running_on(holder, "wa")
    real_list = watcher.list

    def list_then_beat(*args: Any, **kwargs: Any) -> list[models.Job]:
        found = real_list(*args, **kwargs)
        holder.heartbeat(job_id, "wa")  # the holder's beat lands between the read and the takeover
        return found

    with later(watcher, 20), pytest.MonkeyPatch.context() as patch:
        patch.setattr(watcher, "list", list_then_beat)
        watch(watcher, WorkerSettings(url=url, worker_id="wb", stale_after_s=15))
    job = watcher.get(job_id)
    assert (job.status, job.worker, watcher.leg(job_id)) == ("running", "wa", 0)
    assert watcher.take_over(job_id, "wa", silent_since=job.heartbeat_at) is not None  # the CAS itself
    assert watcher.leg(job_id) == 1


def test_a_worker_id_held_on_a_host_whose_clock_is_behind_is_refused(url: str) -> None:
    """t3 part 2 / t10: `wa` runs on hostb, its clock 30 s behind; a second `wa` started here is
    refused (DBOS would give it hostb's legs), and hostb's id counts as live for the watch loop."""
    other = IdHolder(Jobs.open(url), "wa", stale_after_s=15)
    other.host, other.pid = "hostb", 4242
    with clock_off(-30):
        other.claim()
        other.beat()
    here = IdHolder(Jobs.open(url), "wa", stale_after_s=15)
    with pytest.raises(WorkerIdInUse, match="in use by pid 4242 on hostb"):
        here.claim()
    assert "wa" in here.live_ids()


def test_a_worker_id_of_a_dead_holder_whose_clock_was_ahead_is_free_after_stale_after(url: str) -> None:
    """hostb's `wa`, its clock 90 s ahead, beat and died: its id is free once the database's clock
    has moved 15 s past that beat (not 105 s)."""
    from taskcrew.jobs import identity

    other = IdHolder(Jobs.open(url), "wa", stale_after_s=15)
    other.host, other.pid = "hostb", 4242
    with clock_off(+90):
        other.claim()
        other.beat()
    here = IdHolder(Jobs.open(url), "wa", stale_after_s=15)
    real_now = getattr(identity, "db_now", lambda conn: models.utcnow())
    for seconds in (5, 16):  # time passing: the database's clock and this host's
        with pytest.MonkeyPatch.context() as patch, clock_off(seconds):
            later_now = lambda conn, s=seconds: real_now(conn) + timedelta(seconds=s)  # noqa: E731
            patch.setattr(identity, "db_now", later_now, raising=False)
            if seconds == 5:
                with pytest.raises(WorkerIdInUse):
                    here.claim()  # 5 s after its beat: alive
            else:
                assert "wa" not in here.live_ids()
                here.claim()
    assert _sql(url, "SELECT host FROM taskcrew_workers WHERE worker_id = 'wa'") == [(here.host,)]


def test_a_429_recorded_by_a_clock_an_hour_ahead_pauses_others_for_its_own_length(url: str) -> None:
    """t4: a worker 1 h ahead records a 429 (a 2 s pause); a healthy worker waits 2 s, not an hour. A
    row whose end is an hour off (another clock, an older version, an edit) never holds a worker for
    longer than its strikes' pause, nor longer than cap_s."""
    with clock_off(+3600):
        assert SharedBackoff(Jobs.open(url), "m", None).strike() == 2.0
    # the end it wrote is the database's clock plus the pause, not its own clock's (an hour off):
    # what the reader's cap below would hide
    [(until,)] = _sql(url, "SELECT until FROM taskcrew_model_backoff WHERE model = 'm'")
    ahead = (datetime.fromisoformat(str(until)) - Jobs.open(url).db_now()).total_seconds()
    assert 0 < ahead <= 2.0 + 2.0, f"the pause ends {ahead:.0f} s after the database's now, not ~2 s"
    healthy = SharedBackoff(Jobs.open(url), "m", None)
    assert 0 < healthy.pause_left() <= 2.0

    far = (models.utcnow() + timedelta(hours=1)).isoformat()
    edit = "UPDATE taskcrew_model_backoff SET until = :far, strikes = :strikes WHERE model = 'm'"
    _sql(url, edit, far=far, strikes=1)
    assert 1.5 < healthy.pause_left() <= 2.0
    _sql(url, edit, far=far, strikes=30)
    assert 50 < healthy.pause_left() <= healthy.cap_s == 60.0


def test_the_console_judges_a_holder_by_the_database_clock(
    url: str, tmp_path: Path, isolated_home: Path, console_users: Path
) -> None:
    """The console's jobs pages say "orphaned" by the job database's clock, as the watch loop and
    `jobs list` do: a console host 30 s ahead does not call a live worker's job orphaned, and one 30 s
    behind does not hide a holder silent for 20 s by the database's clock."""
    import re

    from fixtures_console import PASSWORDS
    from starlette.testclient import TestClient

    from taskcrew.console.app import build_app
    from taskcrew.console.settings import ConsoleSettings

    holder, shown = Jobs.open(url), Jobs.open(url)
    job_id = _running_on(holder, "wa")  # it beat just now, by the database's clock
    settings = ConsoleSettings(
        port=0,
        state_dir=tmp_path / "console",
        runs_dirs=[tmp_path / "runs"],
        eval_dirs=[tmp_path / "eval"],
        users_file=console_users,
        jobs_url=url,
        sandbox=tmp_path,
    )
    client = TestClient(build_app(settings, shown), base_url="http://testserver", follow_redirects=False)
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"username": "bob", "password": PASSWORDS["bob"], "csrf": token.group(1), "next": "/"}
    assert client.post("/login", data=form, headers={"origin": "http://testserver"}).status_code == 303

    def notes() -> list[str]:
        answers = (client.get("/jobs"), client.get(f"/jobs/{job_id}"))
        assert all(a.status_code == 200 and job_id in a.text for a in answers)  # the job is on both pages
        pages = [a.text for a in answers]
        return [
            " ".join(re.sub(r"<[^>]+>", " ", n).split())
            for p in pages
            for n in re.findall(r'<(?:div|p) class="note"[^>]*>(.*?)</(?:div|p)>', p, re.S)
        ]

    with clock_off(+30):  # the console's host 30 s ahead: the worker beat a moment ago
        assert not any("orphaned" in n for n in notes()), notes()
    real = shown.db_now
    with clock_off(-30), pytest.MonkeyPatch.context() as patch:  # 20 s of silence, a clock behind
        patch.setattr(shown, "db_now", lambda: real() + timedelta(seconds=20))
        said = notes()
    assert len(said) == 2 and all(n.startswith("orphaned: worker wa went silent") for n in said), said


def test_a_mistyped_job_database_is_said_never_created(tmp_path: Path, isolated_home: Path) -> None:
    """t7: the commands that read or change jobs say there is no job database there (exit 2) and
    create nothing; submit does not make a missing folder; a new database is said once."""
    typo = f"sqlite:///{tmp_path / 'taskcrw' / 'job.sqlite3'}"
    for args in (
        ["jobs", "list"],
        ["jobs", "show", "job-1"],
        ["jobs", "cancel", "job-1"],
        ["jobs", "retry", "job-1"],
        ["approvals", "list"],
        ["approvals", "approve", "apr-1"],
    ):
        said = runner.invoke(app, [*args, "--db", typo])
        assert said.exit_code == 2, (args, said.output)
        assert f"there is no job database at {tmp_path}/taskcrw/job.sqlite3" in said.output, said.output
    assert not (tmp_path / "taskcrw").exists()
    assert Jobs.open(f"sqlite:///{tmp_path / 'other.sqlite3'}").created  # the approvals' rule ended with them
    models_ = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    refused = runner.invoke(app, ["submit", "List the unpaid bills.", *models_, "--db", typo])
    assert refused.exit_code == 2 and f"folder {tmp_path}/taskcrw does not exist" in refused.output
    assert not (tmp_path / "taskcrw").exists()
    with pytest.raises(JobStoreError, match="there is no job database"):
        Jobs.open(typo, create=False)

    fresh = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    for task in ("List the unpaid bills.", "List the paid bills."):
        code, out, err = _at_a_terminal(["submit", task, *models_, "--db", fresh])
        assert code == 0 and out.strip().startswith("job-") and len(out.split()) == 1, (out, err)
        new = f"created a new job database at {tmp_path}/jobs.sqlite3"
        assert err.count(new) == (1 if task.startswith("List the unpaid") else 0), err  # said once
    scripted = runner.invoke(app, ["submit", "List the bills due today.", *models_, "--db", fresh])
    assert scripted.exit_code == 0 and scripted.output.startswith("job-"), scripted.output
    listed = runner.invoke(app, ["jobs", "list", "--db", fresh])
    assert listed.exit_code == 0 and listed.output.count("queued") == 3, listed.output


def _at_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """The real CLI as a person runs it, its stderr a terminal (a pty): exit code, stdout, stderr."""
    master, tty = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "taskcrew.cli", *args],
            stdout=subprocess.PIPE,
            stderr=tty,
            text=True,
            timeout=180,
            env=os.environ,
        )
    finally:
        os.close(tty)
    said = b""
    with contextlib.suppress(OSError):  # EIO: the terminal's other end is closed, all was read
        while chunk := os.read(master, 4096):
            said += chunk
    os.close(master)
    return done.returncode, done.stdout, said.decode()
