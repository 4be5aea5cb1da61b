"""The kinds of round a run moves through when the model is silent, repeats itself or is stuck.

Instead of nudging again, the run moves to the next kind of round, in this order: candidates focused on the
next suspect ("suspect"), a line-level round ("lines"), then the loop's own tool turns ("loop"). A start
round of candidates that found nothing goes on through the code kinds before the loop's first turn, with a
round on each suspect not yet pointed at before the line-level round (after it, when the start round's best
guess was long: that round then draws no more whole functions, `too_long`, and the line-level round is
next). A run stops before its budget only once every kind has been tried, and says which were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeGuard

if TYPE_CHECKING:
    from fixloop.model.replies import ModelReply

RoundKind = Literal["suspect", "lines", "loop"]
# A whole-function answer longer than this (about 25 lines) takes 25 s or more to decode alone on 2 cores,
# a batch of them minutes: after a start round of such answers the line-level round (short answers) is next.
LONG_ANSWER_TOKENS = 250
KINDS: tuple[RoundKind, ...] = ("suspect", "lines", "loop")
LOOP_ASK = (
    "Rounds of candidate fixes found nothing. Work with the tools now: read the code the failing test "
    "reaches (read_file), change it (edit_file or replace_function), run_tests, then submit. "
    "Call one tool now."
)
SAID = {
    "suspect": "candidates focused on the next suspect",
    "lines": "a line-level round",
    "loop": "the loop's tool turns",
}


class RoundKinds:
    """Which kinds of round are left, and which were tried (in the order tried)."""

    def __init__(self, kinds: tuple[RoundKind, ...] = KINDS) -> None:
        self.left: list[RoundKind] = list(kinds)
        self.tried: list[RoundKind] = []
        self.silent_switches = (
            0  # kinds moved to because of silence: after the first, one silent reply is enough
        )

    def first(self, kind: RoundKind) -> None:
        """Move `kind`, if it is left, to the front."""
        if kind in self.left:
            self.left.remove(kind)
            self.left.insert(0, kind)

    def again(self, kind: RoundKind) -> None:
        """Put `kind` in front once more: one more round of it before the next kind."""
        self.left.insert(0, kind)

    def take(self) -> RoundKind | None:
        """The next kind (now counted as tried), None once every kind has been tried."""
        if not self.left:
            return None
        kind = self.left.pop(0)
        self.tried.append(kind)
        return kind

    def silent_limit(self, silent_turns: int) -> int:
        """Replies without a call in a row that move to the next kind: two at first, then one, so that two
        silent replies in a row never happen twice in one run."""
        return 1 if self.silent_switches else silent_turns

    def said(self) -> str:
        return ", ".join(self.tried) or "none"


LONG_SAID = "the best guess is {} tokens long: no more whole-function draws"


def too_long(reply: ModelReply | None, most: int | None) -> TypeGuard[ModelReply]:
    """Whether a best guess is too long to draw more of (five 60-line functions take minutes on 2 cores)."""
    return reply is not None and most is not None and reply.completion_tokens > most
