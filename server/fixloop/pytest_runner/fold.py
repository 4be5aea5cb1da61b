"""Fold the report plugin's JSON-lines records into one TestRun: outcomes, messages, project frames, hangs."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fixloop.errors import TestRunError
from fixloop.project import outside_sources
from fixloop.pytest_runner.failing_inputs import FailingInputs, inputs_from_record
from fixloop.pytest_runner.pytest_output import (
    MESSAGE_CAP,
    NAMES_EXCEPTION,
    assertion_line,
    cap,
    conftest_error,
    error_line,
    exception_line,
    first_line,
    ids_not_found,
    last_line,
    read_text,
    requested_id,
    tail_of,
    trim_traceback,
)
from fixloop.pytest_runner.results import Frame, TestOutcome, TestRun
from fixloop.secret_files import refusal

_FRAME_HEADER = re.compile(r"^(\S.*?):(\d+): in \S")  # 'path:12: in function' in --tb=short output

_FAULTHANDLER_FRAME = re.compile(r'^\s+File "(.+)", line (\d+) in (.+)$')


def read_records(path: Path) -> list[dict[str, Any]]:
    records = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if isinstance(record, dict):
            records.append(record)
    return records


class ReportFold:
    """Folds setup/call/teardown reports and frames records into one TestOutcome per test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.order: list[str] = []
        self.state: dict[str, dict[str, Any]] = {}
        self.frames: dict[tuple[str, str], dict[str, Any]] = {}
        self.collect_errors: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.started: list[str] = []
        self.finished: set[str] = set()

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        nodeid = str(record.get("nodeid", ""))
        if kind == "start":
            self.started.append(nodeid)
        elif kind == "finish":
            self.finished.add(nodeid)
        elif kind == "frames":
            self.frames[(nodeid, str(record.get("when", "")))] = record
        elif kind == "collect_error":
            self.collect_errors[nodeid] = record
            line = exception_line(str(record.get("message", "")))
            self.errors.append(f"{nodeid or '<session>'}: {line}" if line else (nodeid or "<session>"))
        elif kind == "report":
            self._add_report(nodeid, record)

    def _add_report(self, nodeid: str, record: dict[str, Any]) -> None:
        if nodeid not in self.state:
            self.order.append(nodeid)
            self.state[nodeid] = {"outcome": None, "duration": 0.0, "failure": None, "when": "call"}
        state = self.state[nodeid]
        state["duration"] += float(record.get("duration", 0.0) or 0.0)
        when, outcome, xfail = record.get("when"), record.get("outcome"), "wasxfail" in record
        if when == "setup":
            if outcome == "failed":
                state.update(outcome="error", failure=record, when="setup")
            elif outcome == "skipped":
                state.update(outcome="xfailed" if xfail else "skipped", failure=record, when="setup")
        elif when == "call":
            if outcome == "passed":
                state.update(outcome="xpassed" if xfail else "passed")
            elif outcome == "failed":
                state.update(outcome="failed", failure=record, when="call")
            else:
                state.update(outcome="xfailed" if xfail else "skipped", failure=record, when="call")
        elif when == "teardown" and outcome == "failed" and state["outcome"] in (None, "passed"):
            state.update(outcome="error", failure=record, when="teardown")

    def running(self) -> str | None:
        for nodeid in reversed(self.started):
            if nodeid not in self.finished:
                return nodeid
        return None

    def outcomes(self, requested: Sequence[str]) -> dict[str, TestOutcome]:
        results: dict[str, TestOutcome] = {}
        for nodeid in self.order:
            state = self.state[nodeid]
            if state["outcome"] is None:
                continue  # started but killed before a verdict
            results[nodeid] = self._outcome(nodeid, state)
        for test_id in requested:
            if test_id in results:
                continue
            for error_id, record in self.collect_errors.items():
                if error_id == "" or test_id == error_id or test_id.startswith(error_id + "::"):
                    results[test_id] = self._collect_outcome(test_id, error_id, record)
                    break
        return results

    def _outcome(self, nodeid: str, state: dict[str, Any]) -> TestOutcome:
        failure = state["failure"]
        if failure is None:
            return TestOutcome(nodeid, state["outcome"], duration=state["duration"], when=state["when"])
        frames_record = self.frames.get((nodeid, state["when"]))
        frames = self._frames(frames_record, failure)
        message = str(failure.get("message", ""))
        if state["outcome"] in ("failed", "error"):
            message = assertion_line(message)
            exc_type = (frames_record or {}).get("exc_type") or ""
            if exc_type and message and not NAMES_EXCEPTION.match(message):
                message = f"{exc_type}: {message}"
            elif exc_type and not message:
                message = exc_type
        else:
            message = first_line(message)
        if state["outcome"] == "xfailed" and failure.get("wasxfail"):
            message = str(failure["wasxfail"])
        return TestOutcome(
            test_id=nodeid,
            outcome=state["outcome"],
            message=cap(message, MESSAGE_CAP),
            location=self._location(frames, failure) if state["outcome"] in ("failed", "error") else None,
            traceback=self._traceback(str(failure.get("longrepr", ""))) if failure.get("longrepr") else "",
            frames=frames,
            duration=state["duration"],
            when=state["when"],
            inputs=self._inputs(frames_record) if state["outcome"] == "failed" else None,
        )

    def _inputs(self, frames_record: dict[str, Any] | None) -> FailingInputs | None:
        raw = (frames_record or {}).get("inputs")
        if not isinstance(raw, dict):
            return None
        filename = str(raw.get("path") or "")
        if filename and self._secret(filename):
            return None
        return inputs_from_record(raw, self.relative(filename) or Path(filename).name)

    def _collect_outcome(self, test_id: str, error_id: str, record: dict[str, Any]) -> TestOutcome:
        frames = self._frames(self.frames.get((error_id, "collect")), record)
        return TestOutcome(
            test_id=test_id,
            outcome="error",
            message=cap(exception_line(str(record.get("message", ""))), MESSAGE_CAP),
            location=self._location(frames, record),
            traceback=self._traceback(str(record.get("longrepr", ""))),
            frames=frames,
            when="collect",
        )

    def _frames(self, frames_record: dict[str, Any] | None, failure: dict[str, Any]) -> tuple[Frame, ...]:
        record = frames_record or {}
        for raw in (record.get("frames") or [], *(record.get("causes") or [])):
            frames = self.project_frames(raw)
            if frames:
                return frames
        return self.project_frames(failure.get("entries") or [])

    def project_frames(self, raw: list[Any]) -> tuple[Frame, ...]:
        frames = []
        for item in raw:
            try:
                filename, line, function = str(item[0]), int(item[1]), str(item[2])
            except (IndexError, TypeError, ValueError):
                continue
            rel = self.relative(filename)
            if rel is not None:
                frames.append(Frame(rel, line, function))
        return tuple(frames)

    def _location(self, frames: tuple[Frame, ...], failure: dict[str, Any]) -> str | None:
        if frames:
            return f"{frames[-1].path}:{frames[-1].line}"
        crash = failure.get("crash")
        if isinstance(crash, list) and len(crash) == 2:
            rel = self.relative(str(crash[0]))
            if rel is not None:
                return f"{rel}:{int(crash[1])}"
        return None

    def _traceback(self, longrepr: str) -> str:
        """pytest's traceback, trimmed, without the source lines it quoted from a secret file (a frame
        compiled under a secret's name makes pytest read that file)."""
        lines: list[str] = []
        hiding = False
        for line in longrepr.splitlines():
            header = _FRAME_HEADER.match(line)
            if header:
                hiding = self._secret(header.group(1))
                lines.append(line)
                if hiding:
                    lines.append("    (a secret file: its lines are not shown)")
            elif hiding and line.startswith((" ", "\t", ">")):
                continue
            else:
                hiding = hiding and not line.startswith("E ")
                if not hiding:
                    lines.append(line)
        return trim_traceback("\n".join(lines))

    def _secret(self, filename: str) -> bool:
        path = Path(filename)
        if not path.is_absolute():
            path = self.root / path
        try:
            real = path.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return False
        return refusal(real) is not None or refusal(filename) is not None

    def relative(self, filename: str) -> str | None:
        """`filename` relative to the root with '/' separators, or None outside the project's own code (or
        a file the secrets policy keeps from the model: a frame never points the warm start at a secret)."""
        if not filename or filename.startswith("<"):
            return None
        path = Path(filename)
        if not path.is_absolute():
            path = self.root / path
        try:
            rel = path.resolve().relative_to(self.root)
        except (ValueError, OSError):
            return None
        if outside_sources(rel.as_posix()) or refusal(rel.as_posix()) is not None:
            return None
        return rel.as_posix()


