"""The bench's independent judge: the proposed diff on a fresh copy, tests restored, the whole suite run, then
the case's hidden checks placed in the copy and run when the visible suite passed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from fixloop.bench.cases import (
    BenchCase,
    CaseCopy,
    CaseError,
    bench_env,
    copy_top,
    place_hidden_checks,
    resolve_test_command,
    run_setup,
)
from fixloop.bench.judge_plugin import REPORT_ENV, TIMEOUT_ENV
from fixloop.bench.process import last_line, run_process
from fixloop.project import is_test_config, is_test_path, walk

PLUGIN_MODULE = "fixloop_bench_judge"
_FAILED = ("failed", "error", "timeout")
_PHASE_RANK = {"timeout": 5, "error": 4, "failed": 3, "xfailed": 2, "skipped": 1, "passed": 0}


@dataclass(frozen=True)
class SuiteRun:
    """One run of a copy's whole suite: each node id's outcome (passed, failed, error, skipped, xfailed,
    timeout), whether the whole run hit its deadline, and the tail of the output."""

    outcomes: dict[str, str]
    timed_out: bool
    exit_code: int | None
    output: str
    seconds: float
    failures: dict[str, str] = field(default_factory=dict)  # a failed test's line and exception

    def passing(self, target: str) -> bool:
        found = [outcome for test_id, outcome in self.outcomes.items() if _matches(test_id, target)]
        return bool(found) and all(outcome == "passed" for outcome in found)

    def describe(self, test_id: str) -> str:
        """What became of a test: its outcome, its module's collection error, or that it did not run."""
        if test_id in self.outcomes:
            return {"error": "errors", "failed": "fails", "timeout": "hits the per-test limit"}.get(
                self.outcomes[test_id], f"is {self.outcomes[test_id]}"
            )
        collected = [
            other
            for other, outcome in self.outcomes.items()
            if outcome == "error" and _matches(other, test_id)
        ]
        return "fails to import (collection error)" if collected else "does not run"

    def hung(self) -> list[str]:
        return [test_id for test_id, outcome in self.outcomes.items() if outcome == "timeout"]


@dataclass(frozen=True)
class CaseBaseline:
    """The original case's suite: what passed before any fix (`problem`: why the case cannot be judged)."""

    passed: frozenset[str]
    problem: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The judge's score of one run, with a short reason and the seconds the judging took."""

    status: str  # one of fixloop.bench.statuses.STATUSES
    note: str = ""
    seconds: float = 0.0
    restored: tuple[str, ...] = ()


def _matches(test_id: str, target: str) -> bool:
    return (
        test_id == target
        or test_id.startswith((target + "::", target + "["))
        or target.startswith(test_id + "::")
    )  # a collection error of the target's module or class


def is_test_file(rel: str) -> bool:
    """Test code or test configuration by the project model's rules; the judge puts back from the original
    case whatever the diff did to either (a configuration file whole, even where pytest owns one section)."""
    return is_test_path(rel) or is_test_config(rel)


