"""The context budget: the message list, with older observations shrunk first and the last few kept whole.

An observation the model has acted on (older than the last `keep_whole`) is folded once, whatever the
budget: a test run to its verdict (the summary and the failing ids), anything else to its head and tail. So
a turn's prompt stays bounded however long the run, and a folded message stays folded (a stable prefix)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

SHRUNK_MARK = "[older output shortened"
FOLD_OVER = 1200  # characters: a longer observation the model has acted on is folded
TEST_SUMMARY = re.compile(r"\b\d+ (?:failed|passed|error|errors)\b.* in \d+(?:\.\d+)?s\b")


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
        candidates = self._observations[: -self.keep_whole] if self.keep_whole else list(self._observations)
        shrunk = 0
        for index in candidates:  # acted on: folded, however much room there is
            text = str(self.messages[index].get("content") or "")
            if len(text) > FOLD_OVER and not text.startswith(SHRUNK_MARK):
                self.messages[index]["content"] = fold(text)
                shrunk += 1
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


def fold(text: str) -> str:
    """An observation acted on: a test run's report to its verdict (its summary and failing tests), any
    other output to its head and tail."""
    lines = text.splitlines()
    if not any(TEST_SUMMARY.search(line) for line in lines[:3]):
        return shrink(text)
    verdict = [line for n, line in enumerate(lines) if n < 2 or line.startswith(("FAILED ", "ERROR "))]
    return "\n".join(
        [f"{SHRUNK_MARK}: a test run, its verdict kept; run the tests again to see it]", *verdict[:8]]
    )


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
