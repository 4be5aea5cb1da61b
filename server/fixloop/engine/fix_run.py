"""FixRun: one fix run end to end: prepare (shadow copy, baseline, warm start), assemble the ReActLoop and its
sampling from the run's plan, run it, and finish with the gate's proposal as the result.

Every face (language server, CLI, benchmark, demo) runs fixes through `FixRun`; the engine knows
nothing of LSP. Cancellation is asyncio's: cancel the task awaiting `execute()`; the pytest process
group is killed, the model call dropped, the shadow removed, and CancelledError propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixloop.agent.candidates import describe_changes, fix_key, shadow_reader
from fixloop.agent.fix_pool import FixPool, PooledFix
from fixloop.agent.loop import LoopOutcome, ReActLoop
from fixloop.agent.mutant_round import MutantRound, suspect_spots
from fixloop.agent.prompts import another_fix_prompt, task_prompt
from fixloop.agent.round_result import RoundFigures
from fixloop.agent.sampling_turns import SamplingTurns
from fixloop.agent.search import Search, proposal_summary
from fixloop.agent.tried import TriedFixes
from fixloop.agent.warm_start import WarmStart
from fixloop.agent.written_checks import WrittenChecks
from fixloop.config import Settings
from fixloop.engine.assembly import (
    RoundMaterial,
    baseline_inputs,
    mutant_round,
    plan_run,
    sampling_for,
    written_checks,
)
from fixloop.engine.model_session import (
    check_endpoint,
    keep_first_prompt,
    model_endpoint,
    open_chat_model,
    warm_up,
)
from fixloop.engine.preparation import Preparation, Prepared
from fixloop.engine.request import FixRequest
from fixloop.engine.request_log import RequestLog
from fixloop.errors import FixloopError
from fixloop.events import Done, Event, Notice, Reply
from fixloop.model.client import ChatModel
from fixloop.model.profiles import with_profile
from fixloop.model.usage_tally import UsageTally
from fixloop.model.warm_up import settle
from fixloop.project_root import ProjectTarget
from fixloop.pytest_runner.results import TestOutcome
from fixloop.result import FileChange, FixResult, FixStatus
from fixloop.shadow import unified_diff
from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace
from fixloop.transcript import Transcript
from fixloop.verify import VerificationGate
from fixloop.verify.baseline import target_outcomes
from fixloop.verify.gate import failure_evidence

log = logging.getLogger(__name__)


class FixRun:
    """A single fix attempt; `execute()` returns the FixResult or raises a FixloopError."""

    def __init__(
        self, request: FixRequest, settings: Settings, on_event: Callable[[Event], None] | None = None
    ) -> None:
        self.request = request
        self.settings = with_profile(settings)
        self.plan = plan_run(self.settings)
        self.on_event = on_event
        self.run_id = request.run_id or uuid.uuid4().hex[:12]
        self.transcript: Transcript | None = None
        self.steps = 0
        self.attempts = 0
        self._started = time.monotonic()
        self._model: ChatModel | None = None
        self._replied = False
        self._preparation = Preparation(request, self.settings, self.plan, self.emit)
        self.conversation: tuple[dict[str, Any], ...] = ()  # the loop's messages, once it has run
        self.proposal: tuple[FileChange, ...] = ()  # a verified fix, relative to the tests' project
        self.round_figures: list[RoundFigures] = []  # each sampling round's, as the run goes
        self.pool: tuple[PooledFix, ...] = ()  # every verified fix of the run, best first

    @property
    def model_seconds(self) -> float:
        """Seconds spent waiting for the model so far (also after a run that raised)."""
        return self._model.seconds if self._model is not None else 0.0

    @property
    def model_tally(self) -> UsageTally:
        """The model's requests so far, their tokens and seconds (also after a run that raised)."""
        return self._model.tally if self._model is not None else UsageTally()

    @property
    def test_seconds(self) -> float:
        """Seconds spent running pytest so far (baseline, run_tests, the gate)."""
        runner = self._preparation.runner
        return runner.seconds if runner is not None else 0.0

    @property
    def transcript_path(self) -> Path | None:
        return self.transcript.path if self.transcript else None

    def emit(self, event: Event) -> None:
        if isinstance(event, Reply) and not self._replied and self._model is not None:
            self._replied = True  # its prompt, the run's first, is what a retry reads again
            keep_first_prompt(self.settings, self._model.base_url, self.request.test_ids[0])
        if self.transcript is not None:
            self.transcript.event(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a face's rendering bug must not end the run
                log.exception("event consumer failed")

    def _result(self, status: FixStatus, summary: str, **fields: Any) -> FixResult:
        return FixResult(
            run_id=self.run_id,
            status=status,
            test_ids=self.request.test_ids,
            summary=summary,
            seconds=time.monotonic() - self._started,
            transcript=str(self.transcript_path) if self.transcript_path else None,
            steps=self.steps,
            attempts=self.attempts,
            model_seconds=self.model_seconds,
            **self._model_figures(),
            test_seconds=self.test_seconds,
            **fields,
        )

    def _model_figures(self) -> dict[str, Any]:
        """The result's figures of the model's work, from the client's tally of every request (the loop's,
        the ranking's, the text completions'): requests, prompt tokens sent, processed and cached (None where
        no request said), completion tokens, the candidates the sampling rounds drew."""
        tally = self.model_tally
        return {
            "prompt_tokens": tally.prompt_tokens,
            "completion_tokens": tally.completion_tokens,
            "tokens_estimated": tally.estimated,
            "prompt_processed": tally.prompt_processed,
            "prompt_cached": tally.prompt_cached,
            "model_requests": tally.requests,
            "candidates_drawn": sum(figures.drawn for figures in self.round_figures),
        }

    def cancelled_result(self) -> FixResult:
        return self._result("cancelled", "cancelled")

    async def execute(self) -> FixResult:
        """Prepare, assemble, run, finish; whatever happens, a Done event and everything cleaned up."""
        self.settings.require_model()
        self.transcript = Transcript.open(self.run_id, self._header())
        # The endpoint (a managed local model starts here) and its prompt cache get ready meanwhile.
        opening = asyncio.ensure_future(self._open_model())
        try:
            prepared = await self._preparation.run(self.run_id, opening)
            self._model = prepared.model
            prepared.model.on_request = RequestLog(self.transcript, prepared.warm.text)
            search, gate = self._assemble(prepared)
            outcome = await self._run(search, prepared.model)
            return self._finish(outcome, gate, prepared.target)
        except asyncio.CancelledError:
            self.emit(Done("cancelled", "cancelled", self.steps))
            raise
        except FixloopError as error:
            self.emit(Done("error", error.message, self.steps))
            raise
        except Exception as error:
            log.exception("fix run failed")
            self.emit(Done("error", f"internal error: {type(error).__name__}: {error}", self.steps))
            raise
        finally:
            await self._close(opening)

    def _header(self) -> dict[str, Any]:
        """The transcript's first record: what was asked, with which settings."""
        settings = self.settings
        return {
            "root": str(self.request.root),
            "test_ids": list(self.request.test_ids),
            "model": settings.model,
            "base_url": settings.base_url,
            "protocol": settings.protocol,
            "max_steps": settings.max_steps,
            "attempts": settings.attempts,
            "strategy": settings.strategy,
            "edit_form": settings.edit_form,
            "samples": settings.samples,
            "sample_rounds": settings.sample_rounds,
            "temperature": settings.temperature,
        }

    async def _open_model(self) -> ChatModel:
        """The chat model for this run; a local endpoint's prompt cache is warmed with the fixed prefix."""
        settings = self.settings
        base_url, model_name = await model_endpoint(settings)
        await check_endpoint(settings, base_url, model_name)
        warm_up(settings, base_url, model_name, self.plan)
        return open_chat_model(settings, base_url, model_name)

    def _sampling(
        self, prepared: Prepared, gate: VerificationGate, tried: TriedFixes
    ) -> SamplingTurns | None:
        """The run's sampling, pointed at the warm start's functions and the baseline's failing calls (none
        when `failingInputs` is off) and outcomes (the line-level round's lines)."""
        inputs = baseline_inputs(prepared.baseline.run, prepared.failing) if self.plan.failing_inputs else ()
        material = RoundMaterial(prepared.warm.functions, inputs, failing_outcomes(prepared), prepared.hints)
        return sampling_for(self.plan, prepared.model, gate, prepared.shadow, self.emit, tried, material)

    def _assemble(self, prepared: Prepared) -> tuple[Search, VerificationGate]:
        """The search: its rounds (the loop with its tools among them), its gate and its pool, as the
        run's plan says."""
        plan, shadow, runner = self.plan, prepared.shadow, prepared.runner
        toolbox = self._toolbox(prepared)
        gate = VerificationGate(
            shadow,
            runner,
            prepared.baseline,
            allow_test_edits=plan.allow_test_edits,
            failing_inputs=plan.failing_inputs,
        )
        tried = TriedFixes()
        sampling = self._sampling(prepared, gate, tried)
        self.round_figures = sampling.search.figures if sampling is not None else []
        task, history = self._first_message(prepared.target.test_ids, prepared.warm, tried)
        loop = ReActLoop(
            prepared.model,
            toolbox,
            gate,
            task=task,
            history=history,
            tried=tried,
            emit=self.emit,
            protocol=plan.protocol,
            compact_tools=plan.compact_tools,
            sampling=sampling,
            limits=plan.loop,
        )
        return Search(
            loop,
            gate,
            sampling=sampling,
            mutants=self._mutants(prepared, gate),
            pool=FixPool(plan.keep_searching),
            choose=prepared.model.choose,
            complete=prepared.model.complete_line,
            failure="\n".join(filter(None, map(failure_evidence, failing_outcomes(prepared)))),
            checks=self._written_checks(prepared, gate),
        ), gate

    def _written_checks(self, prepared: Prepared, gate: VerificationGate) -> WrittenChecks | None:
        shadow, model = prepared.shadow, prepared.model
        return written_checks(shadow.root, prepared.failing, model.choose, gate.run_check, self.emit)

    def _mutants(self, prepared: Prepared, gate: VerificationGate) -> MutantRound | None:
        """The mutant round, on the suspects' lines (else the failing tracebacks')."""
        shadow = prepared.shadow
        spots = suspect_spots(prepared.suspects, failing_outcomes(prepared), shadow_reader(shadow.root, {}))
        seconds = prepared.baseline.run.duration
        return mutant_round(self.plan, gate, shadow, spots, self.emit, seconds)

    def _toolbox(self, prepared: Prepared) -> Toolbox:
        """The loop's tools, confined to the shadow, as the run's plan says."""
        plan = self.plan
        return build_toolbox(
            Workspace(prepared.shadow.root),
            prepared.runner,
            default_test_ids=list(prepared.failing or prepared.target.test_ids),  # run_tests without ids
            output_cap=plan.output_cap,
            protect_tests=not plan.allow_test_edits,
            baseline=prepared.baseline.run,
            show_inputs=plan.failing_inputs,
            hints=prepared.hints,
        )

    def _first_message(
        self, test_ids: tuple[str, ...], warm: WarmStart, tried: TriedFixes
    ) -> tuple[str, list[dict[str, Any]]]:
        """The task and the conversation before it: none for a new run; for another fix, the rejected run's
        (its fix excluded from this one). A run with a start round asks for code first."""
        code_first = self.plan.start_samples > 0
        previous = self.request.previous
        if previous is None:
            return task_prompt(test_ids, warm, code_first=code_first), []
        rejected = list(previous.rejected)
        tried.exclude(fix_key(rejected), describe_changes(rejected), "rejected by the user")
        self.emit(Notice("trying another fix: the user rejected the last one", 0, "another"))
        prompt = another_fix_prompt(rejected, previous.reason, code_first=code_first)
        return prompt, list(previous.messages[1:])

    async def _run(self, search: Search, model: ChatModel) -> LoopOutcome:
        await settle(model.base_url, self.settings.model_timeout)  # the turn would queue behind it anyway
        loop = search.loop
        try:
            return await self._next_in_pool(search) or await search.run()
        finally:
            self.steps, self.attempts = loop.step, loop.attempts
            self.conversation = tuple(loop.conversation.messages)
            self.pool = tuple(search.pool.fixes)

    def _finish(self, outcome: LoopOutcome, gate: VerificationGate, target: ProjectTarget) -> FixResult:
        """The result: for a fixed run exactly what the gate judged on its clean copy (nothing after the
        accepted check counts), relative to the workspace folder again."""
        fixed = outcome.status == "fixed"
        self.proposal = tuple(gate.proposal) if fixed else ()
        changes = tuple(
            FileChange(target.to_workspace(change.path), change.old_text, change.new_text)
            for change in self.proposal
        )
        result = self._result(
            outcome.status,
            outcome.summary,
            changes=changes,
            diff=unified_diff(list(changes)) if changes else "",
            reasons=outcome.reasons,
            rounds_tried=outcome.rounds_tried,
            pool=tuple(self._pool_json(target)) if fixed else (),
        )
        self.emit(Done(result.status, result.summary, self.steps, {"files": result.files}))
        assert self.transcript is not None
        self.transcript.write("result", **result.to_json())
        return result

    async def _next_in_pool(self, search: Search) -> LoopOutcome | None:
        """ "Try another fix" after a run with a pool: its next fix, best first, verified again on today's
        files (a fix whose files changed since is passed over), before anything is searched anew."""
        previous = self.request.previous
        shadow = self._preparation.shadow
        for number, fix in enumerate(previous.pool if previous is not None and shadow is not None else ()):
            assert previous is not None and shadow is not None
            if not all(_holds(shadow.root, change) for change in fix.changes):
                continue
            self.emit(Notice(f"trying the pool's next verified fix ({fix.origin})", 0, "pool"))
            verdict = await search.gate.judge(fix.changes)
            if verdict.accepted:
                await search.gate.accept(verdict.changes)
                search.pool.fixes[:] = [fix, *previous.pool[number + 1 :]]
                again = " (the next fix of the pool, verified again)"
                summary = proposal_summary(fix, len(search.pool)) + again
                return LoopOutcome("fixed", summary, attempts=1)
        return None

    def _pool_json(self, target: ProjectTarget) -> list[dict[str, Any]]:
        """The pool, best first, as the result carries it: each diff relative to the workspace folder."""
        entries = []
        for fix in self.pool:
            moved = [FileChange(target.to_workspace(c.path), c.old_text, c.new_text) for c in fix.changes]
            entries.append({**fix.to_json(), "diff": unified_diff(moved)})
        return entries

    async def _close(self, opening: asyncio.Future[ChatModel]) -> None:
        """Close the model (opened or still opening), the shadow and the transcript, shielded."""
        if not opening.done():
            opening.cancel()
        with contextlib.suppress(BaseException):
            unused = await opening  # an endpoint that failed after the run had failed: not news
            if self._model is None:
                await asyncio.shield(unused.close())
        if self._model is not None:
            await asyncio.shield(self._model.close())
        if (runner := self._preparation.runner) is not None:
            await asyncio.shield(runner.close())
        if (shadow := self._preparation.shadow) is not None:
            await asyncio.shield(asyncio.to_thread(shadow.close))
        if self.transcript is not None:
            self.transcript.close()


def failing_outcomes(prepared: Prepared) -> list[TestOutcome]:
    """The failing targets' outcomes in the baseline (their frames and inputs make a line-level round)."""
    run = prepared.baseline.run
    return [o for target in prepared.failing for o in target_outcomes(run, target) if o.failing]


def _holds(root: Path, change: FileChange) -> bool:
    """Whether the file under `root` still holds what `change` was made against."""
    path = root / change.path
    if change.old_text is None:
        return not path.exists()
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape") == change.old_text
    except OSError:
        return False
