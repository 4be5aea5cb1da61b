"""The search: one schedule of rounds under one budget, one pool of what the gate verified, one choice.

Rounds run in this order: the one-token round (mechanical, no model), the start round of candidates, the
code rounds after it (the next suspect, the lines), then the loop's tool turns (loop.py). When the loop is
silent, repeats itself or is stuck it hands back, and the next kind of round runs (round_kinds.py). Every
round adds what the gate verified to the pool (fix_pool.py) and the shadow goes back to the baseline; after
the first fix the search goes on for a bounded share of what is left, then ranking (ranking.py) chooses and
the gate makes the choice the proposal. A fix of the loop's own turns ends the search; so do cancel and the
run's budgets.

One-token changes start that share only when evidence speaks for one: the model writes its line itself
(naturalness, weighed as the one-token round ends). Otherwise the search goes on as if it had no fix, up to
RANK_RESERVE before the budget (the ranking's time), so the model's rounds get their turn: live, the
one-token round found a lone wrong change on semver_compare and blog_slugs, and the share after it ended
the run at 107 s and 94 s of 300, one candidate round or none asked.
"""

from __future__ import annotations

import time

from fixloop.agent.candidates import describe_changes, fix_key
from fixloop.agent.fix_pool import FixPool, PooledFix
from fixloop.agent.loop import ReActLoop
from fixloop.agent.mutant_round import SHARE as MUTANT_SHARE
from fixloop.agent.mutant_round import MutantRound
from fixloop.agent.naturalness import Complete, naturalness_score, once_per_prompt, weigh
from fixloop.agent.ranking import Choose, rank, speaks_for
from fixloop.agent.round_kinds import LONG_ANSWER_TOKENS, LOOP_ASK, SAID, RoundKind
from fixloop.agent.run_state import LoopOutcome, RunEnds, SampleWhy
from fixloop.agent.sampling_turns import SamplingTurns, round_tools
from fixloop.agent.written_checks import WrittenChecks, broken_checks
from fixloop.errors import FixloopError
from fixloop.events import Notice
from fixloop.result import FileChange
from fixloop.verify.port import Gate

PLAIN = "passes the tests; check the logic"  # a mechanical fix that nothing else speaks for
BROKE = "it fails a check the model wrote that the code passed before"  # the best fix broke a written check
EARLY_SECONDS = 30.0  # weighing the one-token round's fixes as it ends, at most
RANK_RESERVE = 60.0  # seconds before the budget a search with only unsupported one-token fixes stops
RANK_RESERVE_SHARE = 0.2  # of the run's budget, when that is less


class Settled(RunEnds):
    """The pool is settled: enough verified fixes, or the time after the first is up."""