class Judge:
    """Scores runs of cases with its own pytest subprocess; per-test and whole-run deadlines."""

    def __init__(self, *, test_timeout: float = 60.0, run_timeout: float = 600.0) -> None:
        self.test_timeout = test_timeout
        self.run_timeout = run_timeout
        self._baselines: dict[str, asyncio.Future[CaseBaseline]] = {}

    async def baseline(self, case: BenchCase) -> CaseBaseline:
        """The original case's suite, run once per case and remembered."""
        if case.name not in self._baselines:
            self._baselines[case.name] = asyncio.ensure_future(self._baseline(case))
        return await asyncio.shield(self._baselines[case.name])

    async def _baseline(self, case: BenchCase) -> CaseBaseline:
        try:
            async with CaseCopy(case) as root:
                run = await self.run_suite(case, root)
        except CaseError as error:
            return CaseBaseline(frozenset(), error.message)
        except OSError as error:  # git or the copy failed: the case cannot be judged, the bench goes on
            return CaseBaseline(frozenset(), f"{type(error).__name__}: {error}")
        passed = frozenset(test_id for test_id, outcome in run.outcomes.items() if outcome == "passed")
        if run.timed_out:
            return CaseBaseline(passed, f"the original suite ran past {self.run_timeout:g}s")
        for target in case.failing_test_ids:
            if not any(_matches(test_id, target) for test_id in run.outcomes):
                return CaseBaseline(
                    passed, f"{target} is not collected in the original case ({last_line(run.output)})"
                )
            if run.passing(target):
                return CaseBaseline(passed, f"{target} passes on the original case: nothing to fix")
        return CaseBaseline(passed)

    async def judge(self, case: BenchCase, diff: str, *, claimed: bool) -> Verdict:
        """Score `diff` (git-style, paths relative to the project) as a fix of `case`."""
        started = asyncio.get_running_loop().time()
        verdict = await self._judge(case, diff, claimed)
        seconds = asyncio.get_running_loop().time() - started
        note = verdict.note
        if verdict.restored:
            note += f" (test files put back first: {', '.join(verdict.restored[:3])})"
        return Verdict(verdict.status, note, seconds, verdict.restored)

    async def _judge(self, case: BenchCase, diff: str, claimed: bool) -> Verdict:
        wrong = "claimed_but_wrong" if claimed else "not_fixed"
        baseline = await self.baseline(case)
        if baseline.problem:
            return Verdict("error", f"the case cannot be judged: {baseline.problem}")
        if not diff.strip():
            return Verdict(wrong, "no change was proposed")
        try:
            async with CaseCopy(case, setup=False) as root:
                problem = await apply_diff(root, copy_top(case, root), diff)
                if problem:
                    return Verdict(wrong if claimed else "error", f"the diff does not apply: {problem}")
                restored = await asyncio.to_thread(restore_tests, case.folder / case.project, root)
                await run_setup(case, root)
                run = await self.run_suite(case, root)
                verdict = score(case, baseline, run, claimed, restored, self.run_timeout)
                if verdict.status == "fixed":
                    verdict = await self._check_hidden(case, root, verdict)
        except CaseError as error:
            return Verdict("error", error.message)
        return verdict

    async def _check_hidden(self, case: BenchCase, root: Path, visible: Verdict) -> Verdict:
        """After the visible suite passed: the hidden checks placed in the copy and run (only they)."""
        if not case.hidden_tests:
            note = f"{visible.note}; the case has no hidden checks"
            return replace(visible, status="fixed_unchecked", note=note)
        await asyncio.to_thread(place_hidden_checks, case, root)
        run = await self.run_suite(case, root, case.hidden_tests)
        return hidden_verdict(case, run, visible, self.run_timeout)

    async def run_suite(self, case: BenchCase, root: Path, paths: Sequence[str] = ()) -> SuiteRun:
        """The whole suite of the copy at `root` (only `paths` when given), with the judge's plugin and
        deadlines."""
        workdir = Path(tempfile.mkdtemp(prefix="fixloop-judge-"))
        try:
            shutil.copyfile(Path(__file__).with_name("judge_plugin.py"), workdir / f"{PLUGIN_MODULE}.py")
            report = workdir / "outcomes.jsonl"
            env = bench_env(root)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(workdir), env.get("PYTHONPATH", "")) if p)
            env.update(
                {
                    REPORT_ENV: str(report),
                    TIMEOUT_ENV: str(self.test_timeout),
                    "HYPOTHESIS_STORAGE_DIRECTORY": str(workdir / "hypothesis"),
                }
            )
            argv = [
                *resolve_test_command(case, root),
                "-p",
                PLUGIN_MODULE,
                "-p",
                "no:cacheprovider",
                f"--rootdir={root}",
                "--continue-on-collection-errors",
                *paths,
            ]
            try:
                done = await run_process(argv, cwd=root, env=env, limit=self.run_timeout)
            except OSError as error:
                raise CaseError(f"the test command {argv[0]} could not start: {error}") from None
            outcomes, failures = _fold(report)
            return SuiteRun(outcomes, done.timed_out, done.exit_code, done.output, done.seconds, failures)
        finally:
            await asyncio.to_thread(shutil.rmtree, workdir, True)


