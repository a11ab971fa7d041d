"""What sandboxed Python may do: AST vetting, the ``**`` rewrite, and the restricted namespace.

Standard library only: the sandbox child process (``sandbox_child.py``) imports this module by path
in an isolated interpreter, and the parent imports it to reject code before starting a process.

The AST check is the first barrier, not the only one: the child also runs with resource limits and
is killed at the deadline. The rules, in short:

* only the node types in ``ALLOWED_NODES`` (no import, class, with, global, async, yield, match);
* no identifier that starts with ``__`` and no name in ``FORBIDDEN_NAMES`` (eval, exec, open, ...);
* no attribute that starts with ``_`` (blocks ``().__class__.__mro__``) or reaches frames, code or
  tracebacks (``gi_frame``, ``f_globals``, ``tb_frame``, ...), and no ``.format``/``.format_map``
  (format strings can read attributes by name);
* builtins are a small safe table; ``math``/``statistics`` are namespaces of their public functions.
"""

from __future__ import annotations

import ast
import datetime as _dt
import decimal
import fractions
import math
import statistics
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

MAX_CODE_CHARS = 20_000
MAX_POW_BITS = 1_000_000
POW_HELPER = "__sandbox_pow"

ALLOWED_NODES: frozenset[type[ast.AST]] = frozenset(
    {
        # statements
        ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Pass,
        ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.FunctionDef, ast.Return,
        ast.Assert, ast.Raise, ast.Try, ast.ExceptHandler,
        # expressions
        ast.Name, ast.Load, ast.Store, ast.Del, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice,
        ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.NamedExpr, ast.Call,
        ast.keyword, ast.Starred, ast.Lambda, ast.arguments, ast.arg,
        ast.List, ast.Tuple, ast.Set, ast.Dict,
        ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension,
        ast.JoinedStr, ast.FormattedValue,
        # operators
        ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult,
        ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd,
        ast.UAdd, ast.USub, ast.Not, ast.Invert, ast.And, ast.Or,
        ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
    }
)  # fmt: skip

FORBIDDEN_NAMES = frozenset(
    {
        "eval", "exec", "open", "compile", "__import__", "globals", "locals", "vars", "dir",
        "getattr", "setattr", "delattr", "hasattr", "breakpoint", "input", "help", "memoryview",
        "type", "object", "super", "classmethod", "staticmethod", "property", "exit", "quit",
        "id", "format", "bytearray",
    }
)  # fmt: skip

FORBIDDEN_ATTRS = frozenset({"format", "format_map", "mro"})
# Generator/coroutine frames, frames, tracebacks, code objects: each leads back to real globals.
FORBIDDEN_ATTR_PREFIXES = ("_", "gi_", "cr_", "ag_", "f_", "tb_", "co_", "func_")

_NODE_HINTS: dict[type[ast.AST], str] = {
    ast.Import: "import is not allowed: the sandbox pre-loads math, statistics, Decimal, Fraction, date, datetime and timedelta",
    ast.ImportFrom: "import is not allowed: the sandbox pre-loads math, statistics, Decimal, Fraction, date, datetime and timedelta",
    ast.ClassDef: "class definitions are not allowed; use functions, dicts and tuples",
    ast.With: "'with' is not allowed (there are no files or resources to manage)",
    ast.Global: "'global' is not allowed",
    ast.Nonlocal: "'nonlocal' is not allowed",
    ast.Yield: "generators with 'yield' are not allowed; build a list instead",
    ast.YieldFrom: "generators with 'yield' are not allowed; build a list instead",
}


class SandboxViolation(ValueError):
    """The code uses something the sandbox does not allow; the message says what."""


def vet(code: str) -> ast.Module:
    """Parse and check ``code``; return the tree with ``**`` rewritten, or raise.

    Raises ``SyntaxError`` for code that does not parse and ``SandboxViolation`` for code that
    parses but uses something outside the allowed subset.
    """
    if len(code) > MAX_CODE_CHARS:
        raise SandboxViolation(f"code is too long ({len(code)} chars, limit {MAX_CODE_CHARS})")
    try:
        tree = ast.parse(code, filename="<sandbox>", mode="exec")
    except (RecursionError, MemoryError) as exc:
        raise SandboxViolation("code is nested too deeply to analyse") from exc
    for node in ast.walk(tree):
        _check_node(node)
    return _rewrite_pow(tree)


def _check_node(node: ast.AST) -> None:
    kind = type(node)
    if kind not in ALLOWED_NODES:
        line = getattr(node, "lineno", "?")
        hint = _NODE_HINTS.get(kind, f"'{kind.__name__}' syntax is not allowed in the sandbox")
        raise SandboxViolation(f"line {line}: {hint}")
    for identifier in _identifiers(node):
        _check_identifier(identifier, node)
    if isinstance(node, ast.Attribute):
        attr = node.attr
        if attr in FORBIDDEN_ATTRS or attr.startswith(FORBIDDEN_ATTR_PREFIXES):
            raise SandboxViolation(f"line {node.lineno}: access to attribute '{attr}' is not allowed")


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.arg)):
        return [node.name if isinstance(node, ast.FunctionDef) else node.arg]
    if isinstance(node, (ast.keyword, ast.ExceptHandler)):
        name = node.arg if isinstance(node, ast.keyword) else node.name
        return [name] if name else []
    return []


