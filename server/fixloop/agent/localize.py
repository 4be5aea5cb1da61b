"""Localize by evidence: rank the project's functions by the lines the failing and passing tests run.

When a failing test's traceback ends in the test itself (an assertion on a wrong value, not an exception
in the code), the traceback says nothing about where the bug is. The targets' test modules are then run
once more with coverage.py recording each test's lines (a context per test), and every function of the code
under test is scored with Ochiai, ef / sqrt(F * (ef + ep)): ef and ep the failing and passing tests that run
it, F all failing tests. A function only the failing tests reach ranks first.
"""

from __future__ import annotations

import ast
import math
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixloop.agent.warm_start.source_file import def_start, qualname, walk_defs
from fixloop.project import is_test_path
from fixloop.pytest_runner import PytestRunner, TestOutcome, TestRun
from fixloop.verify.baseline import matches


@dataclass(frozen=True)
class Suspect:
    """A function of the code under test, scored by the tests that run it."""

    path: str  # relative to the root, '/' separators
    name: str  # qualified: Class.method
    first: int  # its first line (decorators included) and last line, 1-based
    last: int
    score: float
    failed: int  # failing tests that run it
    passed: int  # passing tests that run it

    def describe(self) -> str:
        return (
            f"{self.path} {self.name} (lines {self.first}-{self.last}): score {self.score:.2f}, run by "
            f"{self.failed} failing and {self.passed} passing test(s)"
        )


def ends_in_test(outcome: TestOutcome | None) -> bool:
    """Whether a failure's innermost project frame is in a test file (an assertion, not a raise in the
    code under test)."""
    return bool(
        outcome is not None and outcome.failing and outcome.frames and is_test_path(outcome.frames[-1].path)
    )


async def find_suspects(
    runner: PytestRunner, root: Path, target_ids: Sequence[str], limit: int = 5
) -> tuple[list[Suspect], TestRun]:
    """Run the targets' test modules with line coverage per test; the top `limit` functions by Ochiai."""
    modules = list(dict.fromkeys(target.split("::", 1)[0] for target in target_ids))
    folder = runner.scratch or Path(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="coverage-", dir=folder) as scratch:
        data_file = Path(scratch) / "coverage.data"
        run = await runner.covering(data_file).run(modules)
        failing = {
            tid
            for tid, outcome in run.results.items()
            if outcome.failing and any(matches(tid, target) for target in target_ids)
        }
        passing = {tid for tid, outcome in run.results.items() if outcome.outcome == "passed"}
        suspects = rank_functions(root, data_file, failing, passing) if data_file.exists() else []
    return suspects[:limit], run


def rank_functions(
    root: Path, data_file: Path, failing: Collection[str], passing: Collection[str]
) -> list[Suspect]:
    """Every function of the non-test files the failing tests reach, best suspect first."""
    from coverage import CoverageData  # only when localizing: coverage.py is not needed otherwise

    data = CoverageData(basename=str(data_file))
    data.read()
    top = root.resolve()
    suspects: list[Suspect] = []
    for measured in data.measured_files():
        path = Path(measured).resolve()
        if not path.is_relative_to(top):
            continue
        rel = path.relative_to(top).as_posix()
        if is_test_path(rel):
            continue
        tests_by_line = data.contexts_by_lineno(measured)
        suspects += _score_file(path, rel, tests_by_line, set(failing), set(passing))
    suspects.sort(key=lambda s: (-s.score, -s.failed, s.last - s.first, s.path, s.first))
    return suspects


def _score_file(
    path: Path, rel: str, tests_by_line: dict[int, list[str]], failing: set[str], passing: set[str]
) -> list[Suspect]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    found: list[Suspect] = []
    for node, classes in walk_defs(tree):
        body_first = node.body[0].lineno if node.body else node.lineno
        last = node.end_lineno or node.lineno
        tests: set[str] = set()
        for line in range(body_first, last + 1):
            tests.update(tests_by_line.get(line, ()))
        failed, passed = len(tests & failing), len(tests & passing)
        if not failed:
            continue
        score = failed / math.sqrt(len(failing) * (failed + passed))
        found.append(Suspect(rel, qualname(node, classes), def_start(node), last, score, failed, passed))
    return found
