"""The gate as the agent sees it: `Gate` (check what the shadow holds, judge a candidate, screen a cheap one,
accept a winner) and its `GateVerdict`; the one way the loop and the sampling reach verify/."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fixloop.result import FileChange

NOTHING_CHANGED = "nothing was changed: edit the code under test, then submit"  # `check`, shadow untouched


@dataclass(frozen=True)
class GateVerdict:
    """The gate's answer to one submit; `reasons` are written for the model to act on."""

    accepted: bool
    reasons: tuple[str, ...]
    newly_failing: tuple[str, ...] = ()
    still_failing: tuple[str, ...] = ()
    # Per failing test, pytest's own account: its assertion's expected vs actual (the `E` lines).
    evidence: tuple[str, ...] = ()
    changes: tuple[FileChange, ...] = ()  # what was judged (the proposal, scratch files left out)
    # Per still-failing target, its failing call (arguments, line, expected vs actual) headed by its test
    # id, as `failing_input_lines` renders it; none when the failingInputs setting is off.
    inputs: tuple[str, ...] = ()
    unchanged: bool = False  # the shadow held nothing but the baseline: nothing was judged


class Gate(Protocol):
    """The verification gate's port (verify/gate.py's `VerificationGate` is the one implementation)."""

    proposal: list[FileChange]  # what the last accepted `check` judged, or what `accept` made the proposal

    async def check(self) -> GateVerdict:
        """Judge what the shadow holds now; when accepted, that is the proposal."""
        ...

    async def judge(self, changes: Sequence[FileChange]) -> GateVerdict:
        """Judge a candidate fix (the baseline plus `changes`) alone; nothing is proposed."""
        ...

    async def screen(self, changes: Sequence[FileChange], seconds: float) -> bool:
        """Whether the targets alone pass with `changes` (within `seconds`): a first look before `judge`."""
        ...

    async def accept(self, changes: Sequence[FileChange]) -> None:
        """Make `changes` (a verdict's, accepted by `judge`) what the shadow holds and the proposal."""
        ...