def _check_identifier(name: str, node: ast.AST) -> None:
    line = getattr(node, "lineno", "?")
    if name in FORBIDDEN_NAMES:
        raise SandboxViolation(f"line {line}: '{name}' is not allowed in the sandbox")
    if name.startswith("__"):
        raise SandboxViolation(f"line {line}: names starting with '__' are not allowed ('{name}')")


class _PowRewriter(ast.NodeTransformer):
    """``a ** b`` → ``__sandbox_pow(a, b)`` so huge integer powers fail fast with a clear message."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.copy_location(_pow_call(node.left, node.right), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow) and isinstance(node.target, ast.Name):
            load = ast.Name(id=node.target.id, ctx=ast.Load())
            value = _pow_call(load, node.value)
            return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)
        return node


def _pow_call(left: ast.expr, right: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=POW_HELPER, ctx=ast.Load()), args=[left, right], keywords=[])


def _rewrite_pow(tree: ast.Module) -> ast.Module:
    return ast.fix_missing_locations(_PowRewriter().visit(tree))


def safe_pow(base: Any, exp: Any, mod: Any = None) -> Any:
    """``pow`` that refuses integer results too large to compute in the time and memory limits."""
    if mod is None and isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        bits = exp * math.log2(abs(base))
        if bits > MAX_POW_BITS:
            raise OverflowError(
                f"{base} ** {exp} would have about {bits:,.0f} bits (limit {MAX_POW_BITS:,}); "
                "use floats or logarithms for numbers this large"
            )
    return pow(base, exp, mod)


_SAFE_BUILTINS: tuple[Callable[..., Any] | type, ...] = (
    abs, min, max, sum, len, range, enumerate, zip, sorted, reversed, round, divmod,
    int, float, complex, str, bool, list, dict, set, frozenset, tuple, map, filter, any, all,
    isinstance, chr, ord, hex, oct, bin, repr, iter, next, slice, hash,
    Exception, ArithmeticError, AssertionError, KeyError, IndexError, OverflowError,
    StopIteration, TypeError, ValueError, ZeroDivisionError, RuntimeError, LookupError,
)  # fmt: skip

_MATH_NAMES = (
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "comb", "copysign", "cos",
    "cosh", "degrees", "dist", "e", "erf", "erfc", "exp", "expm1", "fabs", "factorial", "floor",
    "fmod", "fsum", "gamma", "gcd", "hypot", "inf", "isclose", "isfinite", "isinf", "isnan",
    "isqrt", "lcm", "ldexp", "lgamma", "log", "log10", "log1p", "log2", "nan", "perm", "pi", "prod",
    "radians", "remainder", "sin", "sinh", "sqrt", "tan", "tanh", "tau", "trunc",
)  # fmt: skip

_STATISTICS_NAMES = (
    "fmean", "geometric_mean", "harmonic_mean", "mean", "median", "median_high", "median_low",
    "mode", "multimode", "pstdev", "pvariance", "quantiles", "stdev", "variance",
)  # fmt: skip


def _checked_factorial(n: int) -> int:
    if n > 20_000:
        raise OverflowError(f"factorial({n}) is too large for the sandbox (limit 20000)")
    return math.factorial(n)


def sandbox_globals(print_fn: Callable[..., None]) -> dict[str, Any]:
    """A fresh global namespace for one run: safe builtins plus pre-loaded numeric helpers."""
    builtins: dict[str, Any] = {fn.__name__: fn for fn in _SAFE_BUILTINS}
    builtins["pow"] = safe_pow
    builtins["print"] = print_fn
    math_ns = SimpleNamespace(**{name: getattr(math, name) for name in _MATH_NAMES})
    math_ns.factorial = _checked_factorial
    return {
        "__builtins__": builtins,
        POW_HELPER: safe_pow,
        "math": math_ns,
        "statistics": SimpleNamespace(**{n: getattr(statistics, n) for n in _STATISTICS_NAMES}),
        "Decimal": decimal.Decimal,
        "ROUND_HALF_UP": decimal.ROUND_HALF_UP,
        "ROUND_HALF_EVEN": decimal.ROUND_HALF_EVEN,
        "Fraction": fractions.Fraction,
        "date": _dt.date,
        "datetime": _dt.datetime,
        "timedelta": _dt.timedelta,
    }


def preloaded_names() -> list[str]:
    """Names available without import (for tool descriptions and error hints)."""
    return ["math", "statistics", "Decimal", "ROUND_HALF_UP", "ROUND_HALF_EVEN", "Fraction", "date",
            "datetime", "timedelta"]  # fmt: skip
