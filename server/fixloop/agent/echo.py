"""Echo: a reply that starts re-typing the prompt's context (long verbatim overlap with what it was shown)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fixloop.tools.textfile import GUTTER

SHINGLE = 24  # characters in one compared piece (whitespace runs count as one space)
ECHO_CHARS = 100  # a verbatim run this long is an echo, not a quote
_SPACE = re.compile(r"\s+")


class EchoIndex:
    """Every `SHINGLE`-character piece of the context the model was shown (user and tool messages)."""

    def __init__(self, min_chars: int = ECHO_CHARS) -> None:
        self.min_chars = max(min_chars, SHINGLE)
        self._pieces: set[str] = set()
        self._indexed = 0

    def add(self, text: str) -> None:
        """Index `text`, and its numbered listings without their gutters (re-typed code drops them)."""
        for form in {text, GUTTER.sub("", text)}:
            flat = _SPACE.sub(" ", form)
            self._pieces.update(flat[i : i + SHINGLE] for i in range(0, max(0, len(flat) - SHINGLE + 1)))

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Index the user and tool messages not indexed yet (the list only grows)."""
        listed = list(messages)
        for message in listed[self._indexed :]:
            if message.get("role") in ("user", "tool") and isinstance(message.get("content"), str):
                self.add(message["content"])
        self._indexed = len(listed)

    def reader(self) -> EchoReader:
        return EchoReader(self)

    def __contains__(self, piece: str) -> bool:
        return piece in self._pieces


class EchoReader:
    """Follows one reply's prose as it streams; `feed` answers where an echo began once one is long enough."""

    def __init__(self, index: EchoIndex) -> None:
        self.index = index
        self._flat: list[str] = []  # the prose, whitespace runs as one space
        self._origin: list[int] = []  # for each flat character, its offset in the prose
        self._offset = 0
        self._run = 0  # consecutive pieces found in the context
        self.echoed = 0  # flat characters inside runs that reached ECHO_CHARS (for figures)

    def feed(self, prose: str) -> int | None:
        """Add prose; the offset (in all prose fed) where an echo starts, once it is `min_chars` long."""
        for char in prose:
            space = char.isspace()
            if not (space and self._flat and self._flat[-1] == " "):
                self._flat.append(" " if space else char)
                self._origin.append(self._offset)
                if len(self._flat) >= SHINGLE:
                    piece = "".join(self._flat[-SHINGLE:])
                    self._run = self._run + 1 if piece in self.index else 0
            self._offset += 1
            length = self._run + SHINGLE - 1 if self._run else 0
            if length >= self.index.min_chars:
                return self._origin[len(self._flat) - length]
        return None


def echoed_chars(index: EchoIndex, prose: str) -> int:
    """How many characters of `prose` lie in verbatim runs of at least `min_chars` shared with the context."""
    flat = _SPACE.sub(" ", prose)
    hits = [flat[i : i + SHINGLE] in index for i in range(0, max(0, len(flat) - SHINGLE + 1))]
    total = run = 0
    for hit in [*hits, False]:
        if hit:
            run += 1
            continue
        if run and run + SHINGLE - 1 >= index.min_chars:
            total += run + SHINGLE - 1
        run = 0
    return total
