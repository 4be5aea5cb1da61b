"""The mutant round: before the model is asked, one-token changes (mutants.py) of the suspect lines, the
best-ranked line first (the operators of every line, then the variables and the lines left out), each
screened on the target tests alone and, if they pass, judged whole by the gate; the round ends once the gate
has accepted as many as the search's pool wants (a one-token change that passes the tests can still be
wrong: the pool weighs it against the others). A one-token bug is fixed in seconds, with no model.

Once a change is verified, the other changes of its line go next (`<` verified: `<=` is tried before any
other line), so the pool holds the rival rules of one spot for ranking to weigh.

The suspect lines come from the coverage ranking (each line scored like its function: the failing and
passing tests that run it) when the failure is an assertion in the test, else from the failing
tracebacks (the innermost frame's line in the code under test first, then the lines of its function
nearest it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fixloop.agent.candidates import BaseFiles
from fixloop.agent.localize import Suspect
from fixloop.agent.mutants import Mutant, body_around, mutants
from fixloop.agent.sampling import cancel_quietly
from fixloop.errors import FixloopError
from fixloop.events import Event, Notice
from fixloop.project import is_test_path
from fixloop.pytest_runner.results import TestOutcome
from fixloop.result import FileChange
from fixloop.verify.port import Gate

MOST_LINES = 16  # suspect lines changed, at most
MOST_MUTANTS = 200  # changes tried, at most
SHARE = 0.3  # of the run's time budget the round may take, at most
SCREEN_TIMES = 3.0  # a screen may take this many times the baseline's test run ...
SCREEN_SECONDS = 5.0  # ... and at least this long


@dataclass(frozen=True)
class Spot:
    """One suspect line of the code under test."""

    path: str
    line: int


def suspect_spots(
    suspects: Sequence[Suspect], failures: Sequence[TestOutcome], read: Callable[[str], str | None]
) -> list[Spot]:
    """The lines to change, best first: every suspect's lines (the ranking keeps five) by their own score,
    then the suspect's rank, then top to bottom; else the failing tracebacks' lines in the code under test."""
    ranked = sorted(
        (-score, rank, line, suspect.path)
        for rank, suspect in enumerate(suspects)
        for line, score in suspect.lines
    )
    spots = [Spot(path, line) for _score, _rank, line, path in ranked]
    if not spots:
        spots = traceback_spots(failures, read)
    return list(dict.fromkeys(spots))[:MOST_LINES]


def traceback_spots(failures: Sequence[TestOutcome], read: Callable[[str], str | None]) -> list[Spot]:
    """Per failing traceback, innermost code frame first: its line, then its function's lines nearest it."""
    spots: list[Spot] = []
    for failure in failures:
        for frame in reversed([f for f in failure.frames if not is_test_path(f.path)]):
            text = read(frame.path)
            around = body_around(text, frame.line) if text is not None else range(0)
            near = sorted(around, key=lambda line: (abs(line - frame.line), line > frame.line))
            spots += [Spot(frame.path, line) for line in (near or [frame.line])]
    return spots


