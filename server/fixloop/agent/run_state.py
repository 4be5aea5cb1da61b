"""What a run has and has spent: its limits, how a turn came out, how it ended, the running totals.

The loop's control flow is two exception families, caught in one place (`ReActLoop.run` and its step):
`TurnEnds` ends a turn and the run goes on (with messages for the model, perhaps a round of candidates),
`RunEnds` ends the run; the `LoopOutcome` is built from it there and nowhere else.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fixloop.events import Usage
from fixloop.model.replies import ModelReply

LoopStatus = Literal["fixed", "not_fixed"]
SampleWhy = Literal[
    "start", "rejected", "repeated", "silent", "stuck"
]  # why a round of candidates may run now


class TurnEnds(Exception):  # control flow, not an error
    """The turn is over and the run goes on: `messages` join the conversation (a nudge, say), then a round
    of candidates runs when `sample` names a reason for one; `reasons` are a rejected submit's."""

    def __init__(
        self,
        messages: Sequence[dict[str, Any]] = (),
        *,
        sample: SampleWhy | None = None,
        reasons: tuple[str, ...] = (),
    ) -> None:
        super().__init__(sample or "turn ends")
        self.messages = tuple(messages)
        self.sample = sample
        self.reasons = reasons


class RunEnds(Exception):  # control flow, not an error
    """The run is over: how it ended, in the user's words (`ReActLoop.run` turns it into the outcome)."""

    def __init__(self, status: LoopStatus, summary: str, reasons: Sequence[str] = ()) -> None:
        super().__init__(summary)
        self.status: LoopStatus = status
        self.summary = summary
        self.reasons = tuple(reasons)


@dataclass(frozen=True)
class LoopLimits:
    """Budgets of one run; the first one reached ends it as not_fixed."""

    max_steps: int = 30
    attempts: int = 3
    max_tokens: int = 400_000
    max_seconds: float = 1800.0
    max_refusals: int = 2
    stuck_nudge_at: int = 2
    stuck_stop_at: int = 3
    context_chars: int = 48_000
    echo_cuts: int = 2  # echoing replies cut in a row; the next one is let through
    silent_turns: int = 2  # replies without a call in a row that count as stuck (a reason to sample)
    teach: bool = True  # rejections show expected vs actual, the diff and the fixes tried (else reasons)


@dataclass(frozen=True)
class LoopOutcome:
    """How the loop ended."""

    status: LoopStatus
    summary: str
    steps: int = 0
    attempts: int = 0
    reasons: tuple[str, ...] = ()
    rounds_tried: tuple[str, ...] = ()  # the kinds of round the run moved through (agent/round_kinds.py)


@dataclass(frozen=True)
class Step:
    """What one turn's calls came to: the run's end, the gate's reasons for a rejected submit, or a stuck
    call (raised once every call of the turn has its observation)."""

    finished: RunEnds | None = None
    rejected: tuple[str, ...] = ()
    stuck: str | None = None
    repeated: bool = False  # a call (or a rejected change) came again: a reason to sample


CUTOFF_SAID = "the search's time after its first verified fix is up"


@dataclass
class Spent:
    """What the run has used so far, held against its limits."""

    limits: LoopLimits
    steps: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refusals: int = 0
    echo_cuts: int = 0  # in a row
    silent_turns: int = 0  # replies without a tool call, in a row
    started: float = field(default_factory=time.monotonic)
    cutoff: float | None = None  # time.monotonic() when the search stops, once it holds a verified fix
    cutoff_said: str = CUTOFF_SAID  # why it stops there, for the user

    @property
    def deadline(self) -> float:
        """time.monotonic() when the time budget (or the search's time after its first fix) is used up
        (a round under way stops there)."""
        end = self.started + self.limits.max_seconds
        return end if self.cutoff is None else min(end, self.cutoff)

    def stop_at(self, when: float, said: str = CUTOFF_SAID) -> None:
        """The search stops at `when` (time.monotonic()), for the reason `said` tells the user."""
        self.cutoff, self.cutoff_said = when, said

    def exhausted(self) -> str | None:
        """The first budget used up, said for the user; None while every budget lasts."""
        limits = self.limits
        if self.steps >= limits.max_steps:
            return f"step budget used up ({limits.max_steps} model turns)"
        if self.prompt_tokens + self.completion_tokens >= limits.max_tokens:
            return f"token budget used up ({limits.max_tokens} tokens)"
        if time.monotonic() - self.started >= limits.max_seconds:
            return f"time budget used up ({limits.max_seconds:g} s)"
        if self.cutoff is not None and time.monotonic() >= self.cutoff:
            return self.cutoff_said
        return None

    def count(self, reply: ModelReply) -> Usage:
        """Add one turn's tokens; the Usage event that reports them."""
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        totals = (self.prompt_tokens, self.completion_tokens)
        return Usage(
            reply.prompt_tokens,
            reply.completion_tokens,
            *totals,
            self.steps,
            reply.estimated,
            reply.unused_tokens,
        )

    def outcome(self, end: RunEnds, rounds_tried: Sequence[str] | None = None) -> LoopOutcome:
        """How the run ended (built here only, from the `RunEnds` the loop caught; what it cost is the model
        client's tally); a run that moves through kinds of round (`rounds_tried` not None) and is not fixed
        says which it tried."""
        summary = end.summary
        if rounds_tried is not None and end.status != "fixed" and "round tried" not in summary:
            summary += f" (rounds tried: {', '.join(rounds_tried) or 'none'})"
        tried = tuple(rounds_tried or ())
        return LoopOutcome(end.status, summary, self.steps, self.attempts, end.reasons, tried)
