"""The ReAct loop: model turn, tool calls, observations, verified submit; every limit is a named field.

The loop is one round of the search (search.py), which runs it turn by turn (`next_turn`) and gets it
back when the model is silent, repeats itself or is stuck (`Rounds.sample`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from fixloop.agent.acting import StuckWatch, ToolboxLike, act_on
from fixloop.agent.call_protocols import CallProtocol, ProtocolSetting, RequestArgs, ToolCall, call_protocol
from fixloop.agent.context import Conversation
from fixloop.agent.echo import EchoIndex
from fixloop.agent.quiet_replies import echo_ends, no_call_ends
from fixloop.agent.run_state import LoopLimits, LoopOutcome, LoopStatus, SampleWhy, Spent, Step, TurnEnds
from fixloop.agent.sampling_turns import SamplingTurns
from fixloop.agent.submissions import Submissions
from fixloop.agent.tried import TriedFixes
from fixloop.events import Calling, Event, Notice, Reply, Thought, ThoughtDelta
from fixloop.model.call_errors import ToolsUnsupported
from fixloop.model.client import ChatModel
from fixloop.model.replies import ModelReply
from fixloop.verify.port import Gate

__all__ = ["LoopLimits", "LoopOutcome", "LoopStatus", "ReActLoop", "Step"]


class Rounds(Protocol):
    """The search, as the loop sees it: a reason for a round of candidates (search.py runs it)."""

    async def sample(self, why: SampleWhy) -> None: ...


class ReActLoop:
    """Runs turns until a submit is verified or a budget ends the run.

    How calls travel (native tool calls, calls in content, the text protocol) is the `CallProtocol`'s
    business; `protocol: auto` switches it once, as its docstring says. A turn ends early by `TurnEnds`,
    caught in `next_turn`; the run by `RunEnds` (run_state.py), caught by the search.
    """

    def __init__(
        self,
        model: ChatModel,
        toolbox: ToolboxLike,
        gate: Gate,
        *,
        task: str,
        emit: Callable[[Event], None],
        tried: TriedFixes,
        protocol: ProtocolSetting = "auto",
        limits: LoopLimits | None = None,
        compact_tools: bool = False,
        sampling: SamplingTurns | None = None,
        history: Sequence[dict[str, Any]] = (),
    ) -> None:
        self.model, self.toolbox, self.emit = model, toolbox, emit
        self.compact_tools = compact_tools
        self.limits = limits or LoopLimits()
        self.protocol: CallProtocol = call_protocol(protocol, toolbox.names)
        self.spent = Spent(self.limits)
        self.sampling = sampling
        self.rounds: Rounds | None = None  # the search this loop is a round of
        self.submissions = Submissions(gate, self.spent, self.limits, emit, tried)
        self.stuck = StuckWatch(self.limits.stuck_nudge_at, self.limits.stuck_stop_at)
        self.echo = EchoIndex()
        self.conversation = Conversation.opening(
            self._system_prompt(), task, history, budget_chars=self.limits.context_chars
        )
        self.last_reasons: tuple[str, ...] = ()  # the latest rejected submit's

    @property
    def step(self) -> int:
        return self.spent.steps

    @property
    def attempts(self) -> int:
        return self.spent.attempts

    def tool_request(self) -> RequestArgs:
        """What a turn's request carries: the tool schemas (compact or not) and the stop strings."""
        return self.protocol.request(self.toolbox.schemas(compact=self.compact_tools))

    async def next_turn(self) -> None:
        """One turn (or the run's end when a budget is used up); a turn that ends early says what next,
        and a reason for a round of candidates goes to the search (`rounds`)."""
        if exhausted := self.spent.exhausted():
            self.emit(Notice(exhausted, self.step, "budget"))
            raise await self.submissions.final(exhausted, self.last_reasons or (exhausted,))
        self.spent.steps += 1
        try:
            await self._take_turn()
        except TurnEnds as ended:
            for message in ended.messages:
                self.conversation.add(message)
            self.last_reasons = ended.reasons or self.last_reasons
            if ended.sample is not None and self.rounds is not None:
                await self.rounds.sample(ended.sample)

    def calls_in(self, reply: ModelReply) -> Sequence[ToolCall]:
        return self.protocol.read(reply, self.step).calls

    def count(self, reply: ModelReply) -> None:
        self.emit(self.spent.count(reply))

    def _system_prompt(self) -> str:
        return self.protocol.system_prompt(self.toolbox.text_descriptions())

    async def _take_turn(self) -> None:
        reply = await self._turn()
        if reply.cut == "echo":
            raise echo_ends(reply, self.spent, self.emit)
        self.spent.echo_cuts = 0
        calls = self._read(reply)
        if not calls:
            kinds = self.sampling.kinds if self.sampling is not None else None
            raise no_call_ends(reply, self.protocol, self.spent, kinds, self.emit)
        self.spent.silent_turns = 0
        self.conversation.add(self.protocol.assistant_message(reply, calls))
        await self._act(calls)

    async def _turn(self) -> ModelReply:
        if shrunk := self.conversation.fit():
            notice = f"context budget: shortened {shrunk} older observation(s)"
            self.emit(Notice(notice, self.step, "context"))
        bound = asyncio.timeout(max(0.0, self.spent.deadline - time.monotonic()))  # a turn ends with the run
        try:
            async with bound:
                reply = await self._complete()
        except TimeoutError:
            if not bound.expired():
                raise
            exhausted = f"time budget used up ({self.limits.max_seconds:g} s): the model's turn was stopped"
            self.emit(Notice(exhausted, self.step, "budget"))
            raise await self.submissions.final(exhausted, self.last_reasons or (exhausted,)) from None
        self.emit(self.spent.count(reply))
        self.emit(Reply(reply.content, reply.unused, reply.cut, self.step))
        return reply

    async def _complete(self) -> ModelReply:
        """One model call; an endpoint that refuses `tools` gets the text protocol under `auto`."""
        step = self.step
        self.echo.add_messages(self.conversation.messages)
        echo = self.echo if self.spent.echo_cuts < self.limits.echo_cuts else None
        while True:
            request = self.protocol.request(self.toolbox.schemas(compact=self.compact_tools))
            watch = self.protocol.watch(
                on_prose=lambda text: self.emit(ThoughtDelta(text, step)),
                on_calling=lambda tool, on: self.emit(Calling(tool, on, step)),
                echo=echo,
            )
            try:
                return await self.model.complete(
                    self.conversation.messages,
                    tools=request.tools,
                    stop=request.stop,
                    watch=watch,
                )
            except ToolsUnsupported as error:
                why = f"switching to the text protocol for this run: {error.message}"
                self._switch(self.protocol.on_tools_rejected(), error, why)

    def _switch(self, protocol: CallProtocol | None, error: Exception, notice: str) -> None:
        """Carry on in another mode (its system prompt replaces the first message), or re-raise `error`."""
        if protocol is None:
            raise error
        self.protocol = protocol
        self.conversation.messages[0]["content"] = self._system_prompt()
        self.emit(Notice(notice, self.step, "protocol"))

    def _read(self, reply: ModelReply) -> list[ToolCall]:
        found = self.protocol.read(reply, self.step)
        if found.thought:
            self.emit(Thought(found.thought, self.step))
        if found.switch_to is not None:  # the system prompt stays: only the text-reading changes
            self.protocol = found.switch_to
            self.emit(Notice(found.switch_notice, self.step, "protocol"))
        return list(found.calls)

    async def _act(self, calls: list[ToolCall]) -> None:
        """Run the calls and record their observations; then a submit may end the run, a rejected submit,
        a repeated call or a stuck one is a reason to sample."""
        texts, step = await act_on(calls, self.toolbox, self.submissions, self.stuck, self.emit)
        for message in self.protocol.observation_messages(calls, texts):
            self.conversation.add(message, observation=True)
        if step.finished is not None:
            raise step.finished
        if step.stuck:
            self.emit(Notice(step.stuck, self.step, "stuck"))
            sampling = self.sampling
            if sampling is not None and (sampling.kinds is not None or sampling.allows("stuck")):
                raise TurnEnds(sample="stuck")  # not a stop
            raise await self.submissions.final(step.stuck, (step.stuck,))
        if step.rejected or step.repeated:
            raise TurnEnds(sample="rejected" if step.rejected else "repeated", reasons=step.rejected)
