"""Each model request of a run as one transcript record: the server's counts (prompt tokens sent, processed,
cached; completion tokens), the seconds it took, and where its prompt comes from (agent/prompt_parts.py).

benchmarks/prompt_breakdown.py prints these records as a table."""

from __future__ import annotations

from fixloop.agent.prompt_parts import CHARS_PER_TOKEN, prompt_parts, sizes_by_origin
from fixloop.model.usage_tally import AnsweredRequest
from fixloop.transcript import Transcript


class RequestLog:
    """Writes a transcript record for each answered request (a ChatModel's `on_request`)."""

    def __init__(self, transcript: Transcript, warm_start: str = "") -> None:
        self.transcript = transcript
        self.warm_start = warm_start  # its text: the part of the task message that is the warm start
        self.requests = 0

    def __call__(self, request: AnsweredRequest) -> None:
        self.requests += 1
        parts = prompt_parts(request.messages, request.tools, self.warm_start)
        self.transcript.write(
            "request",
            number=self.requests,
            replies=len(request.replies),
            prompt_tokens=request.prompt_tokens,
            prompt_processed=request.prompt_processed,
            prompt_cached=request.prompt_cached,
            completion_tokens=request.completion_tokens,
            estimated=request.estimated,
            seconds=round(request.seconds, 3),
            chars_per_token=CHARS_PER_TOKEN,
            by_origin=sizes_by_origin(parts),
            messages=[[part.role, part.origin, part.tokens] for part in parts],
        )
