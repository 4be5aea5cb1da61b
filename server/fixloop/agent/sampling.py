"""Generate and validate: draw N candidate fixes from one prompt, verify each alone, keep the smallest.

The first candidate is the model's best guess (temperature 0), the others are drawn at the sampling
temperature with distinct seeds — in one request with `n` where the endpoint honours it (llama.cpp's
llama-server with a slot each: the prompt read once), else one request each, as many at a time as the
endpoint serves at once (one for llama-cpp-python's server). Each distinct
candidate is judged by the gate on a clean copy of its own, up to `parallel` at a time, while the next ones
are drawn; a candidate already judged (in this round or before) is not judged again. Drawing stops at the
first verified candidate, when N are drawn, or when the round's time or token budget is spent; of the
verified ones the smallest diff wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from fixloop.agent.candidates import BaseFiles, Candidate, read_candidate
from fixloop.agent.edit_forms import CodeReplyWatch, with_focus
from fixloop.agent.tried import TriedFixes
from fixloop.errors import ModelError
from fixloop.events import Event, Notice, Reply
from fixloop.model.client import Sampling
from fixloop.model.replies import ModelReply
from fixloop.result import FileChange


class Judge(Protocol):
    """What a round needs of the verification gate."""

    async def judge(self, changes: list[FileChange]) -> Any: ...


class Drawer(Protocol):
    """What a round needs of the chat model."""

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
        watch: Any = None,
        sampling: Sampling | None = None,
    ) -> ModelReply: ...

    async def complete_choices(
        self,
        messages: Sequence[dict[str, Any]],
        sampling: Sampling,
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
    ) -> list[ModelReply]: ...


@dataclass(frozen=True)
class SampleLimits:
    """One round's budgets and pace."""

    samples: int = 6
    parallel: int = 2  # candidates judged at a time
    draws_at_once: int = 1  # requests in flight at a time (1: a single-slot server)
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
    read_calls: Callable[[ModelReply], Sequence[Any]]
    step: int
    count: Callable[[ModelReply], None]  # each reply's tokens, added to the run's
    samples: int = 6  # candidates to draw at most
    seed_base: int = 0
    focus: tuple[str, ...] = ()  # functions to point sampled candidates at, one each (see focus_points)


