"""``evaluate --fail-on``: a condition on the result object, read without Python ``eval``."""

from __future__ import annotations

import ast
from typing import Any

from voxmetrics.errors import VoxMetricsInputError

MAX_FAIL_ON_CHARS = 2000
"""Longest ``--fail-on`` expression accepted."""
MAX_FAIL_ON_DEPTH = 50
"""Deepest nesting of a ``--fail-on`` expression accepted."""

_COMPARE = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _lookup(node: ast.expr, result: dict[str, Any], expr: str, applied: str = "") -> Any:
    """The value a metric name points to; null is refused (``applied``: the operator on it)."""
    path: list[str] = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            path.append(node.attr)
        elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str | int):
            path.append(str(node.slice.value))  # e.g. dcf["0.01"]
        else:
            raise VoxMetricsInputError(
                f"--fail-on '{expr}': unsupported index; index only with a quoted key, e.g. "
                'dcf["0.01"].min_dcf.'
            )
        node = node.value
    if not isinstance(node, ast.Name):
        raise VoxMetricsInputError(f"--fail-on '{expr}': only metric names like eer or lid.alid.")
    path.append(node.id)
    value: Any = result
    full = ".".join(reversed(path))
    prefix = f"--fail-on '{expr}': "
    if applied:
        prefix += f"cannot apply {applied} to {full} (null): "
    for depth, key in enumerate(reversed(path)):
        name = ".".join(reversed(path[len(path) - depth - 1 :]))
        if value is None:
            parent = ".".join(reversed(path[len(path) - depth :]))
            raise VoxMetricsInputError(
                f"{prefix}'{parent}' is null for this evaluation, so '{name}' has "
                "no value (e.g. the lid block needs --dev)."
            )
        if not isinstance(value, dict) or key not in value:
            keys = ", ".join(sorted(value)) if isinstance(value, dict) else "none"
            raise VoxMetricsInputError(
                f"--fail-on '{expr}': unknown metric '{name}'; available here: {keys}."
            )
        value = value[key]
    if value is None:
        raise VoxMetricsInputError(f"{prefix}'{full}' is null for this evaluation.")
    return value


def _operand(node: ast.expr, result: dict[str, Any], expr: str, applied: str) -> Any:
    """The value of the operand of ``applied`` (a null metric is refused naming ``applied``)."""
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return _lookup(node, result, expr, applied)
    return _eval(node, result, expr)


def _kind(value: Any) -> str:
    """What a value is, in the words of a --fail-on message."""
    if isinstance(value, bool):
        return "true / false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a block of metrics"
    return "a list" if isinstance(value, list) else type(value).__name__


def _check_comparable(
    left_node: ast.expr, left: Any, right_node: ast.expr, right: Any, op: ast.cmpop, expr: str
) -> None:
    """Refuse a comparison of values of different kinds (exit 2, never a traceback)."""
    kinds = {_kind(left), _kind(right)}
    ordered = not isinstance(op, ast.Eq | ast.NotEq)
    if kinds <= {"a number"} or kinds == {"text"}:
        return
    if kinds == {"true / false"} and not ordered:
        return
    words = [f"{ast.unparse(n)} ({_kind(v)})" for n, v in ((left_node, left), (right_node, right))]
    hint = ""
    block = next((v for v in (left, right) if isinstance(v, dict)), None)
    if block is not None:
        hint = _block_hint(block)
    elif "text" in kinds:
        hint = (
            "; write numbers without quotes, and quote text only to compare it with text (e.g. "
            'zebra.tag == "A")'
        )
    raise VoxMetricsInputError(
        f"--fail-on '{expr}': cannot compare {words[0]} with {words[1]}{hint}."
    )


def _block_hint(block: dict[str, Any]) -> str:
    """The tail of a message about a block of metrics used as a value: its first keys."""
    return f"; name one of the block's numbers ({', '.join(sorted(block)[:8])})"


