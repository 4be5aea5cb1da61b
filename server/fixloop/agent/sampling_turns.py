"""When the loop samples, and what the conversation keeps of it.

A start round comes before the first tool turn: the code form's one best guess (`edit_form: code`) or a
whole round of candidates (`strategy: sample`); the task prompt then ends with the code ask, so the round
draws from exactly the prefix the loop goes on with. Later rounds come after a rejected submit, a
repeated call (at temperature 0 a repeat means the model is stuck on one idea) or replies without a call in
a row (`LoopLimits.silent_turns`), while `rounds` last. A round
that finds nothing leaves the model its own best guess and what the tests said of it, plus every fix tried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from fixloop.agent.acting import ToolboxLike
from fixloop.agent.call_protocols import CallProtocol
from fixloop.agent.candidates import BaseFiles, Candidate, shadow_reader
from fixloop.agent.context import Conversation
from fixloop.agent.edit_forms import focus_points, resample_ask, round_feedback
from fixloop.agent.run_state import LoopOutcome, Spent
from fixloop.agent.sampling import CandidateSearch, Drawer, RoundRequest, RoundResult, SampleLimits
from fixloop.agent.tried import TriedFixes
from fixloop.agent.warm_start import ShownFunction
from fixloop.config import Settings
from fixloop.events import Event, Verdict
from fixloop.model.replies import ModelReply
from fixloop.result import FileChange
from fixloop.shadow import ShadowWorkspace, unified_diff
from fixloop.shadow.files import check_relpath
from fixloop.verify import VerificationGate

Accept = Callable[[Candidate, Any], Awaitable[None]]  # the winner and its verdict: make it the proposal


class LoopView(Protocol):
    """What a round needs of the ReAct loop it serves."""

    conversation: Conversation
    protocol: CallProtocol
    toolbox: ToolboxLike
    compact_tools: bool
    spent: Spent

    def emit(self, event: Event) -> None: ...


class SamplingTurns:
    """The loop's sampling: `allows(why)` says whether a round may run now, `round` runs it."""

    def __init__(
        self,
        search: CandidateSearch,
        *,
        start_samples: int,
        samples: int,
        rounds: int,
        accept: Accept,
        focus: Sequence[str] = (),
        teach: bool = True,
    ) -> None:
        self.search = search
        self.start_samples = start_samples  # 0: no start round; 1: the code form's best guess alone
        self.samples = samples
        self.rounds = rounds
        self.accept = accept
        self.focus = tuple(focus)  # point sampled candidates at different functions of the prompt's code
        self.teach = teach  # a failed round shows expected vs actual, the diff and what was tried
        self._started = False

    @property
    def starts_with_code(self) -> bool:
        """Whether the run's first turn asks for corrected code (the task prompt ends with that ask)."""
        return self.start_samples > 0

    async def take(self, why: str, loop: LoopView) -> LoopOutcome | None:
        """A round for `loop` if one is allowed now; the run's outcome when it found a verified fix."""
        spent = loop.spent
        if not self.allows(why) or spent.exhausted():
            return None
        spent.steps += why != "start"  # a later round takes a turn of the budget
        request = loop.protocol.request(loop.toolbox.schemas(compact=loop.compact_tools))
        summary = await self.round(
            why,
            loop.conversation,
            round_tools(why, request.tools),
            request.stop,
            lambda reply: loop.protocol.read(reply, spent.steps).calls,
            spent.steps,
            lambda reply: loop.emit(spent.count(reply)),
        )
        if summary is None:
            return None
        spent.attempts += 1
        loop.emit(Verdict(True, (), spent.attempts, spent.steps))
        return spent.outcome("fixed", summary)

    def allows(self, why: str) -> bool:
        if why == "start":
            return self.start_samples > 0 and not self._started
        return self.rounds > 0 and self.samples > 0

    async def round(
        self,
        why: str,
        conversation: Conversation,
        tools: list[dict[str, Any]] | None,
        stop: list[str] | None,
        read_calls: Callable[[ModelReply], Sequence[Any]],
        step: int,
        count: Callable[[ModelReply], None],
    ) -> str | None:
        """Run one round; the summary of the verified fix it proposes, else None (the conversation then
        holds what the model should learn from it)."""
        ask: dict[str, Any] | None = None
        if why == "start":
            self._started = True
            samples = self.start_samples
        else:
            self.rounds -= 1
            samples = self.samples
            ask = {"role": "user", "content": resample_ask(self.search.tried.lines() if self.teach else [])}
        messages = [*conversation.messages, *([ask] if ask else [])]
        request = RoundRequest(
            messages,
            tools,
            stop,
            read_calls,
            step,
            count,
            samples,
            seed_base=100 * self.search.rounds,
            focus=self.focus,
        )
        result = await self.search.round(request)
        if result.winner is not None:
            await self.accept(result.winner, result.verdicts[result.winner.number])
            return _summary(result, samples)
        self._teach(conversation, ask, result)
        return None

    def _teach(self, conversation: Conversation, ask: dict[str, Any] | None, result: RoundResult) -> None:
        first = result.first
        if ask is not None:
            conversation.add(ask)
        reply = result.first_reply.content.strip() if result.first_reply is not None else ""
        conversation.add({"role": "assistant", "content": reply or "(no reply)"})
        verdict = result.verdicts.get(first.number) if first is not None else None
        evidence = tuple(getattr(verdict, "evidence", ()) or ())
        diff = unified_diff(list(first.changes)) if first is not None and first.changes else ""
        problem = first.problem if first is not None and not first.changes else ""
        if not self.teach:
            evidence, diff = tuple(getattr(verdict, "reasons", ()) or ())[:3], ""
        tried = self.search.tried.lines() if self.teach else []
        text = round_feedback(evidence, diff, tried, len(result.candidates), problem)
        conversation.add({"role": "user", "content": text}, observation=True)


