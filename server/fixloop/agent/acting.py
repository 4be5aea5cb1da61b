"""Carrying out one turn's calls: read-only calls run together, the rest in order; repeated calls noticed."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from fixloop.agent import prompts
from fixloop.agent.call_protocols import ToolCall
from fixloop.agent.run_state import Step
from fixloop.agent.submissions import Submissions
from fixloop.events import Action, Event, Observation
from fixloop.tools.base import ToolResult

DURATION = re.compile(r"\b\d+(\.\d+)?\s?m?s\b")  # "in 0.91s" differs between otherwise equal runs
SKIPPED = ToolResult("not run: it came after submit")


class ToolboxLike(Protocol):
    """What the loop needs of `fixloop.tools.Toolbox`."""

    names: list[str]

    def schemas(self, compact: bool = False) -> list[dict[str, Any]]: ...
    def text_descriptions(self) -> str: ...
    def is_read_only(self, name: str) -> bool: ...
    async def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult: ...


async def run_calls(toolbox: ToolboxLike, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Read-only calls run concurrently, writes and test runs in order; results in the model's order.

    Calls after a submit are not run.
    """
    results: list[ToolResult] = [SKIPPED] * len(calls)
    batch: list[int] = []

    async def flush() -> None:
        outputs = await asyncio.gather(*(toolbox.call(calls[i].name, calls[i].arguments) for i in batch))
        for i, output in zip(batch, outputs, strict=True):
            results[i] = output
        batch.clear()

    for index, call in enumerate(calls):
        if toolbox.is_read_only(call.name):
            batch.append(index)
            continue
        await flush()
        results[index] = await toolbox.call(call.name, call.arguments)
        if results[index].submitted is not None:
            break
    await flush()
    return results


class StuckWatch:
    """Counts each (call, result) pair: the same one again earns a nudge, more often a stop."""

    def __init__(self, nudge_at: int, stop_at: int) -> None:
        self.nudge_at = nudge_at
        self.stop_at = stop_at
        self._seen: Counter[str] = Counter()
        self.repeated = False  # the last call observed had been made before with the same result

    def observe(self, call: ToolCall, text: str) -> tuple[str, str | None]:
        """The observation text (with a nudge when repeated) and why to stop, if it is time to."""
        key = json.dumps([call.name, call.shown_arguments(), DURATION.sub("", text)], sort_keys=True)
        self._seen[key] += 1
        seen = self._seen[key]
        self.repeated = seen >= self.nudge_at
        if seen >= self.stop_at:
            return text, f"stuck: the same {call.name} call gave the same result {seen} times"
        if seen >= self.nudge_at:
            return f"{text}\n\n{prompts.STUCK_NUDGE}", None
        return text, None


async def act_on(
    calls: Sequence[ToolCall],
    toolbox: ToolboxLike,
    submissions: Submissions,
    stuck: StuckWatch,
    emit: Callable[[Event], None],
) -> tuple[list[str], Step]:
    """Run one turn's calls, each announced and observed: the observations' texts, and what the turn came
    to (a submit goes to the gate, the first one of the turn only; the rest are watched for repeats)."""
    turn = submissions.spent.steps
    for call in calls:
        emit(Action(call.id, call.name, call.shown_arguments(), turn))
    results = await run_calls(toolbox, calls)
    step, texts = Step(), []
    for call, result in zip(calls, results, strict=True):
        text, is_error = result.text, result.is_error
        if result.submitted is not None and step.finished is None and not step.rejected:
            step, verified = await submissions.submit(result.submitted)
            text, is_error = verified.text, verified.is_error
        elif step.finished is not None:
            text, is_error = "not run: the fix was already accepted", False
        else:
            text, stuck_said = stuck.observe(call, text)
            step = replace(step, stuck=stuck_said or step.stuck, repeated=step.repeated or stuck.repeated)
        emit(Observation(call.id, call.name, text, is_error, turn))
        texts.append(text)
    return texts, step
