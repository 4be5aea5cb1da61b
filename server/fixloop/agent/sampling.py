"""Generate and validate: draw N candidate fixes from one prompt, verify each alone, keep the smallest.

The first candidate is the model's best guess (temperature 0), the others are drawn at the sampling
temperature with distinct seeds — in one streamed request with `n` where the endpoint honours it
(llama.cpp's llama-server with a slot each: the prompt read once; each reply cut when its code is complete,
as a single draw is), else one request each, as many at a time as the endpoint serves at once (one for
llama-cpp-python's server); none after a best guess too long to draw more of. Each distinct candidate is
judged by the gate on a clean copy of its own, up to `parallel` at a time, while the next ones
are drawn; a candidate already judged (in this round or before) is not judged again. Drawing stops at the
first verified candidate, when N are drawn, or when the round's time or token budget is spent; of the
verified ones the smallest diff wins. Each sampled draw is shown something of its own (draws.py: another
suspect, another failing call, what was tried and failed); a candidate that copies the code back
unchanged is dropped, or with `reask` answered with the failing call and asked again, once per draw (the
same follow-up of several draws in one request with `n`); each round's figures say what became of its
candidates (round_result.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fixloop.agent.asking import Drawer, FollowUp, copy_shown, grouped, reply_cap
from fixloop.agent.call_protocols import ToolCall
from fixloop.agent.candidates import BaseFiles, Candidate, FixKey, read_candidate
from fixloop.agent.draws import Draw, DrawVariety, pick, plan_draw, reask_messages
from fixloop.agent.edit_forms import CodeReplyWatch
from fixloop.agent.round_kinds import LONG_SAID, too_long
from fixloop.agent.round_result import RoundFigures, RoundResult
from fixloop.agent.tried import TriedFixes
from fixloop.errors import ModelError
from fixloop.events import Event, Notice, Reply
from fixloop.model.replies import ModelReply
from fixloop.model.request_options import Sampling
from fixloop.verify.port import Gate


@dataclass(frozen=True)
class SampleLimits:
    """One round's budgets and pace."""

    parallel: int = 2  # candidates judged at a time
    draws_at_once: int = 1  # requests with different prompts in flight at a time (1: the managed model)
    choices_at_once: int = 0  # replies one request may ask for with `n` (the managed model's slots; 0: any)
    temperature: float | None = 0.8  # None: not sent (a model that takes none)
    best_guess_temperature: float | None = 0.0
    seconds: float = 900.0
    tokens: int = 60_000
    batch: bool = True  # ask for the sampled candidates in one request with `n`


