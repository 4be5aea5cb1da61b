"""run_tests: run pytest on node ids inside the project and show a compact report of what failed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fixloop.pytest_runner.failing_inputs import failing_input_lines
from fixloop.pytest_runner.results import TestOutcome, TestRun, TestRunner
from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.node_ids import checked_test_ids
from fixloop.tools.workspace import Workspace

MAX_DETAILED = 8
MAX_TRACEBACK_LINES = 30
MAX_TRACEBACK_CHARS = 2500
OUTCOME_ORDER = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")
FAILING = ("failed", "error")


class RunTestsTool(Tool):
    name = "run_tests"
    brief = "run the failing tests (no arguments), or pytest on the test ids given"
    description = (
        "Run tests with pytest and report the outcome: a summary line, then for each failing test its "
        "message, location and traceback. test_ids are pytest node ids relative to the project root, "
        "e.g. 'tests/test_app.py::test_parse' or a whole file 'tests/test_app.py' (no pytest options). "
        "Without test_ids the failing tests this task is about are run: call it with no arguments to check "
        "a fix."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "test_ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "pytest node ids; default: the tests to fix",
            },
        },
        "required": [],
        "additionalProperties": False,
    }
    read_only = False  # runs in order with the edits, never beside them
    truncation_hint = "run fewer tests"

    def __init__(
        self,
        runner: TestRunner,
        default_test_ids: Sequence[str] = (),
        workspace: Workspace | None = None,
        baseline: TestRun | None = None,
        show_inputs: bool = True,
    ) -> None:
        self.runner = runner
        self.show_inputs = show_inputs  # the failingInputs setting
        self.default_test_ids = tuple(default_test_ids)
        self.workspace = workspace
        # (ids, workspace generation) -> the report: a run of unchanged files is not repeated. A baseline
        # that timed out stands for the default run, so a hanging target is not run whole again unchanged.
        self._reports: dict[tuple[str, ...], tuple[int, str]] = {}
        if baseline is not None and baseline.timed_out and workspace is not None:
            self._reports[self.default_test_ids] = (workspace.generation, self._format(baseline))

    async def run(self, test_ids: list[str] | None = None) -> ToolResult:
        given = [tid for tid in test_ids or () if tid.strip()]
        if given and self.workspace is not None:
            ids = await asyncio.to_thread(checked_test_ids, self.workspace, given, self.default_test_ids)
        else:
            ids = [tid.strip() for tid in given] or list(self.default_test_ids)
        key, generation = tuple(ids), self.workspace.generation if self.workspace is not None else None
        known = self._reports.get(key)
        if known is not None and known[0] == generation:
            return ToolResult(
                f"not run again: no file changed since these tests last ran, which gave:\n{known[1]}"
            )
        report = self._format(await self.runner.run(ids))
        if generation is not None:
            self._reports[key] = (generation, report)
        return ToolResult(report)

    def _format(self, run: TestRun) -> str:
        return format_test_run(run, self.runner.timeout, show_inputs=self.show_inputs)


def format_test_run(run: TestRun, timeout: float | None = None, *, show_inputs: bool = True) -> str:
    """A TestRun as compact text: summary line, then each failing test's message, location, failing inputs
    (`show_inputs`) and traceback."""
    lines: list[str] = []
    if run.timed_out:
        seconds = timeout if timeout is not None else run.duration
        where = f" while running {run.hung_test}" if run.hung_test else ""
        lines.append(
            f"tests timed out after {seconds:g} s{where}; the test may loop forever or wait on "
            f"something that never comes"
        )
    summary = _summary(run.results, run.errors, run.duration)
    failing = [outcome for outcome in run.results.values() if outcome.outcome in FAILING]
    if run.results and not run.errors and not run.timed_out and not failing:
        return f"{summary}: they pass now; if the failing test was among them, call submit"
    lines.append(summary)
    lines += [f"collection error: {error}" for error in run.errors]
    for outcome in failing[:MAX_DETAILED]:
        lines += ["", *_failure(outcome, show_inputs)]
    if len(failing) > MAX_DETAILED:
        rest = failing[MAX_DETAILED:]
        lines += [
            "",
            f"{len(rest)} more failing: "
            + ", ".join(o.test_id for o in rest[:30])
            + (", …" if len(rest) > 30 else ""),
        ]
    output = run.output.strip()
    if not run.results and not run.errors and not run.timed_out and output:
        lines.append(f"pytest exited with code {run.exit_code}; its output ends:")
        lines.extend(output.splitlines()[-20:])
    return "\n".join(lines)


def _summary(results: Mapping[str, TestOutcome], errors: Sequence[str], duration: float) -> str:
    counts: dict[str, int] = {}
    for outcome in results.values():
        counts[outcome.outcome] = counts.get(outcome.outcome, 0) + 1
    parts = [f"{counts[name]} {name}" for name in OUTCOME_ORDER if counts.get(name)]
    parts += [f"{count} {name}" for name, count in counts.items() if name not in OUTCOME_ORDER]
    if errors:
        parts.append(f"{len(errors)} collection error{'s' if len(errors) != 1 else ''}")
    return (", ".join(parts) or "no tests ran") + f" in {duration:.2f}s"


def _failure(outcome: TestOutcome, show_inputs: bool = True) -> list[str]:
    label = "FAILED" if outcome.outcome == "failed" else "ERROR"
    when = outcome.when
    phase = f" (in {when})" if outcome.outcome == "error" and when and when != "call" else ""
    lines = [f"{label} {outcome.test_id}{phase}"]
    if outcome.message:
        lines.append(f"  {outcome.message}")
    if outcome.location:
        lines.append(f"  at {outcome.location}")
    lines += failing_input_lines(outcome.inputs) if show_inputs else []
    traceback = outcome.traceback.rstrip()
    if traceback:
        tb_lines = traceback.splitlines()
        if len(tb_lines) > MAX_TRACEBACK_LINES:
            tb_lines = ["…", *tb_lines[-MAX_TRACEBACK_LINES:]]
        text = "\n".join(tb_lines)
        if len(text) > MAX_TRACEBACK_CHARS:
            text = "…" + text[-MAX_TRACEBACK_CHARS:]
        lines.extend("    " + line for line in text.splitlines())
    return lines
