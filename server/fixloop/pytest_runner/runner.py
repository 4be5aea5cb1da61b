"""Run pytest as a killable subprocess and fold our plugin's JSON-lines report into a TestRun.

stdout is captured (in the language server fd 1 is the LSP channel), the process runs in its own session so
a timeout or a cancel kills the whole group, and nothing is written into the project: no cache, no bytecode.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.errors import TestRunError
from fixloop.project import outside_sources
from fixloop.pytest_runner.results import Frame, TestOutcome, TestRun

PLUGIN_MODULE = "fixloop_pytest_report"
REPORT_ENV = "FIXLOOP_REPORT_FILE"
OUTPUT_CAP = 8 * 1024
MESSAGE_CAP = 400
TRACEBACK_CAP = 4000
KILL_GRACE = 0.5
STACK_DUMP_WAIT = 0.3
STACK_FILE = "stacks.txt"  # the plugin's faulthandler dump, next to the report

_PLUGIN_SOURCE = Path(__file__).with_name("report_plugin.py")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Failed)\b")
# "ValueError: ...", "json.decoder.JSONDecodeError: ..."
_NAMES_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(: |$)")
_FAULTHANDLER_FRAME = re.compile(r'^\s+File "(.+)", line (\d+) in (.+)$')


class PytestRunner:
    """Runs pytest on node ids inside one project root; one `run` is one subprocess."""

    def __init__(
        self,
        root: Path,
        command: Sequence[str] = ("python", "-m", "pytest"),
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not command:
            raise TestRunError("testCommand is empty: set it to e.g. [\"python\", \"-m\", \"pytest\"]")
        self.root = Path(root).resolve()
        self.command = _resolve_command(command)
        self.timeout = timeout
        self.env = dict(env) if env is not None else None

    async def run(self, test_ids: Sequence[str] = ()) -> TestRun:
        """Run the given node ids (the whole suite when empty); never writes into the project."""
        test_ids = list(dict.fromkeys(test_ids))
        run = await self._run_once(test_ids)
        if run.exit_code != 4 or run.timed_out:
            return run
        # pytest aborts the whole session when a requested id sits in a module that failed to import;
        # report those as errors and run the others on their own.
        broken = [t for t in test_ids if (o := run.results.get(t)) is not None and o.when == "collect"]
        rest = [t for t in test_ids if t not in broken]
        if not broken or not rest or any(t in run.results for t in rest):
            return run
        second = await self._run_once(rest)
        results = {**second.results, **{t: run.results[t] for t in broken}}
        return TestRun(
            results=results,
            exit_code=second.exit_code or 1,
            timed_out=second.timed_out,
            duration=run.duration + second.duration,
            output=_tail(run.output + "\n" + second.output),
            errors=tuple(dict.fromkeys(run.errors + second.errors)),
            hung_test=second.hung_test,
            started=second.started,
        )

    async def _run_once(self, test_ids: list[str]) -> TestRun:
        workdir = Path(tempfile.mkdtemp(prefix="fixloop-pytest-"))
        try:
            shutil.copyfile(_PLUGIN_SOURCE, workdir / f"{PLUGIN_MODULE}.py")
            report_path = workdir / "report.jsonl"
            report_path.touch()
            return await self._run_in(workdir, report_path, test_ids)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def argv(self, test_ids: Sequence[str]) -> list[str]:
        return [
            *self.command,
            "-p", PLUGIN_MODULE,
            "-p", "no:cacheprovider",
            "-q",
            "--tb=short",
            "--color=no",
            "--continue-on-collection-errors",
            "-o", "console_output_style=classic",
            f"--rootdir={self.root}",
            *test_ids,
        ]  # fmt: skip

    def _environment(self, workdir: Path, report_path: Path) -> dict[str, str]:
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env[REPORT_ENV] = str(report_path)
        env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(workdir / "hypothesis"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(workdir), env.get("PYTHONPATH", "")) if p)
        env.pop("PYTEST_CURRENT_TEST", None)
        return env

    async def _run_in(self, workdir: Path, report_path: Path, test_ids: list[str]) -> TestRun:
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv(test_ids),
                cwd=self.root,
                env=self._environment(workdir, report_path),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise TestRunError(f"test command not found: {self.command[0]!r}: set testCommand") from exc
        except PermissionError as exc:
            message = f"test command is not executable: {self.command[0]!r}: set testCommand"
            raise TestRunError(message) from exc

        output = _OutputTail(OUTPUT_CAP * 8)
        reader = asyncio.create_task(output.drain(proc.stdout))
        timed_out = False
        try:
            try:
                await asyncio.wait_for(proc.wait(), self.timeout)
            except TimeoutError:
                timed_out = True
                if _signal_group(proc.pid, signal.SIGUSR1):  # our plugin dumps the stacks
                    await asyncio.sleep(STACK_DUMP_WAIT)
            await _kill_group(proc, KILL_GRACE)
            # A process that left the group may still hold the pipe: don't wait on it for long.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), 2.0)
        except asyncio.CancelledError:
            await asyncio.shield(_kill_group(proc, KILL_GRACE))
            raise
        finally:
            reader.cancel()
        duration = time.monotonic() - started

        text = output.text()
        records = _read_records(report_path)
        exit_code = proc.returncode if proc.returncode is not None else -1
        run = self._fold(records, test_ids, exit_code, timed_out, duration, text)
        if timed_out and run.hung_test and run.hung_test not in run.results:
            run = self._with_hung_outcome(run, _read_text(workdir / STACK_FILE))
        elif timed_out and not run.hung_test:
            frames = _Fold(self.root).project_frames(_main_thread_frames(_read_text(workdir / STACK_FILE)))
            if frames:  # stuck before any test started: importing a test module or a conftest
                stuck = f"timed out while collecting tests, at {frames[-1].path}:{frames[-1].line}"
                run = dataclasses.replace(run, errors=(*run.errors, f"{stuck} in {frames[-1].function}"))
        return run

    def _with_hung_outcome(self, run: TestRun, stacks: str) -> TestRun:
        """The hung test as failed, with the project frames it was stuck in when the stacks were dumped."""
        assert run.hung_test is not None
        fold = _Fold(self.root)
        frames = fold.project_frames(_main_thread_frames(stacks))
        location = f"{frames[-1].path}:{frames[-1].line}" if frames else None
        lines = []
        for frame in frames:
            lines.append(f"{frame.path}:{frame.line}: in {frame.function}")
            source = _read_text(self.root / frame.path).splitlines()
            if 0 < frame.line <= len(source):
                lines.append("    " + source[frame.line - 1].strip())
        outcome = TestOutcome(
            test_id=run.hung_test,
            outcome="failed",
            message=f"Timeout: the test did not finish within {self.timeout:g}s",
            location=location,
            traceback="\n".join(["the test was here when it was stopped:", *lines]) if lines else "",
            frames=frames,
            duration=run.duration,
        )
        return dataclasses.replace(run, results={**run.results, run.hung_test: outcome})

    def _fold(
        self,
        records: list[dict[str, Any]],
        test_ids: list[str],
        exit_code: int,
        timed_out: bool,
        duration: float,
        output: str,
    ) -> TestRun:
        session_started = any(r.get("kind") == "session_start" for r in records)
        if not session_started and not timed_out:
            self._raise_for_startup_failure(output, exit_code)
            conftest = _conftest_error(output)
            if conftest:
                return TestRun({}, exit_code, False, duration, _tail(output), errors=(conftest,))
            last = _last_line(output)
            raise TestRunError(f"pytest did not start (exit {exit_code}): {last}: check testCommand")

        folded = _Fold(self.root)
        for record in records:
            folded.add(record)
        results = folded.outcomes(test_ids)

        if exit_code == 4 and not timed_out:
            missing = [
                (_requested(test_id, test_ids), why) for test_id, why in _not_found(output, self.root)
            ]
            unexplained = [m for m in missing if m[0] not in results]
            if unexplained:
                test_id, why = unexplained[0]
                raise TestRunError(f"test {test_id!r} not found in {self.root} (pytest: {why})")
            if not missing and not results and not folded.errors:
                raise TestRunError(
                    f"pytest rejected the command line (exit 4): {_error_line(output)}: check testCommand"
                )

        hung = folded.running() if timed_out else None
        finished = any(r.get("kind") == "session_finish" for r in records)
        crashed = folded.running() if not timed_out and not finished else None
        if crashed is not None and crashed not in results:
            # The interpreter died under this test (os._exit, a segfault): it failed; nothing after it ran.
            how = f"killed by signal {-exit_code}" if exit_code < 0 else f"exit code {exit_code}"
            message = f"pytest died while this test was running ({how})"
            results[crashed] = TestOutcome(crashed, "failed", message=message, traceback=_last_line(output))
        return TestRun(
            results=results,
            exit_code=exit_code,
            timed_out=timed_out,
            duration=duration,
            output=_tail(output),
            errors=tuple(folded.errors),
            hung_test=hung,
            started=tuple(folded.started),
        )

    def _raise_for_startup_failure(self, output: str, exit_code: int) -> None:
        if re.search(r"No module named '?pytest'?(\s|$)", output):
            raise TestRunError(f"pytest is not installed for {self.command[0]}: set testCommand")
        if f"No module named '{PLUGIN_MODULE}'" in output or f"No module named {PLUGIN_MODULE}" in output:
            raise TestRunError("the test command does not pass PYTHONPATH to pytest: set testCommand")


def _resolve_command(command: Sequence[str]) -> tuple[str, ...]:
    head, *rest = command
    if head in ("python", "python3") and shutil.which(head) is None:
        head = sys.executable
    return (head, *rest)


async def _kill_group(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the process group, SIGKILL what is left after `grace`; also reaps stray grandchildren."""
    if proc.returncode is None:
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), grace * 2)


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class _OutputTail:
    """Keeps the last `cap` bytes of a stream while draining it (a full pipe would block pytest)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = bytearray()

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            self.buffer.extend(chunk)
            if len(self.buffer) > self.cap:
                del self.buffer[: len(self.buffer) - self.cap]

    def text(self) -> str:
        return self.buffer.decode("utf-8", errors="replace")


def _read_records(path: Path) -> list[dict[str, Any]]:
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


class _Fold:
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
            line = _exception_line(str(record.get("message", "")))
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
            message = _assertion_line(message)
            exc_type = (frames_record or {}).get("exc_type") or ""
            if exc_type and message and not _NAMES_EXCEPTION.match(message):
                message = f"{exc_type}: {message}"
            elif exc_type and not message:
                message = exc_type
        else:
            message = _first_line(message)
        if state["outcome"] == "xfailed" and failure.get("wasxfail"):
            message = str(failure["wasxfail"])
        return TestOutcome(
            test_id=nodeid,
            outcome=state["outcome"],
            message=_cap(message, MESSAGE_CAP),
            location=self._location(frames, failure) if state["outcome"] in ("failed", "error") else None,
            traceback=_trim_traceback(str(failure.get("longrepr", ""))) if failure.get("longrepr") else "",
            frames=frames,
            duration=state["duration"],
            when=state["when"],
        )

    def _collect_outcome(self, test_id: str, error_id: str, record: dict[str, Any]) -> TestOutcome:
        frames = self._frames(self.frames.get((error_id, "collect")), record)
        return TestOutcome(
            test_id=test_id,
            outcome="error",
            message=_cap(_exception_line(str(record.get("message", ""))), MESSAGE_CAP),
            location=self._location(frames, record),
            traceback=_trim_traceback(str(record.get("longrepr", ""))),
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

    def relative(self, filename: str) -> str | None:
        """`filename` relative to the root with '/' separators, or None outside the project's own code."""
        if not filename or filename.startswith("<"):
            return None
        path = Path(filename)
        if not path.is_absolute():
            path = self.root / path
        try:
            rel = path.resolve().relative_to(self.root)
        except (ValueError, OSError):
            return None
        return None if outside_sources(rel.as_posix()) else rel.as_posix()


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _main_thread_frames(stacks: str) -> list[list[Any]]:
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


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _assertion_line(text: str) -> str:
    """The first line, plus the `assert ...` comparison when a custom assertion message hid it."""
    first = _first_line(text)
    if first.startswith("assert "):
        return first
    comparison = next((ln.strip() for ln in text.splitlines() if ln.startswith("assert ")), "")
    return f"{first} ({comparison})" if comparison else first


