"""Run pytest as a killable subprocess with our report plugin; `fold` turns what it left into a TestRun.

stdout is captured (in the language server fd 1 is the LSP channel), the process runs in its own session so
a timeout or a cancel kills the whole group, and nothing is written into the project: no cache, no bytecode.
The command line is fixloop's alone: test ids come after `--` and none may start with `-` or `@`; pytest's
temp folder is pinned inside the run's scratch area, where HOME and TMPDIR point too. The command runs
under `reaper.py`, which kills every process the tests leave behind (new sessions included) and, given
`confine_writes`, lets them write only under that folder; processes that escape it anyway are found by a
mark in their environment and killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import re
import shutil
import site
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.errors import TestEnvironmentError, TestRunError
from fixloop.platform_support import CURRENT, signal_tree
from fixloop.processes import RUN_MARK_ENV, kill_marked
from fixloop.pytest_runner import shadow_site
from fixloop.pytest_runner.fold import FinishedProcess, fold_run, read_records
from fixloop.pytest_runner.pytest_output import OUTPUT_CAP, OutputTail, read_text, tail_of
from fixloop.pytest_runner.reaper import NOT_EXECUTABLE, NOT_FOUND
from fixloop.pytest_runner.results import TestRun
from fixloop.pytest_runner.run_env import COVERAGE_FILE_ENV, COVERAGE_PATH_ENV, REPORT_ENV
from fixloop.pytest_runner.test_process import TestProcess, end_group
from fixloop.pytest_runner.warm import WarmPool, WarmRun, warm_capable

PLUGIN_MODULE = "fixloop_pytest_report"
COVERAGE_MODULE = "fixloop_pytest_coverage"
OUTPUT_KEPT = OUTPUT_CAP * 8  # the end of a run's console output kept for the fold
KILL_GRACE = 1.0  # the reaper stops the command and sweeps within this
STACK_DUMP_WAIT = 0.3
STACK_FILE = "stacks.txt"  # the plugin's faulthandler dump, next to the report
_PLUGIN_SOURCE = Path(__file__).with_name("report_plugin.py")
_COVERAGE_SOURCE = Path(__file__).with_name("coverage_plugin.py")
_REAPER = Path(__file__).with_name("reaper.py")
_HOOK_SOURCE = Path(shadow_site.__file__)
HOOK_MODULE = "fixloop_shadow_site"


@dataclass(frozen=True)
class ImportRedirect:
    """A run in the shadow: imports bound for `real` (the user's tree) must land in `shadow`, and a run that
    still imported the user's files is refused (TestEnvironmentError)."""

    real: Path  # the user's repository top (or project folder), resolved
    shadow: Path  # the same folder in the shadow

    def top_for(self, shadow_root: Path, root: Path) -> Path:
        """The top of the copy whose project root is `root` (the shadow's project root is `shadow_root`):
        the gate's clean copy mirrors the shadow, so imports bound for `real` go to that copy instead."""
        depth = len(shadow_root.relative_to(self.shadow).parts)
        return root.parents[depth - 1] if depth else root


class PytestRunner:
    """Runs pytest on node ids inside one project root; one `run` is one subprocess."""

    def __init__(
        self,
        root: Path,
        command: Sequence[str] = ("python", "-m", "pytest"),
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        scratch: Path | None = None,
        confine_writes: Path | None = None,
        *,
        redirect: ImportRedirect | None = None,
        missing_pytest: str = "",
        warm: bool = False,
    ) -> None:
        """`scratch`: where each run's temp, home and report folders go (the shadow's scratch area); a
        fresh system temp folder per run when None. `confine_writes`: the one folder the tests may write
        under (the shadow's container), where the kernel can enforce it (Landlock). `warm`: fork the runs
        from a warm pytest where the command allows (warm.py); `close()` ends it."""
        if not command:
            raise TestRunError('testCommand is empty: set it to e.g. ["python", "-m", "pytest"]')
        self.root = Path(root).resolve()
        self.command = _resolve_command(command)
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        self.scratch = Path(scratch) if scratch is not None else None
        self.confine_writes = Path(confine_writes) if confine_writes is not None else None
        self.seconds = 0.0  # wall time of every run so far (the run's figures)
        self.redirect = redirect
        self.missing_pytest = missing_pytest  # the one-line error when the interpreter has no pytest
        self.warm = (  # shared by the copies
            WarmPool(self.command[0], self._reaper(), self.root, OUTPUT_KEPT)
            if warm and warm_capable(self.command)
            else None
        )
        self.redirected: tuple[str, ...] = ()  # what the startup hook moved into the shadow, last run
        self.installed: dict[str, str] = {}  # top-level modules the last run loaded from site-packages
        self.coverage_file: Path | None = None  # where a covering runner's runs write line coverage
        self.counted_by: PytestRunner | None = None  # the runner whose figures a covering runner adds to

    def covering(self, data_file: Path) -> PytestRunner:
        """A runner like this one whose runs also record the lines each test runs into `data_file`
        (coverage.py with a context per test); its test time is added to this runner's."""
        other = copy.copy(self)
        other.coverage_file = Path(data_file)
        other.counted_by = self
        return other

    async def run(
        self, test_ids: Sequence[str] = (), *, root: Path | None = None, seconds: float | None = None
    ) -> TestRun:
        """Run the given node ids (the whole suite when empty); never writes into the project. `root`: run
        in another copy of the project instead (the gate's clean copy), with the same settings; `seconds`:
        a shorter time limit for this run (a candidate screened among many)."""
        if seconds is not None and seconds < self.timeout:
            limited = copy.copy(self)
            limited.timeout, limited.counted_by = seconds, self.counted_by or self
            return await limited.run(test_ids, root=root)
        started = time.monotonic()
        where = Path(root) if root is not None else self.root
        try:
            return await self._run_ids(list(dict.fromkeys(test_ids)), where)
        finally:
            (self.counted_by or self).seconds += time.monotonic() - started

    async def _run_ids(self, test_ids: list[str], root: Path) -> TestRun:
        run = await self._run_once(test_ids, root)
        if run.exit_code != 4 or run.timed_out:
            return run
        # pytest aborts the whole session when a requested id sits in a module that failed to import;
        # report those as errors and run the others on their own.
        broken = [t for t in test_ids if (o := run.results.get(t)) is not None and o.when == "collect"]
        rest = [t for t in test_ids if t not in broken]
        if not broken or not rest or any(t in run.results for t in rest):
            return run
        second = await self._run_once(rest, root)
        results = {**second.results, **{t: run.results[t] for t in broken}}
        return TestRun(
            results=results,
            exit_code=second.exit_code or 1,
            timed_out=second.timed_out,
            duration=run.duration + second.duration,
            output=tail_of(run.output + "\n" + second.output),
            errors=tuple(dict.fromkeys(run.errors + second.errors)),
            hung_test=second.hung_test,
            started=second.started,
        )

    async def _run_once(self, test_ids: list[str], root: Path) -> TestRun:
        if self.scratch is not None:
            self.scratch.mkdir(parents=True, exist_ok=True)
            workdir = Path(tempfile.mkdtemp(prefix="pytest-", dir=self.scratch))
        else:
            workdir = Path(tempfile.mkdtemp(prefix="fixloop-pytest-"))
        try:
            shutil.copyfile(_PLUGIN_SOURCE, workdir / f"{PLUGIN_MODULE}.py")
            if self.coverage_file is not None:
                shutil.copyfile(_COVERAGE_SOURCE, workdir / f"{COVERAGE_MODULE}.py")
            if self.redirect is not None:
                shutil.copyfile(_HOOK_SOURCE, workdir / f"{HOOK_MODULE}.py")
                (workdir / "sitecustomize.py").write_text(shadow_site.SITECUSTOMIZE, encoding="utf-8")
            report_path = workdir / "report.jsonl"
            report_path.touch()
            return await self._run_in(workdir, report_path, test_ids, root)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def argv(
        self, test_ids: Sequence[str], workdir: Path | None = None, root: Path | None = None
    ) -> list[str]:
        """pytest's command line: fixloop's options, then `--` and the node ids (never an option)."""
        for test_id in test_ids:
            if test_id.startswith(("-", "@")) or "\0" in test_id:
                raise TestRunError(
                    f"{test_id[:80]!r} is not a test id: only node ids are run, never pytest "
                    f"options or @files (e.g. 'tests/test_app.py::test_parse')"
                )
        pinned = [f"--basetemp={workdir / 'basetemp'}"] if workdir is not None else []
        return [
            *self.command,
            "-p", PLUGIN_MODULE,
            *(["-p", COVERAGE_MODULE] if self.coverage_file is not None else []),
            "-p", "no:cacheprovider",
            "-q",
            "--tb=short",
            "--color=no",
            "--continue-on-collection-errors",
            "-o", "console_output_style=classic",
            *pinned,
            f"--rootdir={root or self.root}",
            "--",
            *test_ids,
        ]  # fmt: skip

    def _environment(self, workdir: Path, report_path: Path, mark: str, root: Path) -> dict[str, str]:
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        # Home and temp folders of the tests live in the run's scratch area, never the user's; the user's
        # packages installed with --user stay importable.
        home, temp = workdir / "home", workdir / "tmp"
        home.mkdir(exist_ok=True)
        temp.mkdir(exist_ok=True)
        env.setdefault("PYTHONUSERBASE", site.getuserbase())
        env.update(HOME=str(home), USERPROFILE=str(home), TMPDIR=str(temp), TEMP=str(temp), TMP=str(temp))
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
            env[name] = str(home / name.lower())
        env[RUN_MARK_ENV] = mark
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env[REPORT_ENV] = str(report_path)
        env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(workdir / "hypothesis"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(workdir), env.get("PYTHONPATH", "")) if p)
        env.pop("PYTEST_CURRENT_TEST", None)
        for name in (shadow_site.REAL_ENV, shadow_site.SHADOW_ENV):
            env.pop(name, None)
        env.pop(COVERAGE_FILE_ENV, None)
        if self.coverage_file is not None:
            env[COVERAGE_FILE_ENV] = str(self.coverage_file)
            env[COVERAGE_PATH_ENV] = str(coverage_path(workdir))
        if self.redirect is not None:
            env[shadow_site.REAL_ENV] = str(self.redirect.real)
            env[shadow_site.SHADOW_ENV] = str(self.redirect.top_for(self.root, root))
        return env

    async def _run_in(self, workdir: Path, report_path: Path, test_ids: list[str], root: Path) -> TestRun:
        started = time.monotonic()
        mark = uuid.uuid4().hex
        proc = await self._spawn(self.argv(test_ids, workdir, root), workdir, report_path, mark, root)
        output = OutputTail(OUTPUT_KEPT)
        try:
            timed_out = await self._wait(proc, output)
            if isinstance(proc, WarmRun):
                output.buffer = bytearray(proc.read_output())
        finally:
            kill_marked(mark)
        finished = FinishedProcess(
            records=read_records(report_path),
            exit_code=proc.returncode if proc.returncode is not None else -1,
            timed_out=timed_out,
            duration=time.monotonic() - started,
            output=output.text(),
            stacks=read_text(workdir / STACK_FILE) if timed_out else "",
        )
        if not finished.session_started and not timed_out:
            self._raise_for_startup_failure(finished.output)
        if self.redirect is not None:
            self._check_imports(finished.records)
        return fold_run(root, self.timeout, test_ids, finished)

    async def _spawn(
        self, argv: list[str], workdir: Path, report_path: Path, mark: str, root: Path
    ) -> TestProcess:
        """The test command started in a process group of its own, under the reaper on POSIX (forked from
        a warm pytest where the runner has one)."""
        env = self._environment(workdir, report_path, mark, root)
        if self.warm is not None:
            args, hook = argv[len(self.command) :], self.redirect is not None
            if (run := await self.warm.spawn(args, root, env, workdir, hook=hook)) is not None:
                return run
        try:
            return await asyncio.create_subprocess_exec(
                *self._reaper(),
                *argv,
                cwd=root,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                **CURRENT.new_group(),
            )
        except FileNotFoundError as exc:
            raise TestRunError(f"test command not found: {self.command[0]!r}: set testCommand") from exc
        except PermissionError as exc:
            message = f"test command is not executable: {self.command[0]!r}: set testCommand"
            raise TestRunError(message) from exc

    def _reaper(self) -> list[str]:
        """The reaper's command line before the test command's (Landlock, subreaper, POSIX signals); none on
        Windows, which ends the tree with taskkill."""
        writable = ["--write", str(self.confine_writes)] if self.confine_writes is not None else []
        return [] if CURRENT.windows else [sys.executable, "-I", "-S", str(_REAPER), *writable, "--"]

    async def close(self) -> None:
        """End the warm pytest processes of this runner and its copies (none: nothing to do)."""
        if self.warm is not None:
            await self.warm.close()

    async def _wait(self, proc: TestProcess, output: OutputTail) -> bool:
        """Wait for the run (its output kept in `output`) up to the timeout, then end its group; whether it
        timed out (its stacks dumped first)."""
        reader = asyncio.create_task(output.drain(proc.stdout))
        timed_out = False
        try:
            try:
                async with asyncio.timeout(self.timeout):
                    await proc.wait()
            except TimeoutError:
                timed_out = True
                if signal_tree(proc.pid, "SIGUSR1"):  # our plugin dumps the stacks
                    await asyncio.sleep(STACK_DUMP_WAIT)
            await end_group(proc, KILL_GRACE)
            # A process that left the group may still hold the pipe: don't wait on it for long.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    await asyncio.shield(reader)
        except asyncio.CancelledError:
            await asyncio.shield(end_group(proc, KILL_GRACE))
            raise
        finally:
            reader.cancel()
        return timed_out

    def _check_imports(self, records: list[dict[str, Any]]) -> None:
        """Remember what the hook redirected; refuse a run that imported the user's real files."""
        self.redirected = tuple(
            str(entry)
            for record in records
            if record.get("kind") == "redirected"
            for entry in record.get("entries") or ()
        )
        self.installed = {
            str(name): str(path)
            for record in records
            if record.get("kind") == "installed"
            for name, path in record.get("modules") or ()
        }
        real: dict[str, str] = {}
        for record in records:
            if record.get("kind") == "real_imports":
                for name, rel in record.get("modules") or ():
                    real.setdefault(str(rel), str(name))
        if real:
            raise TestEnvironmentError(real_imports_message(real, self.command[0]))

    def _raise_for_startup_failure(self, output: str) -> None:
        if NOT_FOUND in output:
            raise TestRunError(f"test command not found: {self.command[0]!r}: set testCommand")
        if NOT_EXECUTABLE in output:
            raise TestRunError(f"test command is not executable: {self.command[0]!r}: set testCommand")
        if re.search(r"No module named '?pytest'?(\s|$)", output):
            raise TestRunError(
                self.missing_pytest or f"pytest is not installed for {self.command[0]}: set testCommand"
            )
        if f"No module named '{PLUGIN_MODULE}'" in output or f"No module named {PLUGIN_MODULE}" in output:
            raise TestRunError("the test command does not pass PYTHONPATH to pytest: set testCommand")


def coverage_path(workdir: Path) -> Path:
    """A folder holding only fixloop's coverage.py (a link), for a project interpreter that has none."""
    folder = workdir / "coverage-lib"
    folder.mkdir(exist_ok=True)
    try:
        import coverage

        link = folder / "coverage"
        if not link.exists():
            link.symlink_to(Path(coverage.__file__).parent, target_is_directory=True)
    except (ImportError, OSError):
        pass
    return folder


def real_imports_message(real: Mapping[str, str], python: str) -> str:
    """The one line saying a shadow run tested the user's files (path -> module), and what to do."""
    files = sorted(real)
    named = ", ".join(f"{real[rel]} from {rel}" for rel in files[:3])
    more = f" and {len(files) - 3} more" if len(files) > 3 else ""
    return (
        f"the tests in the scratch copy imported your real files ({named}{more}) with {python}, so no "
        "fix can be verified there: the environment, not the model, is at fault; see docs/projects.md "
        "('Editable installs test the shadow's code') for the installs fixloop redirects"
    )


def _resolve_command(command: Sequence[str]) -> tuple[str, ...]:
    head, *rest = command
    if head in ("python", "python3"):  # never a bare python from PATH; callers pass the project's interpreter
        head = sys.executable
    return (head, *rest)
