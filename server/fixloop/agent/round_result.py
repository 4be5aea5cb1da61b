"""How a sampling round went: its winner, its candidates and their verdicts, and its figures (what became of
each candidate: unchanged, a duplicate, tried before, invalid, judged) and which kind of round it was."""

from __future__ import annotations

from dataclasses import dataclass, field

from fixloop.agent.candidates import Candidate
from fixloop.model.replies import ModelReply
from fixloop.verify.port import GateVerdict

FATES = ("unchanged", "duplicates", "tried before", "invalid", "judged")


@dataclass(frozen=True)
class RoundFigures:
    """What became of a round's candidates: drawn (re-asks included), asked again, distinct change sets,
    per fate (`FATES`) how many, and the kind of round ("candidates", or "lines": a line-level round's
    answers)."""

    drawn: int = 0
    asked_again: int = 0
    distinct: int = 0
    fates: tuple[tuple[str, int], ...] = ()
    kind: str = "candidates"

    def count(self, fate: str) -> int:
        return dict(self.fates).get(fate, 0)

    def describe(self) -> str:
        again = f" ({self.asked_again} asked again)" if self.asked_again else ""
        fates = ", ".join(f"{fate} {self.count(fate)}" for fate in FATES)
        return f"{self.drawn} candidate(s) drawn{again}, {self.distinct} distinct: {fates}"


@dataclass
class RoundResult:
    """How a round went: the verified winner (if any), every candidate, and the verdicts of those judged."""

    winner: Candidate | None = None
    candidates: list[Candidate] = field(default_factory=list)
    verdicts: dict[int, GateVerdict] = field(default_factory=dict)  # candidate number -> the gate's verdict
    first_reply: ModelReply | None = None  # the best guess's (its re-ask's, when it was asked again)
    fates: list[str] = field(default_factory=list)  # one of FATES per candidate, in order
    asked_again: int = 0

    @property
    def first(self) -> Candidate | None:
        """The best guess: the last candidate of the first draw (its re-ask's, when it was asked again)."""
        if not self.candidates:
            return None
        number = self.candidates[0].number
        return next(c for c in reversed(self.candidates) if c.number == number)

    @property
    def figures(self) -> RoundFigures:
        distinct = {candidate.key for candidate in self.candidates if candidate.changes}
        fates = tuple((fate, self.fates.count(fate)) for fate in FATES)
        return RoundFigures(len(self.candidates), self.asked_again, len(distinct), fates)
