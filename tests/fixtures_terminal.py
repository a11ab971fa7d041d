"""A real pseudo-terminal for the CLI's output: ``taskcrew ARGS`` run on a pty, its screen as a VT100
terminal (pyte, as xterm draws it) shows it at the end."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte
import pytest

from taskcrew.tools.human import ApprovalRequest

__all__ = ["files_run", "on_terminal", "park_request", "prompt_on_terminal"]


def on_terminal(
    *args: str, cols: int, rows: int, typed: str = "", timeout: float = 100
) -> tuple[int, list[str], str]:
    """``taskcrew ARGS`` on a pseudo-terminal of ``cols`` × ``rows``, with ``typed`` typed ahead at
    its keyboard: its exit code, the screen's non-blank lines at the end, and the raw output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {**os.environ, "COLUMNS": str(cols), "LINES": str(rows), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskcrew.cli", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    if typed:
        os.write(master, typed.encode())  # the terminal keeps it until the command reads a line
    chunks: list[bytes] = []
    poller = select.poll()
    poller.register(master, select.POLLIN)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready = poller.poll(200)  # poll, not select: no limit on the descriptor's number
            if not ready:
                if proc.poll() is not None:
                    break  # ended, and all it wrote is read
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the command ended and closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if proc.poll() is None:
            proc.kill()
        code = proc.wait(timeout=30)
        os.close(master)
    raw = b"".join(chunks).decode("utf-8", "replace")
    screen = pyte.Screen(cols, rows)
    pyte.Stream(screen).feed(raw)  # the terminal's own line discipline already sent CR LF
    return code, [line.rstrip() for line in screen.display if line.strip()], raw


def files_run(task: str, worker_url: str, verifier_url: str, sandbox: object) -> list[str]:
    """The arguments of ``taskcrew run TASK`` over the files in ``sandbox`` alone (no ERP, no intranet),
    its models behind the fake OpenAI-compatible servers at ``worker_url`` and ``verifier_url``."""
    models = ["--model", f"worker@{worker_url}", "--verifier-model", f"verifier@{verifier_url}"]
    return [
        "run",
        task,
        *models,
        "--erp-url",
        "http://127.0.0.1:0",
        "--intranet-url",
        "",
        "--sandbox",
        str(sandbox),
    ]


PROMPT = """
import sys
from taskcrew.tools.human import ApprovalRequest, TerminalHuman
request = ApprovalRequest.model_validate_json(sys.argv[1])
print("DECISION", TerminalHuman().approve(request).outcome, flush=True)
"""


def _read_until(master: int, out: bytes, marker: bytes, count: int = 1) -> bytes:
    deadline = time.monotonic() + 90  # a bound for a stuck child, not a timing assertion
    while out.count(marker) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
    return out


def prompt_on_terminal(
    request: object, answers: list[bytes], cols: int, rows: int, until: bytes = b"DECISION reject"
) -> tuple[list[list[str]], str]:
    """`taskcrew run`'s approval prompt (``TerminalHuman``) for ``request`` on a ``cols`` × ``rows``
    pty: the screen (pyte; its non-blank rows) each time the question is drawn, ``answers`` typed one
    after each; and the whole output once ``until`` (the decision the prompt prints) came."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {**os.environ, "COLUMNS": str(cols), "LINES": str(rows), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", PROMPT, request.model_dump_json()],  # type: ignore[attr-defined]
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    screens: list[list[str]] = []
    out = b""
    try:
        for n, answer in enumerate(answers, start=1):
            out = _read_until(master, out, b"(n)", n)  # the default, drawn last
            screen = pyte.Screen(cols, rows)
            pyte.Stream(screen).feed(out.decode("utf-8", "replace"))
            screens.append([row.rstrip() for row in screen.display if row.strip()])
            os.write(master, answer)
        out = _read_until(master, out, until)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        os.close(master)
    return screens, out.decode("utf-8", "replace")


def park_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: ApprovalRequest) -> str:
    """``request`` parked by a running job in a job database under ``tmp_path`` that the CLI run by
    the test reads (its environment set here): the pending approval's id."""
    from taskcrew.jobs import Jobs
    from taskcrew.jobs.human import JobHuman, Parked

    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    try:
        job = jobs.submit("Enter the Globex invoice", submitted_by="ana", submitted_proof="token")
        jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked) as p:
            JobHuman(jobs, job.id).approve(request)
        jobs.mark(job.id, "waiting", only_if=("running",))
    finally:
        jobs.close()
    return p.value.approval_id
