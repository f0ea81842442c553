"""Derived figures: a number the vendor does not print but whose inputs it does (cores, clocks,
bus width, data rate), computed from a stated formula and shown as derived with that formula and
the sources of its inputs.

data/derived.toml holds one [[derived]] entry per figure:

    item = "rtx-4090-laptop"          # an accelerator or system id
    field = "fp32_tflops"             # a figure field of that kind
    expression = "cuda_cores * 2 * boost_clock_mhz / 1e6"
    inputs = { cuda_cores = 9728, boost_clock_mhz = 2040 }
    input_sources = { cuda_cores = "src-id", boost_clock_mhz = "src-id" }
    notes = "FMA = 2 FLOPs; the boost clock at the top of NVIDIA's range"

The expression may use + - * / ** and parentheses over its named inputs and plain numbers;
nothing else is evaluated.
"""

from __future__ import annotations

import ast
import math
import operator
import re

DERIVED_KINDS = ("accelerators", "systems")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow}


class DerivedError(ValueError):
    """A derived figure that cannot be computed; the message says why, in words."""


def evaluate(expression: str, inputs: dict[str, float]) -> float:
    """The value of an arithmetic `expression` over `inputs`."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise DerivedError(f"expression '{expression}' is not arithmetic ({exc.msg})") from None

    def walk(node) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in inputs:
                raise DerivedError(f"expression uses '{node.id}', which is not among its inputs")
            return float(inputs[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise DerivedError(f"expression '{expression}' may only use numbers, its inputs and + - * / **")

    try:
        value = walk(tree)
    except ZeroDivisionError:
        raise DerivedError(f"expression '{expression}' divides by zero") from None
    if not math.isfinite(value) or value <= 0:
        raise DerivedError(f"expression '{expression}' gives {value}, not a positive number")
    return value


def rounded(value: float) -> float:
    """Four significant figures: a derived figure is no more precise than its inputs."""
    return float(f"{value:.4g}")


def check_entry(entry: object) -> tuple[str, str, str, dict, dict, str]:
    """(item, field, expression, inputs, input_sources, notes) of one [[derived]] entry."""
    if not isinstance(entry, dict):
        raise DerivedError("must be a table of item, field, expression, inputs, input_sources")
    unknown = set(entry) - {"item", "field", "expression", "inputs", "input_sources", "notes", "value", "evidence"}
    if unknown:
        raise DerivedError(f"unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("item", "field", "expression"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise DerivedError(f"'{key}' is missing")
    inputs = entry.get("inputs")
    sources = entry.get("input_sources")
    if not isinstance(inputs, dict) or not inputs:
        raise DerivedError("'inputs' must name the numbers the expression uses")
    for name, value in inputs.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise DerivedError(f"input '{name}' must be a number, not {value!r}")
    if not isinstance(sources, dict) or set(sources) != set(inputs):
        raise DerivedError("'input_sources' must give a source id for every input")
    return (entry["item"], entry["field"], entry["expression"], dict(inputs), dict(sources),
            str(entry.get("notes") or ""))


def describe(info: dict) -> str:
    """'derived: cuda_cores 9,728 × 2 × boost_clock_mhz 2,040 / 1e6' for views and reports."""
    inputs = info.get("inputs", {})

    def named(match) -> str:
        name = match.group(0)
        if name not in inputs:
            return name
        value = inputs[name]
        shown = f"{value:,.6g}" if float(value) != int(value) else f"{int(value):,}"
        return f"{name.replace('_', ' ')} {shown}"

    text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", named, info.get("expression", ""))
    return "derived: " + text.replace("**", "^").replace("*", "×")
