"""Where a request's prompt comes from: each message's size by its role and origin (system prompt, task,
warm start, file text, observation, history, a text completion's lines), for the transcript and
benchmarks/prompt_breakdown.py.

Sizes are estimates, characters / 4, not the model's tokenizer: they say which part of a prompt grows,
while the server's own counts (sent, processed, cached) say what it cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fixloop.model.replies import COMPLETION_ROLE

CHARS_PER_TOKEN = 4
ORIGINS = ("system", "task", "warm_start", "file_text", "observation", "history", "tools", "line_completion")
# read_file's header: "calc.py (lines 1-40 of 120)", perhaps after "Observation: " or "[read_file] "
FILE_TEXT = re.compile(r"^(?:Observation: )?(?:\[read_file\] )?\S+ \(lines \d+-\d+ of \d+\)$", re.MULTILINE)


@dataclass(frozen=True)
class MessagePart:
    """A message, or a part of one (the task holds the warm start), with its estimated size."""

    role: str
    origin: str
    tokens: int


def estimated_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)  # rounded up: a short message is not free


def message_text(message: dict[str, Any]) -> str:
    """What a message puts in the prompt: its content and its tool calls."""
    text = str(message.get("content") or "")
    calls = message.get("tool_calls")
    return text + (json.dumps(calls, ensure_ascii=False) if calls else "")


def prompt_parts(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None, warm_start: str = ""
) -> list[MessagePart]:
    """The request's messages by origin, then its tool schemas ("tools"). The first user message is the
    task, the warm start (`warm_start`, its text) cut out of it; the model's own replies are the history;
    later user and tool messages are observations, file text where they show a file read_file read."""
    parts: list[MessagePart] = []
    task_seen = False
    for message in messages:
        role = str(message.get("role") or "")
        text = message_text(message)
        if role == "user" and not task_seen:
            task_seen = True
            parts += _task_parts(text, warm_start.strip())
            continue
        parts.append(MessagePart(role, _origin(role, text), estimated_tokens(text)))
    if tools:
        parts.append(MessagePart("tools", "tools", estimated_tokens(json.dumps(list(tools)))))
    return parts


def _origin(role: str, text: str) -> str:
    if role == "system":
        return "system"
    if role == COMPLETION_ROLE:
        return "line_completion"  # naturalness: the file's lines above a changed line
    if role == "assistant":
        return "history"
    return "file_text" if FILE_TEXT.search(text) else "observation"


def _task_parts(text: str, warm_start: str) -> list[MessagePart]:
    """The task message: the warm start it shows, and the rest (the failing tests, the ask)."""
    if not warm_start or warm_start not in text:
        return [MessagePart("user", "task", estimated_tokens(text))]
    rest = text.replace(warm_start, "", 1)
    return [
        MessagePart("user", "warm_start", estimated_tokens(warm_start)),
        MessagePart("user", "task", estimated_tokens(rest)),
    ]


def sizes_by_origin(parts: Sequence[MessagePart]) -> dict[str, int]:
    """The estimated tokens of each origin, every origin named (0 where none)."""
    sizes = dict.fromkeys(ORIGINS, 0)
    for part in parts:
        sizes[part.origin] = sizes.get(part.origin, 0) + part.tokens
    return sizes
