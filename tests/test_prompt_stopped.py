"""A prompt that ended without the person's answer is no decision (the real CLI on a real pty).

`taskcrew run` against the real mock ERP and Chromium (only the models scripted), stopped while its
approval prompt waits: Ctrl-C once, Ctrl-C twice 50 ms apart, SIGTERM, and the input closed
(Ctrl-D: the terminal's end of input). Before, the prompt turned each into a rejection: the signed
audit log held ``terminal_reject`` under the person's name (indistinguishable from a typed "n"),
and with the second Ctrl-C cutting the interrupted ending short, the abandoned Flow thread sealed
the run ``rejected`` (report "Rejected: a person declined a change", trace ``run_finished
rejected``), saved the step's checkpoint ``then='rejected'`` for a retry to carry out, and the job
ended ``failed``. Now nobody's answer is signed as ``terminal_no_answer``, the run ends
``interrupted`` (exit 130), the job ``finished interrupted`` with no refusal in its checkpoint, so
``jobs retry`` asks again; nothing is sent.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from test_terminal_approval import read_until

from taskcrew.approvals.authority import Authority
from taskcrew.eval.models import load_cases
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import Jobs
from taskcrew.jobs.store import starts_over
from taskcrew.mock_erp import ChaosConfig, fetch_state

pytestmark = [pytest.mark.timeout(240)]

STOPS = {
    "once": [b"\x03"],
    "twice": [b"\x03", b"\x03"],  # the second one 50 ms later: while the interrupted ending is written
    "sigterm": [signal.SIGTERM],
    "closed_input": [b"\x04"],  # Ctrl-D on an empty line: the terminal's end of input, no signal
}


def _until_exit(pid: int, leader: int, seen: str, timeout: float = 120) -> tuple[int | None, str]:
    deadline, status = time.monotonic() + timeout, None
    while status is None and time.monotonic() < deadline:
        done, code = os.waitpid(pid, os.WNOHANG)
        status = code if done else None
        if status is None:
            seen += read_until(leader, "\0", timeout=0.5)
    return status, seen


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("stop", list(STOPS))
def test_a_prompt_nobody_answered_is_no_decision_and_the_run_ends_interrupted(
    tmp_path: Path, erp_factory, stop: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    erp = erp_factory(ChaosConfig())
    db = tmp_path / "jobs.sqlite3"
    case = next(c for c in load_cases() if c.id == "northwind-headline")
    models = scripted_models(case)
    scratch = Path(tempfile.mkdtemp(prefix="tc-"))  # short: Chromium puts sockets in it
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKCREW_")}
    env.update(
        TASKCREW_HOME=str(home),
        TASKCREW_RUNS=str(home / "runs"),
        TMPDIR=str(scratch),
        TASKCREW_JOBS_DB=f"sqlite:///{db}",
        ERP_USERNAME="demo",
        ERP_PASSWORD="demo123",
        COLUMNS="120",
        TERM="xterm",
        USER="ana",
        LOGNAME="ana",
    )
    with FakeOpenAIServer(models("solver")) as w, FakeOpenAIServer(models("auditor")) as v:
        cmd = [sys.executable, "-m", "taskcrew.cli", "run", case.task, "--model", f"worker@{w.base_url}",
               "--verifier-model", f"verifier@{v.base_url}", "--erp-url", erp.url, "--intranet-url", ""]  # fmt: skip
        pid, leader = pty.fork()
        if pid == 0:  # the child: the real CLI, its terminal the pty
            os.execve(sys.executable, cmd, env)
        try:
            seen = read_until(leader, "[y/n/a]", timeout=120)
            assert "[y/n/a]" in seen, seen[-3000:]
            for i, key in enumerate(STOPS[stop]):
                if i:
                    time.sleep(0.05)
                if isinstance(key, bytes):
                    os.write(leader, key)
                else:
                    os.kill(pid, key)
            status, seen = _until_exit(pid, leader, seen)
        finally:
            with suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            os.close(leader)
    assert status is not None, "the run did not end: " + seen[-3000:]
    os.environ["TASKCREW_HOME"] = str(home)  # the signed audit log and keys of that run
    jobs = Jobs.open(f"sqlite:///{db}")
    [job] = jobs.list()
    entries = Authority(jobs).audit.entries()
    shown = seen[-3000:]

    # nothing was sent, and nobody refused it in the person's name
    assert [b for b in fetch_state(erp.url).bills if b.invoice_number == "INV-2057"] == []
    assert not [e for e in entries if e.action == "terminal_reject"], (entries, shown)
    [asked] = [e for e in entries if e.action == "terminal_no_answer"]
    assert asked.payload["by"] is None and asked.payload["why"] and asked.payload["method"] == "POST"
    assert "rejected by the person asked" not in seen and "end:rejected" not in seen, shown

    # the run ends interrupted; its job finished interrupted, resumable, no refusal to carry out
    assert os.waitstatus_to_exitcode(status) == 130, shown
    assert (job.status, job.outcome) == ("finished", "interrupted"), (job.status, job.outcome, job.reason)
    checkpoint = jobs.checkpoint(job.id) or {}
    state = checkpoint.get("state", {})
    assert state.get("outcome") != "rejected"
    assert all(s.get("then") != "rejected" for s in state.get("steps_done", [])), state.get("steps_done")
    assert not starts_over(job)  # `jobs retry` resumes it from this checkpoint, asking again

    # the run's own account says interrupted, never rejected (also after the Flow thread ran on)
    time.sleep(1.0)
    [run_dir] = (home / "runs").iterdir()
    trace = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
    finished = [e["outcome"] for e in trace if e.get("kind") == "run_finished"]
    assert finished in ([], ["interrupted"]), finished
    assert not [e for e in trace if e.get("kind") == "control" and e.get("action") == "end:rejected"]
    approvals = [e for e in trace if e.get("kind") == "approval"]
    assert all(e.get("answer") != "rejected" for e in approvals), approvals
    if stop != "twice":
        assert finished == ["interrupted"]
    report = run_dir / "report.md"
    if report.exists() or stop != "twice":
        text = report.read_text(encoding="utf-8")
        assert "# Interrupted" in text and "Rejected" not in text.split("\n", 1)[0], text[:500]


def test_a_stop_closes_the_account_to_every_write_but_the_stops_own_ending() -> None:
    """``Seal.stop``: from the stop on, no write of the abandoned thread lands (a verdict, an
    outcome, a checkpoint); only finishing it, with the first stop's ending."""
    from taskcrew.crew.stopping import Seal

    seal = Seal()
    with seal.open() as still_open:
        assert still_open
    assert seal.stop(("interrupted", "stopped by SIGINT")) == ("interrupted", "stopped by SIGINT")
    assert seal.stop(("interrupted", "a later stop")) == ("interrupted", "stopped by SIGINT")
    with seal.open() as still_open:
        assert not still_open
    with seal.finishing() as still_open:
        assert still_open and seal.stopping == ("interrupted", "stopped by SIGINT")
        seal.close("the interrupted account")
    with seal.finishing() as still_open:
        assert not still_open and seal.account == "the interrupted account"
