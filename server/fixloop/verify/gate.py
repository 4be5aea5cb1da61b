"""The gate: judges one submit (tamper guard first, then the tests) and says why it refuses; a candidate
fix that a round of samples found is judged alone, and the winner written into the shadow by `accept`.

The tests run on a clean copy holding the baseline plus the proposed changes only — exactly what the user
would receive — never in the shadow with whatever else the run left there.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fixloop.errors import TestRunError
from fixloop.project import is_test_path
from fixloop.pytest_runner import TestOutcome, TestRun, TestRunner
from fixloop.pytest_runner.failing_inputs import failing_input_lines
from fixloop.result import FileChange
from fixloop.shadow import ShadowWorkspace
from fixloop.shadow.clean_copy import add_clean_copy, make_clean_copy, remove_clean_copies, remove_clean_copy
from fixloop.shadow.files import check_relpath
from fixloop.verify.baseline import Baseline, matches, target_outcomes
from fixloop.verify.port import NOTHING_CHANGED, GateVerdict
from fixloop.verify.proposal import proposal_changes
from fixloop.verify.tamper import tamper_reasons

MAX_LISTED = 10  # newly failing tests named one by one before "and N more"


class VerificationGate:
    """Checks a submitted fix: tamper guard first (cheap), then the tests on a clean copy. `proposal` is the
    last change set judged (what the user receives when it was accepted). The agent sees it as a `Gate`
    (port.py)."""

    def __init__(
        self,
        shadow: ShadowWorkspace,
        runner: TestRunner,
        baseline: Baseline,
        *,
        allow_test_edits: bool = False,
        failing_inputs: bool = True,
    ) -> None:
        self.shadow = shadow
        self.runner = runner
        self.baseline = baseline
        self.allow_test_edits = allow_test_edits
        self.failing_inputs = failing_inputs  # verdicts carry the still-failing targets' failing calls
        self.proposal: list[FileChange] = []

    async def check(self) -> GateVerdict:
        """Judge what the shadow holds now; `proposal` becomes what was judged."""
        changes = await asyncio.to_thread(self.shadow.changes)
        if not changes:
            return GateVerdict(False, (NOTHING_CHANGED,), unchanged=True)
        verdict, self.proposal = await self._judge_changes(changes, alone=True)
        return replace(verdict, changes=tuple(self.proposal))

    async def judge(self, changes: Sequence[FileChange]) -> GateVerdict:
        """Judge a candidate fix (the baseline plus `changes`) on a clean copy of its own, so that several
        candidates can be judged at once; the shadow and `proposal` are left as they are."""
        if not changes:
            return GateVerdict(False, ("nothing was changed",))
        verdict, proposed = await self._judge_changes(list(changes), alone=False)
        return replace(verdict, changes=tuple(proposed))

    async def screen(self, changes: Sequence[FileChange], seconds: float) -> bool:
        """Whether every target passes with `changes` (the baseline plus them, on a clean copy of its own),
        the targets alone run within `seconds`: a first look at one of many cheap candidates; one that
        passes is then judged whole by `judge`."""
        run = await self._run_on_copy(changes, list(self.baseline.target_ids), seconds)
        return run is not None and not self._targets(run)[1]

    async def run_check(
        self, changes: Sequence[FileChange], path: str, text: str, seconds: float
    ) -> dict[str, bool] | None:
        """Run a check file that is no part of any fix (`text` at `path`) on a clean copy of the baseline plus
        `changes`: each of its tests by name, passed or not; None when it could not run or ran out of time."""
        run = await self._run_on_copy([*changes, FileChange(path, None, text)], [path], seconds)
        if run is None:
            return None
        mine = {test_id: o for test_id, o in run.results.items() if test_id.startswith(f"{path}::")}
        return {test_id.split("::", 1)[1]: o.outcome == "passed" for test_id, o in mine.items()} or None

    async def _run_on_copy(
        self, changes: Sequence[FileChange], test_ids: list[str], seconds: float
    ) -> TestRun | None:
        """`test_ids` run within `seconds` on a clean copy of its own (the baseline plus `changes`), removed
        after; None when the run could not start or ran out of time."""
        root = await asyncio.to_thread(add_clean_copy, self.shadow, list(changes))
        try:
            run = await self.runner.run(test_ids, root=root, seconds=seconds)
        except TestRunError:
            return None
        finally:
            await asyncio.shield(asyncio.to_thread(remove_clean_copy, self.shadow, root))
        return None if run.timed_out else run

    async def accept(self, changes: Sequence[FileChange]) -> None:
        """Make `changes`, judged and accepted by `judge`, what the shadow holds (over the baseline) and the
        proposal the user receives."""
        await asyncio.to_thread(put_changes, self.shadow, list(changes))
        self.proposal = list(changes)

    async def _judge_changes(
        self, changes: list[FileChange], alone: bool
    ) -> tuple[GateVerdict, list[FileChange]]:
        proposed = await asyncio.to_thread(proposal_changes, changes, root=self.shadow.root)
        if not proposed:
            scratch = ", ".join(change.path for change in changes[:5])
            reason = f"only new files that nothing imports were added ({scratch}): edit the code under test"
            return GateVerdict(False, (reason,)), proposed
        if not self.allow_test_edits:
            reasons = tamper_reasons(proposed, is_test_path)
            if reasons:
                return GateVerdict(False, tuple(reasons)), proposed
        copy = make_clean_copy if alone else add_clean_copy
        root = await asyncio.to_thread(copy, self.shadow, proposed)
        try:
            scope = [test_id for test_id in self.baseline.run_ids() if _module_exists(root, test_id)]
            run = await self.runner.run(scope, root=root) if scope else None
        except TestRunError as error:
            return GateVerdict(False, (f"the tests could not run: {error.message}",)), proposed
        finally:
            remove = remove_clean_copies if alone else functools.partial(remove_clean_copy, root=root)
            await asyncio.shield(asyncio.to_thread(remove, self.shadow))
        if run is None:
            return GateVerdict(False, ("the target tests' modules no longer exist: restore them",)), proposed
        return self._judge(run), proposed

    def _judge(self, run: TestRun) -> GateVerdict:
        if run.timed_out:
            after = f" after {self.runner.timeout:g}s"
            hung = f" while running {run.hung_test}" if run.hung_test else ""
            return GateVerdict(
                False,
                (
                    f"the test run timed out{after}{hung} — make sure the code terminates "
                    "(no endless loop, no blocking wait) and submit again",
                ),
            )
        reasons, still, evidence = self._targets(run)
        newly = self._regressions(run, still, reasons)
        evidence += [failure_evidence(run.results[tid]) for tid in newly[:2] if tid in run.results]
        inputs = [failing_call(o) for t in still for o in target_outcomes(run, t)[:3] if o.failing]
        return GateVerdict(
            not reasons,
            tuple(reasons),
            tuple(newly),
            tuple(still),
            tuple(text for text in evidence if text),
            inputs=tuple(text for text in inputs if text) if self.failing_inputs else (),
        )

    def _targets(self, run: TestRun) -> tuple[list[str], list[str], list[str]]:
        """Reasons, still-failing targets and their evidence."""
        reasons: list[str] = []
        still: list[str] = []
        evidence: list[str] = []
        for target in self.baseline.target_ids:
            outcomes = target_outcomes(run, target)
            bad = [outcome for outcome in outcomes if outcome.outcome != "passed"]
            if not outcomes:
                still.append(target)
                reasons.append(f"{target} did not run — was it renamed or deleted? It must run and pass")
            elif bad:
                still.append(target)
                worst = next((outcome for outcome in bad if outcome.failing), bad[0])
                reasons.append(f"{worst.test_id} still {_verb(worst)}{_detail(worst)}")
                evidence.append(failure_evidence(worst))
        return reasons, still, evidence

    def _regressions(self, run: TestRun, still: list[str], reasons: list[str]) -> list[str]:
        """Tests that passed in the baseline and do not now (their reasons added to `reasons`)."""
        newly: list[str] = []
        for test_id in sorted(self.baseline.passing):
            if any(matches(test_id, target) for target in self.baseline.target_ids) and test_id in still:
                continue
            outcome = run.results.get(test_id)
            if outcome is None:
                if not self.allow_test_edits:
                    newly.append(test_id)
                    if len(newly) <= MAX_LISTED:
                        reasons.append(f"{test_id} passed before this change and no longer runs")
            elif outcome.outcome != "passed":
                newly.append(test_id)
                if len(newly) <= MAX_LISTED:
                    reasons.append(
                        f"{test_id} passed before this change and now {_verb(outcome)}{_detail(outcome)}"
                        " — the fix must keep it passing"
                    )
        if len(newly) > MAX_LISTED:
            reasons.append(f"and {len(newly) - MAX_LISTED} more test(s) that passed before now fail")
        return newly


def put_changes(shadow: ShadowWorkspace, changes: list[FileChange]) -> None:
    """Make the shadow hold the baseline plus exactly `changes` (what the loop changed besides is undone)."""
    wanted = {change.path for change in changes}
    undo = [FileChange(c.path, c.new_text, c.old_text) for c in shadow.changes() if c.path not in wanted]
    for change in [*undo, *changes]:
        path = shadow.root / check_relpath(change.path)
        if change.new_text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(change.new_text.encode("utf-8", "surrogateescape"))


def failure_evidence(outcome: TestOutcome, max_lines: int = 8) -> str:
    """How one test failed in pytest's words: its `E` lines (expected vs actual), else its message."""
    lines = [line[1:].strip() for line in outcome.traceback.splitlines() if line.startswith("E ")]
    lines = [line for line in lines if line][:max_lines] or [outcome.message.strip()[:300]]
    where = f" (at {outcome.location})" if outcome.location else ""
    body = "\n".join(f"    {line[:200]}" for line in lines if line)
    return f"{outcome.test_id}{where}:\n{body}" if body else ""


def failing_call(outcome: TestOutcome) -> str:
    """A failing test's call (arguments, failing line, expected vs actual) headed by its id; "" if none."""
    lines = failing_input_lines(outcome.inputs, "    ")
    return "\n".join([f"{outcome.test_id}:", *lines]) if lines else ""


def _module_exists(root: Path, test_id: str) -> bool:
    return (root / test_id.split("::", 1)[0]).exists()


def _verb(outcome: TestOutcome) -> str:
    return {"failed": "fails", "error": "errors", "skipped": "is skipped", "xfailed": "is xfailed"}.get(
        outcome.outcome, outcome.outcome
    )


def _detail(outcome: TestOutcome) -> str:
    message = outcome.message.strip().splitlines()[0][:300] if outcome.message.strip() else ""
    where = f" at {outcome.location}" if outcome.location else ""
    return f": {message}{where}" if message else where
