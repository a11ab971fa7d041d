"""SIGINT/SIGTERM end a run cleanly: exit 130, a report with outcome `interrupted`, no hang; and an
eval sweep stopped by SIGTERM leaves no scratch folder behind (one left by SIGKILL is cleaned later).

These run the real CLI in a subprocess: signals go to a process, not to a CliRunner."""

from __future__ import annotations

import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path

import pytest
from test_model_limits import stalling_server  # noqa: F401 — the fixture
from test_terminal_approval import read_until

from taskcrew.eval.sweep import OWNER_FILE, SCRATCH_PREFIX, remove_stale_scratch


def _env(home: Path, tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKCREW_")}
    env.update(TASKCREW_HOME=str(home), TASKCREW_RUNS=str(home / "runs"), TMPDIR=str(tmp), **extra)
    return env


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "taskcrew.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for(process: subprocess.Popen[str], text: str, limit: float) -> str:
    seen = ""
    deadline = time.monotonic() + limit
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        seen += line
        if text in line or (not line and process.poll() is not None):
            return seen
    return seen


@pytest.mark.timeout(150)
@pytest.mark.parametrize("signum", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_a_signal_ends_the_run_with_a_report(
    tmp_path: Path,
    stalling_server: tuple[str, list[float]],  # noqa: F811 — the imported fixture
    signum: int,
) -> None:
    url, _ = stalling_server
    home = tmp_path / "home"
    env = _env(home, tmp_path, TASKCREW_MODEL_TIMEOUT="120", TASKCREW_MODEL_RETRIES="0")
    args = ["run", "Enter the latest Globex invoice", "--model", f"w@{url}", "--verifier-model", f"v@{url}",
            "--erp-url", "http://127.0.0.1:0", "--intranet-url", "", "--no-chaos"]  # fmt: skip
    process = _start(args, env)
    seen = _wait_for(process, "Task:", 90)
    assert "Task:" in seen, seen
    time.sleep(1.5)  # the planner's call is now waiting on the silent server
    sent = time.monotonic()
    process.send_signal(signum)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130, seen + out
    assert time.monotonic() - sent < 30
    assert "interrupted" in out and signal.Signals(signum).name in out, out
    [run_dir] = (home / "runs").iterdir()
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "`interrupted`" in report and signal.Signals(signum).name in report
    assert '"end:interrupted"' in (run_dir / "trace.jsonl").read_text(encoding="utf-8")


def test_scratch_of_a_killed_sweep_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone, alive, foreign = (tmp_path / f"{SCRATCH_PREFIX}{n}" for n in ("gone", "alive", "foreign"))
    for folder in (gone, alive, foreign):
        (folder / "knowledge-seed").mkdir(parents=True)
    (gone / OWNER_FILE).write_text(dead.stdout.strip())
    (alive / OWNER_FILE).write_text(str(os.getpid()))
    assert remove_stale_scratch(tmp_path) == [gone]
    assert not gone.exists() and alive.exists() and foreign.exists()


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_sigterm_stops_an_eval_sweep_and_removes_its_scratch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    scratch_tmp = tmp_path / "tmp"
    scratch_tmp.mkdir()
    args = ["eval", "--models", "scripted/solver", "--cases", "research-sum-of-squares", "--repeats", "3",
            "--out", str(tmp_path / "out")]  # fmt: skip
    process = _start(args, _env(home, scratch_tmp))
    seen = _wait_for(process, "run(s)", 90)
    assert "3 run(s)" in seen, seen
    deadline = time.monotonic() + 60
    while not list(scratch_tmp.glob(SCRATCH_PREFIX + "*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # seeding the knowledge store or in the first run
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130, seen + out
    assert "interrupted" in out
    assert not list(scratch_tmp.glob(SCRATCH_PREFIX + "*")), list(scratch_tmp.iterdir())


def _ctrl_c_demo(home: Path, args: list[str], at: str) -> str:
    """``taskcrew demo ARGS`` on a real pseudo-terminal (its own session, the pty its controlling
    terminal, so Ctrl-C goes to its whole foreground group), Ctrl-C typed once ``at`` shows: what it
    printed, once it ended 130 with its report within 90 s. A short TMPDIR: Chromium makes its
    profile there, whose socket path must fit 107 bytes (a pytest folder under xdist does not)."""
    scratch = Path(tempfile.mkdtemp(prefix="tc-"))
    env = _env(home, scratch, COLUMNS="120", TERM="xterm")
    pid, leader = pty.fork()
    if pid == 0:  # the child
        os.execve(sys.executable, [sys.executable, "-m", "taskcrew.cli", "demo", *args], env)
    try:
        seen = read_until(leader, at, timeout=240)
        assert at in seen, seen
        os.write(leader, b"\x03")
        seen += read_until(leader, "Report:", timeout=90)
        deadline, status = time.monotonic() + 90, None
        while status is None and time.monotonic() < deadline:
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else None
            if status is None:
                seen += read_until(leader, "\0", timeout=0.5)  # keep the terminal drained
        assert status is not None, f"the demo still runs 90 s after Ctrl-C at {at!r}:\n{seen}"
        assert os.waitstatus_to_exitcode(status) == 130, seen
    finally:
        with suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(leader)
        shutil.rmtree(scratch, ignore_errors=True)
    return seen


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_ctrl_c_in_a_real_terminal_ends_the_demo_at_once_with_its_report(tmp_path: Path) -> None:
    """Ctrl-C typed into the demo's terminal while a browser step runs: the whole foreground group
    gets SIGINT. The demo ends 130 with its report; before, Python's exit waited 2 minutes on a
    crewAI pool thread whose tool call waited on the closed browser, printing steps after the answer."""
    home = tmp_path / "home"
    seen = _ctrl_c_demo(home, ["--auto-approve"], "step 2")  # the browser step that enters the bill is next
    assert "interrupted" in seen and "stopped by SIGINT" in seen, seen
    [report] = (home / "runs").glob("*/report.md")
    assert "`interrupted`" in report.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_ctrl_c_at_the_approval_prompt_ends_the_demo_with_its_report_and_sends_nothing(
    tmp_path: Path,
) -> None:
    """Ctrl-C typed while the demo's approval prompt waits for an answer, the moment a person is most
    likely to press it: the prompt waits on the browser's thread, and the report needs the browser.
    Before, the demo printed "interrupted" and then hung for good (a second Ctrl-C killed it, with
    no report); now the prompt gives up, the bill is not sent, and the demo ends 130 with its report."""
    home = tmp_path / "home"
    seen = _ctrl_c_demo(home, [], "[y/n/a]")
    assert "stopped by SIGINT" in seen, seen
    [report] = (home / "runs").glob("*/report.md")
    text = report.read_text(encoding="utf-8")
    assert "`interrupted`" in text and "saved (HTTP" not in text, text


@pytest.mark.timeout(120)
def test_a_signal_ends_an_audit_with_a_report(
    tmp_path: Path,
    stalling_server: tuple[str, list[float]],  # noqa: F811 — the imported fixture
) -> None:
    """The verifier waits on a silent model; SIGTERM ends the audit at once, its report saying no
    verdict was given (before: the signal killed it with no report, or waited for the model)."""
    url, _ = stalling_server
    home = tmp_path / "home"
    env = _env(home, tmp_path, TASKCREW_MODEL_TIMEOUT="120", TASKCREW_MODEL_RETRIES="0")
    args = ["audit", "Bill INV-1 is in the ERP", "--verifier-model", f"v@{url}",
            "--erp-url", "http://127.0.0.1:0", "--intranet-url", ""]  # fmt: skip
    process = _start(args, env)
    seen = _wait_for(process, "Task:", 90)
    assert "Task:" in seen, seen
    time.sleep(1.5)  # the verifier's call is now waiting on the silent server
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130, seen + out
    assert time.monotonic() - sent < 30
    assert "interrupted: stopped by SIGTERM" in out, out
    [run_dir] = (home / "runs").iterdir()
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "`interrupted`" in report and "before the verifier gave a verdict" in report
    assert '"end:interrupted"' in (run_dir / "trace.jsonl").read_text(encoding="utf-8")
