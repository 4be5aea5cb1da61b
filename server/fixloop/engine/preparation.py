"""Before the loop: the tests' project located, its interpreter, the shadow copy, the pytest runner, the
baseline and the warm start; meanwhile the endpoint opens (and ends it if it fails)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from fixloop.agent.localize import Suspect, ends_in_test, find_suspects, module_names_read
from fixloop.agent.warm_start import WarmStart, gather_warm_start
from fixloop.config import Settings
from fixloop.engine.assembly import RunPlan, placement_hints
from fixloop.engine.model_session import raise_if_failed
from fixloop.engine.request import FixRequest
from fixloop.errors import TestRunError
from fixloop.events import Event, Notice
from fixloop.interpreter import TestInterpreter, find_interpreter
from fixloop.model.client import ChatModel
from fixloop.project_root import ProjectTarget, installed_copies, locate
from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.results import TestRun
from fixloop.pytest_runner.runner import ImportRedirect
from fixloop.shadow import ShadowWorkspace, clean_stale_shadows
from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.node_ids import check_target_ids
from fixloop.tools.workspace import Workspace
from fixloop.verify import Baseline, record_baseline
from fixloop.verify.baseline import target_outcomes

T = TypeVar("T")
# Seconds the copy waits for the endpoint check (a dead endpoint, a rejected key and a misnamed model are
# known within this on a local network) before both run side by side; the check then ends the run at once.
PREFLIGHT_HEAD_START = 0.3


@dataclass(frozen=True)
class Prepared:
    """What the loop is assembled from."""

    target: ProjectTarget
    shadow: ShadowWorkspace
    runner: PytestRunner
    baseline: Baseline
    failing: tuple[str, ...]  # the targets failing in the baseline
    warm: WarmStart  # the warm start (empty when going on with a conversation, which holds it already)
    model: ChatModel
    # which of two definitions of one name a code answer replaces: the suspects by coverage and the
    # module-level names they read (else the functions the warm start shows), the lines the failures ran
    hints: PlacementHints = field(default_factory=PlacementHints)
    suspects: tuple[Suspect, ...] = ()  # by coverage, best first (none unless the failure ends in the test)


class Preparation:
    """The steps before the loop; what they made so far (`shadow`, `runner`) stays here for the clean-up
    and the figures, also after a step failed."""

    def __init__(
        self, request: FixRequest, settings: Settings, plan: RunPlan, emit: Callable[[Event], None]
    ) -> None:
        self.request, self.settings, self.plan, self.emit = request, settings, plan, emit
        self.shadow: ShadowWorkspace | None = None
        self.runner: PytestRunner | None = None

    async def run(self, run_id: str, opening: asyncio.Future[ChatModel]) -> Prepared:
        target = await self._locate()
        settings = self.settings
        interpreter = await find_interpreter(
            target.root, self.request.root, python=settings.python, test_command=settings.test_command
        )
        self.emit(Notice(interpreter.describe(self.request.root), 0, "interpreter"))
        await asyncio.to_thread(clean_stale_shadows)
        if not self.plan.local:  # a failing endpoint is mostly known by now: fail before the copy
            await asyncio.wait({opening}, timeout=PREFLIGHT_HEAD_START)
            raise_if_failed(opening)
        self.emit(Notice("copying the project into a shadow workspace", 0, "shadow"))
        shadow = self.shadow = await unless_endpoint_fails(opening, self._create_shadow(target, run_id))
        runner = self.runner = self._runner(shadow, interpreter)
        self.emit(Notice("running the target tests to record the baseline", 0, "baseline"))
        baseline = await unless_endpoint_fails(opening, record_baseline(runner, target.test_ids))
        failing = await self._say_what_the_baseline_found(runner, shadow, baseline, target.test_ids)
        warm, suspects, named = await self._warm_start(runner, shadow, baseline, target.test_ids)
        hints = placement_hints(self.plan, named, lines_in_tracebacks(baseline.run, failing))
        return Prepared(
            target, shadow, runner, baseline, failing, warm, await opening, hints, tuple(suspects)
        )

    async def _locate(self) -> ProjectTarget:
        """The tests' project (the face's, when the request carries it); the test ids checked first."""
        request = self.request
        await asyncio.to_thread(check_target_ids, Workspace(request.root), list(request.test_ids))
        target = request.target or await asyncio.to_thread(locate, request.root, request.test_ids)
        if target.prefix:
            self.emit(Notice(f"the tests belong to the project in {target.prefix}", 0, "project"))
        return target

    async def _create_shadow(self, target: ProjectTarget, run_id: str) -> ShadowWorkspace:
        """The shadow copy; a cancel during the copy waits for the copying thread and removes its work."""
        overlays = {
            rel: text
            for path, text in self.request.overlays.items()
            if (rel := target.to_project(path)) is not None
        }
        creating = asyncio.ensure_future(
            asyncio.to_thread(ShadowWorkspace.create, target.root, overlays, run_id=run_id)
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

    def _runner(self, shadow: ShadowWorkspace, interpreter: TestInterpreter) -> PytestRunner:
        return PytestRunner(
            shadow.root,
            interpreter.command,
            self.settings.test_timeout,
            scratch=shadow.scratch,
            confine_writes=shadow.container,
            redirect=ImportRedirect(shadow.real_top, shadow.top),
            missing_pytest=interpreter.missing_pytest(self.request.root),
            warm=True,
        )

    async def _say_what_the_baseline_found(
        self, runner: PytestRunner, shadow: ShadowWorkspace, baseline: Baseline, test_ids: tuple[str, ...]
    ) -> tuple[str, ...]:
        """Where imports come from, and how many targets fail; the failing targets."""
        await self._say_where_imports_come_from(runner, shadow)
        failing = tuple(t for t in test_ids if t not in baseline.passing)
        self.emit(
            Notice(
                f"baseline: {len(failing)} target test(s) failing, {len(baseline.passing)} test(s) passing",
                0,
                "baseline",
            )
        )
        return failing

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

    async def _warm_start(
        self, runner: PytestRunner, shadow: ShadowWorkspace, baseline: Baseline, test_ids: tuple[str, ...]
    ) -> tuple[WarmStart, list[Suspect], tuple[str, ...]]:
        """The first prompt's code and failure, the suspects, and their names for placing code answers; none
        when going on with a conversation (it holds one)."""
        if self.request.previous is not None:
            return WarmStart(), [], ()
        suspects = await self._localize(runner, shadow.root, baseline, test_ids)
        names_read = (
            await asyncio.to_thread(module_names_read, shadow.root, suspects[:3])
            if suspects and self.plan.code_answer_placement  # a constant is a fix target only with it
            else []
        )
        warm = await asyncio.to_thread(
            functools.partial(
                gather_warm_start, names_read=names_read, failing_inputs=self.plan.failing_inputs
            ),
            shadow.root,
            baseline.run,
            list(test_ids),
            self.plan.warm_start_chars,
            suspects,
        )
        named = [*suspects, *names_read] or warm.functions
        return warm, suspects, tuple(dict.fromkeys(f"{item.path}::{item.name}" for item in named))

    async def _localize(
        self, runner: PytestRunner, root: Path, baseline: Baseline, test_ids: tuple[str, ...]
    ) -> list[Suspect]:
        """Suspects by coverage (`localize: auto`) when the first failing target fails in the test itself."""
        outcomes = [o for target in test_ids for o in target_outcomes(baseline.run, target) if o.failing]
        if not self.plan.localize or not outcomes or not ends_in_test(outcomes[0]):
            return []
        self.emit(
            Notice(
                "the failure is an assertion in the test: ranking the code by the lines each test runs",
                0,
                "localize",
            )
        )
        try:
            suspects, _ = await find_suspects(
                runner, root, test_ids, by_calls=self.settings.call_distance_localization
            )
        except TestRunError as error:
            self.emit(Notice(f"no coverage: {error.message}", 0, "localize"))
            return []
        if suspects:
            self.emit(Notice("suspects: " + "; ".join(s.describe() for s in suspects[:3]), 0, "localize"))
        return suspects


def lines_in_tracebacks(run: TestRun, test_ids: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """Per project file, the lines the failing targets' tracebacks pass through (the definitions a failing
    test runs, to tell two of one name apart)."""
    lines: dict[str, set[int]] = {}
    for outcome in (o for target in test_ids for o in target_outcomes(run, target) if o.failing):
        for frame in outcome.frames:
            lines.setdefault(frame.path, set()).add(frame.line)
    return {path: tuple(sorted(found)) for path, found in lines.items()}


async def unless_endpoint_fails(opening: asyncio.Future[ChatModel], step: Awaitable[T]) -> T:
    """Await a step (the copy, the baseline); an endpoint that fails meanwhile ends the run at once (the
    step is cancelled and cleans up after itself)."""
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
