"""The gate: judges one submit (tamper guard first, then the tests) and says why it refuses.

The tests run on a clean copy holding the baseline plus the proposed changes only — exactly what the user
would receive — never in the shadow with whatever else the run left there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from fixloop.errors import TestRunError
from fixloop.project import is_test_path
from fixloop.pytest_runner import TestOutcome, TestRun, TestRunner
from fixloop.result import FileChange
from fixloop.shadow import ShadowWorkspace
from fixloop.shadow.clean_copy import make_clean_copy, remove_clean_copies
from fixloop.verify.baseline import Baseline, matches, target_outcomes
from fixloop.verify.proposal import proposal_changes
from fixloop.verify.tamper import tamper_reasons

MAX_LISTED = 10  # newly failing tests named one by one before "and N more"


@dataclass(frozen=True)
class GateVerdict:
    """The gate's answer to one submit; `reasons` are written for the model to act on."""

    accepted: bool
    reasons: tuple[str, ...]
    newly_failing: tuple[str, ...] = ()
    still_failing: tuple[str, ...] = ()


class VerificationGate:
    """Checks a submitted fix: tamper guard first (cheap), then the tests on a clean copy. `proposal` is the
    last change set judged (what the user receives when it was accepted)."""

    def __init__(
        self,
        shadow: ShadowWorkspace,
        runner: TestRunner,
        baseline: Baseline,
        *,
        allow_test_edits: bool = False,
    ) -> None:
        self.shadow = shadow
        self.runner = runner
        self.baseline = baseline
        self.allow_test_edits = allow_test_edits
        self.proposal: list[FileChange] = []

    async def check(self) -> GateVerdict:
        changes = await asyncio.to_thread(self.shadow.changes)
        if not changes:
            return GateVerdict(False, ("nothing was changed: edit the code under test, then submit",))
        proposed = await asyncio.to_thread(proposal_changes, changes, root=self.shadow.root)
        self.proposal = proposed
        if not proposed:
            scratch = ", ".join(change.path for change in changes[:5])
            return GateVerdict(
                False,
                (f"only new files that nothing imports were added ({scratch}): edit the code under test",),
            )
        if not self.allow_test_edits:
            reasons = tamper_reasons(proposed, is_test_path)
            if reasons:
                return GateVerdict(False, tuple(reasons))
        root = await asyncio.to_thread(make_clean_copy, self.shadow, proposed)
        try:
            scope = [test_id for test_id in self.baseline.run_ids() if _module_exists(root, test_id)]
            run = await self.runner.run(scope, root=root) if scope else None
        except TestRunError as error:
            return GateVerdict(False, (f"the tests could not run: {error.message}",))
        finally:
            await asyncio.shield(asyncio.to_thread(remove_clean_copies, self.shadow))
        if run is None:
            return GateVerdict(False, ("the target tests' modules no longer exist: restore them",))
        return self._judge(run)

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
        reasons: list[str] = []
        still: list[str] = []
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
        return GateVerdict(not reasons, tuple(reasons), tuple(newly), tuple(still))


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



