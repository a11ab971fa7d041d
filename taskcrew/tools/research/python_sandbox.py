"""Run a short Python computation in a separate, limited process that is killed at the deadline.

Three layers of defence:

1. AST vetting in this process (``sandbox_policy.vet``): no imports, no dunder or frame attributes,
   no eval/exec/open/getattr..., only a whitelist of syntax. Rejected code never starts a process.
2. A restricted namespace in the child: safe builtins, ``math``/``statistics`` namespaces,
   ``Decimal``, ``Fraction``, ``date``/``datetime``/``timedelta``; ``**`` is bounded. The child gets
   code objects compiled here from the vetted tree (``marshal``), so it never parses anything.
3. An isolated child interpreter (``python -I -S -B``, empty environment) with an address-space,
   CPU-time, file-size and descriptor limit, killed by this process when the deadline passes.

The deadline clock starts once the child has started and read the code, so a slow interpreter
start on a busy machine does not eat into the computation's time.
"""

from __future__ import annotations

import ast
import marshal
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskcrew.tools.base import ToolResult
from taskcrew.tools.research import sandbox_policy
from taskcrew.tools.research.sandbox_child import READY

CHILD_SCRIPT = Path(__file__).with_name("sandbox_child.py")
_MAX_RESPONSE_BYTES = 2_000_000

SandboxStatus = Literal["ok", "rejected", "syntax_error", "runtime_error", "timeout", "memory", "crashed"]


class SandboxLimits(BaseModel):
    """Limits for one run. ``memory_mb`` caps the child's whole address space (interpreter included)."""

    timeout_s: float = Field(default=5.0, gt=0, le=120)
    memory_mb: int = Field(default=256, ge=64, le=8192)
    max_output_chars: int = Field(default=4000, ge=100, le=200_000)
    max_value_chars: int = Field(default=2000, ge=100, le=200_000)
    startup_timeout_s: float = Field(
        default=20.0, gt=0, description="interpreter start, not counted in timeout_s"
    )


class PythonRun(BaseModel):
    """What one sandboxed run produced."""

    status: SandboxStatus
    stdout: str = ""
    stdout_dropped_chars: int = 0
    value: str | None = Field(default=None, description="repr of the last expression, if it was one")
    error: str | None = None
    startup_ms: float | None = None
    duration_ms: float = 0.0

    def render(self) -> str:
        parts: list[str] = []
        if self.stdout:
            parts.append("stdout:\n" + self.stdout.rstrip("\n"))
        if self.stdout_dropped_chars:
            parts.append(f"[output truncated: {self.stdout_dropped_chars} more chars were dropped]")
        if self.value is not None:
            parts.append(f"value: {self.value}")
        if self.status != "ok":
            parts.append(f"status: {self.status}")  # the message itself is the ToolResult's error
        elif not parts:
            parts.append("(no output: end the code with an expression or call print() to see a result)")
        return "\n".join(parts)