def main_thread_frames(stacks: str) -> list[list[Any]]:
    """[filename, line, function] outermost first, from faulthandler's dump of the main thread."""
    blocks: list[tuple[str, list[list[Any]]]] = []
    for line in stacks.splitlines():
        if line.startswith(("Thread 0x", "Current thread 0x", "Stack (most recent call first)")):
            blocks.append((line, []))
            continue
        match = _FAULTHANDLER_FRAME.match(line)
        if match and blocks:
            blocks[-1][1].append([match.group(1), int(match.group(2)), match.group(3)])
    current = next((frames for head, frames in blocks if head.startswith("Current thread")), None)
    if current is None:
        current = blocks[0][1] if blocks else []
    return list(reversed(current))


@dataclasses.dataclass(frozen=True)
class FinishedProcess:
    """What one pytest subprocess left: its report records, exit code, output tail and stack dump."""

    records: list[dict[str, Any]]
    exit_code: int
    timed_out: bool
    duration: float
    output: str
    stacks: str = ""  # the plugin's faulthandler dump, taken on a timeout

    @property
    def session_started(self) -> bool:
        return any(record.get("kind") == "session_start" for record in self.records)


def fold_run(root: Path, timeout: float, test_ids: list[str], finished: FinishedProcess) -> TestRun:
    """The TestRun of one finished pytest process; a hang becomes the hung test's failure (or an error)."""
    run = _fold(root, test_ids, finished)
    if finished.timed_out and run.hung_test and run.hung_test not in run.results:
        return _with_hung_outcome(root, timeout, run, finished.stacks)
    if finished.timed_out and not run.hung_test:
        frames = ReportFold(root).project_frames(main_thread_frames(finished.stacks))
        if frames:  # stuck before any test started: importing a test module or a conftest
            stuck = f"timed out while collecting tests, at {frames[-1].path}:{frames[-1].line}"
            return dataclasses.replace(run, errors=(*run.errors, f"{stuck} in {frames[-1].function}"))
    return run


