"""How a sampling round asks the chat model: what it needs of it, how long a batch's replies may be (near
the best guess's length), and the follow-ups of candidates that copied the code back grouped, the same
follow-up of several draws as one request with `n` (its prompt read once, its replies decoded together).

On llama.cpp's llama-server only the `n` replies of one request share a prompt: a request that lands on
another slot reads its whole prompt again, so different follow-ups are asked one after another there,
each on the slot that holds the round's prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fixloop.agent.draws import Draw
from fixloop.model.replies import ModelReply, StreamWatch
from fixloop.model.request_options import Sampling
from fixloop.tools.code_reply import code_blocks

MOST_TOKENS_FLOOR = 160  # a batched reply's cap is never below this


class Drawer(Protocol):
    """What a round needs of the chat model."""

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
        watch: StreamWatch | None = None,
        sampling: Sampling | None = None,
    ) -> ModelReply: ...

    async def complete_choices(
        self,
        messages: Sequence[dict[str, Any]],
        sampling: Sampling,
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
        watch: Callable[[], StreamWatch] | None = None,
    ) -> list[ModelReply]: ...


@dataclass(frozen=True)
class FollowUp:
    """A draw asked again: what it is shown, how it is sampled, and the copy back it answers."""

    draw: Draw
    sampling: Sampling
    copy: ModelReply


def grouped(follow_ups: Sequence[FollowUp], at_most: int) -> list[list[FollowUp]]:
    """The follow-ups with the same messages and temperature together (the copies of one request, copied
    back alike), in order of their first draw, at most `at_most` (a request's `n`; 0: any number) a group."""
    groups: dict[str, list[FollowUp]] = {}
    for follow_up in follow_ups:
        key = json.dumps([follow_up.draw.messages, follow_up.sampling.temperature], sort_keys=True)
        groups.setdefault(key, []).append(follow_up)
    chunks: list[list[FollowUp]] = []
    for group in groups.values():
        size = at_most or len(group)
        chunks += [group[start : start + size] for start in range(0, len(group), size)]
    return chunks


def reply_cap(first: ModelReply | None) -> int | None:
    """Tokens a batched reply may take: the best guess's answer (the same function, rewritten) and room to
    grow (three times a short answer, 300 tokens more than a long one), at least 160; None (the client's
    cap) when the best guess's length is unknown. A batch ends with its longest reply: on 2 cores one reply
    of 238 tokens that rewrote a whole module held four finished 32-token ones for 25 s."""
    if first is None or first.completion_tokens <= 0:
        return None
    tokens = first.completion_tokens
    return max(MOST_TOKENS_FLOOR, min(3 * tokens, tokens + 300))


def copy_shown(reply: str) -> str:
    """A copy back as its follow-up shows it: its code blocks, each under its path, as the prompt asked for
    them (however the reply fenced them), so that copies alike but for their fences are asked again in one
    request; the reply as it is when it has no code block."""
    blocks = code_blocks(reply)
    shown = [f"{block.path}\n```python\n{block.code.rstrip()}\n```" if block.path else "" for block in blocks]
    return "\n\n".join(shown) if blocks and all(shown) else reply
