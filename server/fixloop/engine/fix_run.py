"""FixRun: one fix run end to end: shadow copy, baseline, warm start, ReAct loop, verification gate, proposal.

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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from fixloop.agent.candidates import describe_changes, fix_key
from fixloop.agent.localize import Suspect, ends_in_test, find_suspects
from fixloop.agent.loop import LoopLimits, ReActLoop
from fixloop.agent.prompts import another_fix_prompt, task_prompt
from fixloop.agent.sampling_turns import sampling_for
from fixloop.agent.tried import TriedFixes
from fixloop.agent.warm_start import build_warm_start
from fixloop.config import Settings
from fixloop.engine.model_session import (
    check_endpoint,
    is_local,
    model_endpoint,
    open_chat_model,
    raise_if_failed,
    warm_up,
)
from fixloop.engine.request import FixRequest
from fixloop.errors import FixloopError, TestRunError
from fixloop.events import Done, Event, Notice
from fixloop.interpreter import find_interpreter
from fixloop.model.client import ChatModel
from fixloop.model.local import local_slots
from fixloop.model.profiles import with_profile
from fixloop.model.warm_up import settle
from fixloop.project_root import ProjectTarget, installed_copies, locate
from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.runner import ImportRedirect
from fixloop.result import FileChange, FixResult, FixStatus
from fixloop.shadow import ShadowWorkspace, clean_stale_shadows, unified_diff
from fixloop.tools import build_toolbox
from fixloop.tools.node_ids import check_target_ids
from fixloop.tools.workspace import Workspace
from fixloop.transcript import Transcript
from fixloop.verify import Baseline, VerificationGate, record_baseline
from fixloop.verify.baseline import target_outcomes

log = logging.getLogger(__name__)
T = TypeVar("T")
# Seconds the copy waits for the endpoint check (a dead endpoint, a rejected key and a misnamed model are
# known within this on a local network) before both run side by side; the check then ends the run at once.
PREFLIGHT_HEAD_START = 0.3


class FixRun:
    """A single fix attempt; `execute()` returns the FixResult or raises a FixloopError."""

    def __init__(
        self, request: FixRequest, settings: Settings, on_event: Callable[[Event], None] | None = None
    ) -> None:
        self.request = request
        self.settings = with_profile(settings)
        self.on_event = on_event
        self.run_id = uuid.uuid4().hex[:12]
        self.transcript: Transcript | None = None
        self.steps = 0
        self.attempts = 0
        self._started = time.monotonic()
        self._model: ChatModel | None = None
        self._runner: PytestRunner | None = None
        self.conversation: tuple[dict[str, Any], ...] = ()  # the loop's messages, once it has run
        self.proposal: tuple[FileChange, ...] = ()  # a verified fix, relative to the tests' project

    @property
    def model_seconds(self) -> float:
        """Seconds spent waiting for the model so far (also after a run that raised)."""
        return self._model.seconds if self._model is not None else 0.0

    @property
    def test_seconds(self) -> float:
        """Seconds spent running pytest so far (baseline, run_tests, the gate)."""
        return self._runner.seconds if self._runner is not None else 0.0

    @property
    def transcript_path(self) -> Path | None:
        return self.transcript.path if self.transcript else None

    def emit(self, event: Event) -> None:
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
            test_seconds=self.test_seconds,
            **fields,
        )

    def cancelled_result(self) -> FixResult:
        return self._result("cancelled", "cancelled")

    async def _say_where_imports_come_from(self, runner: PytestRunner, shadow: ShadowWorkspace) -> None:
        """After the baseline: what the startup hook redirected, and project packages the tests import from
        an installed copy (no fix can reach those)."""
        if runner.redirected:
            self.emit(
                Notice(
                    "imports of your project redirected into the shadow: " + ", ".join(runner.redirected[:5]),
                    0,
                    "imports",
                )
            )
        for name, path, ours in await asyncio.to_thread(installed_copies, runner.installed, shadow.root):
            self.emit(
                Notice(
                    f"the tests import {name} from an installed copy ({path}), not from {ours}: "
                    "a fix there will not reach them; install the project editable "
                    "(pip install -e .)",
                    0,
                    "imports",
                )
            )

    async def _create_shadow(self, target: ProjectTarget) -> ShadowWorkspace:
        """The shadow copy; a cancel during the copy waits for the copying thread and removes its work."""
        overlays = {
            rel: text
            for path, text in self.request.overlays.items()
            if (rel := target.to_project(path)) is not None
        }
        creating = asyncio.ensure_future(
            asyncio.to_thread(ShadowWorkspace.create, target.root, overlays, run_id=self.run_id)
        )
        try:
            return await asyncio.shield(creating)
        except asyncio.CancelledError:
            try:
                made = await creating
            except Exception:
                raise asyncio.CancelledError() from None
            await asyncio.to_thread(made.close)
            raise

    async def _open_model(self) -> ChatModel:
        """The chat model for this run; a local endpoint's prompt cache is warmed with the fixed prefix."""
        settings = self.settings
        base_url, model_name = await model_endpoint(settings)
        await check_endpoint(settings, base_url, model_name)
        warm_up(settings, base_url, model_name)
        return open_chat_model(settings, base_url, model_name)

    async def _unless_endpoint_fails(self, opening: asyncio.Future[ChatModel], step: Awaitable[T]) -> T:
        """Await a step (the copy, the baseline); an endpoint that fails meanwhile ends the run at once
        (the step is cancelled and cleans up after itself)."""
        task = asyncio.ensure_future(step)
        try:
            await asyncio.wait({task, opening}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise
        if not task.done() and opening.done() and not opening.cancelled() and opening.exception():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise_if_failed(opening)
        return await task

    def _first_message(
        self, test_ids: tuple[str, ...], warm: str, tried: TriedFixes, *, code_first: bool
    ) -> tuple[str, list[dict[str, Any]]]:
        """The task and the conversation before it: none for a new run; for another fix, the rejected run's
        (its fix excluded from this one)."""
        previous = self.request.previous
        if previous is None:
            return task_prompt(test_ids, warm, code_first=code_first), []
        rejected = list(previous.rejected)
        tried.exclude(fix_key(rejected), describe_changes(rejected), "rejected by the user")
        self.emit(Notice("trying another fix: the user rejected the last one", 0, "another"))
        prompt = another_fix_prompt(unified_diff(rejected), previous.reason, code_first=code_first)
        return prompt, list(previous.messages[1:])

    async def _localize(
        self, runner: PytestRunner, root: Path, baseline: Baseline, test_ids: tuple[str, ...]
    ) -> list[Suspect]:
        """Suspects by coverage (`localize: auto`) when the first failing target fails in the test itself."""
        outcomes = [o for target in test_ids for o in target_outcomes(baseline.run, target) if o.failing]
        if self.settings.localize == "off" or not outcomes or not ends_in_test(outcomes[0]):
            return []
        self.emit(
            Notice(
                "the failure is an assertion in the test: ranking the code by the lines each test runs",
                0,
                "localize",
            )
        )
        try:
            suspects, _ = await find_suspects(runner, root, test_ids)
        except TestRunError as error:
            self.emit(Notice(f"no coverage: {error.message}", 0, "localize"))
            return []
        if suspects:
            self.emit(Notice("suspects: " + "; ".join(s.describe() for s in suspects[:3]), 0, "localize"))
        return suspects

    async def execute(self) -> FixResult:
        request, settings = self.request, self.settings
        settings.require_model()
        self.transcript = Transcript.open(
            self.run_id,
            {
                "root": str(request.root),
                "test_ids": list(request.test_ids),
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
            },
        )
        shadow: ShadowWorkspace | None = None
        model: ChatModel | None = None
        # The endpoint (a managed local model starts here) and its prompt cache get ready meanwhile.
        opening = asyncio.ensure_future(self._open_model())
        try:
            await asyncio.to_thread(check_target_ids, Workspace(request.root), list(request.test_ids))
            target = await asyncio.to_thread(locate, request.root, request.test_ids)
            test_ids = target.test_ids
            if target.prefix:
                self.emit(Notice(f"the tests belong to the project in {target.prefix}", 0, "project"))
            interpreter = await find_interpreter(
                target.root, request.root, python=settings.python, test_command=settings.test_command
            )
            self.emit(Notice(interpreter.describe(request.root), 0, "interpreter"))
            await asyncio.to_thread(clean_stale_shadows)
            if not is_local(settings):  # a failing endpoint is mostly known by now: fail before the copy
                await asyncio.wait({opening}, timeout=PREFLIGHT_HEAD_START)
                raise_if_failed(opening)
            self.emit(Notice("copying the project into a shadow workspace", 0, "shadow"))
            shadow = await self._unless_endpoint_fails(opening, self._create_shadow(target))
            runner = self._runner = PytestRunner(
                shadow.root,
                interpreter.command,
                settings.test_timeout,
                scratch=shadow.scratch,
                confine_writes=shadow.container,
                redirect=ImportRedirect(shadow.real_top, shadow.top),
                missing_pytest=interpreter.missing_pytest(request.root),
            )
            self.emit(Notice("running the target tests to record the baseline", 0, "baseline"))
            baseline = await self._unless_endpoint_fails(opening, record_baseline(runner, test_ids))
            await self._say_where_imports_come_from(runner, shadow)
            failing = [t for t in test_ids if t not in baseline.passing]
            self.emit(
                Notice(
                    f"baseline: {len(failing)} target test(s) failing, "
                    f"{len(baseline.passing)} test(s) passing",
                    0,
                    "baseline",
                )
            )
            warm = ""
            if request.previous is None:  # going on with a conversation: it holds the warm start already
                suspects = await self._localize(runner, shadow.root, baseline, test_ids)
                warm = await asyncio.to_thread(
                    build_warm_start,
                    shadow.root,
                    baseline.run,
                    list(test_ids),
                    settings.warm_start_chars,
                    suspects,
                )
            model = self._model = await opening
            # run_tests without ids runs the targets that fail (the prompt says so)
            targets = failing or list(test_ids)
            toolbox = build_toolbox(
                Workspace(shadow.root),
                runner,
                default_test_ids=targets,
                output_cap=settings.output_cap,
                protect_tests=not settings.allow_test_edits,
                baseline=baseline.run,
            )
            gate = VerificationGate(shadow, runner, baseline, allow_test_edits=settings.allow_test_edits)

            protocol = settings.protocol
            tried = TriedFixes()
            sampling = sampling_for(
                settings,
                model,
                gate,
                shadow,
                self.emit,
                single_slot=is_local(settings) and local_slots(settings) == 1,
                tried=tried,
            )
            task, history = self._first_message(
                test_ids, warm, tried, code_first=sampling is not None and sampling.starts_with_code
            )
            loop = ReActLoop(
                model,
                toolbox,
                task=task,
                history=history,
                tried=tried,
                verify=lambda summary: gate.check(),
                emit=self.emit,
                protocol=protocol,
                compact_tools=settings.compact_tools or is_local(settings),
                sampling=sampling,
                limits=LoopLimits(
                    max_steps=settings.max_steps,
                    attempts=settings.attempts,
                    max_tokens=settings.max_tokens,
                    max_seconds=settings.max_seconds,
                    context_chars=settings.context_chars,
                    teach=settings.feedback == "full",
                ),
            )
            await settle(model.base_url, settings.model_timeout)  # the turn would queue behind it anyway
            try:
                outcome = await loop.run()
            finally:
                self.steps, self.attempts = loop.step, loop.attempts
                self.conversation = tuple(loop.conversation.messages)
            fixed = outcome.status == "fixed"
            self.proposal = tuple(gate.proposal) if fixed else ()
            # Exactly what the gate judged on its clean copy: nothing after the accepted check counts.
            changes = (
                tuple(
                    FileChange(target.to_workspace(change.path), change.old_text, change.new_text)
                    for change in gate.proposal
                )
                if fixed
                else ()
            )
            result = self._result(
                outcome.status,
                outcome.summary,
                changes=changes,
                diff=unified_diff(list(changes)) if changes else "",
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                tokens_estimated=outcome.tokens_estimated,
                reasons=outcome.reasons,
            )
            self.emit(Done(result.status, result.summary, self.steps, {"files": result.files}))
            self.transcript.write("result", **result.to_json())
            return result
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
            if not opening.done():
                opening.cancel()
            with contextlib.suppress(BaseException):
                unused = await opening  # an endpoint that failed after the run had failed: not news
                if model is None:
                    await asyncio.shield(unused.close())
            if model is not None:
                await asyncio.shield(model.close())
            if shadow is not None:
                await asyncio.shield(asyncio.to_thread(shadow.close))
            self.transcript.close()
