"""What a run has and has spent: its limits, how a turn came out, how it ended, the running totals."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from fixloop.events import Usage
from fixloop.model.replies import ModelReply
from fixloop.result import FileChange

LoopStatus = Literal["fixed", "not_fixed"]


class GateAnswer(Protocol):
    """The gate's verdict as the loop reads it: what it judged, and for a rejection why, in pytest's words."""

    accepted: bool
    reasons: tuple[str, ...]
    evidence: tuple[str, ...]
    changes: tuple[FileChange, ...]


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
    """How the loop ended, with what it cost."""

    status: LoopStatus
    summary: str
    steps: int = 0
    attempts: int = 0
    reasons: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False  # some turn's usage was counted by fixloop (a cut stream, no usage sent)


@dataclass(frozen=True)
class Step:
    """What one turn came to: the run's end, the gate's reasons for a rejected submit, or a stuck call."""

    finished: LoopOutcome | None = None
    rejected: tuple[str, ...] = ()
    stuck: str | None = None
    repeated: bool = False  # a call (or a rejected change) came again: a reason to sample


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
    tokens_estimated: bool = False
    started: float = field(default_factory=time.monotonic)

    def exhausted(self) -> str | None:
        """The first budget used up, said for the user; None while every budget lasts."""
        limits = self.limits
        if self.steps >= limits.max_steps:
            return f"step budget used up ({limits.max_steps} model turns)"
        if self.prompt_tokens + self.completion_tokens >= limits.max_tokens:
            return f"token budget used up ({limits.max_tokens} tokens)"
        if time.monotonic() - self.started >= limits.max_seconds:
            return f"time budget used up ({limits.max_seconds:g} s)"
        return None

    def count(self, reply: ModelReply) -> Usage:
        """Add one turn's tokens; the Usage event that reports them."""
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.tokens_estimated |= reply.estimated
        totals = (self.prompt_tokens, self.completion_tokens)
        return Usage(
            reply.prompt_tokens,
            reply.completion_tokens,
            *totals,
            self.steps,
            reply.estimated,
            reply.unused_tokens,
        )

    def outcome(self, status: LoopStatus, summary: str, reasons: Sequence[str] = ()) -> LoopOutcome:
        tokens = (self.prompt_tokens, self.completion_tokens, self.tokens_estimated)
        return LoopOutcome(status, summary, self.steps, self.attempts, tuple(reasons), *tokens)
