"""One fixFailingTest request: resolve the target, run the engine with progress, propose the edit, answer."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from fixloop.config import Settings
from fixloop.errors import FixloopError, NothingToFix
from fixloop.events import Done, Event, Thought, ThoughtDelta
from fixloop.lsp.apply_edit import propose
from fixloop.lsp.client_settings import folder_settings
from fixloop.lsp.diagnostic_runs import first_failing
from fixloop.lsp.documents import relpath, unsaved_buffers
from fixloop.lsp.errors import UnsupportedClient, error_detail
from fixloop.lsp.fix_target import FixTarget, resolve_target
from fixloop.lsp.kept_runs import KeptRun
from fixloop.lsp.progress import FixProgress, one_line, short_line, trace_line
from fixloop.lsp.runs import ActiveRun
from fixloop.lsp.server import FixloopServer, FixRunLike
from fixloop.lsp.workspace_edit import EditCapabilities
from fixloop.project_root import ProjectTarget, locate
from fixloop.result import FixError, FixResult, FixStatus

log = logging.getLogger(__name__)

DELTA_INTERVAL = 0.5  # seconds between progress reports of a streaming thought
CANNOT_TAKE_A_FIX = (
    "this client can neither apply workspace edits nor show messages, so a fix could not "
    "reach you; use `fixloop fix TEST_ID` on the command line"
)


class FixSession:
    """One fixFailingTest request from arguments to answer; cancellable until the edit is proposed."""

    def __init__(
        self,
        ls: FixloopServer,
        task: asyncio.Task[Any] | None,
        client_token: types.ProgressToken | None,
        *,
        again: KeptRun | None = None,
        reason: str = "",
    ) -> None:
        self.ls = ls
        self.task = task
        self.client_token = client_token
        self.again = again  # "try another fix": the run whose proposal the user rejected
        self.reason = reason
        self.cancellable = True
        self.cancel_requested = False
        self.progress: FixProgress | None = None
        self.run_id = uuid.uuid4().hex[:12]
        self.test_ids: tuple[str, ...] = ()
        self.root: Path | None = None  # the workspace folder the tests belong to
        self.project: ProjectTarget | None = None  # the tests' project in it, located once, for the engine
        self.label = "fixloop"
        self.started = time.monotonic()
        self._delta = ""
        self._delta_step = 0
        self._delta_sent = 0.0

    def cancel(self) -> None:
        """Stop the run (pytest and model call included); a no-op once the edit has been proposed."""
        if self.cancellable and self.task is not None and not self.task.done():
            self.cancel_requested = True
            self.task.cancel()

    async def run(self, args: tuple[Any, ...]) -> dict[str, Any]:
        """The command's answer: a FixResult, `status: "error"` with `error` for anything that went wrong."""
        fix_run: FixRunLike | None = None
        target: FixTarget | None = None
        try:
            if not EditCapabilities.of(self.ls.client_capabilities).can_take_a_fix:
                raise UnsupportedClient(CANNOT_TAKE_A_FIX)
            target = (
                FixTarget(self.again.root, self.again.test_ids)
                if self.again is not None
                else resolve_target(self.ls, args)
            )
            settings = await self._prepare(target)
            fix_run = self._make_run(target, settings)
            result = await self._execute(fix_run)
            self._keep(fix_run, result, target)
        except asyncio.CancelledError:
            if not self.cancel_requested:
                raise  # the server is going away, not a user's cancel
            if self.task is not None:
                self.task.uncancel()
            cancelled = fix_run.cancelled_result() if fix_run is not None else None
            result = cancelled or self._result("cancelled", "cancelled")
        except FixloopError as error:
            kind = types.MessageType.Info if isinstance(error, NothingToFix) else types.MessageType.Error
            self.ls.show_result(f"fixloop: {error.message}", kind)
            return self._finish(self._failed(error.message, error_detail(error)))
        except Exception as error:  # a bug: still answer, end the progress and say so
            log.exception("fix %s failed", self.run_id)
            result = self._failed(f"internal error: {type(error).__name__}: {error}")
            self.ls.show_result(f"fixloop: {result.summary} (see the server log)", types.MessageType.Error)
            return self._finish(result)
        finally:
            self.cancellable = False
        return await self._deliver(result, target)

    async def _prepare(self, target: FixTarget) -> Settings:
        """Settings, progress, the test ids (a file's first failing test is found by running it) and their
        project (the engine checks the model and the ids)."""
        self.root = target.root
        settings, errors = await folder_settings(self.ls, target.root)
        self._warn(errors)
        self.test_ids, self.label = target.test_ids, target.label
        self.progress = await FixProgress.open(
            self.ls, self.client_token, title=self.label, message="starting", max_steps=settings.max_steps
        )
        self.progress.on_cancel(self.cancel)
        if not self.test_ids and target.file is not None:
            self.progress.report(f"looking for a failing test in {relpath(target.root, target.file)}", 0)
            found = await first_failing(self.ls, target.root, target.file)
            if found is None:
                raise NothingToFix(f"no failing test in {relpath(target.root, target.file)}")
            self.test_ids, self.label = (found,), f"fixloop: fix {found}"
        project = self.project = await asyncio.to_thread(locate, target.root, self.test_ids)
        if project.root != target.root:  # a monorepo package: its own [tool.fixloop] counts too
            settings, errors = await folder_settings(self.ls, target.root, project.root)
            self._warn(errors)
        return settings

    def _warn(self, errors: list[str]) -> None:
        for error in errors:
            self.ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)

    def _make_run(self, target: FixTarget, settings: Settings) -> FixRunLike:
        from fixloop.engine import FixRequest, FixRun, PreviousRun  # the agent loads at the first fix

        again = self.again
        previous = None
        if again is not None:
            previous = PreviousRun(again.messages, again.proposal, self.reason, again.pool)
        buffers = unsaved_buffers(self.ls, target.root)
        request = FixRequest(
            target.root, self.test_ids, buffers, previous, target=self.project, run_id=self.run_id
        )
        if self.ls.run_factory is not None:
            return self.ls.run_factory(request, settings, self.on_event)
        return FixRun(request, settings, on_event=self.on_event)

    def _keep(self, fix_run: FixRunLike, result: FixResult, target: FixTarget) -> None:
        """A run that proposes a fix is kept a while: the user may reject it and ask for another."""
        messages = getattr(fix_run, "conversation", ())
        proposal = getattr(fix_run, "proposal", ())
        others = tuple(getattr(fix_run, "pool", ())[1:])  # the proposal is the pool's first
        if result.status == "fixed" and messages and proposal:
            kept = KeptRun(target.root, self.test_ids, messages, proposal, pool=others)
            self.ls.kept_runs.keep(result.run_id, kept)

    async def _execute(self, fix_run: FixRunLike) -> FixResult:
        self.run_id = fix_run.run_id
        self.ls.runs.claim(ActiveRun(self.run_id, self.test_ids, self.cancel, self.root))
        try:
            self.ls.trace(
                f"fixloop run {self.run_id}: fixing {', '.join(self.test_ids)}", types.MessageType.Info
            )
            if self.progress is not None:
                self.progress.report(f"fixing {self.test_ids[0]}", 0)
            return await fix_run.execute()
        finally:
            self.ls.runs.release(self.run_id)

    async def _deliver(self, result: FixResult, target: FixTarget | None) -> dict[str, Any]:
        """Propose a verified fix as an edit, tell the user how it went, and answer the command."""
        if result.status == "fixed" and result.changes and target is not None:
            if self.progress is not None:
                self.progress.report("proposing the edit", None)
            proposal = await propose(self.ls, target.root, result, self.label)
            result = dataclasses.replace(
                result, applied=proposal.applied, failure_reason=proposal.failure_reason
            )
        self._tell_user(result)
        return self._finish(result)

    def _failed(self, message: str, error: FixError | None = None) -> FixResult:
        return dataclasses.replace(
            self._result("error", message), error=error or FixError("FixloopError", message)
        )

    def _result(self, status: FixStatus, summary: str) -> FixResult:
        return FixResult(run_id=self.run_id, status=status, test_ids=self.test_ids, summary=summary)

    def on_event(self, event: Event) -> None:
        """The engine's events as progress lines and the full trace (called on the event loop)."""
        if self.progress is None:
            return
        if isinstance(event, ThoughtDelta):
            self._on_delta(event)
            return
        if isinstance(event, Thought):
            self._delta = ""
        if (line := trace_line(event)) is not None:
            self.ls.trace(line)
        if not isinstance(event, Done) and (short := short_line(event)) is not None:
            self.progress.report(short, getattr(event, "step", None))

    def _on_delta(self, event: ThoughtDelta) -> None:
        if event.step != self._delta_step:
            self._delta, self._delta_step = "", event.step
        self._delta += event.text
        now = time.monotonic()
        if now - self._delta_sent >= DELTA_INTERVAL and self._delta.strip() and self.progress is not None:
            self._delta_sent = now
            tail = self._delta.strip().splitlines()[-1]
            self.progress.report(one_line(tail), event.step)

    def _tell_user(self, result: FixResult) -> None:
        test = ", ".join(result.test_ids) or "the test"
        if result.status == "fixed" and result.applied:
            self.ls.show_result(f"fixloop: fixed {test}: {result.summary} (applied; review and save)")
        elif result.status == "fixed":
            failure_reason = result.failure_reason
            message = f"fixloop: found a fix for {test} but it was not applied: {failure_reason}"
            if failure_reason and "cannot apply" in failure_reason and result.diff:
                message += "\n" + result.diff
            self.ls.show_result(message, types.MessageType.Warning)
        elif result.status == "cancelled":
            self.ls.show_result(f"fixloop: cancelled the fix of {test}")
        elif result.status == "not_fixed":
            self.ls.show_result(f"fixloop: could not fix {test}: {result.summary}", types.MessageType.Warning)
        else:
            self.ls.show_result(f"fixloop: {result.summary}", types.MessageType.Error)

    def _finish(self, result: FixResult) -> dict[str, Any]:
        if not result.seconds:
            result = dataclasses.replace(result, seconds=time.monotonic() - self.started)
        if self.progress is not None:
            self.progress.end(_outcome(result))
        return result.to_json()


def _outcome(result: FixResult) -> str:
    if result.status == "fixed":
        if result.applied:
            return f"fixed and applied: {result.summary}"
        return f"fixed, not applied: {result.failure_reason or 'no change'}"
    if result.status == "not_fixed":
        return f"not fixed: {result.summary}"
    if result.status == "cancelled":
        return "cancelled"
    return f"error: {result.summary}"
