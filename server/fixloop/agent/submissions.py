"""Submits and the gate: each one judged and counted; a rejection teaches (expected vs actual, the change
judged, the fixes tried before) and the same rejected change coming back, after an undo say, is caught."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fixloop.agent import prompts
from fixloop.agent.candidates import describe_changes, fix_key
from fixloop.agent.run_state import GateAnswer, LoopLimits, LoopOutcome, Spent, Step
from fixloop.agent.tried import TriedFixes
from fixloop.events import Event, Notice, Verdict
from fixloop.result import FileChange
from fixloop.shadow import unified_diff
from fixloop.tools.base import ToolResult

USER_REJECTED = "the user rejected exactly this fix: the tests pass with it, but find a different one"


class Submissions:
    """The loop's side of the verification gate."""

    def __init__(
        self,
        verify: Callable[[str], Awaitable[GateAnswer]],
        spent: Spent,
        limits: LoopLimits,
        emit: Callable[[Event], None],
        tried: TriedFixes,
        step: Callable[[], int],
    ) -> None:
        self.verify = verify
        self.spent = spent
        self.limits = limits
        self.emit = emit
        self.tried = tried
        self.step = step

    async def check(self, summary: str, notice: str) -> GateAnswer:
        """One attempt at the verification gate, counted and reported."""
        self.spent.attempts += 1
        self.emit(Notice(notice, self.step(), "verify"))
        verdict = await self.verify(summary)
        changes = tuple(getattr(verdict, "changes", ()) or ())
        if verdict.accepted and self.tried.excluded(fix_key(changes)):
            verdict = Refused((USER_REJECTED,), changes)
        self.emit(Verdict(verdict.accepted, tuple(verdict.reasons), self.spent.attempts, self.step()))
        return verdict

    async def submit(self, summary: str) -> tuple[Step, ToolResult]:
        """Accepted ends the run; rejected goes back to the model, explained, while attempts last."""
        verdict = await self.check(summary, "verifying the fix in the shadow copy")
        if verdict.accepted:
            fixed = self.spent.outcome("fixed", summary.strip() or "fixed")
            return Step(finished=fixed), ToolResult("accepted: the fix is verified")
        reasons = tuple(verdict.reasons)
        tried_before = self.tried.lines()
        again = self._remember(verdict)
        teach = self.limits.teach
        text = prompts.rejection_text(
            reasons,
            self.spent.attempts,
            self.limits.attempts,
            evidence=_evidence(verdict) if teach else (),
            diff=_diff(verdict) if teach else "",
            tried=tried_before if teach else (),
            again=again,
        )
        if self.spent.attempts < self.limits.attempts:
            return Step(rejected=reasons, repeated=again), ToolResult(text, is_error=True)
        not_fixed = self.spent.outcome("not_fixed", "not fixed: " + "; ".join(reasons), reasons)
        return Step(finished=not_fixed), ToolResult(text, is_error=True)

    async def final(self, why: str, reasons: Sequence[str]) -> LoopOutcome:
        """The run is ending without an accepted submit; a change already in the shadow that the gate
        accepts is still a verified fix (small models often fix the bug and then never call submit)."""
        if self.spent.attempts < self.limits.attempts:
            verdict = await self.check("", f"{why}; checking the changes made so far")
            if verdict.accepted:
                return self.spent.outcome("fixed", f"verified fix (the model did not submit; {why})")
        return self.spent.outcome("not_fixed", f"not fixed: {why}", reasons)

    def _remember(self, verdict: GateAnswer) -> bool:
        """Record a rejected change set; True when it had been rejected before."""
        changes = tuple(getattr(verdict, "changes", ()) or ())
        key = fix_key(changes)
        again = self.tried.get(key) is not None
        reason = verdict.reasons[0] if verdict.reasons else "rejected"
        self.tried.add(key, describe_changes(changes), reason)
        return again


@dataclass(frozen=True)
class Refused:
    """A verdict of the loop's own: a fix the tests accept that must not be proposed."""

    reasons: tuple[str, ...]
    changes: tuple[FileChange, ...]
    accepted: bool = False
    evidence: tuple[str, ...] = ()


def _evidence(verdict: GateAnswer) -> tuple[str, ...]:
    return tuple(getattr(verdict, "evidence", ()) or ())


def _diff(verdict: GateAnswer) -> str:
    changes = list(getattr(verdict, "changes", ()) or ())
    return unified_diff(changes) if changes else ""