def _summary(result: RoundResult, samples: int) -> str:
    winner = result.winner
    assert winner is not None
    where = f"candidate {winner.number} of {len(result.candidates)}" if samples > 1 else "the corrected code"
    return f"verified fix ({where}): {winner.describe()}"


Schemas = list[dict[str, Any]] | None


def round_tools(why: str, tools: Schemas) -> Schemas:
    """The tool schemas a round's requests carry: none for the start round, which asks for code (they would
    be half its prompt); the loop's own for a later round, which goes on from the loop's turns."""
    return None if why == "start" else tools


def first_request_tools(settings: Settings, tools: Schemas) -> Schemas:
    """The schemas of a run's first request (what a prompt cache is warmed with): the start round's, if
    the run has one, else the loop's."""
    return round_tools("start", tools) if start_samples(settings) else tools


def start_samples(settings: Settings) -> int:
    """Candidates the run's start round draws: all of a round under `strategy: sample`, the code form's
    best guess alone under `edit_form: code`, else 0 (no start round: the first turn is the loop's)."""
    if settings.strategy == "sample" and settings.samples > 1:
        return settings.samples
    return int(settings.edit_form == "code")


def sampling_for(
    settings: Settings,
    model: Drawer,
    gate: VerificationGate,
    shadow: ShadowWorkspace,
    emit: Callable[[Event], None],
    *,
    single_slot: bool,
    tried: TriedFixes | None = None,
    focus: Sequence[ShownFunction] = (),
) -> SamplingTurns | None:
    """The run's sampling as its settings say (None: none at all). `single_slot`: the endpoint answers one
    request at a time and ignores `n` (the managed llama.cpp model). `focus`: the functions the warm start
    shows, one pointed out to each sampled candidate."""
    start = start_samples(settings)
    rounds = settings.sample_rounds if settings.samples > 1 else 0
    if not start and not rounds:
        return None
    limits = SampleLimits(
        samples=settings.samples,
        parallel=settings.sample_parallel,
        draws_at_once=1 if single_slot else settings.sample_parallel,
        temperature=_sampled_temperature(settings),
        best_guess_temperature=settings.temperature or 0.0,
        seconds=settings.sample_seconds,
        tokens=settings.sample_tokens,
        batch=not single_slot,
    )

    async def base() -> BaseFiles:
        changes = await asyncio.to_thread(shadow.changes)
        return BaseFiles(shadow_reader(shadow.root, {change.path: change.old_text for change in changes}))

    async def accept(candidate: Candidate, verdict: Any) -> None:
        await asyncio.to_thread(put_changes, shadow, list(candidate.changes))
        gate.accept(list(verdict.changes or candidate.changes))

    search = CandidateSearch(model, gate, base, limits, emit=emit, tried=tried)
    return SamplingTurns(
        search,
        start_samples=start,
        samples=settings.samples,
        rounds=rounds,
        accept=accept,
        focus=focus_points(focus) if settings.sample_focus else (),
        teach=settings.feedback == "full",
    )


def _sampled_temperature(settings: Settings) -> float | None:
    """The sampled candidates' temperature; none is sent when the model's own is not (a model that rejects
    it, or one nothing is known of), unless `sampleTemperature` is set."""
    if settings.temperature is None and "sample_temperature" not in settings.explicit:
        return None
    return settings.sample_temperature


def put_changes(shadow: ShadowWorkspace, changes: list[FileChange]) -> None:
    """Make the shadow hold the baseline plus exactly `changes` (what the loop changed besides is undone)."""
    wanted = {change.path for change in changes}
    undo = [FileChange(c.path, c.new_text, c.old_text) for c in shadow.changes() if c.path not in wanted]
    for change in [*undo, *changes]:
        path = shadow.root / check_relpath(change.path)
        if change.new_text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(change.new_text.encode("utf-8", "surrogateescape"))
