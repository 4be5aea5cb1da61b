"""FixResult: what a fix run returns to every face; `to_json()` is the public contract (docs/contract.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FixStatus = Literal["fixed", "not_fixed", "cancelled", "error"]


@dataclass(frozen=True)
class FileChange:
    """One file's proposed change, paths relative to the project root ('/' separators)."""

    path: str
    old_text: str | None  # None: the file is new
    new_text: str | None  # None: the file is deleted


@dataclass(frozen=True)
class FixError:
    """Why a run ended in `status: "error"`: the error's kind (its class name) and a one-line message."""

    kind: str
    message: str


@dataclass(frozen=True)
class FixResult:
    """One run's outcome. Immutable: a face that learns more (the edit was applied) makes a new one."""

    run_id: str
    status: FixStatus
    test_ids: tuple[str, ...]
    summary: str = ""
    diff: str = ""
    changes: tuple[FileChange, ...] = ()
    applied: bool | None = None
    steps: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False  # some turns' usage was counted by fixloop, not reported by the server
    prompt_processed: int | None = None  # prompt tokens the server read anew (None: no request said)
    prompt_cached: int | None = None  # prompt tokens the server found in its prompt cache (None: unsaid)
    model_requests: int = 0  # requests answered (a batch of candidates is one; text completions too)
    candidates_drawn: int = 0  # candidates the sampling rounds drew, re-asks included
    seconds: float = 0.0
    model_seconds: float = 0.0  # waiting for the model (retries included)
    test_seconds: float = 0.0  # running pytest (baseline, run_tests, the gate)
    transcript: str | None = None
    reasons: tuple[str, ...] = ()  # the gate's last reasons when the fix was not verified
    failure_reason: str | None = None  # why a verified fix was not applied
    error: FixError | None = None  # set when status is "error"
    rounds_tried: tuple[str, ...] = ()  # the kinds of round the run moved through (a bench figure, not JSON)
    # every verified fix of the run, best first (the proposal is the first): diff, origin, evidence
    pool: tuple[dict[str, Any], ...] = ()

    @property
    def files(self) -> list[str]:
        return [change.path for change in self.changes]

    def to_json(self) -> dict[str, Any]:
        """The FixResult object of the public contract (docs/contract.md, "FixResult")."""
        return {
            "runId": self.run_id,
            "status": self.status,
            "testIds": list(self.test_ids),
            "summary": self.summary,
            "diff": self.diff,
            "files": self.files,
            "applied": self.applied,
            "steps": self.steps,
            "attempts": self.attempts,
            "usage": {
                "promptTokens": self.prompt_tokens,
                "completionTokens": self.completion_tokens,
                "estimated": self.tokens_estimated,
                "promptProcessed": self.prompt_processed,
                "promptCached": self.prompt_cached,
                "requests": self.model_requests,
                "candidatesDrawn": self.candidates_drawn,
            },
            "seconds": round(self.seconds, 3),
            "modelSeconds": round(self.model_seconds, 3),
            "testSeconds": round(self.test_seconds, 3),
            "transcript": self.transcript,
            "reasons": list(self.reasons),
            "failureReason": self.failure_reason,
            "error": {"kind": self.error.kind, "message": self.error.message} if self.error else None,
            "pool": [dict(entry) for entry in self.pool],
        }
