"""`fixloop bench`: every case × mode × repeat in its own copy, N at a time, judged, recorded, resumable."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fixloop.bench.cases import BenchCase, CaseCopy, resolve_test_command
from fixloop.bench.judge import Judge, Verdict
from fixloop.bench.merge import is_report_command, run_report
from fixloop.bench.mode_run import ModeRun
from fixloop.bench.modes import mode
from fixloop.bench.options import BenchOptions
from fixloop.bench.provenance import Provenance, provenance
from fixloop.bench.report import write_report
from fixloop.bench.statuses import status_label
from fixloop.bench.store import ResultsStore, RunRecord, run_key
from fixloop.bench.table import bench_text
from fixloop.config import Settings, load_settings
from fixloop.engine import is_local, model_endpoint
from fixloop.errors import FixloopError

EXIT_RAN, EXIT_BAD_INPUT = 0, 2
FINISH_MARGIN = 0.2  # of the run timeout, left for a round under way when the run's own budget ends
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Unit:
    """One run to do: a case, a mode, the repeat's number."""

    case: BenchCase
    mode: str
    repeat: int


@dataclass(frozen=True)
class RunContext:
    """What every run of one bench shares: the settings given, the model, the judge, the row's origin."""

    overrides: Mapping[str, Any]
    model: str
    judge: Judge
    origin: Provenance
    run_timeout: float = 300.0


async def run_unit(unit: Unit, context: RunContext) -> RunRecord:
    """Copy the case, run the mode on the copy, judge its diff; every failure becomes a status. A run past
    the run timeout is cancelled (its test processes killed, its copy removed) and counts as not fixed."""
    baseline = await context.judge.baseline(unit.case)  # once per case, before the run's clock starts
    started = time.monotonic()
    if baseline.problem:
        outcome, stopped = ModeRun(False, "", error=f"the case cannot be judged: {baseline.problem}"), ""
    else:
        outcome, stopped = await _run_mode(unit, context)
    wall = time.monotonic() - started
    verdict = await _verdict(unit, context, outcome, stopped)
    return _record(unit, context, outcome, verdict, wall)


async def _run_mode(unit: Unit, context: RunContext) -> tuple[ModeRun, str]:
    """The mode's run on a copy of the case, and why it was stopped ("" unless it hit the run timeout)."""
    case = unit.case
    deadline = time.monotonic() + context.run_timeout
    try:
        async with asyncio.timeout(context.run_timeout):
            async with CaseCopy(case) as root:
                command = list(resolve_test_command(case, root))
                settings = load_settings(root, {**context.overrides, "testCommand": command})
                # The run's own time budget ends before the bench's timeout, so it ends as a run does:
                # with its outcome, its rounds and its transcript, not cut off.
                budget = max(1.0, deadline - time.monotonic() - FINISH_MARGIN * context.run_timeout)
                settings = replace(settings, max_seconds=min(settings.max_seconds, budget))
                return await mode(unit.mode)(case, root, settings), ""
    except TimeoutError:
        stopped = f"stopped at the run timeout ({context.run_timeout:g} s): not fixed in time"
        return ModeRun(False, "", summary=stopped), stopped
    except FixloopError as error:
        return ModeRun(False, "", error=error.message), ""
    except Exception as error:  # one broken run must not end the bench: it is an error row
        log.exception("bench run of %s in mode %s failed", case.name, unit.mode)
        return ModeRun(False, "", error=f"internal error: {type(error).__name__}: {error}"), ""


async def _verdict(unit: Unit, context: RunContext, outcome: ModeRun, stopped: str) -> Verdict:
    """The judge's verdict on the run's diff; a stopped or failed run is not judged."""
    try:
        if stopped:
            return Verdict("not_fixed", stopped)
        if outcome.error:
            return Verdict("error", outcome.error)
        return await context.judge.judge(unit.case, outcome.diff, claimed=outcome.claimed)
    except Exception as error:
        log.exception("judging %s in mode %s failed", unit.case.name, unit.mode)
        return Verdict("error", f"the judge failed: {type(error).__name__}: {error}")


def _record(unit: Unit, context: RunContext, outcome: ModeRun, verdict: Verdict, wall: float) -> RunRecord:
    case = unit.case
    return RunRecord(
        case.name,
        unit.mode,
        unit.repeat,
        context.model,
        verdict.status,
        outcome.claimed,
        verdict.note,
        outcome.summary[:300],
        outcome.steps,
        outcome.attempts,
        outcome.prompt_tokens,
        outcome.completion_tokens,
        outcome.model_seconds,
        outcome.test_seconds,
        wall,
        verdict.seconds,
        outcome.transcript,
        outcome.diff[:20_000],
        case.kind,
        _edits_bug_file(case, outcome.diff),
        commit=context.origin.commit,
        model_id=context.origin.model_id,
        machine=context.origin.machine,
        distinct=outcome.distinct,
        drawn=outcome.drawn,
        rounds_tried=outcome.rounds_tried,
        hidden_checks=len(case.hidden_tests),
        reference=case.reference.describe() if case.reference and verdict.status == "plausible" else "",
        line_answers_invalid=outcome.line_answers_invalid,
        line_answers_drawn=outcome.line_answers_drawn,
        candidates_unchanged=outcome.candidates_unchanged,
        candidates_drawn=outcome.candidates_drawn,
        prompt_processed=outcome.prompt_processed,
        prompt_cached=outcome.prompt_cached,
        model_requests=outcome.model_requests,
        origin=outcome.origin,
    )


