"""One pool of verified fixes per run: every round adds what the gate verified, with where it came from.

The first verified fix does not end the run: the search goes on for a bounded share of what is left
(`KeepSearching`: until `most` distinct fixes or `share` of the remaining time), then ranking
(agent/ranking.py) chooses. A fix is `mechanical` when a search of one-token changes found it, with no
model: it passes the tests, and nothing else speaks for it until evidence does; so it does not start that
clock itself (the search starts it once evidence speaks for one, agent/search.py).
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixloop.agent.candidates import FixKey, describe_changes, fix_key
from fixloop.python_syntax import parse
from fixloop.result import FileChange
from fixloop.shadow import unified_diff

ORIGINS = {
    "mutants": "a one-token change found by mechanical search, no model",
    "start": "the model's candidates (first round)",
    "suspect": "the model's candidates (a round on the next suspect)",
    "repeated": "the model's candidates (a later round)",
    "rejected": "the model's candidates (a round after a rejected submit)",
    "lines": "the model's line-level round",
    "loop": "the model's own tool turns",
}


@dataclass(frozen=True)
class KeepSearching:
    """How long the search goes on after its first verified fix: until `most` distinct fixes, or `share`
    of the time then left, whichever comes first (the run's own budget and cancel still win)."""

    most: int = 3
    share: float = 0.25


@dataclass
class PooledFix:
    """One verified fix: exactly what the gate judged, which round found it, and the evidence for it."""

    changes: tuple[FileChange, ...]
    round: str  # a key of ORIGINS
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> FixKey:
        return fix_key(self.changes)

    @property
    def mechanical(self) -> bool:
        return self.round == "mutants"

    @property
    def origin(self) -> str:
        return ORIGINS.get(self.round, self.round)

    @property
    def size(self) -> int:
        """Lines added and removed by the change."""
        lines = unified_diff(list(self.changes)).splitlines()
        return sum(1 for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---"))

    def describe(self) -> str:
        return describe_changes(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "round": self.round,
            "mechanical": self.mechanical,
            "diff": unified_diff(list(self.changes)),
            "lines": self.size,
            "evidence": dict(self.evidence),
        }


class FixPool:
    """The run's verified fixes, distinct by what they leave in the files, in the order found."""

    def __init__(self, keep: KeepSearching | None = None) -> None:
        self.keep = keep or KeepSearching()
        self.fixes: list[PooledFix] = []
        self.until: float | None = None  # time.monotonic() when the search stops, once it has a fix

    def __len__(self) -> int:
        return len(self.fixes)

    def add(self, changes: Sequence[FileChange], round: str, summary: str, deadline: float) -> bool:
        """Add a verified fix (False when the pool holds the same one); the first the model wrote sets when
        to stop (a mechanical one too when the share is 0: the first fix ends the search)."""
        fix = PooledFix(tuple(changes), round, summary)
        if not fix.changes or any(known.key == fix.key for known in self.fixes):
            return False
        self.fixes.append(fix)
        if not fix.mechanical or self.keep.share == 0:
            self.cutoff(deadline)
        return True

    def cutoff(self, deadline: float) -> float:
        """When the search stops, set at the first verified fix (now, if it is not set yet): `keep.share`
        of the time then left before `deadline`, the run's. A round that verifies a fix asks this at once,
        so the round and the pool stop at the same moment."""
        if self.until is None:
            now = time.monotonic()
            self.until = now + self.keep.share * max(0.0, deadline - now)
        return self.until

    def round_cutoff(self, deadline: float) -> Callable[[], float]:
        """For a round of one-token changes, asked at its first win: `keep.share` of the time then left, the
        round's own end (the pool's clock waits for evidence), or the pool's end once that is set."""
        first: list[float] = []

        def cutoff() -> float:
            if not first:
                now = time.monotonic()
                first.append(now + self.keep.share * max(0.0, deadline - now))
            return first[0] if self.until is None else min(first[0], self.until)

        return cutoff

    def settled(self) -> bool:
        """Whether the search is over: enough fixes (whoever found them), or the time it had after the first
        that evidence spoke for is up."""
        if not self.fixes:
            return False
        if len(self.fixes) >= self.keep.most:
            return True
        return self.until is not None and time.monotonic() >= self.until

    def wanted(self) -> int:
        """How many more fixes the pool takes before it is settled."""
        return max(0, self.keep.most - len(self.fixes))


def changed_function(change: FileChange, most_lines: int = 40) -> str:
    """The function (or lines) around the first changed line of one changed file, as it was."""
    old, new = (change.old_text or "").splitlines(), (change.new_text or "").splitlines()
    line = next((i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(old))
    try:
        tree = parse(change.old_text or "")
    except SyntaxError:
        tree = None
    span = range(max(1, line - 8), line + 8)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= line <= (
            node.end_lineno or node.lineno
        ):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)  # the innermost one wins
    return "\n".join(old[span.start - 1 : span.stop - 1][:most_lines])