@dataclass(frozen=True)
class RoundRequest:
    """The prompt a round draws from, how calls are read from a reply, and which turn it is."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    stop: list[str] | None
    read_calls: Callable[[ModelReply], Sequence[ToolCall]]
    step: int
    count: Callable[[ModelReply], None]  # each reply's tokens, added to the run's
    samples: int = 6  # candidates to draw at most
    seed_base: int = 0
    focus: tuple[str, ...] = ()  # functions to point sampled candidates at, one each (see focus_points)
    deadline: float | None = None  # time.monotonic() when the run's time is up: drawing and judging stop
    long_answer: int | None = None  # a best guess longer than this (tokens) ends the round: lines come next


class CandidateSearch:
    """Runs sampling rounds for one fix run; `tried` remembers every failed change set across rounds.

    `variety` varies what each sampled draw is shown (draws.py); `reask`: a candidate that copies the code
    back unchanged is answered at once, in its round, with the failing call (once per draw; off by
    default: docs/search.md says why). `figures`
    holds each round's `RoundFigures`, in order."""

    def __init__(
        self,
        model: Drawer,
        gate: Gate,
        base: Callable[[], Awaitable[BaseFiles]],
        limits: SampleLimits,
        *,
        emit: Callable[[Event], None],
        tried: TriedFixes | None = None,
        variety: DrawVariety | None = None,
        reask: bool = False,
        figures: list[RoundFigures] | None = None,
    ) -> None:
        self.model = model
        self.gate = gate
        self.base = base
        self.limits = limits
        self.emit = emit
        self.tried = tried if tried is not None else TriedFixes()
        self.variety = variety if variety is not None else DrawVariety()
        self.reask = reask
        self.rounds = 0
        self.candidates = 0  # drawn in all rounds
        self.figures = figures if figures is not None else []  # shared with another search: one run's list

    async def round(self, request: RoundRequest) -> RoundResult:
        """Draw, judge and choose; returns when drawing is over and every judging has finished."""
        self.rounds += 1
        result = RoundResult()
        state = _RoundState(time.monotonic(), await self.base(), asyncio.Semaphore(self.limits.parallel))
        if request.samples > 1:
            self._notice(
                f"drawing up to {request.samples} candidate fixes, judging {self.limits.parallel} at a time",
                request.step,
            )
        state.base.note_paths([str(message.get("content") or "") for message in request.messages])
        left = None if request.deadline is None else max(0.0, request.deadline - time.monotonic())
        try:
            async with asyncio.timeout(left):
                await self._draw_and_judge(request, state, result)
        except TimeoutError:  # what was verified by then still counts
            self._notice("the run's time is up: the round stops drawing and judging", request.step)
        finally:
            await cancel_quietly(state.judging)
        result.winner = min(state.verified, key=lambda c: (c.size, c.number), default=None)
        self._finish(result, request)
        return result

    async def _draw_and_judge(self, request: RoundRequest, state: _RoundState, result: RoundResult) -> None:
        """Each group of draws taken (its copies back asked again), every judging awaited."""
        async with contextlib.aclosing(self._draws(request, state)) as groups:
            async for group in groups:
                copies = [
                    (draw, reply)
                    for draw, reply in group
                    if self._take(draw.number, reply, request, state, result).unchanged
                ]
                if copies and self.reask and not self._should_stop(state):
                    await self._ask_again(copies, request, state, result)
                if group[0][0].number == 1:  # the best guess's verdict decides whether to sample at all
                    await asyncio.gather(*state.judging)
        await asyncio.gather(*state.judging)

    # ---- drawing ------------------------------------------------------------------------------------

    async def _draws(
        self, request: RoundRequest, state: _RoundState
    ) -> AsyncIterator[list[tuple[Draw, ModelReply]]]:
        """The candidates drawn, a group per request or requests drawn together (their copies back are
        asked again together), best guess first, until a stop condition."""
        limits = self.limits
        first = self._plan(request, 1)
        reply = await self._draw_one(first, request, Sampling(limits.best_guess_temperature))
        if reply is not None:
            yield [(first, reply)]
        if too_long(reply, request.long_answer):
            self._notice(LONG_SAID.format(reply.completion_tokens), request.step)
            return
        number = 1
        batch = self._plan(request, 2, focus=False)  # one request: one prompt for all its choices
        while self.limits.batch and request.samples - number > 1 and not self._should_stop(state):
            count = min(request.samples - number, limits.choices_at_once or request.samples)
            replies = await self._draw_batch(batch, request, count, reply_cap(reply))
            if not replies:
                break  # the batch failed: the round's other draws come one request each
            yield [(Draw(number + n, batch.messages, batch.inputs), one) for n, one in enumerate(replies, 1)]
            number += len(replies)
        while number < request.samples and not self._should_stop(state):
            draws = [
                self._plan(request, index)
                for index in range(number + 1, min(request.samples, number + limits.draws_at_once) + 1)
            ]
            replies = await asyncio.gather(
                *(
                    self._draw_one(
                        draw, request, Sampling(limits.temperature, request.seed_base + draw.number)
                    )
                    for draw in draws
                )
            )
            number += len(draws)
            drawn = [(draw, reply) for draw, reply in zip(draws, replies, strict=True) if reply is not None]
            if drawn:
                yield drawn

    def _plan(self, request: RoundRequest, number: int, *, focus: bool = True) -> Draw:
        """What draw `number` is shown (draws.py); the batch's is not pointed at one suspect."""
        return plan_draw(
            request.messages, number, request.focus if focus else (), self.variety, self.tried.lines()
        )

    async def _draw_one(self, draw: Draw, request: RoundRequest, sampling: Sampling) -> ModelReply | None:
        try:
            reply = await self.model.complete(
                draw.messages,
                tools=request.tools,
                stop=request.stop,
                watch=CodeReplyWatch(),
                sampling=sampling,
            )
        except ModelError as error:
            self._notice(f"a candidate could not be drawn: {error.message}", request.step)
            return None
        self._counted(reply, request)
        return reply

    async def _draw_batch(
        self,
        draw: Draw,
        request: RoundRequest,
        count: int,
        max_tokens: int | None = None,
        *,
        sampling: Sampling | None = None,
    ) -> list[ModelReply]:
        """`count` candidates in one request with `n`, each reply at most `max_tokens` long and cut when its
        code is complete; the request ends when its last reply does."""
        how = sampling or Sampling(
            self.limits.temperature, request.seed_base + 2, n=count, max_tokens=max_tokens
        )
        try:
            replies = await self.model.complete_choices(
                draw.messages, how, tools=request.tools, stop=request.stop, watch=CodeReplyWatch
            )
        except ModelError as error:  # this request failed, not batching: the next round batches again
            self._notice(f"{count} candidates could not be drawn at once: {error.message}", request.step)
            return []
        if len(replies) == 1:
            self.limits = _without_batch(self.limits)  # the endpoint ignores `n`: one request each
        for reply in replies:
            self._counted(reply, request)
        return replies[:count]

    async def _ask_again(
        self,
        copies: Sequence[tuple[Draw, ModelReply]],
        request: RoundRequest,
        state: _RoundState,
        result: RoundResult,
    ) -> None:
        """Draws that copied the code back are answered with the failing call, once each: the same follow-up
        of several draws in one request with `n`, different ones as many at a time as the endpoint serves
        (follow_ups.py); the answers are judged like any candidate of the round."""
        groups = grouped(
            [self._reask(draw, reply, request) for draw, reply in copies],
            self.limits.choices_at_once if self.limits.batch else 1,
        )
        at_once = max(1, self.limits.draws_at_once)
        for start in range(0, len(groups), at_once):
            if start and self._should_stop(state):
                return
            chunk = groups[start : start + at_once]
            answers = await asyncio.gather(*(self._ask_group(group, request) for group in chunk))
            for group, replies in zip(chunk, answers, strict=True):
                for follow_up, answer in zip(group, replies, strict=False):
                    result.asked_again += 1
                    self._take(follow_up.draw.number, answer, request, state, result, again=True)

    async def _ask_group(self, group: list[FollowUp], request: RoundRequest) -> list[ModelReply]:
        """The answers to one group of like follow-ups: one request with `n` where the endpoint honours it,
        the rest one request each."""
        answers: list[ModelReply] = []
        if len(group) > 1 and self.limits.batch:
            first = group[0]
            how = replace(first.sampling, n=len(group), max_tokens=reply_cap(first.copy))
            answers = await self._draw_batch(first.draw, request, len(group), sampling=how)
        for one in group[len(answers) :]:
            if (answer := await self._draw_one(one.draw, request, one.sampling)) is not None:
                answers.append(answer)
        return answers

    def _reask(self, draw: Draw, reply: ModelReply, request: RoundRequest) -> FollowUp:
        """The follow-up of a copy back, and how it is sampled (the best guess as it was drawn)."""
        inputs = draw.inputs or pick(self.variety.inputs, 1)
        again = Draw(draw.number, reask_messages(draw, copy_shown(reply.content), inputs), inputs)
        temperature = self.limits.best_guess_temperature if draw.number == 1 else self.limits.temperature
        seed = None if draw.number == 1 else request.seed_base + 50 + draw.number
        return FollowUp(again, Sampling(temperature, seed), reply)

    def _counted(self, reply: ModelReply, request: RoundRequest) -> None:
        request.count(reply)
        self.emit(Reply(reply.content, reply.unused, reply.cut, request.step))

    def _should_stop(self, state: _RoundState) -> bool:
        limits = self.limits
        return (
            bool(state.verified)
            or time.monotonic() - state.started >= limits.seconds
            or state.tokens >= limits.tokens
        )

    # ---- judging ------------------------------------------------------------------------------------

    def _take(
        self,
        number: int,
        reply: ModelReply,
        request: RoundRequest,
        state: _RoundState,
        result: RoundResult,
        *,
        again: bool = False,
    ) -> Candidate:
        """Read the candidate in `reply` and start judging it, unless it is nothing new; its fate noted."""
        self.candidates += 1
        state.tokens += reply.prompt_tokens + reply.completion_tokens
        if result.first_reply is None or (again and number == result.candidates[0].number):
            result.first_reply = reply
        candidate = read_candidate(number, reply.content, list(request.read_calls(reply)), state.base)
        result.candidates.append(candidate)
        label = f"candidate {number} of {request.samples}" if request.samples > 1 else "the corrected code"
        label += ", asked again" if again else ""
        fate, why = self._fate(candidate, state)
        result.fates.append(fate)
        if fate == "unchanged":
            asking = "; asking again with the failing call" if self.reask and not again else ""
            self._notice(f"{label}: changes nothing — {candidate.problem}{asking}", request.step)
        elif fate == "invalid":
            self._notice(f"{label}: no usable fix — {candidate.problem}", request.step)
        elif fate != "judged":
            self._notice(f"{label}: {why[:200]}; not judged again", request.step)
        else:
            state.seen[candidate.key] = number
            state.judging.append(
                asyncio.ensure_future(self._judge(candidate, label, request.step, state, result))
            )
        return candidate

    def _fate(self, candidate: Candidate, state: _RoundState) -> tuple[str, str]:
        """One of FATES, and why it is not judged."""
        if not candidate.changes:
            return ("unchanged" if candidate.unchanged else "invalid"), candidate.problem
        same = state.seen.get(candidate.key)
        if same is not None:
            return "duplicates", f"same as candidate {same}"
        tried = self.tried.get(candidate.key)
        if tried is not None:
            return "tried before", f"tried before ({tried.reason})"
        return "judged", ""

    async def _judge(
        self, candidate: Candidate, label: str, step: int, state: _RoundState, result: RoundResult
    ) -> None:
        async with state.slots:
            verdict = await self.gate.judge(candidate.changes)
        result.verdicts[candidate.number] = verdict
        if verdict.accepted:
            state.verified.append(candidate)
            self._notice(f"{label}: verified ({candidate.size} changed line(s))", step)
            return
        reason = verdict.reasons[0] if verdict.reasons else "rejected"
        self.tried.add(candidate.key, candidate.describe(), reason)
        self._notice(f"{label}: rejected — {reason}", step)

    def _finish(self, result: RoundResult, request: RoundRequest) -> None:
        figures = result.figures
        self.figures.append(figures)
        drawn, step = len(result.candidates), request.step
        if request.samples > 1 or result.asked_again:
            self.emit(Notice(f"round {self.rounds}: {figures.describe()}", step, "round"))
        if drawn <= 1:
            return  # the one candidate's line said it all
        if result.winner is not None:
            verified = sum(1 for verdict in result.verdicts.values() if verdict.accepted)
            self._notice(
                f"{verified} of {drawn} candidate(s) verified; proposing candidate "
                f"{result.winner.number} (the smallest diff: {result.winner.size} line(s))",
                step,
            )
        else:
            self._notice(f"none of {drawn} candidate(s) passed the tests", step)

    def _notice(self, text: str, step: int) -> None:
        self.emit(Notice(text, step, "candidate"))


@dataclass
class _RoundState:
    started: float
    base: BaseFiles
    slots: asyncio.Semaphore
    tokens: int = 0
    seen: dict[FixKey, int] = field(default_factory=dict)  # candidate key -> the first number with it
    judging: list[asyncio.Future[None]] = field(default_factory=list)
    verified: list[Candidate] = field(default_factory=list)


def _without_batch(limits: SampleLimits) -> SampleLimits:
    return replace(limits, batch=False)


async def cancel_quietly(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel unfinished tasks and wait for them to wind down (their clean-ups are shielded)."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(BaseException):
            await task