def _edits_bug_file(case: BenchCase, diff: str) -> bool | None:
    """Whether the diff touches a file the case names as buggy (a localization figure)."""
    if not case.bug_files:
        return None
    touched = {line[6:].strip() for line in diff.splitlines() if line.startswith(("--- a/", "+++ b/"))}
    return bool(touched & set(case.bug_files))


def _line(done: int, total: int, record: RunRecord) -> str:
    note = f"  {record.note}" if record.status != "fixed" and record.note else ""
    return (
        f"[{done}/{total}] {record.case} {record.mode}#{record.repeat}: {status_label(record.status)}  "
        f"steps={record.steps} tokens={record.prompt_tokens}+{record.completion_tokens} "
        f"model={record.model_seconds:.1f}s tests={record.test_seconds:.1f}s "
        f"wall={record.wall_seconds:.1f}s{note}"
    )[:400]


async def bench(options: BenchOptions, overrides: Mapping[str, Any]) -> list[RunRecord]:
    """Run what is not in the results file yet; return every run's record, finished before or now."""
    settings = load_settings(Path.cwd(), overrides)
    settings.require_model()
    store = ResultsStore(options.results)
    store.check_writable()
    units = [
        Unit(case, name, repeat)
        for case in options.cases
        for repeat in range(1, options.repeat + 1)
        for name in options.modes
    ]
    key = lambda unit: run_key(unit.case.name, unit.mode, unit.repeat, settings.model)  # noqa: E731
    finished = {} if options.fresh else _finished(store)
    todo = [unit for unit in units if key(unit) not in finished]
    _say_the_plan(options, len(units), len(units) - len(todo))
    judge = Judge(test_timeout=options.judge_test_timeout, run_timeout=options.judge_timeout)
    context = RunContext(overrides, settings.model, judge, provenance(settings.model), options.run_timeout)
    new = await _run_units(todo, context, store, options.jobs, settings)
    return [new.get(key(unit)) or finished[key(unit)] for unit in units]


def _finished(store: ResultsStore) -> dict[tuple[str, str, int, str], RunRecord]:
    """The runs the results file holds; an error (the endpoint down, a setup that failed) is no result: a
    rerun tries it again."""
    return {key: record for key, record in store.load().items() if record.status != "error"}


def _say_the_plan(options: BenchOptions, runs: int, skipped: int) -> None:
    if options.bundled is not None:
        print(f"bench: no CASES_DIR named: the cases that ship with fixloop ({options.bundled})", flush=True)
    print(
        f"bench: {len(options.cases)} case(s) x {len(options.modes)} mode(s) x {options.repeat} repeat(s) "
        f"= {runs} run(s), {options.jobs} at a time; results in {options.results}"
        + (f"; shard {options.shard[0]}/{options.shard[1]}" if options.shard else "")
        + (f"; {skipped} finished before, skipped (--fresh runs them again)" if skipped else ""),
        flush=True,
    )


async def _run_units(
    todo: list[Unit], context: RunContext, store: ResultsStore, jobs: int, settings: Settings
) -> dict[tuple[str, str, int, str], RunRecord]:
    """Each run, `jobs` at a time, appended to the results as it finishes; the managed local model is
    started once before the first run's clock starts, and stopped at the end."""
    slots = asyncio.Semaphore(jobs)
    new: dict[tuple[str, str, int, str], RunRecord] = {}

    async def one(unit: Unit) -> None:
        async with slots:
            record = store.append(await run_unit(unit, context))
        new[record.key] = record
        print(_line(len(new), len(todo), record), flush=True)

    local = is_local(settings)
    try:
        if todo and local:  # fail early
            print("bench: starting the local model", flush=True)
            await model_endpoint(settings)
        await asyncio.gather(*(one(unit) for unit in todo))
    finally:
        if local:
            from fixloop.model.local import stop_local_server

            await asyncio.shield(stop_local_server())
    return new


async def run_bench(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """The `fixloop bench` command. Exit 0 when the bench ran (whatever the fix rate), 2 on bad input."""
    if is_report_command(args):
        return run_report(args)
    options = BenchOptions.from_args(args)
    records = await bench(options, overrides)
    print("\n" + bench_text(records, options.modes), flush=True)
    if options.report is not None:
        title = f"fixloop bench: {records[0].model if records else ''}, {len(options.cases)} case(s)"
        write_report(options.report, records, options.modes, title)
        print(f"\nreport: {options.report}", flush=True)
    sys.stdout.flush()
    return EXIT_RAN
