"""ModeRun: what one bench mode produced on a case, before the judge looks at it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModeRun:
    """What one mode produced on a copy of a case: the diff it proposes, whether it claims the diff fixes
    the case (verified by its own means), its figures, and the error that ended it, if any."""

    claimed: bool
    diff: str
    summary: str = ""
    steps: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    test_seconds: float = 0.0
    transcript: str | None = None
    error: str | None = None
    distinct: tuple[int, ...] = ()  # per sampling round: the distinct change sets drawn
    drawn: tuple[int, ...] = ()  # per sampling round: the candidates drawn (re-asks included)
    rounds_tried: str = ""  # the kinds of round a fixloop run moved through, comma-separated
    line_answers_invalid: int = 0  # of its line-level rounds' answers, those refused as invalid
    line_answers_drawn: int = 0  # its line-level rounds' answers drawn
    candidates_unchanged: int = 0  # of the candidates of all its rounds, copies back of the code unchanged
    candidates_drawn: int = 0  # the candidates of all its rounds (line answers and re-asks included)
    prompt_processed: int | None = None  # prompt tokens the server read anew (None: it did not say)
    prompt_cached: int | None = None  # prompt tokens it found in its prompt cache (None: it did not say)
    model_requests: int = 0  # chat requests answered
    origin: str = ""  # the round that found the proposed fix ("mutants": one-token search, no model)
