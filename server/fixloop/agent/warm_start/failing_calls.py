"""The failing calls a warm start shows under each failure: the arguments, the failing line, expected vs
actual of every failing test of a group (rendered by the one `failing_input_lines`)."""

from __future__ import annotations

from collections.abc import Sequence

from fixloop.pytest_runner.failing_inputs import failing_input_lines
from fixloop.pytest_runner.results import TestRun

MAX_CASES = 4  # parametrized cases failing the same way whose calls are shown


def failing_call_lines(run: TestRun, test_ids: Sequence[str]) -> list[str]:
    """The failing call of the first test in full, and of a few more failing the same way (a parametrized
    case each) their arguments and values; [] when the run recorded none."""
    lines: list[str] = []
    for number, test_id in enumerate(list(test_ids)[:MAX_CASES]):
        outcome = run.outcome(test_id)
        shown = failing_input_lines(outcome.inputs if outcome is not None else None)
        if not shown:
            continue
        if number:
            shown = [line for line in shown if not line.lstrip().startswith("failing line")]
        head = "The failing call:" if not lines else f"And {test_id}:"
        lines += [head, *shown]
    return lines


def failing_call_text(run: TestRun, test_id: str) -> str:
    """The failing call of one test, headed by its id ("" when the run recorded none): what a prompt shows
    of a still-failing test."""
    outcome = run.outcome(test_id)
    shown = failing_input_lines(outcome.inputs if outcome is not None else None, "    ")
    return "\n".join([f"{test_id}:", *shown]) if shown else ""
