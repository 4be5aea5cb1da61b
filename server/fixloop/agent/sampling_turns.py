"""When the loop samples, and what the conversation keeps of it.

A start round comes before the first tool turn: the code form's one best guess (`edit_form: code`) or a
whole round of candidates (`strategy: sample`); the task prompt then ends with the code ask, so the round
draws from exactly the prefix the loop goes on with. Later rounds come after a rejected submit, a
repeated call (at temperature 0 a repeat means the model is stuck on one idea) or replies without a call in
a row (`LoopLimits.silent_turns`), while `rounds` last. A round's winner is written by the gate (its
`accept`); a round that finds nothing leaves the model its own best guess and what the tests said of it,
plus every fix tried. The engine builds the run's sampling from its plan (engine/assembly.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fixloop.agent.call_protocols import ToolCall
from fixloop.agent.context import Conversation
from fixloop.agent.edit_forms import resample_ask, round_feedback, with_focus
from fixloop.agent.line_round import LineRound
from fixloop.agent.round_kinds import LONG_ANSWER_TOKENS, RoundKinds
from fixloop.agent.run_state import SampleWhy
from fixloop.agent.sampling import CandidateSearch, RoundRequest, RoundResult
from fixloop.model.replies import ModelReply
from fixloop.shadow import unified_diff


class SamplingTurns:
    """The loop's sampling: `allows(why)` says whether a round may run now, `round` runs it."""

    def __init__(
        self,
        search: CandidateSearch,
        *,
        start_samples: int,
        samples: int,
        rounds: int,
        focus: Sequence[str] = (),
        teach: bool = True,
        kinds: RoundKinds | None = None,
        lines: LineRound | None = None,
    ) -> None:
        self.search = search
        self.start_samples = start_samples  # 0: no start round; 1: the code form's best guess alone
        self.samples = samples
        self.rounds = rounds
        self.focus = tuple(focus)  # point sampled candidates at different functions of the prompt's code
        self.teach = teach  # a failed round shows expected vs actual, the diff and what was tried
        self._started = False
        self.kinds = kinds  # silence, repeats and stuck calls move the run to the next kind of round
        self.lines = lines  # the line-level round (one of the kinds)
        self._focused = 1  # the focus points pointed at so far (the start round's best guess: the first)
        # how long the start round's best guess was (a whole function, rewritten): lines first when long
        self.start_answer_tokens = 0
        self._start_prompt: list[dict[str, Any]] | None = None  # the start round's messages, as sent

    def allows(self, why: SampleWhy) -> bool:
        if why == "start":
            return self.start_samples > 0 and not self._started
        return self.rounds > 0 and self.samples > 0

    async def round(
        self,
        why: SampleWhy,
        conversation: Conversation,
        tools: list[dict[str, Any]] | None,
        stop: list[str] | None,
        read_calls: Callable[[ModelReply], Sequence[ToolCall]],
        step: int,
        count: Callable[[ModelReply], None],
        point: str | None = None,
        counted: bool = True,
        deadline: float | None = None,
    ) -> str | None:
        """Run one round; the summary of the verified fix it proposes (the gate holds it), else None (the
        conversation then holds what the model should learn from it). A round with a `point` points every
        candidate at that function, and sends the start round's prompt and one ask (the fixes tried, a line
        each, and the point), not the rounds since: their answers and feedback were about other functions,
        and on a CPU each round's 850-odd tokens of them cost the next round 20 s of reading. A round of a
        kind (not `counted`) takes none of the `rounds`."""
        start = why == "start"
        self._started |= start
        self.rounds -= counted and not start
        samples = self.start_samples if start else self.samples
        ask = None if start else self._ask(point)
        request = RoundRequest(
            self._prompt(conversation, start, point, ask),
            tools,
            stop,
            read_calls,
            step,
            count,
            samples,
            seed_base=100 * self.search.rounds,
            focus=() if point else self.focus,
            deadline=deadline,
            long_answer=LONG_ANSWER_TOKENS if start and self.lines_may_come_first else None,
        )
        return await self._conclude(await self.search.round(request), start, conversation, ask)

    async def _conclude(
        self, result: RoundResult, start: bool, conversation: Conversation, ask: dict[str, Any] | None
    ) -> str | None:
        """A verified winner is accepted (its summary returned); else the conversation is taught."""
        if start and result.first_reply is not None:
            self.start_answer_tokens = result.first_reply.completion_tokens
        if result.winner is not None:
            await self.search.gate.accept(result.verdicts[result.winner.number].changes)
            return _summary(result, self.start_samples if start else self.samples)
        self._teach(conversation, ask, result, then_tools=not (start and self.code_rounds_follow_start))
        return None

    def _prompt(
        self, conversation: Conversation, start: bool, point: str | None, ask: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        """A round's messages: the conversation and the round's ask, or for a round with a point the start
        round's prompt as sent and the ask."""
        if start:
            self._start_prompt = [dict(message) for message in conversation.messages]
        history = self._start_prompt if point and self._start_prompt is not None else conversation.messages
        return [*history, *([ask] if ask else [])]

    def _ask(self, point: str | None) -> dict[str, Any]:
        """The message that opens a later round (pointed at `point`, when there is one)."""
        ask = {"role": "user", "content": resample_ask(self.search.tried.lines() if self.teach else [])}
        return with_focus([ask], point)[0] if point else ask

    def next_point(self) -> str | None:
        """The next suspect not yet focused (the functions the warm start shows, in its order), else the
        first again; None when there is none."""
        if not self.focus:
            return None
        point = self.focus[self._focused % len(self.focus)]
        self._focused += 1
        return point

    @property
    def unfocused(self) -> int:
        """The functions of the prompt's code that no round has pointed its candidates at yet."""
        return max(0, len(self.focus) - self._focused)

    @property
    def lines_may_come_first(self) -> bool:
        """Whether a long best guess in the start round sends the run to the line-level round at once."""
        return self.lines is not None and self.code_rounds_follow_start

    @property
    def code_rounds_follow_start(self) -> bool:
        """Whether a start round that finds nothing goes on with the kinds of code round (the loop's
        `_code_rounds_after_start`) rather than with the loop's tool turns."""
        return self.kinds is not None and self.start_samples > 1

    def _teach(
        self, conversation: Conversation, ask: dict[str, Any] | None, result: RoundResult, *, then_tools: bool
    ) -> None:
        first = result.first
        if ask is not None:
            conversation.add(ask)
        reply = result.first_reply.content.strip() if result.first_reply is not None else ""
        conversation.add({"role": "assistant", "content": reply or "(no reply)"})
        verdict = result.verdicts.get(first.number) if first is not None else None
        evidence = verdict.evidence if verdict is not None else ()
        inputs = verdict.inputs if verdict is not None and self.teach else ()
        diff = unified_diff(list(first.changes)) if first is not None and first.changes else ""
        problem = first.problem if first is not None and not first.changes else ""
        if not self.teach:
            evidence, diff = (verdict.reasons[:3] if verdict is not None else ()), ""
        tried = self.search.tried.lines() if self.teach else []
        text = round_feedback(
            evidence, diff, tried, len(result.candidates), problem, inputs, then_tools=then_tools
        )
        conversation.add({"role": "user", "content": text}, observation=True)


def _summary(result: RoundResult, samples: int) -> str:
    winner = result.winner
    assert winner is not None
    where = f"candidate {winner.number} of {len(result.candidates)}" if samples > 1 else "the corrected code"
    return f"verified fix ({where}): {winner.describe()}"


Schemas = list[dict[str, Any]] | None


def round_tools(why: SampleWhy, tools: Schemas) -> Schemas:
    """The tool schemas a round's requests carry: none for the start round, which asks for code (they would
    be half its prompt); the loop's own for a later round, which goes on from the loop's turns."""
    return None if why == "start" else tools
