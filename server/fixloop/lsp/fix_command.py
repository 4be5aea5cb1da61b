"""fixloop.server.fixFailingTest: resolve the test, run the engine with progress, propose the edit."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from fixloop.errors import FixloopError, NothingToFix
from fixloop.events import Done, Event, Thought, ThoughtDelta
from fixloop.lsp.apply_edit import propose
from fixloop.lsp.commands import error_json
from fixloop.lsp.progress import FixProgress, one_line, short_line, trace_line
from fixloop.lsp.runs import ActiveRun
from fixloop.lsp.server import EXECUTE_PARAMS, FixloopServer
from fixloop.lsp.targets import (
    FixArgs,
    check_test_id,
    default_root,
    path_of,
    relpath,
    root_of,
    test_id_under_cursor,
    unsaved_buffers,
)
from fixloop.result import FixResult

log = logging.getLogger(__name__)

DELTA_INTERVAL = 0.5  # seconds between progress reports of a streaming thought


async def fix_failing_test(ls: FixloopServer, args: tuple[Any, ...]) -> dict[str, Any]:
    params = EXECUTE_PARAMS.get()
    session = FixSession(ls, asyncio.current_task(), params.work_done_token if params else None)
    with ls.requests.track(ls.protocol.msg_id, session.cancel):
        return await session.run(args)


def _make_run(ls: FixloopServer, request_args: dict[str, Any], settings: Any, on_event: Any) -> Any:
    if ls.run_factory is not None:
        return ls.run_factory(request_args, settings, on_event)
    from fixloop.engine import FixRequest, FixRun

    return FixRun(FixRequest(**request_args), settings, on_event=on_event)


class FixSession:
    """One fixFailingTest request from arguments to answer; cancellable until the edit is proposed."""

    def __init__(self, ls: FixloopServer, task: asyncio.Task[Any] | None,
                 client_token: types.ProgressToken | None) -> None:
        self.ls = ls
        self.task = task
        self.client_token = client_token
        self.cancellable = True
        self.cancel_requested = False
        self.progress: FixProgress | None = None
        self.run_id = uuid.uuid4().hex[:12]
        self.test_ids: tuple[str, ...] = ()
        self.label = "fixloop"
        self._delta = ""
        self._delta_step = 0
        self._delta_sent = 0.0

    def cancel(self) -> None:
        """Stop the run (pytest and model call included); a no-op once the edit has been proposed."""
        if self.cancellable and self.task is not None and not self.task.done():
            self.cancel_requested = True
            self.task.cancel()

    async def run(self, args: tuple[Any, ...]) -> dict[str, Any]:
        started = time.monotonic()
        fix_run: Any = None
        claimed = False
        root: Path | None = None
        failure_reason: str | None = None
        try:
            target = FixArgs.parse(args)
            root, path = self._root(target)
            await self.ls.settings.ready()
            settings, errors = self.ls.settings.resolve(root)
            for error in errors:
                self.ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
            if target.test_id is not None:
                self.test_ids = (target.test_id,)
            elif path is not None and target.line is not None:
                self.test_ids = (test_id_under_cursor(self.ls, root, path, target.uri or "", target.line),)
            if self.test_ids:
                check_test_id(root, self.test_ids[0])
            self.label = f"fixloop: fix {self.test_ids[0] if self.test_ids else relpath(root, path or root)}"
            self.progress = await FixProgress.open(
                self.ls, self.client_token, title=self.label, message="starting",
                max_steps=settings.max_steps)
            self.progress.on_cancel(self.cancel)
            if not self.test_ids and path is not None:
                self.progress.report(f"looking for a failing test in {relpath(root, path)}", 0)
                self.test_ids = (await self._first_failing(root, path),)
                self.label = f"fixloop: fix {self.test_ids[0]}"
            settings.require_model()
            request = {"root": root, "test_ids": self.test_ids, "overlays": unsaved_buffers(self.ls, root)}
            fix_run = _make_run(self.ls, request, settings, self.on_event)
            self.run_id = getattr(fix_run, "run_id", self.run_id)
            self.ls.runs.claim(ActiveRun(self.run_id, self.test_ids, self.cancel))
            claimed = True
            self.ls.trace(f"fixloop run {self.run_id}: fixing {', '.join(self.test_ids)}",
                          types.MessageType.Info)
            self.progress.report(f"fixing {self.test_ids[0]}", 0)
            result: FixResult = await fix_run.execute()
        except asyncio.CancelledError:
            if not self.cancel_requested:
                raise  # the server is going away, not a user's cancel
            if self.task is not None:
                self.task.uncancel()
            result = (fix_run.cancelled_result() if fix_run is not None
                      else self._result("cancelled", "cancelled"))
        except FixloopError as error:
            result = self._result("error", error.message)
            kind = types.MessageType.Info if isinstance(error, NothingToFix) else types.MessageType.Error
            self.ls.show(f"fixloop: {error.message}", kind)
            return self._finish(result, started, failure_reason, error=error)
        except Exception as error:  # a bug: still answer, end the progress and say so
            log.exception("fix %s failed", self.run_id)
            result = self._result("error", f"internal error: {type(error).__name__}: {error}")
            self.ls.show(f"fixloop: {result.summary} (see the server log)", types.MessageType.Error)
            return self._finish(result, started, failure_reason)
        finally:
            self.cancellable = False
            if claimed:
                self.ls.runs.release(self.run_id)

        if result.status == "fixed" and result.changes and root is not None:
            if self.progress is not None:
                self.progress.report("proposing the edit", None)
            proposal = await propose(self.ls, root, result, self.label)
            result.applied = proposal.applied
            failure_reason = proposal.failure_reason
        self._tell_user(result, failure_reason)
        return self._finish(result, started, failure_reason)

    def _root(self, target: FixArgs) -> tuple[Path, Path | None]:
        if target.uri is not None:
            path = path_of(target.uri)
            return root_of(self.ls, path), path
        return default_root(self.ls), None

    async def _first_failing(self, root: Path, path: Path) -> str:
        from fixloop.lsp.run_tests import run_and_publish

        rel = relpath(root, path)
        known = self.ls.failures.in_file(root, rel)
        if not known:
            await run_and_publish(self.ls, root, [rel], [rel])
            known = self.ls.failures.in_file(root, rel)
        if not known:
            raise NothingToFix(f"no failing test in {rel}")
        return min(known, key=lambda failure: failure.line).test_id

    def _result(self, status: str, summary: str) -> FixResult:
        return FixResult(run_id=self.run_id, status=status, test_ids=list(self.test_ids), summary=summary)

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

    def _tell_user(self, result: FixResult, failure_reason: str | None) -> None:
        test = ", ".join(result.test_ids) or "the test"
        if result.status == "fixed" and result.applied:
            self.ls.show(f"fixloop: fixed {test}: {result.summary} (applied; review and save)")
        elif result.status == "fixed":
            message = f"fixloop: found a fix for {test} but it was not applied: {failure_reason}"
            if failure_reason and "cannot apply" in failure_reason and result.diff:
                message += "\n" + result.diff
            self.ls.show(message, types.MessageType.Warning)
        elif result.status == "cancelled":
            self.ls.show(f"fixloop: cancelled the fix of {test}")
        elif result.status == "not_fixed":
            self.ls.show(f"fixloop: could not fix {test}: {result.summary}", types.MessageType.Warning)
        else:
            self.ls.show(f"fixloop: {result.summary}", types.MessageType.Error)

    def _finish(self, result: FixResult, started: float, failure_reason: str | None,
                error: FixloopError | None = None) -> dict[str, Any]:
        if not result.seconds:
            result.seconds = time.monotonic() - started
        if self.progress is not None:
            self.progress.end(_outcome(result, failure_reason))
        data = result.to_json()
        data["failureReason"] = failure_reason
        if error is not None:
            data["error"] = error_json(error)["error"]
        elif result.status == "error":
            data["error"] = {"kind": "FixloopError", "message": result.summary}
        return data


def _outcome(result: FixResult, failure_reason: str | None) -> str:
    if result.status == "fixed":
        if result.applied:
            return f"fixed and applied: {result.summary}"
        return f"fixed, not applied: {failure_reason or 'no change'}"
    if result.status == "not_fixed":
        return f"not fixed: {result.summary}"
    if result.status == "cancelled":
        return "cancelled"
    return f"error: {result.summary}"

