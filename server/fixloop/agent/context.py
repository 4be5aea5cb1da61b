"""The context budget: the message list, with older observations shrunk first and the last few kept whole."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

SHRUNK_MARK = "[older output shortened"


@dataclass
class Conversation:
    """The trajectory is the message list; observation messages are remembered so they can shrink."""

    budget_chars: int = 48_000
    keep_whole: int = 3
    messages: list[dict[str, Any]] = field(default_factory=list)
    _observations: list[int] = field(default_factory=list)

    @classmethod
    def opening(
        cls, system: str, task: str, history: Sequence[dict[str, Any]] = (), budget_chars: int = 48_000
    ) -> Conversation:
        """A run's first messages: the system prompt, an earlier run's conversation going on (after its
        system prompt; another fix), and the task."""
        conversation = cls(budget_chars=budget_chars)
        conversation.add({"role": "system", "content": system})
        for message in history:
            conversation.add(dict(message), observation=message.get("role") in ("user", "tool"))
        conversation.add({"role": "user", "content": task})
        return conversation

    def add(self, message: dict[str, Any], *, observation: bool = False) -> None:
        if observation:
            self._observations.append(len(self.messages))
        self.messages.append(message)

    def size(self) -> int:
        return sum(
            len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in self.messages
        )

    def fit(self) -> int:
        """Shrinks the oldest observations until the conversation fits; returns how many were shrunk.

        A shrunk message stays shrunk, so the prompt prefix is stable again from the next turn on.
        """
        shrunk = 0
        candidates = self._observations[: -self.keep_whole] if self.keep_whole else list(self._observations)
        for index in candidates:
            if self.size() <= self.budget_chars:
                break
            message = self.messages[index]
            text = str(message.get("content") or "")
            if text.startswith(SHRUNK_MARK) or len(text) < 400:
                continue
            message["content"] = shrink(text)
            shrunk += 1
        return shrunk


def shrink(text: str, head: int = 6, tail: int = 4) -> str:
    lines = text.splitlines()
    if len(lines) <= head + tail + 1:
        kept = text[:300]
        return f"{SHRUNK_MARK}: {len(text)} characters; run the tool again to see it]\n{kept}"
    hidden = len(lines) - head - tail
    return "\n".join(
        [
            f"{SHRUNK_MARK}: {hidden} lines hidden; run the tool again to see them]",
            *lines[:head],
            "…",
            *lines[-tail:],
        ]
    )
