"""What sandboxed Python may do: AST vetting, the ``**`` rewrite, and compiling for the child.

Runs in the parent, before any process starts: rejected code never reaches the child. The child
(``sandbox_child.py``) receives code objects compiled here from the vetted, rewritten tree.

The AST check is the first barrier, not the only one: the child also runs with resource limits and
is killed at the deadline. The rules, in short:

* only the node types in ``ALLOWED_NODES`` (no import, class, with, global, async, yield, match);
* no identifier that starts with ``__`` and no name in ``FORBIDDEN_NAMES`` (eval, exec, open, ...);
* no attribute that starts with ``_`` (blocks ``().__class__.__mro__``) or reaches frames, code or
  tracebacks (``gi_frame``, ``f_globals``, ``tb_frame``, ...), and no ``.format``/``.format_map``
  (format strings can read attributes by name);
* builtins are a small safe table (in the child); ``math``/``statistics`` are namespaces of their
  public functions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import CodeType

from taskcrew.tools.research.sandbox_child import POW_HELPER, PRELOADED

MAX_CODE_CHARS = 20_000
_PRELOAD_HINT = ", ".join(PRELOADED)

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
    ast.Import: f"import is not allowed; these are available without import: {_PRELOAD_HINT}",
    ast.ImportFrom: f"import is not allowed; these are available without import: {_PRELOAD_HINT}",
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
        raise SandboxViolation(NESTING_HINT) from exc
    if _depth(tree) > MAX_NESTING:
        raise SandboxViolation(NESTING_HINT)
    for node in ast.walk(tree):
        _check_node(node)
    try:
        return _rewrite_pow(tree)
    except RecursionError as exc:  # belt and braces: the depth limit should have caught it
        raise SandboxViolation(NESTING_HINT) from exc


MAX_NESTING = 100
NESTING_HINT = (
    f"code is nested too deeply (more than {MAX_NESTING} levels of brackets, calls or blocks); "
    "write it flatter, with intermediate variables"
)


def _depth(tree: ast.AST) -> int:
    """The deepest nesting of the syntax tree, measured without recursion."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            return deepest
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


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


@dataclass(frozen=True)
class CompiledCode:
    """What the child runs: the statements, the final expression (if any) and the names it uses."""

    body: CodeType
    expr: CodeType | None
    names: list[str]


def compile_vetted(tree: ast.Module) -> CompiledCode:
    """Compile a tree from ``vet``; the last statement, if an expression, is compiled apart so its
    value can be returned."""
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & set(PRELOADED))
    expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
        assert isinstance(last, ast.Expr)
        expr = _compile(ast.Expression(body=last.value), "eval")
    return CompiledCode(_compile(tree, "exec"), expr, names)


def _compile(tree: ast.Module | ast.Expression, mode: str) -> CodeType:
    try:
        return compile(tree, "<sandbox>", mode)
    except RecursionError as exc:
        raise SandboxViolation(NESTING_HINT) from exc


def preloaded_names() -> list[str]:
    """Names available without import (for tool descriptions and error hints)."""
    return list(PRELOADED)