def _fold(report: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Per node id the worst outcome of its phases (setup, call, teardown; collection errors by module),
    and per failed node id its first failure line."""
    outcomes: dict[str, str] = {}
    failures: dict[str, str] = {}
    try:
        lines = report.read_text(encoding="utf-8").splitlines()
    except OSError:
        return outcomes, failures
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by the deadline's kill
        test_id, outcome = record.get("id"), record.get("outcome")
        if not isinstance(test_id, str) or outcome not in _PHASE_RANK:
            continue
        if isinstance(record.get("failure"), str):
            failures.setdefault(test_id, record["failure"])
        if record.get("when") == "teardown" and outcome == "passed" and test_id in outcomes:
            continue
        current = outcomes.get(test_id)
        if current is None or _PHASE_RANK[outcome] > _PHASE_RANK[current]:
            outcomes[test_id] = outcome
    return outcomes, failures


def score(
    case: BenchCase,
    baseline: CaseBaseline,
    run: SuiteRun,
    claimed: bool,
    restored: tuple[str, ...] = (),
    run_timeout: float = 0.0,
) -> Verdict:
    """fixed: every failing id passes and nothing that passed before fails; otherwise claimed_but_wrong
    when the run said fixed, timeout when a test or the whole run hit its deadline, else not_fixed."""
    still = [target for target in case.failing_test_ids if not run.passing(target)]
    broken = sorted(test_id for test_id in baseline.passed if run.outcomes.get(test_id) != "passed")
    if not still and not broken and not run.timed_out:
        return Verdict("fixed", "the failing tests pass; nothing that passed before fails", restored=restored)
    reasons = []
    if run.timed_out:
        reasons.append(f"the suite ran past {run_timeout:g}s")
    reasons += [f"{test_id} hit the per-test limit" for test_id in run.hung()[:2]]
    reasons += [f"{target} still fails" for target in still[:2]]
    reasons += [f"{test_id} passed before and now {run.describe(test_id)}" for test_id in broken[:2]]
    more = len(still) + len(broken) - min(len(still), 2) - min(len(broken), 2)
    note = "; ".join(dict.fromkeys(reasons)) + (f" (and {more} more)" if more > 0 else "")
    if claimed:
        status = "claimed_but_wrong"
    elif run.timed_out or run.hung():
        status = "timeout"
    else:
        status = "not_fixed"
    return Verdict(status, note, restored=restored)


def hidden_verdict(case: BenchCase, run: SuiteRun, visible: Verdict, run_timeout: float = 0.0) -> Verdict:
    """fixed when every hidden check passes; plausible when one fails, errors, hangs or does not import
    (the note names it and the line it failed at); error when none of them ran."""
    hidden = {
        test_id: outcome
        for test_id, outcome in run.outcomes.items()
        if test_id.split("::", 1)[0] in case.hidden_tests
    }
    failing = [test_id for test_id, outcome in hidden.items() if outcome in _FAILED]
    if run.timed_out:
        note = f"the visible tests pass; the hidden checks ran past {run_timeout:g}s"
        return replace(visible, status="plausible", note=note)
    if failing:
        first = failing[0]
        failure = run.failures.get(first, "")
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        note = f"the visible tests pass; hidden check {first} {run.describe(first)}"
        return replace(visible, status="plausible", note=note + (f": {failure}" if failure else "") + more)
    if not hidden:
        return Verdict("error", f"the hidden checks did not run: {last_line(run.output)}")
    passed = sum(outcome == "passed" for outcome in hidden.values())
    return replace(visible, note=f"{visible.note}; {passed} hidden check(s) pass")


async def apply_diff(root: Path, top: Path, diff: str) -> str | None:
    """`git apply` the diff to the project at `root` in the copy whose top is `top`; None when it
    applied, else git's complaint. A repository in the copy is used as one; nothing above `top` is."""
    repo = next(
        (
            folder
            for folder in [root, *root.parents]
            if (folder / ".git").exists() and folder.is_relative_to(top)
        ),
        None,
    )
    cwd = repo or root
    argv = ["git", "apply", "--whitespace=nowarn"]
    if repo is not None and repo != root:
        argv.append(f"--directory={root.relative_to(repo).as_posix()}")
    env = {**bench_env(root), "GIT_CEILING_DIRECTORIES": str(top.parent)}
    patch = top.parent / "proposed.diff"  # the copy's container, removed with it
    await asyncio.to_thread(patch.write_bytes, diff.encode("utf-8", "surrogateescape"))
    done = await run_process([*argv, str(patch)], cwd=cwd, env=env, limit=120)
    return None if done.exit_code == 0 else last_line(done.output)


def _files(root: Path) -> set[str]:
    """Every file of a project (the project model's walk: no VCS, caches or environments)."""
    return {rel for rel, path in walk(root) if not path.is_dir()}


def restore_tests(original: Path, root: Path) -> tuple[str, ...]:
    """Put every test file and test config of `original` back into `root` as it was (edited ones put
    back, deleted ones recreated) and remove new ones; returns the paths it touched."""
    before = {rel for rel in _files(original) if is_test_file(rel)}
    after = {rel for rel in _files(root) if is_test_file(rel)}
    touched = []
    for rel in sorted(after - before):
        (root / rel).unlink()
        touched.append(rel)
    for rel in sorted(before):
        source, target = original / rel, root / rel
        if target.is_file() and not target.is_symlink() and target.read_bytes() == source.read_bytes():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        shutil.copy2(source, target)
        touched.append(rel)
    return tuple(touched)