class PythonSandbox:
    """Runs code in a fresh child interpreter per call; safe to call from several threads."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()

    def run(self, code: str) -> ToolResult:
        """Vet and run ``code``; ``data`` is a ``PythonRun`` whether it worked or not."""
        started = time.perf_counter()
        try:
            compiled = sandbox_policy.compile_vetted(sandbox_policy.vet(code))
        except SyntaxError as exc:
            return _result(
                PythonRun(status="syntax_error", error=f"SyntaxError (line {exc.lineno}): {exc.msg}")
            )
        except sandbox_policy.SandboxViolation as exc:
            return _result(PythonRun(status="rejected", error=str(exc)))
        run = self._run_in_child(compiled)
        run.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        return _result(run)

    def _run_in_child(self, compiled: sandbox_policy.CompiledCode) -> PythonRun:
        limits = self.limits
        request = {
            "body": compiled.body,
            "expr": compiled.expr,
            "names": compiled.names,
            "max_output_chars": limits.max_output_chars,
            "max_value_chars": limits.max_value_chars,
        }
        cpu_s = math.ceil(limits.timeout_s) + 1  # a backstop; the wall-clock deadline comes first
        # The same interpreter as this process: the code objects are marshalled, a version-specific format.
        argv = [sys.executable, "-I", "-S", "-B", str(CHILD_SCRIPT), str(limits.memory_mb), str(cpu_s)]
        env = {k: os.environ[k] for k in ("SYSTEMROOT",) if k in os.environ}
        spawned = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tempfile.gettempdir(),
            start_new_session=True,
        )
        try:
            return self._talk(proc, marshal.dumps(request), spawned)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None and not stream.closed:
                    stream.close()

    def _talk(self, proc: subprocess.Popen[bytes], request: bytes, spawned: float) -> PythonRun:
        out, err, phase, startup_ms = _exchange(proc, request, self.limits, spawned)
        if phase == "startup_timeout":
            return PythonRun(
                status="crashed",
                error=f"the sandbox interpreter did not start within {self.limits.startup_timeout_s:g} s; try again",
            )
        if phase == "timeout":
            proc.kill()
            return PythonRun(
                status="timeout",
                startup_ms=startup_ms,
                error=f"timed out after {self.limits.timeout_s:g} s: the sandbox process was killed. "
                "Use a smaller input, fewer iterations or a closed-form formula.",
            )
        returncode = proc.wait()
        return _parse_response(out, err, returncode, startup_ms, self.limits)


_STDIN = object()


def _exchange(
    proc: subprocess.Popen[bytes], request: bytes, limits: SandboxLimits, spawned: float
) -> tuple[bytes, bytes, Literal["done", "startup_timeout", "timeout"], float | None]:
    """Write the request and read stdout/stderr until both close, without ever blocking past the
    start-up deadline (until the child says it is ready) or the run deadline (after that)."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    pending = memoryview(request)
    deadline = spawned + limits.startup_timeout_s
    startup_ms: float | None = None
    os.set_blocking(proc.stdin.fileno(), False)
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdin, selectors.EVENT_WRITE, _STDIN)
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                phase: Literal["startup_timeout", "timeout"] = (
                    "startup_timeout" if startup_ms is None else "timeout"
                )
                return bytes(out), bytes(err), phase, startup_ms
            for key, _events in selector.select(remaining):
                if key.data is _STDIN:
                    try:
                        pending = pending[os.write(key.fd, pending[:65536]) :]
                    except BrokenPipeError:  # the child died early; its exit status tells why
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer: bytearray = key.data
                if len(buffer) < _MAX_RESPONSE_BYTES:
                    buffer += chunk
                if startup_ms is None and key.data is out:
                    now = time.monotonic()
                    startup_ms = round((now - spawned) * 1000, 1)
                    deadline = now + limits.timeout_s
    return bytes(out), bytes(err), "done", startup_ms


def _parse_response(
    out: bytes, err: bytes, returncode: int, startup_ms: float | None, limits: SandboxLimits
) -> PythonRun:
    payload = out[len(READY) :] if out.startswith(READY) else b""
    try:
        data = ast.literal_eval(payload.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a response")
    except (UnicodeDecodeError, ValueError, SyntaxError, MemoryError, RecursionError):
        return PythonRun(status=_crash_status(err, returncode), startup_ms=startup_ms,
                         error=_crash_message(err, returncode, limits))  # fmt: skip
    return PythonRun(
        status=data["status"],
        stdout=data["stdout"],
        stdout_dropped_chars=data["stdout_dropped"],
        value=data["value"],
        error=data["error"],
        startup_ms=startup_ms,
    )


def _crash_status(err: bytes, returncode: int) -> SandboxStatus:
    if b"MemoryError" in err:
        return "memory"
    cpu_exceeded = getattr(signal, "SIGXCPU", None)
    if cpu_exceeded is not None and returncode == -cpu_exceeded:
        return "timeout"
    return "crashed"


def _crash_message(err: bytes, returncode: int, limits: SandboxLimits) -> str:
    status = _crash_status(err, returncode)
    if status == "memory":
        return f"memory limit exceeded ({limits.memory_mb} MB)"
    if status == "timeout":
        return f"CPU time limit exceeded (the computation ran longer than {limits.timeout_s:g} s)"
    detail = err.decode("utf-8", "replace").strip()[-400:]
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"the sandbox process died (signal {name}) {detail}".strip()
    return f"the sandbox process failed (exit status {returncode}) {detail}".strip()


def _result(run: PythonRun) -> ToolResult:
    if run.status == "ok":
        return ToolResult.success(run)
    return ToolResult.failure(run.error or run.status, data=run)
