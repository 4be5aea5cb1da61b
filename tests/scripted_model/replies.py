"""The reply to one chat request as the OpenAI API shapes it: a completion object, or its stream chunks."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import ScriptedModelServer


class Answer:
    """One assistant message, rendered as a ChatCompletion or as a list of chunks."""

    def __init__(
        self,
        *,
        completion_id: str,
        model: str,
        content: str | None,
        refusal: str | None,
        tool_calls: list[dict[str, Any]],
        finish_reason: str,
        usage: dict[str, Any],
        piece: int = 0,
        timings: dict[str, Any] | None = None,
    ) -> None:
        self.piece = piece  # characters in one content chunk (0: a handful of chunks)
        self.completion_id = completion_id
        self.model = model
        self.content = content
        self.refusal = refusal
        self.tool_calls = tool_calls
        self.finish_reason = finish_reason
        self.usage = usage
        self.timings = timings  # llama-server's, beside the usage (None: not sent)
        self.created = int(time.time())

    @classmethod
    def build(
        cls, owner: ScriptedModelServer, turn: dict[str, Any], body: dict[str, Any], piece: int = 0
    ) -> Answer:
        content = turn.get("content")
        stopped = False
        if isinstance(content, str):
            content, stopped = apply_stop(content, body.get("stop"))
        refusal = turn.get("refusal")
        calls = [
            {
                "id": call.get("id") or owner._new_call_id(),
                "name": call["name"],
                "arguments": call["arguments"],
            }
            for call in turn.get("tool_calls", [])
        ]
        if "finish_reason" in turn:
            finish_reason = str(turn["finish_reason"])
        elif calls and not stopped:
            finish_reason = "tool_calls"
        else:
            finish_reason = "stop"
        prompt_tokens = len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4
        produced = (content or "") + (refusal or "") + json.dumps(calls)
        completion_tokens = max(1, len(produced) // 4) if (content or refusal or calls) else 0
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        usage.update(turn.get("usage") or {})
        if "usage" in turn and "total_tokens" not in turn["usage"]:
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return cls(
            completion_id=owner._new_completion_id(),
            model=str(body.get("model") or owner.model),
            content=content,
            refusal=refusal,
            tool_calls=calls,
            finish_reason=finish_reason,
            usage=usage,
            piece=piece,
            timings=turn.get("timings"),
        )

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content, "refusal": self.refusal}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in self.tool_calls
            ]
        completion = {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self.finish_reason, "logprobs": None}
            ],
            "usage": self.usage,
        }
        return completion if self.timings is None else {**completion, "timings": self.timings}

    def chunks(
        self, *, include_usage: bool, usage_in_last: bool = False, index: int = 0
    ) -> Iterator[dict[str, Any]]:
        """The stream as OpenAI sends it: role, small content deltas, tool calls with split arguments,
        the finish reason, then (when asked) a usage chunk with no choices; `usage_in_last` puts the usage
        into the finish chunk instead, as llama.cpp's server does, and `timings` go into the last chunk.
        `index`: the choice they belong to."""
        for chunk in self._chunks(include_usage, usage_in_last):
            yield {**chunk, "choices": [{**choice, "index": index} for choice in chunk["choices"]]}

    def _chunks(self, include_usage: bool, usage_in_last: bool) -> Iterator[dict[str, Any]]:
        yield self._chunk({"role": "assistant", "content": "", "refusal": None}, include_usage)
        for piece in pieces(self.content or "", self.piece):
            yield self._chunk({"content": piece}, include_usage)
        for piece in pieces(self.refusal or ""):
            yield self._chunk({"refusal": piece}, include_usage)
        for index, call in enumerate(self.tool_calls):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            yield self._chunk({"tool_calls": [head]}, include_usage)
            for piece in pieces(call["arguments"]):
                yield self._chunk(
                    {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, include_usage
                )
        last = self._chunk({}, include_usage, finish_reason=self.finish_reason)
        if usage_in_last:
            last = {**last, "usage": self.usage}
        timings = {} if self.timings is None else {"timings": self.timings}
        if not include_usage:
            yield {**last, **timings}
            return
        yield last
        yield {**self._base(), "choices": [], "usage": self.usage, **timings}

    def _base(self) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
        }

    def _chunk(
        self, delta: dict[str, Any], include_usage: bool, finish_reason: str | None = None
    ) -> dict[str, Any]:
        chunk = {
            **self._base(),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }
        if include_usage:
            chunk["usage"] = None
        return chunk


def pieces(text: str, size: int = 0) -> list[str]:
    """Split text into a handful of small deltas (at least four when it is long enough), or `size` each."""
    if not text:
        return []
    size = size or min(24, max(1, math.ceil(len(text) / 4)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def apply_stop(content: str, stop: Any) -> tuple[str, bool]:
    """Cut content at the first stop sequence, as a real server does."""
    sequences = [stop] if isinstance(stop, str) else [s for s in (stop or []) if isinstance(s, str) and s]
    cut = min((content.find(s) for s in sequences if s and s in content), default=-1)
    return (content[:cut], True) if cut >= 0 else (content, False)
