"""FixResult: what a fix run returns to every face (the public contract's JSON shape)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileChange:
    """One file's proposed change, paths relative to the project root ('/' separators)."""

    path: str
    old_text: str | None  # None: the file is new
    new_text: str | None  # None: the file is deleted


@dataclass
class FixResult:
    run_id: str
    status: str  # fixed | not_fixed | cancelled | error
    test_ids: list[str]
    summary: str = ""
    diff: str = ""
    changes: list[FileChange] = field(default_factory=list)
    applied: bool | None = None
    steps: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0  # waiting for the model (retries included)
    test_seconds: float = 0.0  # running pytest (baseline, run_tests, the gate)
    transcript: str | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return [change.path for change in self.changes]

    def to_json(self) -> dict[str, Any]:
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
            "usage": {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens},
            "seconds": round(self.seconds, 3),
            "modelSeconds": round(self.model_seconds, 3),
            "testSeconds": round(self.test_seconds, 3),
            "transcript": self.transcript,
            "reasons": list(self.reasons),
        }