def _with_hung_outcome(root: Path, timeout: float, run: TestRun, stacks: str) -> TestRun:
    """The hung test as failed, with the project frames it was stuck in when the stacks were dumped."""
    assert run.hung_test is not None
    frames = ReportFold(root).project_frames(main_thread_frames(stacks))
    location = f"{frames[-1].path}:{frames[-1].line}" if frames else None
    lines = []
    for frame in frames:
        lines.append(f"{frame.path}:{frame.line}: in {frame.function}")
        source = read_text(root / frame.path).splitlines()
        if 0 < frame.line <= len(source):
            lines.append("    " + source[frame.line - 1].strip())
    outcome = TestOutcome(
        test_id=run.hung_test,
        outcome="failed",
        message=f"Timeout: the test did not finish within {timeout:g}s",
        location=location,
        traceback="\n".join(["the test was here when it was stopped:", *lines]) if lines else "",
        frames=frames,
        duration=run.duration,
    )
    return dataclasses.replace(run, results={**run.results, run.hung_test: outcome})


def _refused_ids(
    root: Path, test_ids: list[str], output: str, results: dict[str, TestOutcome], errors: bool
) -> None:
    """Raise the one line for a run pytest refused (exit 4): a test id it did not find, or a command line
    it rejected."""
    missing = [(requested_id(test_id, test_ids), why) for test_id, why in ids_not_found(output, root)]
    unexplained = [m for m in missing if m[0] not in results]
    if unexplained:
        test_id, why = unexplained[0]
        raise TestRunError(f"test {test_id!r} not found in {root} (pytest: {why})")
    if not missing and not results and not errors:
        rejected = error_line(output)
        raise TestRunError(f"pytest rejected the command line (exit 4): {rejected}: check testCommand")


def _fold(root: Path, test_ids: list[str], finished: FinishedProcess) -> TestRun:
    exit_code, output, timed_out = finished.exit_code, finished.output, finished.timed_out
    if not finished.session_started and not timed_out:
        conftest = conftest_error(output)
        if conftest:
            return TestRun({}, exit_code, False, finished.duration, tail_of(output), errors=(conftest,))
        last = last_line(output)
        raise TestRunError(f"pytest did not start (exit {exit_code}): {last}: check testCommand")

    folded = ReportFold(root)
    for record in finished.records:
        folded.add(record)
    results = folded.outcomes(test_ids)

    if exit_code == 4 and not timed_out:
        _refused_ids(root, test_ids, output, results, bool(folded.errors))

    hung = folded.running() if timed_out else None
    ended = any(r.get("kind") == "session_finish" for r in finished.records)
    crashed = folded.running() if not timed_out and not ended else None
    if crashed is not None and crashed not in results:
        # The interpreter died under this test (os._exit, a segfault): it failed; nothing after it ran.
        how = f"killed by signal {-exit_code}" if exit_code < 0 else f"exit code {exit_code}"
        message = f"pytest died while this test was running ({how})"
        results[crashed] = TestOutcome(crashed, "failed", message=message, traceback=last_line(output))
    return TestRun(
        results=results,
        exit_code=exit_code,
        timed_out=timed_out,
        duration=finished.duration,
        output=tail_of(output),
        errors=tuple(folded.errors),
        hung_test=hung,
        started=tuple(folded.started),
    )
