"""The sandbox's child process: ``python -I -S -B sandbox_child.py MEMORY_MB CPU_S``.

Standard library only; never imported by the parent. Protocol:

1. applies resource limits (address space, CPU seconds, no file writes, few descriptors);
2. reads one JSON request ``{"code", "max_output_chars", "max_value_chars"}`` from stdin;
3. writes the byte ``R`` (the parent starts its deadline clock here), vets and runs the code with a
   restricted namespace, capturing ``print`` into a bounded buffer;
4. writes one JSON response: ``{"status", "stdout", "stdout_dropped", "value", "error"}``.

The parent kills this process at the deadline; nothing here has to be trusted to stop by itself.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_policy  # a sibling file, imported by path in an isolated interpreter


class BoundedBuffer:
    """Keeps the first ``limit`` characters written and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def write(self, text: str) -> None:
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)
        self.dropped += max(0, len(text) - max(room, 0))

    def getvalue(self) -> str:
        return "".join(self.parts)


def apply_limits(memory_mb: int, cpu_s: int) -> None:
    try:
        import resource
        import signal
    except ImportError:  # not POSIX: only the parent's deadline applies
        return
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past RLIMIT_FSIZE fails instead of killing
    limits = {
        resource.RLIMIT_AS: memory_mb * 1024 * 1024,
        resource.RLIMIT_CPU: cpu_s,
        resource.RLIMIT_FSIZE: 0,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NOFILE: 16,
    }
    for which, value in limits.items():
        _soft, hard = resource.getrlimit(which)
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (capped, capped))


def safe_repr(value: Any, limit: int) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. an int beyond the digit limit
        return f"<{type(value).__name__} that cannot be shown: {exc}>"
    if len(text) > limit:
        return text[:limit] + f"… [{len(text) - limit} more chars]"
    return text


def describe_error(exc: BaseException) -> str:
    line = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == "<sandbox>":
            line = f" (line {frame.lineno})"
            break
    message = str(exc)
    if len(message) > 500:
        message = message[:500] + "…"
    return f"{type(exc).__name__}{line}: {message}" if message else f"{type(exc).__name__}{line}"


def run(request: dict[str, Any], memory_mb: int) -> dict[str, Any]:
    out = BoundedBuffer(int(request["max_output_chars"]))
    response: dict[str, Any] = {
        "status": "ok",
        "stdout": "",
        "stdout_dropped": 0,
        "value": None,
        "error": None,
    }

    def sandbox_print(*args: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        out.write(str(sep).join(str(a) for a in args) + str(end))

    try:
        tree = sandbox_policy.vet(request["code"])
    except SyntaxError as exc:
        return {**response, "status": "syntax_error", "error": f"SyntaxError (line {exc.lineno}): {exc.msg}"}
    except sandbox_policy.SandboxViolation as exc:
        return {**response, "status": "rejected", "error": str(exc)}

    namespace = sandbox_policy.sandbox_globals(sandbox_print)
    last_expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last_expr = ast.Expression(body=tree.body.pop().value)
    try:
        exec(compile(tree, "<sandbox>", "exec"), namespace)
        if last_expr is not None:
            value = eval(compile(last_expr, "<sandbox>", "eval"), namespace)
            if value is not None:
                response["value"] = safe_repr(value, int(request["max_value_chars"]))
    except MemoryError:
        response.update(status="memory", error=f"memory limit exceeded ({memory_mb} MB)")
    except RecursionError:
        response.update(status="runtime_error", error="RecursionError: maximum recursion depth exceeded")
    except Exception as exc:
        response.update(status="runtime_error", error=describe_error(exc))
    response["stdout"] = out.getvalue()
    response["stdout_dropped"] = out.dropped
    return response


def main() -> None:
    memory_mb, cpu_s = int(sys.argv[1]), int(sys.argv[2])
    apply_limits(memory_mb, cpu_s)
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdout.buffer.write(b"R")
    sys.stdout.buffer.flush()
    try:
        response = run(request, memory_mb)
    except MemoryError:
        response = {"status": "memory", "stdout": "", "stdout_dropped": 0, "value": None,
                    "error": f"memory limit exceeded ({memory_mb} MB)"}  # fmt: skip
    sys.stdout.buffer.write(json.dumps(response, ensure_ascii=True).encode("ascii"))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
