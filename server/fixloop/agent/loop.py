"""The ReAct loop: model turn, tool calls, observations, verified submit; every limit is a named field."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from fixloop.agent import prompts
from fixloop.agent.acting import StuckWatch, ToolboxLike, run_calls
from fixloop.agent.call_protocols import CallProtocol, ProtocolSetting, ToolCall, call_protocol
from fixloop.agent.context import Conversation
from fixloop.agent.echo import EchoIndex
from fixloop.agent.mutant_round import SHARE as MUTANT_SHARE
from fixloop.agent.mutant_round import MutantRound
from fixloop.agent.round_kinds import LONG_ANSWER_TOKENS, LOOP_ASK, SAID, RoundKind
from fixloop.agent.run_state import (
    LoopLimits,
    LoopOutcome,
    LoopStatus,
    RunEnds,
    SampleWhy,
    Spent,
    Step,
    TurnEnds,
)
from fixloop.agent.sampling_turns import SamplingTurns, round_tools
from fixloop.agent.submissions import Submissions
from fixloop.agent.tried import TriedFixes
from fixloop.events import Action, Calling, Event, Notice, Observation, Reply, Thought, ThoughtDelta
from fixloop.model.client import ChatModel, ToolsUnsupported
from fixloop.model.replies import ModelReply
from fixloop.tools.base import ToolResult
from fixloop.verify.port import Gate

__all__ = ["LoopLimits", "LoopOutcome", "LoopStatus", "ReActLoop", "Step"]
REFUSAL = re.compile(
    r"^\s*(i'?m sorry|i am sorry|i cannot|i can'?t|i am unable|i'?m unable|"
    r"i won'?t|as an ai)\b",
    re.IGNORECASE,
)


class ReActLoop:
    """Runs turns until a submit is verified or a budget ends the run.

    How calls travel (native tool calls, calls in content, the text protocol) is the `CallProtocol`'s
    business; `protocol: auto` switches it once, as its docstring says. A turn ends early by `TurnEnds`
    and the run by `RunEnds` (run_state.py); both are caught here, in `run` and `_step`.
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
        mutants: MutantRound | None = None,
    ) -> None:
        self.model, self.toolbox, self.emit = model, toolbox, emit
        self.compact_tools = compact_tools
        self.limits = limits or LoopLimits()
        self.protocol: CallProtocol = call_protocol(protocol, toolbox.names)
        self.spent = Spent(self.limits)
        self.sampling = sampling
        self.mutants = mutants  # one-token changes of the suspect lines, tried before the model is asked
        self.rounds_before: list[str] = []  # kinds of round tried before the model's ("mutants")
        self.submissions = Submissions(gate, self.spent, self.limits, emit, tried)
        self.stuck = StuckWatch(self.limits.stuck_nudge_at, self.limits.stuck_stop_at)
        self.echo = EchoIndex()
        self.conversation = Conversation.opening(
            self._system_prompt(), task, history, budget_chars=self.limits.context_chars
        )
        self._last_reasons: tuple[str, ...] = ()  # the latest rejected submit's

    @property
    def step(self) -> int:
        return self.spent.steps

    @property
    def attempts(self) -> int:
        return self.spent.attempts

    async def run(self) -> LoopOutcome:
        """Turns until the run ends; every end comes here, and the outcome is built here only."""
        try:
            await self._mutant_round()
            await self._sample("start")
            await self._code_rounds_after_start()
            while True:
                await self._step()
        except RunEnds as end:
            kinds = self.sampling.kinds if self.sampling is not None else None
            tried = [*self.rounds_before, *(kinds.tried if kinds is not None else ())]
            if kinds is not None or tried:
                self.emit(Notice(f"rounds tried: {', '.join(tried) or 'none'}", self.step, "rounds"))
            return self.spent.outcome(end, tried if kinds is not None or tried else None)

    async def _mutant_round(self) -> None:
        """One-token changes of the suspect lines, before the model is asked, in at most MUTANT_SHARE of the
        run's time; a verified one ends the run."""
        if self.mutants is None:
            return
        left = self.spent.deadline - time.monotonic()
        summary = await self.mutants.round(self.step, min(left, MUTANT_SHARE * self.limits.max_seconds))
        self.rounds_before.append("mutants")
        if summary is not None:
            raise self.submissions.verified_round(summary)

    async def _step(self) -> None:
        """One turn (or the run's end when a budget is used up); a turn that ends early says what next."""
        if exhausted := self.spent.exhausted():
            self.emit(Notice(exhausted, self.step, "budget"))
            raise await self.submissions.final(exhausted, self._last_reasons or (exhausted,))
        self.spent.steps += 1
        try:
            await self._take_turn()
        except TurnEnds as ended:
            for message in ended.messages:
                self.conversation.add(message)
            self._last_reasons = ended.reasons or self._last_reasons
            if ended.sample is not None:
                await self._sample(ended.sample)

    async def _sample(self, why: SampleWhy) -> None:
        """A round of candidate fixes (generate and validate) when the run's sampling allows one now; a
        verified one ends the run. A later round takes a turn of the budget."""
        self.spent.silent_turns = 0
        sampling = self.sampling
        if sampling is None or self.spent.exhausted():
            return
        if sampling.kinds is not None and why in ("repeated", "silent", "stuck"):
            return await self._next_kind(why)
        if not sampling.allows(why):
            return
        self.spent.steps += why != "start"
        request = self.protocol.request(self.toolbox.schemas(compact=self.compact_tools))
        tools = round_tools(why, request.tools)
        summary = await sampling.round(
            why,
            self.conversation,
            tools,
            request.stop,
            self._calls_in,
            self.step,
            self._count,
            deadline=self.spent.deadline,
        )
        if summary is not None:
            raise self.submissions.verified_round(summary)

    async def _code_rounds_after_start(self) -> None:
        """A start round of candidates that found nothing goes on through the kinds of code round (the next
        suspect, then the lines) before the loop's first tool turn: they read the start round's prompt (a
        local server has it cached) where a tool turn would read the tool schemas and the prompt anew."""
        sampling = self.sampling
        if sampling is None or sampling.kinds is None or not sampling.code_rounds_follow_start:
            return
        if sampling.start_answer_tokens > LONG_ANSWER_TOKENS and sampling.lines is not None:
            sampling.kinds.first("lines")
            said = f"the corrected functions are long ({sampling.start_answer_tokens} tokens): lines first"
            self.emit(Notice(said, self.step, "rounds"))
        while sampling.kinds.left[:1] in (["suspect"], ["lines"]) and not self.spent.exhausted():
            await self._next_kind("start")

    async def _next_kind(self, why: SampleWhy) -> None:
        """Silence, a repeat or a stuck call: the next kind of round instead of another nudge (a verified fix
        ends the run); once every kind has been tried, the run ends, saying which were."""
        assert self.sampling is not None and self.sampling.kinds is not None
        kinds = self.sampling.kinds
        kind = kinds.take()
        if kind is None:
            reason = f"stuck with every kind of round tried ({kinds.said()})"
            self.emit(Notice(reason, self.step, "rounds"))
            raise await self.submissions.final(reason, self._last_reasons or (reason,))
        said = {"silent": "no tool call", "repeated": "a repeat", "stuck": "stuck", "start": "no fix yet"}
        self.emit(Notice(f"{said.get(why, why)}: moving on to {SAID[kind]}", self.step, "rounds"))
        self.spent.steps += 1
        summary = await self._kind_round(kind, why)
        if summary is not None:
            raise self.submissions.verified_round(summary)

    async def _kind_round(self, kind: RoundKind, why: SampleWhy) -> str | None:
        """One round of `kind`; the verified fix's summary, else None (the conversation says what next).
        Before the loop's first turn (`why` "start") its requests carry no tool schemas, as the start
        round's did."""
        sampling = self.sampling
        assert sampling is not None
        if kind == "loop":
            self.conversation.add({"role": "user", "content": LOOP_ASK})
            return None
        if kind == "lines" and sampling.lines is not None:
            summary, feedback = await sampling.lines.round(self.step, self._count, self.spent.deadline)
            self.conversation.add({"role": "user", "content": feedback or LOOP_ASK}, observation=True)
            return summary
        request = self.protocol.request(self.toolbox.schemas(compact=self.compact_tools))
        point = sampling.next_point()
        return await sampling.round(
            "repeated",
            self.conversation,
            round_tools(why, request.tools),
            request.stop,
            self._calls_in,
            self.step,
            self._count,
            point=point,
            counted=False,
            deadline=self.spent.deadline,
        )

    def _calls_in(self, reply: ModelReply) -> Sequence[ToolCall]:
        return self.protocol.read(reply, self.step).calls

    def _count(self, reply: ModelReply) -> None:
        self.emit(self.spent.count(reply))

    def _system_prompt(self) -> str:
        return self.protocol.system_prompt(self.toolbox.text_descriptions())

    async def _take_turn(self) -> None:
        reply = await self._turn()
        if reply.cut == "echo":
            self._re_ask(reply)
        self.spent.echo_cuts = 0
        calls = self._read(reply)
        if not calls:
            self._handle_no_call(reply)
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
            raise await self.submissions.final(exhausted, self._last_reasons or (exhausted,)) from None
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

    def _re_ask(self, reply: ModelReply) -> NoReturn:
        """The reply began copying the prompt's context back: keep what came before, ask for a short one."""
        self.spent.echo_cuts += 1
        kept = reply.content.strip()
        messages = [{"role": "assistant", "content": kept}] if kept else []
        self.emit(
            Notice(
                "the model began copying the context back; stopped it and asked for a short "
                "reply with one tool call",
                self.step,
                "echo",
            )
        )
        raise TurnEnds([*messages, {"role": "user", "content": prompts.ECHO_NUDGE}])

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

    def _handle_no_call(self, reply: ModelReply) -> NoReturn:
        """A reply without a call: nudged, and after `silent_turns` in a row a reason to sample (a model
        that keeps answering without a call is stuck too); too many refusals end the run."""
        text = reply.content
        refused = bool(reply.refusal) or reply.finish_reason == "content_filter" or bool(REFUSAL.match(text))
        self.conversation.add({"role": "assistant", "content": text or reply.refusal or ""})
        nudge = self.protocol.no_tool_nudge()
        if refused:
            self.spent.refusals += 1
            if self.spent.refusals > self.limits.max_refusals:
                reason = f"the model refused {self.spent.refusals} times"
                self.emit(Notice(reason, self.step, "refusal"))
                raise RunEnds("not_fixed", f"not fixed: {reason}", [reason])
            self.emit(Notice("the model refused; asking it to continue", self.step, "refusal"))
            nudge = prompts.REFUSAL_NUDGE
        elif reply.finish_reason == "length":
            nudge = prompts.LENGTH_NUDGE
        self.spent.silent_turns += 1
        kinds = self.sampling.kinds if self.sampling is not None else None
        if kinds is not None and self.spent.silent_turns >= kinds.silent_limit(self.limits.silent_turns):
            kinds.silent_switches += 1
            raise TurnEnds(sample="silent")  # the next kind of round, not another nudge
        self.emit(Notice("no tool call; nudging the model to continue", self.step, "nudge"))
        silent = self.spent.silent_turns >= self.limits.silent_turns
        raise TurnEnds([{"role": "user", "content": nudge}], sample="repeated" if silent else None)

    async def _act(self, calls: list[ToolCall]) -> None:
        """Run the calls and record their observations; then a submit may end the run, a rejected submit,
        a repeated call or a stuck one is a reason to sample."""
        for call in calls:
            self.emit(Action(call.id, call.name, call.shown_arguments(), self.step))
        results = await run_calls(self.toolbox, calls)
        step = Step()
        texts: list[str] = []
        for call, result in zip(calls, results, strict=True):
            observation, step = await self._observe(call, result, step)
            self.emit(observation)
            texts.append(observation.text)
        for message in self.protocol.observation_messages(calls, texts):
            self.conversation.add(message, observation=True)
        if step.finished is not None:
            raise step.finished
        if step.stuck:
            self.emit(Notice(step.stuck, self.step, "stuck"))
            sampling = self.sampling
            if sampling is not None and (
                sampling.kinds is not None or sampling.allows("stuck")
            ):  # not a stop
                raise TurnEnds(sample="stuck")
            raise await self.submissions.final(step.stuck, (step.stuck,))
        if step.rejected or step.repeated:
            raise TurnEnds(sample="rejected" if step.rejected else "repeated", reasons=step.rejected)

    async def _observe(self, call: ToolCall, result: ToolResult, step: Step) -> tuple[Observation, Step]:
        """The observation of one call; a submit goes to the gate (the first one of the turn only)."""
        text, is_error = result.text, result.is_error
        if result.submitted is not None and step.finished is None and not step.rejected:
            step, verified = await self.submissions.submit(result.submitted)
            text, is_error = verified.text, verified.is_error
        elif step.finished is not None:
            text, is_error = "not run: the fix was already accepted", False
        else:
            text, stuck = self.stuck.observe(call, text)
            step = replace(step, stuck=stuck or step.stuck, repeated=step.repeated or self.stuck.repeated)
        return Observation(call.id, call.name, text, is_error, self.step), step
