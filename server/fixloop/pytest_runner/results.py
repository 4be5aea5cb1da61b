"""Structured results of one pytest run: per-test outcomes with messages, tracebacks and project frames."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from fixloop.pytest_runner.failing_inputs import FailingInputs

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
Phase = Literal["setup", "call", "teardown", "collect"]
FAILING_OUTCOMES = ("failed", "error")


@dataclass(frozen=True)
class Frame:
    """One traceback frame inside the project; `path` is relative to the root with '/' separators."""

    path: str
    line: int
    function: str


@dataclass(frozen=True)
class TestOutcome:
    """The outcome of one test (setup, call and teardown folded into one)."""

    __test__ = False  # not a pytest test class

    test_id: str
    outcome: Outcome
    message: str = ""  # one line, e.g. "AssertionError: assert 3 == 4"
    location: str | None = None  # "path:line" of the failing line (innermost project frame), relative
    traceback: str = ""  # pytest's short-style traceback, trimmed
    frames: tuple[Frame, ...] = ()  # project frames only, outermost first
    duration: float = 0.0
    when: Phase = "call"
    inputs: FailingInputs | None = None  # a failed call's arguments, failing line and expected vs actual

    @property
    def failing(self) -> bool:
        return self.outcome in FAILING_OUTCOMES

    def frame_in(self, path: str) -> Frame | None:
        """The innermost frame in `path` (relative, '/' separators), e.g. the failing line of a test file."""
        for frame in reversed(self.frames):
            if frame.path == path:
                return frame
        return None


@dataclass(frozen=True)
class TestRun:
    """Everything one pytest run reported, in the order pytest ran the tests."""

    __test__ = False  # not a pytest test class

    results: dict[str, TestOutcome]
    exit_code: int
    timed_out: bool
    duration: float
    output: str  # tail of the captured stdout+stderr
    errors: tuple[str, ...] = ()  # collection errors, one line each
    hung_test: str | None = None  # the test that was running when the timeout hit
    started: tuple[str, ...] = field(default=(), compare=False)  # test ids in the order they started

    def passed_ids(self) -> list[str]:
        return [tid for tid, res in self.results.items() if res.outcome == "passed"]

    def failed_ids(self) -> list[str]:
        """Tests that failed or errored (setup, teardown or collection)."""
        return [tid for tid, res in self.results.items() if res.outcome in FAILING_OUTCOMES]

    def outcome(self, test_id: str) -> TestOutcome | None:
        return self.results.get(test_id)

    def summary(self) -> str:
        """One line like "2 failed, 5 passed, 1 error in 0.81s" (plus "timed out" when it did)."""
        counts: dict[str, int] = {}
        for res in self.results.values():
            counts[res.outcome] = counts.get(res.outcome, 0) + 1
        order = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")
        parts = [f"{counts[name]} {name}" for name in order if counts.get(name)]
        if self.errors:
            parts.append(f"{len(self.errors)} collection error{'s' if len(self.errors) != 1 else ''}")
        text = ", ".join(parts) or "no tests ran"
        text += f" in {self.duration:.2f}s"
        if self.timed_out:
            text += f" (timed out{f' in {self.hung_test}' if self.hung_test else ''})"
        return text


class TestRunner(Protocol):
    """What the tools and the gate need of a test runner: `PytestRunner`, or a test's own."""

    __test__ = False  # not a pytest test class

    root: Path
    timeout: float

    async def run(
        self, test_ids: Sequence[str] = (), *, root: Path | None = None, seconds: float | None = None
    ) -> TestRun:
        """Run the node ids in `root` (another copy of the project: the gate's clean copy), else in the
        runner's own root; `seconds`, when shorter than the runner's, limits this run."""
        ...