@dataclass
class RoundResult:
    """How a round went: the verified winner (if any), every candidate, and the verdicts of those judged."""

    winner: Candidate | None = None
    candidates: list[Candidate] = field(default_factory=list)
    verdicts: dict[int, Any] = field(default_factory=dict)  # candidate number -> the gate's verdict
    first_reply: ModelReply | None = None

    @property
    def first(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


class CandidateSearch:
    """Runs sampling rounds for one fix run; `tried` remembers every failed change set across rounds."""

    def __init__(
        self,
        model: Drawer,
        gate: Judge,
        base: Callable[[], Awaitable[BaseFiles]],
        limits: SampleLimits,
        *,
        emit: Callable[[Event], None],
        tried: TriedFixes | None = None,
    ) -> None:
        self.model = model
        self.gate = gate
        self.base = base
        self.limits = limits
        self.emit = emit
        self.tried = tried if tried is not None else TriedFixes()
        self.rounds = 0
        self.candidates = 0  # drawn in all rounds

    async def round(self, request: RoundRequest) -> RoundResult:
        """Draw, judge and choose; returns when drawing is over and every judging has finished."""
        self.rounds += 1
        result = RoundResult()
        state = _RoundState(time.monotonic(), await self.base(), asyncio.Semaphore(self.limits.parallel))
        limits = self.limits
        if request.samples > 1:
            self._notice(
                f"drawing up to {request.samples} candidate fixes, judging {limits.parallel} at a time",
                request.step,
            )
        state.base.note_paths([str(message.get("content") or "") for message in request.messages])
        try:
            async for number, reply in self._draws(request, state):
                self._take(number, reply, request, state, result)
                if number == 1:  # the best guess's verdict decides whether sampling is needed at all
                    await asyncio.gather(*state.judging)
            await asyncio.gather(*state.judging)
        finally:
            await cancel_quietly(state.judging)
        result.winner = min(state.verified, key=lambda c: (c.size, c.number), default=None)
        self._finish(result, request.step)
        return result

    # ---- drawing ------------------------------------------------------------------------------------

    async def _draws(
        self, request: RoundRequest, state: _RoundState
    ) -> AsyncIterator[tuple[int, ModelReply]]:
        """(number, reply) for each candidate drawn, best guess first, until a stop condition."""
        limits = self.limits
        first = await self._draw_one(request, Sampling(limits.best_guess_temperature))
        if first is not None:
            yield 1, first
        number = 1
        if limits.batch and request.samples > 2 and not self._should_stop(state):
            replies = await self._draw_batch(request, request.samples - 1, _batch_cap(first))
            for reply in replies:
                number += 1
                yield number, reply
            if len(replies) > 1:
                return
        while number < request.samples and not self._should_stop(state):
            todo = range(number + 1, min(request.samples, number + limits.draws_at_once) + 1)
            replies = await asyncio.gather(
                *(
                    self._draw_one(
                        request,
                        Sampling(limits.temperature, request.seed_base + index),
                        self._focus(request, index),
                    )
                    for index in todo
                )
            )
            for reply in replies:
                number += 1
                if reply is not None:
                    yield number, reply

    @staticmethod
    def _focus(request: RoundRequest, number: int) -> str | None:
        """The function candidate `number` (2, 3, ...) is pointed at: the second shown, the third, ..."""
        return request.focus[(number - 1) % len(request.focus)] if request.focus else None

    async def _draw_one(
        self, request: RoundRequest, sampling: Sampling, focus: str | None = None
    ) -> ModelReply | None:
        messages = with_focus(request.messages, focus) if focus else request.messages
        try:
            reply = await self.model.complete(
                messages, tools=request.tools, stop=request.stop, watch=CodeReplyWatch(), sampling=sampling
            )
        except ModelError as error:
            self._notice(f"a candidate could not be drawn: {error.message}", request.step)
            return None
        self._counted(reply, request)
        return reply

    async def _draw_batch(
        self, request: RoundRequest, count: int, max_tokens: int | None = None
    ) -> list[ModelReply]:
        """`count` candidates in one request with `n`, each reply at most `max_tokens` long: unlike a
        streamed draw, a batch cannot be cut when its code is complete, and it ends with its longest reply."""
        sampling = Sampling(self.limits.temperature, request.seed_base + 2, n=count, max_tokens=max_tokens)
        try:
            replies = await self.model.complete_choices(
                request.messages, sampling, tools=request.tools, stop=request.stop
            )
        except ModelError:
            replies = []
        if len(replies) <= 1:
            self.limits = _without_batch(self.limits)  # the endpoint ignores `n`: one request each
        for reply in replies:
            self._counted(reply, request)
        return replies[:count]

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
        self, number: int, reply: ModelReply, request: RoundRequest, state: _RoundState, result: RoundResult
    ) -> None:
        """Read the candidate in `reply` and start judging it, unless it is nothing new."""
        self.candidates += 1
        state.tokens += reply.prompt_tokens + reply.completion_tokens
        result.first_reply = result.first_reply or reply
        candidate = read_candidate(number, reply.content, list(request.read_calls(reply)), state.base)
        result.candidates.append(candidate)
        label = f"candidate {number} of {request.samples}" if request.samples > 1 else "the corrected code"
        if not candidate.changes:
            self._notice(f"{label}: no usable fix — {candidate.problem}", request.step)
            return
        same = state.seen.get(candidate.key)
        tried = self.tried.get(candidate.key)
        if same is not None or tried is not None:
            why = f"same as candidate {same}" if same is not None else f"tried before ({tried.reason})"
            self._notice(f"{label}: {why[:200]}; not judged again", request.step)
            return
        state.seen[candidate.key] = number
        state.judging.append(
            asyncio.ensure_future(self._judge(candidate, label, request.step, state, result))
        )

    async def _judge(
        self, candidate: Candidate, label: str, step: int, state: _RoundState, result: RoundResult
    ) -> None:
        async with state.slots:
            verdict = await self.gate.judge(list(candidate.changes))
        result.verdicts[candidate.number] = verdict
        if verdict.accepted:
            state.verified.append(candidate)
            self._notice(f"{label}: verified ({candidate.size} changed line(s))", step)
            return
        reason = verdict.reasons[0] if verdict.reasons else "rejected"
        self.tried.add(candidate.key, candidate.describe(), reason)
        self._notice(f"{label}: rejected — {reason}", step)

    def _finish(self, result: RoundResult, step: int) -> None:
        drawn = len(result.candidates)
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
    seen: dict[Any, int] = field(default_factory=dict)  # candidate key -> the first number with it
    judging: list[asyncio.Future[None]] = field(default_factory=list)
    verified: list[Candidate] = field(default_factory=list)


def _batch_cap(first: ModelReply | None) -> int | None:
    """Tokens a batched candidate may take: twice the best guess's answer (the same function, rewritten),
    at least 1024; None (the client's cap) when the best guess's length is unknown."""
    if first is None or first.completion_tokens <= 0:
        return None
    return max(1024, 2 * first.completion_tokens)


def _without_batch(limits: SampleLimits) -> SampleLimits:
    return replace(limits, batch=False)


async def cancel_quietly(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel unfinished tasks and wait for them to wind down (their clean-ups are shielded)."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(BaseException):
            await task