class Search:
    """Runs the rounds of one run; `run()` returns its outcome, the pool holds every verified fix."""

    def __init__(
        self,
        loop: ReActLoop,
        gate: Gate,
        *,
        sampling: SamplingTurns | None = None,
        mutants: MutantRound | None = None,
        pool: FixPool | None = None,
        choose: Choose | None = None,
        failure: str = "",
        checks: WrittenChecks | None = None,
        complete: Complete | None = None,
    ) -> None:
        self.loop, self.gate, self.sampling, self.mutants = loop, gate, sampling, mutants
        self.pool = pool if pool is not None else FixPool()
        self.choose, self.failure = choose, failure  # the ranking's judge and what it is shown
        self.checks = checks  # the ranking's model-written checks
        # the line writer, asked once per prompt: the one-token round's fixes are weighed as it ends and
        # again with the whole pool in the ranking
        self.complete = once_per_prompt(complete) if complete is not None else None
        self.rounds_before: list[str] = []  # kinds of round tried before the model's ("mutants")
        loop.rounds = self

    async def run(self) -> LoopOutcome:
        """Every round until the search is over; every end comes here, and the outcome is built here."""
        try:
            await self._mutant_round()
            await self.sample("start")
            await self._code_rounds_after_start()
            while True:
                await self.loop.next_turn()
        except RunEnds as ended:
            end = ended
        except FixloopError as error:  # the model failed after a fix was verified: the fix still counts
            if not self.pool:
                raise
            end = RunEnds("not_fixed", f"the search stopped: {error.message}")
        if end.status == "fixed" and not isinstance(end, Settled):  # the gate's verdict is told already
            await self._pool(self.gate_proposal(), "loop", end.summary, told=True)
        return self.loop.spent.outcome(await self._choose(end), self._tried())

    def gate_proposal(self) -> list[FileChange]:
        return list(self.gate.proposal)

    def _tried(self) -> list[str] | None:
        kinds = self.sampling.kinds if self.sampling is not None else None
        tried = [*self.rounds_before, *(kinds.tried if kinds is not None else ())]
        if kinds is not None or tried:
            self.loop.emit(Notice(f"rounds tried: {', '.join(tried) or 'none'}", self.loop.step, "rounds"))
            return tried
        return None

    async def _mutant_round(self) -> None:
        """One-token changes of the suspect lines, before the model is asked, in at most MUTANT_SHARE of the
        run's time; each verified one joins the pool."""
        if self.mutants is None:
            return
        spent = self.loop.spent
        left = spent.deadline - time.monotonic()
        seconds = min(left, MUTANT_SHARE * spent.limits.max_seconds)
        cutoff = self.pool.round_cutoff(spent.deadline)
        found = await self.mutants.round(self.loop.step, seconds, self.pool.wanted(), cutoff)
        self.rounds_before.append("mutants")
        for summary, changes in found:
            await self._pool(changes, "mutants", summary, applied=False)
        await self._weigh_mechanical()
        self._settle_if_done()

    async def _weigh_mechanical(self) -> None:
        """The one-token round's fixes, weighed at once by naturalness: one the model writes itself starts
        the pool's share of the time left; with none, the search goes on up to the ranking's reserve."""
        pool, loop = self.pool, self.loop
        spent = loop.spent
        if not pool or pool.until is not None:
            return
        if self.complete is not None:
            await weigh(pool.fixes, self.complete, min(EARLY_SECONDS, spent.deadline - time.monotonic()))
        natural = [fix for fix in pool.fixes if naturalness_score(fix) > 0]
        if natural:
            spent.stop_at(pool.cutoff(spent.deadline))
            said = (
                f"the model writes the line of {natural[0].describe()} itself: the search goes on for "
                f"{spent.cutoff - time.monotonic():.0f} s more at most"
            )
        else:
            budget = spent.limits.max_seconds
            spent.stop_at(
                spent.started + budget - min(RANK_RESERVE, RANK_RESERVE_SHARE * budget),
                "the search's time is up: the rest of the budget ranks the pool's fixes",
            )
            said = (
                "nothing beyond the tests speaks for the one-token change(s) yet: the search goes on for a "
                f"fix the model writes, up to {spent.cutoff - spent.started:.0f} s into the run"
            )
        loop.emit(Notice(said, loop.step, "pool"))

    async def sample(self, why: SampleWhy) -> None:
        """A round of candidate fixes (generate and validate) when the run's sampling allows one now. A
        later round takes a turn of the budget."""
        loop, sampling = self.loop, self.sampling
        loop.spent.silent_turns = 0
        if sampling is None or loop.spent.exhausted():
            return
        if sampling.kinds is not None and why in ("repeated", "silent", "stuck"):
            return await self._next_kind(why)
        if not sampling.allows(why):
            return
        loop.spent.steps += why != "start"
        tools = round_tools(why, loop.tool_request().tools)
        summary = await sampling.round(
            why,
            loop.conversation,
            tools,
            loop.tool_request().stop,
            loop.calls_in,
            loop.step,
            loop.count,
            deadline=loop.spent.deadline,
        )
        await self._found(summary, why)

    async def _code_rounds_after_start(self) -> None:
        """A start round of candidates that found nothing goes on through the kinds of code round before the
        loop's first tool turn: a round on each suspect not yet pointed at, then the lines (the line round's
        batch takes every slot of a local server, so the rounds that read the start round's prompt come
        first, while a slot has it cached: live, a suspect round after the lines read 3,089 tokens anew in
        108 s); a tool turn would read the tool schemas and the prompt anew (3,371 tokens in 125 s for one
        turn on 2 cores; in the bench's 100-odd runs of 2026-12-05 the loop's turns fixed none)."""
        sampling, loop = self.sampling, self.loop
        if sampling is None or sampling.kinds is None or not sampling.code_rounds_follow_start:
            return
        if sampling.start_answer_tokens > LONG_ANSWER_TOKENS and sampling.lines_may_come_first:
            sampling.kinds.first("lines")
            said = f"the corrected functions are long ({sampling.start_answer_tokens} tokens): lines first"
            loop.emit(Notice(said, loop.step, "rounds"))
        kinds = sampling.kinds
        while not loop.spent.exhausted():
            if kinds.left[:1] in (["lines"], ["loop"]) and "suspect" in kinds.tried and sampling.unfocused:
                kinds.again("suspect")  # the next suspect not yet pointed at, while its prompt is cached
            if kinds.left[:1] not in (["suspect"], ["lines"]):
                return
            await self._next_kind("start")

    async def _next_kind(self, why: SampleWhy) -> None:
        """Silence, a repeat or a stuck call: the next kind of round instead of another nudge; once every
        kind has been tried, the run ends, saying which were."""
        assert self.sampling is not None and self.sampling.kinds is not None
        loop, kinds = self.loop, self.sampling.kinds
        kind = kinds.take()
        if kind is None:
            reason = f"stuck with every kind of round tried ({kinds.said()})"
            loop.emit(Notice(reason, loop.step, "rounds"))
            raise await loop.submissions.final(reason, loop.last_reasons or (reason,))
        said = {"silent": "no tool call", "repeated": "a repeat", "stuck": "stuck", "start": "no fix yet"}
        loop.emit(Notice(f"{said.get(why, why)}: moving on to {SAID[kind]}", loop.step, "rounds"))
        loop.spent.steps += 1
        await self._found(await self._kind_round(kind, why), kind)

    async def _kind_round(self, kind: RoundKind, why: SampleWhy) -> str | None:
        """One round of `kind`; the verified fix's summary, else None (the conversation says what next).
        Before the loop's first turn (`why` "start") its requests carry no tool schemas."""
        sampling, loop = self.sampling, self.loop
        assert sampling is not None
        if kind == "loop":
            loop.conversation.add({"role": "user", "content": LOOP_ASK})
            return None
        if kind == "lines" and sampling.lines is not None:
            summary, feedback = await sampling.lines.round(loop.step, loop.count, loop.spent.deadline)
            loop.conversation.add({"role": "user", "content": feedback or LOOP_ASK}, observation=True)
            return summary
        request = loop.tool_request()
        return await sampling.round(
            "repeated",
            loop.conversation,
            round_tools(why, request.tools),
            request.stop,
            loop.calls_in,
            loop.step,
            loop.count,
            point=sampling.next_point(),
            counted=False,
            deadline=loop.spent.deadline,
        )

    async def _found(self, summary: str | None, round: str) -> None:
        """A round's verified fix (the gate holds it) joins the pool; the search ends once it is settled."""
        if summary is None:
            return
        await self._pool(self.gate_proposal(), round, summary)
        self._settle_if_done()
        asked = "It is verified; look for a different fix only if that one is wrong for some input."
        self.loop.conversation.add({"role": "user", "content": f"{summary}. {asked}"})

    async def _pool(
        self, changes: list[FileChange], round: str, summary: str, applied: bool = True, told: bool = False
    ) -> None:
        """Add a verified fix, tell the run (the gate's verdict, counted as an attempt, unless told already),
        remember it as tried, and put the shadow back to the baseline (the next round starts from the code as
        it was, not from this fix)."""
        loop = self.loop
        if not told:
            loop.submissions.verified_round()
        if self.pool.add(changes, round, summary, loop.spent.deadline):
            fix = self.pool.fixes[-1]
            said = f"verified fix {len(self.pool)} ({fix.origin}): {fix.describe()}"
            loop.emit(Notice(said, loop.step, "pool"))
            loop.submissions.tried.add(fix_key(changes), describe_changes(changes), "verified already")
            if self.pool.until is not None:
                loop.spent.stop_at(self.pool.until)
        if applied:
            await self.gate.accept([])  # the baseline again

    def _settle_if_done(self) -> None:
        if self.pool.settled():
            raise Settled("fixed", "the search is over")

    async def _choose(self, end: RunEnds) -> RunEnds:
        """The pool's best fix, by evidence (ranking.py), becomes the proposal; an empty pool: `end`."""
        if not self.pool:
            return end
        loop = self.loop
        left = loop.spent.started + loop.spent.limits.max_seconds - time.monotonic()
        ranking = await rank(self.pool.fixes, self.choose, self.failure, left, self.checks, self.complete)
        self.pool.fixes[:] = ranking.fixes
        best = ranking.fixes[0]
        await self.gate.accept(best.changes)
        loop.emit(Notice(f"{len(self.pool)} verified fix(es), ranked: {ranking.said}", loop.step, "pool"))
        return RunEnds("fixed", proposal_summary(best, len(self.pool)))


def proposal_summary(best: PooledFix, pooled: int) -> str:
    """The proposed fix in the user's words: what it changes, which round found it (a mechanical one-token
    change that nothing else speaks for: "passes the tests; check the logic"), and the pool's others."""
    others = f" ({pooled - 1} other verified fix(es) in the pool)" if pooled > 1 else ""
    broken = broken_checks(best)
    doubt = f"; {BROKE} ({', '.join(broken[:3])}): check the logic" if broken else ""
    if not best.mechanical:
        return f"{best.summary} — from {best.origin}{doubt}{others}"
    head = "verified fix" if speaks_for(best) else PLAIN
    return f"{head} — {best.origin}: {best.summary}{doubt}{others}"
