"""One assistant turn as the client returns it, read from a completion object or from stream chunks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCallRequest:
    """A native tool call as the model sent it (arguments are the raw JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """One assistant turn."""

    content: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    refusal: str | None
    prompt_tokens: int
    completion_tokens: int


def reply_from_completion(response: Any) -> ModelReply:
    if not hasattr(response, "choices"):
        raise MalformedReply(f"a reply that is not a chat completion ({short_text(response)})")
    if not response.choices:
        raise MalformedReply("a chat completion with no choices")
    choice = response.choices[0] if response.choices else None
    message = choice.message if choice is not None else None
    calls = tuple(
        ToolCallRequest(id=call.id or f"call_{index}", name=call.function.name,
                        arguments=call.function.arguments or "")
        for index, call in enumerate((message.tool_calls if message else None) or [])
        if getattr(call, "function", None) is not None
    )
    usage = response.usage
    return ModelReply(
        content=(message.content if message else None) or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason if choice is not None else None,
        refusal=getattr(message, "refusal", None) if message else None,
        prompt_tokens=(usage.prompt_tokens if usage else 0) or 0,
        completion_tokens=(usage.completion_tokens if usage else 0) or 0,
    )


class StreamedReply:
    """A streamed turn as its chunks arrive: text, refusal, tool calls by index, finish reason, usage."""

    def __init__(self, on_delta: Callable[[str], None] | None) -> None:
        self.on_delta = on_delta
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.prompt_tokens = self.completion_tokens = 0
        self.answered = False  # a chunk with a choice came

    def add(self, chunk: Any) -> None:
        if getattr(chunk, "usage", None) is not None:
            self.prompt_tokens = chunk.usage.prompt_tokens or 0
            self.completion_tokens = chunk.usage.completion_tokens or 0
        for choice in getattr(chunk, "choices", None) or []:
            self.answered = True
            if choice.delta is not None:
                self._add_delta(choice.delta)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _add_delta(self, delta: Any) -> None:
        if delta.content:
            self.content.append(delta.content)
            if self.on_delta is not None:
                self.on_delta(delta.content)
        if getattr(delta, "refusal", None):
            self.refusal.append(delta.refusal)
        for call in delta.tool_calls or []:
            slot = self.calls.setdefault(call.index or 0, {"id": "", "name": "", "arguments": ""})
            if call.id:
                slot["id"] = call.id
            if call.function is not None:
                slot["name"] += call.function.name or ""
                slot["arguments"] += call.function.arguments or ""

    def reply(self, messages: Sequence[dict[str, Any]], tools: list[dict] | None) -> ModelReply:
        text = "".join(self.content)
        prompt_tokens, completion_tokens = self.prompt_tokens, self.completion_tokens
        if not prompt_tokens:  # endpoints that do not report usage in streams: estimate
            prompt_tokens = (sum(len(json.dumps(m)) for m in messages) + len(json.dumps(tools or []))) // 4
            completion_tokens = (len(text) + sum(len(c["arguments"]) for c in self.calls.values())) // 4
        tool_calls = tuple(
            ToolCallRequest(id=c["id"] or f"call_{index}", name=c["name"], arguments=c["arguments"])
            for index, c in sorted(self.calls.items()) if c["name"]
        )
        return ModelReply(text, tool_calls, self.finish_reason, "".join(self.refusal) or None,
                          prompt_tokens, completion_tokens)


class MalformedReply(Exception):
    """The endpoint answered 200 with something that is not a chat completion."""


def short_text(value: Any) -> str:
    text = " ".join(str(value).split())
    return (text[:80] + "…") if len(text) > 80 else (text or "an empty body")
