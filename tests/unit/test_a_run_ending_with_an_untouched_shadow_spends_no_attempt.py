"""A run that ends without a submit checks what its shadow holds (the model may have fixed the bug and never
submitted); a shadow a round put back to the baseline holds nothing, and that is no attempt: no rejected
verdict is told, none is counted."""

from __future__ import annotations

from fixloop.agent.run_state import LoopLimits, Spent
from fixloop.agent.submissions import Submissions
from fixloop.agent.tried import TriedFixes
from fixloop.events import Notice, Verdict
from fixloop.result import FileChange
from fixloop.verify.port import NOTHING_CHANGED, GateVerdict


class ShadowGate:
    """The gate's port over a shadow that holds `changes` (none: the baseline)."""

    def __init__(self, changes: tuple[FileChange, ...]) -> None:
        self.changes, self.proposal = changes, []

    async def check(self) -> GateVerdict:
        if not self.changes:
            return GateVerdict(False, (NOTHING_CHANGED,), unchanged=True)
        return GateVerdict(True, (), changes=self.changes)


def submissions(gate: ShadowGate, told: list) -> tuple[Submissions, Spent]:
    limits = LoopLimits()
    spent = Spent(limits)
    return Submissions(gate, spent, limits, told.append, TriedFixes()), spent  # type: ignore[arg-type]


async def test_an_untouched_shadow_at_the_end_is_no_attempt_and_no_verdict() -> None:
    told: list = []
    ends, spent = submissions(ShadowGate(()), told)

    end = await ends.final("the search's time after its first verified fix is up", ("time",))

    assert end.status == "not_fixed"
    assert spent.attempts == 0
    assert not [event for event in told if isinstance(event, Verdict | Notice)]


async def test_changes_left_in_the_shadow_at_the_end_are_checked_and_counted() -> None:
    told: list = []
    ends, spent = submissions(ShadowGate((FileChange("m.py", "a = 1\n", "a = 2\n"),)), told)

    end = await ends.final("time budget used up (300 s)", ("time",))

    assert end.status == "fixed" and "the model did not submit" in end.summary
    assert spent.attempts == 1
    assert [event.accepted for event in told if isinstance(event, Verdict)] == [True]
    assert any(isinstance(e, Notice) and "checked the changes made so far" in e.text for e in told)
