"""The sandbox's child process: ``python -I -S -B sandbox_child.py MEMORY_MB CPU_S``.

Run as a script in a fresh, isolated interpreter; it imports nothing beyond built-in modules until
the code asks for one of the pre-loaded names (so a start costs ~15 ms more than a bare interpreter).
The parent also imports this module, for its constants only. Protocol on stdin/stdout:

1. apply resource limits (address space, CPU seconds, no file writes, few descriptors);
2. read one ``marshal`` request from stdin: ``{"body": code, "expr": code | None, "names": [...],
   "max_output_chars": int, "max_value_chars": int}`` (code objects compiled by the parent from
   vetted source, so line numbers match the user's code);
3. write ``R`` (the parent starts its deadline clock here), run ``body`` then ``expr`` in a fresh
   namespace with safe builtins and only the pre-loaded names the code uses, ``print`` captured
   into a bounded buffer;
4. write ``repr`` of ``{"status", "stdout", "stdout_dropped", "value", "error"}`` (the parent reads
   it with ``ast.literal_eval``).

The parent kills this process at the deadline; nothing here has to be trusted to stop by itself.
"""

from __future__ import annotations

import builtins
import math
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

POW_HELPER = "__sandbox_pow"
MAX_POW_BITS = 1_000_000
MAX_FACTORIAL = 20_000
READY = b"R"

SAFE_BUILTINS = (
    "abs", "min", "max", "sum", "len", "range", "enumerate", "zip", "sorted", "reversed", "round", "divmod",
    "int", "float", "complex", "str", "bool", "list", "dict", "set", "frozenset", "tuple", "map", "filter",
    "any", "all", "isinstance", "chr", "ord", "hex", "oct", "bin", "repr", "iter", "next", "slice", "hash",
    "Exception", "ArithmeticError", "AssertionError", "KeyError", "IndexError", "LookupError",
    "OverflowError", "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)  # fmt: skip
PRELOADED = (
    "math", "statistics", "Decimal", "ROUND_HALF_UP", "ROUND_HALF_EVEN", "Fraction", "date", "datetime",
    "timedelta",
)  # fmt: skip
MATH_NAMES = (
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "comb", "copysign", "cos",
    "cosh", "degrees", "dist", "e", "erf", "erfc", "exp", "expm1", "fabs", "floor", "fmod", "fsum",
    "gamma", "gcd", "hypot", "inf", "isclose", "isfinite", "isinf", "isnan", "isqrt", "lcm", "ldexp",
    "lgamma", "log", "log10", "log1p", "log2", "nan", "perm", "pi", "prod", "radians", "remainder",
    "sin", "sinh", "sqrt", "tan", "tanh", "tau", "trunc",
)  # fmt: skip
STATISTICS_NAMES = (
    "fmean", "geometric_mean", "harmonic_mean", "mean", "median", "median_high", "median_low",
    "mode", "multimode", "pstdev", "pvariance", "quantiles", "stdev", "variance",
)  # fmt: skip


def safe_pow(base: Any, exp: Any, mod: Any = None) -> Any:
    """``pow`` (and ``**``) that refuses integer results too large for the time and memory limits."""
    if mod is None and isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        bits = exp * math.log2(abs(base))
        if bits > MAX_POW_BITS:
            raise OverflowError(
                f"{base} ** {exp} would have about {bits:,.0f} bits (limit {MAX_POW_BITS:,}); "
                "use floats or logarithms for numbers this large"
            )
    return pow(base, exp, mod)


def _factorial(n: int) -> int:
    if n > MAX_FACTORIAL:
        raise OverflowError(f"factorial({n}) is too large for the sandbox (limit {MAX_FACTORIAL})")
    return math.factorial(n)


class _Namespace:
    """Plain attribute holder (``math.sqrt``) without any module internals behind it."""

    def __init__(self, **members: Any) -> None:
        self.__dict__.update(members)


def _preloaded(name: str) -> Any:
    if name == "math":
        return _Namespace(**{n: getattr(math, n) for n in MATH_NAMES}, factorial=_factorial)
    if name == "statistics":
        import statistics

        return _Namespace(**{n: getattr(statistics, n) for n in STATISTICS_NAMES})
    if name in ("Decimal", "ROUND_HALF_UP", "ROUND_HALF_EVEN"):
        import decimal

        return getattr(decimal, name)
    if name == "Fraction":
        from fractions import Fraction

        return Fraction
    import datetime

    return getattr(datetime, name)


def build_namespace(names: list[str], print_fn: Callable[..., None]) -> dict[str, Any]:
    """Safe builtins, the bounded ``pow`` and only the pre-loaded ``names`` the code refers to."""
    safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS}
    safe["pow"] = safe_pow
    safe["print"] = print_fn
    namespace: dict[str, Any] = {"__builtins__": safe, POW_HELPER: safe_pow}
    for name in names:
        if name in PRELOADED:
            namespace[name] = _preloaded(name)
    return namespace


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
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<sandbox>":
            line = f" (line {tb.tb_lineno})"
        tb = tb.tb_next
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
        namespace = build_namespace(list(request["names"]), sandbox_print)
        exec(request["body"], namespace)
        if request["expr"] is not None:
            value = eval(request["expr"], namespace)
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
    import marshal

    memory_mb, cpu_s = int(sys.argv[1]), int(sys.argv[2])
    apply_limits(memory_mb, cpu_s)
    request = marshal.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    try:
        response = run(request, memory_mb)
    except MemoryError:
        response = {"status": "memory", "stdout": "", "stdout_dropped": 0, "value": None,
                    "error": f"memory limit exceeded ({memory_mb} MB)"}  # fmt: skip
    sys.stdout.buffer.write(repr(response).encode("utf-8"))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
