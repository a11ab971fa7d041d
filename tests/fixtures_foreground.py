"""`taskcrew run` in the foreground, for real: ``run_in_foreground`` with the workplace ``taskcrew run``
enters (``crew.workplace.Workplace``: real Chromium, the demo ERP over HTTP, the job store and the
signed audit log in SQLite, the sandbox's read-back rules), the person at the terminal behind the same
risk rules (``approvals.terminal.TerminalApprovals``), and the models behind a local OpenAI-compatible
server answering from a script (``fake_openai``): the one fake.

- ``Person``: the person at the terminal, scripted; ``at_prompt(request, n)`` runs while she is asked
  (the n-th time), before she says yes: where a colleague or a database writer acts "at the worst
  moment".
- ``Foreground``: the workplace ``taskcrew run`` enters, on a given ERP; ``taskcrew_run(task, worker, verifier)``
  is ``taskcrew run TASK`` with those models. It keeps the resources each run was given, to look at
  (``policy``), never to change.
- ``after_a_beat(jobs, job_id)``: waits for the run's next heartbeat (its row's ``heartbeat_at`` moves).
- ``CountingProxy``: a reverse proxy in front of the ERP that counts what reached it (the ERP refuses a
  duplicate on its own, so what it holds does not tell whether a repeat was sent).
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fake_openai import FakeOpenAIServer

from taskcrew.approvals.identity import Identity
from taskcrew.approvals.terminal import TerminalApprovals, terminal_identity
from taskcrew.config import DEFAULT_SANDBOX, WorkplaceSettings
from taskcrew.crew.context import RunLimits
from taskcrew.crew.scripted import ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.foreground import run_in_foreground
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

__all__ = ["BOB", "HOOLI", "CountingProxy", "Foreground", "Person", "after_a_beat", "wait_for"]

HOOLI = next(c for c in load_cases() if c.id == "mark-hooli-paid")  # pays BILL-0005 (unpaid in the seed)
BOB = Identity(name="bob", proof="console")  # a colleague, in the console


class Person:
    """The person at the terminal: says yes to every approval, as ``TerminalHuman`` records a "y", and
    answers the agent's questions with "leave it"."""

    def __init__(self, at_prompt: Callable[[ApprovalRequest, int], None] | None = None) -> None:
        self.at_prompt = at_prompt
        self.asked: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        if self.at_prompt is not None:
            self.at_prompt(request, len(self.asked))
        return ApprovalDecision.approve(by="ana at the terminal", basis="person")

    def ask(self, question: str) -> str:
        return "Leave it as it is; do nothing more."


class Foreground(Workplace):
    """The workplace ``taskcrew run`` enters (``crew.commands.run_command``), on the ERP at ``erp_url``."""

    def __init__(self, erp_url: str, root: Path, person: Person) -> None:
        settings = WorkplaceSettings(
            erp_url=erp_url,
            intranet_url=None,
            sandbox=DEFAULT_SANDBOX,
            runs_dir=root / "runs",
            use_knowledge=False,
            chaos=False,
        )
        super().__init__(settings, TerminalApprovals(person))
        self.made: list[Any] = []

    def resources(self, **kw: Any) -> Any:
        made = super().resources(**kw)
        self.made.append(made)  # kept to be looked at (its policy), never changed
        return made

    @property
    def policy(self) -> Any:
        return self.made[-1].browser.policy

    def taskcrew_run(self, task: str, worker: ScriptedLLM, verifier: ScriptedLLM, max_steps: int = 60) -> Any:
        """``taskcrew run TASK`` with these models, as ``run_command`` calls ``run_in_foreground``."""
        with FakeOpenAIServer(worker) as w, FakeOpenAIServer(verifier) as v:
            models = {"worker_model": f"worker@{w.base_url}", "verifier_model": f"verifier@{v.base_url}"}
            return run_in_foreground(
                self,
                task,
                submitted_by=terminal_identity(),
                options=JobOptions(**models, max_steps=max_steps),
                **models,
                allow_same_verifier=False,
                limits=RunLimits(max_steps=max_steps),
                criteria=[],
                read_only=False,
            )


def after_a_beat(jobs: Jobs, job_id: str, timeout: float = 60) -> None:
    """Wait until the running job's heartbeat moves: the run's beat (every 2 s) has just read its row,
    so the next one is a beat's length away."""
    first = jobs.get(job_id).heartbeat_at
    deadline = time.monotonic() + timeout
    while jobs.get(job_id).heartbeat_at == first:
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} did not beat within {timeout} s")
        time.sleep(0.02)


def wait_for(what: str, check: Callable[[], object], timeout: float = 60) -> Any:
    """Poll ``check`` until it is true (a condition, never a fixed sleep); its value."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
    return value


class CountingProxy:
    """Passes every request on to the ERP at ``upstream`` over HTTP, as it came, and counts them."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    proxy.seen.append((self.command, self.path.split("?")[0]))
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _relay

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def count(self, method: str, path: str) -> int:
        with self._lock:
            return self.seen.count((method, path))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
