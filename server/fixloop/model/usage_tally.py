"""What a run's model requests cost, one by one and in all: prompt tokens sent, read anew and found in the
server's prompt cache, completion tokens, seconds (the run's figures in the result, transcript and bench)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fixloop.model.replies import ModelReply


@dataclass(frozen=True)
class AnsweredRequest:
    """One chat request that was answered: what it sent and its replies (a batch's prompt is counted with
    the first reply, as the client reads it), and the seconds it took, retries included."""

    messages: tuple[dict[str, Any], ...]
    tools: list[dict[str, Any]] | None
    replies: tuple[ModelReply, ...]
    seconds: float

    @property
    def prompt_tokens(self) -> int:
        return sum(reply.prompt_tokens for reply in self.replies)

    @property
    def prompt_processed(self) -> int | None:
        return self.replies[0].prompt_processed if self.replies else None

    @property
    def prompt_cached(self) -> int | None:
        return self.replies[0].prompt_cached if self.replies else None

    @property
    def completion_tokens(self) -> int:
        return sum(reply.completion_tokens for reply in self.replies)

    @property
    def estimated(self) -> bool:
        return any(reply.estimated for reply in self.replies)


@dataclass
class UsageTally:
    """Sums over a run's answered requests. `prompt_processed` and `prompt_cached` stay None until some
    request reports them: unknown is not the same as "all of the prompt" (or "none of it")."""

    requests: int = 0
    prompt_tokens: int = 0
    prompt_processed: int | None = None
    prompt_cached: int | None = None
    completion_tokens: int = 0
    seconds: float = 0.0
    estimated: bool = False  # some reply's usage was counted by fixloop (a cut stream, no usage sent)

    def add(self, request: AnsweredRequest) -> None:
        self.requests += 1
        self.prompt_tokens += request.prompt_tokens
        self.prompt_processed = _plus(self.prompt_processed, request.prompt_processed)
        self.prompt_cached = _plus(self.prompt_cached, request.prompt_cached)
        self.completion_tokens += request.completion_tokens
        self.seconds += request.seconds
        self.estimated |= request.estimated


def _plus(total: int | None, more: int | None) -> int | None:
    if more is None:
        return total
    return (total or 0) + more