def _exception_line(text: str) -> str:
    """The line naming the exception in a multi-line error (the last one that looks like `XError: ...`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    return lines[-1] if lines else ""


def _cap(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 3] + "..."


def _trim_traceback(text: str) -> str:
    text = text.strip("\n")
    if len(text) <= TRACEBACK_CAP:
        return text
    head = TRACEBACK_CAP // 4
    return text[:head] + "\n... (traceback trimmed) ...\n" + text[-(TRACEBACK_CAP - head) :]


def _tail(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    cut = text[-OUTPUT_CAP:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < 200 else cut


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _error_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith(("ERROR:", "error:")) or "error: " in line:
            return line.strip()
    return _last_line(text)


def _conftest_error(output: str) -> str | None:
    match = re.search(r"ImportError while loading conftest '([^']+)'", output)
    if not match:
        return None
    after = output[match.end() :]
    exc = next((ln[1:].strip() for ln in after.splitlines() if ln.startswith("E ")), "")
    head = f"conftest {match.group(1)} failed to import"
    return f"{head}: {exc}" if exc else head


def _not_found(output: str, root: Path) -> list[tuple[str, str]]:
    """(test id relative to root, pytest's reason) for each id pytest could not find."""
    missing = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"ERROR: (not found|found no collectors for): (.+)$", line.strip())
        if match:
            following = lines[index + 1].strip() if index + 1 < len(lines) else ""
            why = following if following.startswith("(") else ""
            missing.append((_relative_id(match.group(2), root), why.strip("()") or match.group(1)))
            continue
        match = re.match(r"ERROR: file or directory not found: (.+)$", line.strip())
        if match:
            missing.append((_relative_id(match.group(1), root), "file or directory not found"))
    return missing


def _requested(reported: str, test_ids: Sequence[str]) -> str:
    """The requested id pytest meant: it drops the "[...]" of a parametrized id from its message."""
    for test_id in test_ids:
        if test_id == reported or test_id.startswith(reported + "["):
            return test_id
    return reported


def _relative_id(node: str, root: Path) -> str:
    path, sep, rest = node.partition("::")
    candidate = Path(path)
    if candidate.is_absolute():
        with contextlib.suppress(ValueError):
            path = candidate.relative_to(root).as_posix()
    return path + sep + rest
