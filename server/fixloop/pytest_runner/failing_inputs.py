"""What a failing test was given and what it compared: the arguments, the failing line, expected vs actual."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Comparison:
    """A failing comparison of an assert: the actual and expected values (reprs, cut) and their source."""

    op: str
    actual: str
    expected: str
    actual_expr: str = ""
    expected_expr: str = ""


@dataclass(frozen=True)
class FailingInputs:
    """The failing call of one test: its parametrize values, else its frame's locals at the failing line
    (reprs cut like pytest's --showlocals, secrets hidden), the line, and the comparison if it was one."""

    params: tuple[tuple[str, str], ...] = ()
    locals: tuple[tuple[str, str], ...] = ()
    path: str = ""  # relative to the root
    line_number: int = 0
    line: str = ""
    compare: Comparison | None = None

    @property
    def arguments(self) -> tuple[tuple[str, str], ...]:
        return self.params or self.locals


def inputs_from_record(record: Mapping[str, Any], path: str) -> FailingInputs | None:
    """The report plugin's "inputs" record as FailingInputs (None when it says nothing)."""
    compare = record.get("compare")
    inputs = FailingInputs(
        params=_pairs(record.get("params")),
        locals=_pairs(record.get("locals")),
        path=path,
        line_number=int(record.get("line_number") or 0),
        line=str(record.get("line") or ""),
        compare=Comparison(
            op=str(compare.get("op", "")),
            actual=str(compare.get("actual", "")),
            expected=str(compare.get("expected", "")),
            actual_expr=str(compare.get("actual_expr", "")),
            expected_expr=str(compare.get("expected_expr", "")),
        )
        if isinstance(compare, Mapping)
        else None,
    )
    return inputs if inputs.arguments or inputs.line or inputs.compare else None


def _pairs(raw: object) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, list | tuple) and len(item) == 2:
            pairs.append((str(item[0]), str(item[1])))
    return tuple(pairs)


def failing_input_lines(inputs: FailingInputs | None, indent: str = "  ") -> list[str]:
    """The failing inputs as prompt lines (the one rendering the run_tests report, the warm start, candidate
    prompts and rejection feedback share): the arguments, the failing line, expected vs actual."""
    if inputs is None:
        return []
    lines = []
    if inputs.params:
        lines.append(f"{indent}called with: " + ", ".join(f"{name}={value}" for name, value in inputs.params))
    elif inputs.locals:
        shown = ", ".join(f"{name} = {value}" for name, value in inputs.locals)
        lines.append(f"{indent}locals at the failing line: {shown}")
    if inputs.line:
        where = f" ({inputs.path}:{inputs.line_number})" if inputs.path and inputs.line_number else ""
        lines.append(f"{indent}failing line{where}: {inputs.line}")
    compare = inputs.compare
    if compare is not None:
        actual = _named(compare.actual_expr, compare.actual)
        expected = _named(compare.expected_expr, compare.expected)
        lines.append(f"{indent}actual: {actual}")
        relation = "" if compare.op == "==" else f"{compare.op} "
        lines.append(f"{indent}expected: {relation}{expected}")
    return lines


def _named(expression: str, value: str) -> str:
    """`f(2) = 3`; a literal is shown once."""
    return f"{expression} = {value}" if expression and expression != value else value