class MutantRound:
    """One mutant round of a run (the engine builds it from the suspects and the failing tracebacks)."""

    def __init__(
        self,
        gate: Gate,
        base: Callable[[], Awaitable[BaseFiles]],
        spots: Sequence[Spot],
        emit: Callable[[Event], None],
        *,
        parallel: int = 2,
        screen_seconds: float = SCREEN_SECONDS,
    ) -> None:
        self.gate, self.base, self.spots, self.emit = gate, base, tuple(spots), emit
        self.parallel, self.screen_seconds = max(1, parallel), screen_seconds

    async def round(
        self, step: int, seconds: float, want: int = 1, cutoff: Callable[[], float] | None = None
    ) -> list[tuple[str, list[FileChange]]]:
        """Each verified change's summary and changes, at most `want` of them; at most `seconds` long, and
        once a change is verified, no later than `cutoff()` (the pool's: FixPool.cutoff); without one, the
        round ends at its first verified change."""
        todo = await self._mutants()
        if not todo:
            return []
        lines = len({(path, mutant.line) for path, _text, mutant in todo})
        self._say(
            f"trying {len(todo)} one-token change(s) of {lines} suspect line(s) before asking the model", step
        )
        tally = _Tally(max(1, want))
        queue = _Queue(todo)
        workers = [asyncio.ensure_future(self._work(queue, tally, step)) for _ in range(self.parallel)]
        started = time.monotonic()
        try:
            await _until_won(workers, tally, started + max(0.0, seconds), cutoff or time.monotonic)
        finally:
            await cancel_quietly(workers)
        spent = time.monotonic() - started
        self._say(
            f"one-token changes: {tally.tried} of {len(todo)} tried in {spent:.0f} s, "
            f"{tally.passed} passed the target tests, {len(tally.winners)} verified",
            step,
        )
        return [
            (f"{path} {mutant.said} (one-token change {number} of {len(todo)})", changes)
            for number, path, mutant, changes in tally.winners
        ]

    async def _mutants(self) -> list[tuple[str, str, Mutant]]:
        """(path, baseline text, change) for each change of each spot, in order, at most MOST_MUTANTS."""
        base = await self.base()
        found: list[tuple[str, str, Mutant]] = []
        for wide in (False, True):  # the operators of every line first, then variables and left-out lines
            for spot in self.spots:
                text = base.texts([spot.path]).get(spot.path)
                if text is not None and not is_test_path(spot.path):
                    found += [(spot.path, text, mutant) for mutant in mutants(text, spot.line, wide=wide)]
        return found[:MOST_MUTANTS]

    async def _work(self, queue: _Queue, tally: _Tally, step: int) -> None:
        """Take changes off the shared queue until it is empty or enough are verified."""
        while (taken := queue.take()) is not None:
            number, (path, text, mutant) = taken
            if tally.won:
                return
            changes = [FileChange(path, text, mutant.text)]
            tally.tried += 1
            try:
                if not await self.gate.screen(changes, self.screen_seconds):
                    continue
                tally.passed += 1
                verdict = await self.gate.judge(changes)
            except FixloopError as error:
                self._say(f"one-token change {number}: could not be tried: {error.message}", step)
                continue
            if verdict.accepted and not tally.won:
                tally.win((number, path, mutant, list(verdict.changes)))
                queue.next_from(path, mutant.line)
                self._say(f"one-token change {number}: {path} {mutant.said}: verified", step)
                continue
            reason = verdict.reasons[0] if verdict.reasons else "rejected"
            self._say(f"one-token change {number}: {path} {mutant.said}: rejected — {reason[:200]}", step)

    def _say(self, text: str, step: int) -> None:
        self.emit(Notice(text, step, "mutants"))


async def _until_won(
    workers: list[asyncio.Future[None]], tally: _Tally, deadline: float, cutoff: Callable[[], float]
) -> None:
    """Wait for the workers until enough changes are verified, all are done, or the deadline; once one is
    verified, no later than `cutoff()`."""
    pending = set(workers)
    first_win = asyncio.ensure_future(tally.first_win.wait())
    try:
        while pending and not tally.won and (left := deadline - time.monotonic()) > 0:
            waiting = pending if first_win.done() else {*pending, first_win}
            done, _ = await asyncio.wait(waiting, timeout=left, return_when="FIRST_COMPLETED")
            for task in done & pending:
                task.result()  # a worker's error ends the round
            pending -= done
            if first_win in done:  # once: a done waiter is not waited for again
                deadline = min(deadline, cutoff())
    finally:
        first_win.cancel()


class _Queue:
    """The round's changes, numbered in the order made, shared by the workers; a line can jump ahead."""

    def __init__(self, todo: Sequence[tuple[str, str, Mutant]]) -> None:
        self.left = list(enumerate(todo, 1))

    def take(self) -> tuple[int, tuple[str, str, Mutant]] | None:
        return self.left.pop(0) if self.left else None

    def next_from(self, path: str, line: int) -> None:
        """The changes of `path`'s `line` not yet taken go first."""
        self.left.sort(key=lambda item: (item[1][0], item[1][2].line) != (path, line))


class _Tally:
    def __init__(self, want: int) -> None:
        self.tried = 0
        self.passed = 0
        self.want = want
        self.winners: list[tuple[int, str, Mutant, list[FileChange]]] = []
        self.first_win = asyncio.Event()  # set with the first winner: the round's cutoff is then asked

    def win(self, winner: tuple[int, str, Mutant, list[FileChange]]) -> None:
        self.winners.append(winner)
        self.first_win.set()

    @property
    def won(self) -> bool:
        return len(self.winners) >= self.want
