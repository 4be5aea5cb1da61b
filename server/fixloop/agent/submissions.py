"""Submits and the gate: each one judged and counted; a rejection teaches (expected vs actual, the change
judged, the fixes tried before) and the same rejected change coming back, after an undo say, is caught."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fixloop.agent import prompts
from fixloop.agent.candidates import describe_changes, fix_key
from fixloop.agent.run_state import LoopLimits, RunEnds, Spent, Step
from fixloop.agent.tried import TriedFixes
from fixloop.events import Event, Notice, Verdict
from fixloop.shadow import unified_diff
from fixloop.tools.base import ToolResult
from fixloop.verify.port import Gate, GateVerdict

USER_REJECTED = "the user rejected exactly this fix: the tests pass with it, but find a different one"


class Submissions:
    """The loop's side of the verification gate: every attempt at it is counted here."""

    def __init__(
        self,
        gate: Gate,
        spent: Spent,
        limits: LoopLimits,
        emit: Callable[[Event], None],
        tried: TriedFixes,
    ) -> None:
        self.gate = gate
        self.spent = spent
        self.limits = limits
        self.emit = emit
        self.tried = tried

    async def check(self, notice: str) -> GateVerdict:
        """One attempt at the verification gate, counted and reported; a fix the user rejected is refused
        whatever the tests say."""
        self.emit(Notice(notice, self.spent.steps, "verify"))
        return self._counted(await self.gate.check())

    def _counted(self, verdict: GateVerdict) -> GateVerdict:
        self.spent.attempts += 1
        if verdict.accepted and self.tried.excluded(fix_key(verdict.changes)):
            verdict = GateVerdict(False, (USER_REJECTED,), changes=verdict.changes)
        self.emit(Verdict(verdict.accepted, verdict.reasons, self.spent.attempts, self.spent.steps))
        return verdict

    async def submit(self, summary: str) -> tuple[Step, ToolResult]:
        """Accepted ends the run; rejected goes back to the model, explained, while attempts last."""
        verdict = await self.check("verifying the fix in the shadow copy")
        if verdict.accepted:
            fixed = RunEnds("fixed", summary.strip() or "fixed")
            return Step(finished=fixed), ToolResult("accepted: the fix is verified")
        reasons = verdict.reasons
        tried_before = self.tried.lines()
        again = self._remember(verdict)
        teach = self.limits.teach
        text = prompts.rejection_text(
            reasons,
            self.spent.attempts,
            self.limits.attempts,
            evidence=verdict.evidence if teach else (),
            diff=unified_diff(list(verdict.changes)) if teach and verdict.changes else "",
            tried=tried_before if teach else (),
            again=again,
            inputs=verdict.inputs if teach else (),
        )
        if self.spent.attempts < self.limits.attempts:
            return Step(rejected=reasons, repeated=again), ToolResult(text, is_error=True)
        not_fixed = RunEnds("not_fixed", "not fixed: " + "; ".join(reasons), reasons)
        return Step(finished=not_fixed), ToolResult(text, is_error=True)

    async def final(self, why: str, reasons: Sequence[str]) -> RunEnds:
        """The run is ending without an accepted submit; a change already in the shadow that the gate
        accepts is still a verified fix (small models often fix the bug and then never call submit). A shadow
        holding no change is no attempt: nothing is judged, counted or told."""
        if self.spent.attempts < self.limits.attempts:
            verdict = await self.gate.check()
            if verdict.unchanged:  # the shadow is the baseline (a round put it back)
                return RunEnds("not_fixed", f"not fixed: {why}", reasons)
            self.emit(Notice(f"{why}; checked the changes made so far", self.spent.steps, "verify"))
            if self._counted(verdict).accepted:
                return RunEnds("fixed", f"verified fix (the model did not submit; {why})")
        return RunEnds("not_fixed", f"not fixed: {why}", reasons)

    def verified_round(self) -> None:
        """A round found a verified fix (the gate judged and accepted it): one attempt, and its verdict."""
        self.spent.attempts += 1
        self.emit(Verdict(True, (), self.spent.attempts, self.spent.steps))

    def _remember(self, verdict: GateVerdict) -> bool:
        """Record a rejected change set; True when it had been rejected before."""
        key = fix_key(verdict.changes)
        again = self.tried.get(key) is not None
        reason = verdict.reasons[0] if verdict.reasons else "rejected"
        self.tried.add(key, describe_changes(verdict.changes), reason)
        return again