def _negate(node: ast.UnaryOp, value: Any, expr: str) -> Any:
    """``-value``, refusing anything but a number (text, true / false, a block, a list)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return -value
    hint = ""
    if isinstance(value, dict):
        hint = _block_hint(value)
    elif isinstance(value, str):
        hint = "; write numbers without quotes (e.g. eer > -0.5)"
    raise VoxMetricsInputError(
        f"--fail-on '{expr}': cannot apply - to {ast.unparse(node.operand)} ({_kind(value)}): "
        f"only a number can be negated{hint}."
    )


def _condition(node: ast.expr, result: dict[str, Any], expr: str, applied: str) -> bool:
    """A part of ``and`` / ``or`` / ``not`` (or the whole): it must be true or false.

    ``applied`` names what needs the condition in the message of a refusal: ``'not'``,
    ``'and'``, ``'or'`` or ``--fail-on`` (the whole expression).
    """
    value = _operand(node, result, expr, applied)
    if not isinstance(value, bool):
        part, kind = ast.unparse(node), _kind(value)
        raise VoxMetricsInputError(
            f"--fail-on '{expr}': cannot apply {applied} to {part} ({kind}): {part} is {kind}, "
            'not a condition; compare it, e.g. "eer < 0.45".'
        )
    return value


def _eval(node: ast.expr, result: dict[str, Any], expr: str) -> Any:
    if isinstance(node, ast.BoolOp):
        word = "'and'" if isinstance(node.op, ast.And) else "'or'"
        values = [_condition(v, result, expr, word) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _condition(node.operand, result, expr, "'not'")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _negate(node, _operand(node.operand, result, expr, "-"), expr)
    if isinstance(node, ast.Compare):
        left_node, left = node.left, _eval(node.left, result, expr)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, result, expr)
            if type(op) not in _COMPARE:
                raise VoxMetricsInputError(f"--fail-on '{expr}': use <, <=, >, >=, == or !=.")
            _check_comparable(left_node, left, right_node, right, op, expr)
            if not _COMPARE[type(op)](left, right):
                return False
            left_node, left = right_node, right
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return node.value
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return _lookup(node, result, expr)
    raise VoxMetricsInputError(
        f"--fail-on '{expr}': unsupported expression; write comparisons of metric names and "
        'numbers joined by and / or / not, e.g. "lid.lid_max > 1.0 or eer < 0.45".'
    )


def fail_on_holds(expr: str, result: dict[str, Any]) -> bool:
    """Whether a ``--fail-on`` expression holds for a result object (no Python ``eval``).

    Examples
    --------
    >>> fail_on_holds("eer < 0.45 or linkability > 0.5", {"eer": 0.3, "linkability": 0.1})
    True
    >>> fail_on_holds("not eer < 0.45", {"eer": 0.3})
    False
    >>> fail_on_holds('dcf["0.01"].min_dcf < 0.9', {"dcf": {"0.01": {"min_dcf": 0.5}}})
    True
    """
    return _condition(parse_fail_on(expr), result, expr, "--fail-on")


def parse_fail_on(expr: str) -> ast.expr:
    """The expression tree of ``expr``, refusing overlong or deeply nested expressions."""
    if len(expr) > MAX_FAIL_ON_CHARS:
        raise VoxMetricsInputError(
            f"--fail-on: the expression is {len(expr):,} characters long, over the limit of "
            f"{MAX_FAIL_ON_CHARS:,}; write a shorter condition."
        )
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        raise VoxMetricsInputError(
            f"--fail-on '{expr:.80}' is not a valid expression (or is nested too deeply); "
            'e.g. "eer < 0.45".'
        ) from None
    depth = _depth(tree.body)
    if depth > MAX_FAIL_ON_DEPTH:
        raise VoxMetricsInputError(
            f"--fail-on '{expr:.80}': nested more than {MAX_FAIL_ON_DEPTH} levels deep (the "
            "limit); write a flatter condition."
        )
    return tree.body


def _depth(node: ast.AST) -> int:
    """Nesting depth of an expression tree, counted without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > MAX_FAIL_ON_DEPTH:
            break
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest
