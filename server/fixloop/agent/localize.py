"""Localize by evidence: rank the project's functions by the lines the failing and passing tests run.

When a failing test's traceback ends in the test itself (an assertion on a wrong value, not an exception
in the code), the traceback says nothing about where the bug is. The targets' test modules are then run
once more with coverage.py recording each test's lines (a context per test), and every function of the code
under test is scored with Ochiai, ef / sqrt(F * (ef + ep)): ef and ep the failing and passing tests that run
it, F all failing tests. A function only the failing tests reach ranks first. Ties and near-ties (scores
within 0.05) go to the function nearer the failing test by calls (one the test calls directly first), each
call less for every word its name and docstring share with the failing test's name and docstring (the
behaviour the test checks: `test_distance_on_a_zone_limit...` and `zone_for_distance`), and a function the
failing assertion's expression calls is always among the suspects. `module_names_read` names the
module-level assignments the suspects read, fix targets too.
"""

from __future__ import annotations

import ast
import math
import re
import tempfile
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixloop.agent.warm_start.source_file import def_start, qualname, walk_defs
from fixloop.project import is_test_path
from fixloop.pytest_runner import PytestRunner, TestOutcome, TestRun
from fixloop.python_syntax import parse
from fixloop.verify.baseline import matches

WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
COMMON = frozenset(
    "test the and for with that this from use when not are was has have its into one get set "
    "return returns self none true false should can all any given new".split()
)
NEAR_TIE = 0.05  # scores this close are a tie, broken by call distance from the failing test
FAR = 99  # the call distance of a function the failing test does not reach by name
OUT_OF_REACH = 6  # ... as it counts against the words a suspect shares with the failing test


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
    lines: tuple[
        tuple[int, float], ...
    ] = ()  # (line, its own score) of the lines failing tests run, best first

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
    runner: PytestRunner, root: Path, target_ids: Sequence[str], limit: int = 5, *, by_calls: bool = True
) -> tuple[list[Suspect], TestRun]:
    """Run the targets' test modules with line coverage per test; the top `limit` functions by Ochiai,
    near-ties broken by call distance from the failing tests and the assertion's callee kept (`by_calls`)."""
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
    if by_calls:
        suspects = by_call_distance(root, suspects, [run.results[tid] for tid in failing], limit)
    return suspects[:limit], run


@dataclass(frozen=True)
class FailingTestCalls:
    """The names the failing tests call: anywhere in their bodies, and in their failing statements."""

    direct: frozenset[str] = frozenset()
    asserted: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()  # of the tests' names and docstrings: the behaviour they check


def calls_of_failing_tests(root: Path, failing: Sequence[TestOutcome]) -> FailingTestCalls:
    """What the failing tests' own code calls, by simple name (`f(...)`, `obj.method(...)`, `Cls(...)`)."""
    direct: set[str] = set()
    asserted: set[str] = set()
    said: set[str] = set()
    trees: dict[str, ast.Module | None] = {}
    for outcome in failing:
        frame = next((f for f in reversed(outcome.frames) if is_test_path(f.path)), None)
        if frame is None:
            continue
        if frame.path not in trees:
            trees[frame.path] = _parse(root / frame.path)
        tree = trees[frame.path]
        test = _enclosing(tree, frame.line, frame.function) if tree is not None else None
        if test is None:
            continue
        direct |= _called(test)
        said |= _described(test)
        statement = _statement_at(test, frame.line)
        if statement is not None:
            asserted |= _called(statement)
    return FailingTestCalls(frozenset(direct), frozenset(asserted), frozenset(said))


def by_call_distance(
    root: Path, suspects: Sequence[Suspect], failing: Sequence[TestOutcome], limit: int
) -> list[Suspect]:
    """`suspects` (best first) with each run of near-tied scores ordered by call distance from the failing
    tests, and the functions the failing assertion calls moved into the first `limit` when they are not."""
    calls = calls_of_failing_tests(root, failing)
    if not calls.direct:
        return list(suspects)
    nodes = _nodes(root, suspects)  # each file parsed once, for the calls and the words alike
    distance = call_distances(suspects, nodes, calls.direct, calls.asserted)
    shared = {key: len(said & calls.words) for key, said in _descriptions(suspects, nodes).items()}
    ranked: list[Suspect] = []
    rest = list(suspects)
    while rest:
        top = rest[0].score
        tied = [s for s in rest if s.score >= top - NEAR_TIE - 1e-9]
        rest = rest[len(tied) :]
        ranked += sorted(tied, key=lambda s: _nearness(distance.get(_id(s), FAR), shared.get(_id(s), 0)))
    for suspect in [s for s in ranked if _named(s, calls.asserted)]:
        at = ranked.index(suspect)
        if at >= limit > 0:
            ranked.insert(limit - 1, ranked.pop(at))
    return ranked


def _nearness(distance: int, shared: int) -> tuple[int, int]:
    """A near-tie's order: its call distance (those out of reach as six calls away) less the words its name
    and docstring share with the failing tests' names and docstrings, then the distance alone."""
    return min(distance, OUT_OF_REACH) - shared, distance


def call_distances(
    suspects: Sequence[Suspect],
    nodes: dict[str, ast.AST],
    called: Collection[str],
    asserted: Collection[str] = (),
) -> dict[str, int]:
    """For each suspect reached by name from the test: 0 when the failing statement calls it, 1 when the
    test does (a constructor, through its class's name, one more), then one more per call (four levels)."""
    bodies = {key: _called(node) for key, node in nodes.items()}  # the names each suspect's body calls
    distance: dict[str, int] = {}
    frontier = {name: 1 for name in called} | {name: 0 for name in asserted}
    for _level in range(4):
        reached = []
        for suspect in suspects:
            far = _reach(suspect, frontier)
            if _id(suspect) not in distance and far < FAR:
                distance[_id(suspect)] = far
                reached.append(suspect)
        frontier = {}
        for suspect in reached:
            for name in bodies.get(_id(suspect), ()):
                frontier[name] = min(frontier.get(name, FAR), distance[_id(suspect)] + 1)
    return distance


def _reach(suspect: Suspect, frontier: dict[str, int]) -> int:
    """The distance of a call by name to the suspect: by its own name, or by its class's for __init__."""
    parts = suspect.name.split(".")
    far = frontier.get(parts[-1], FAR)
    if parts[-1] == "__init__" and len(parts) > 1 and parts[-2] in frontier:
        far = min(far, frontier[parts[-2]] + 1)
    return far


def _id(suspect: Suspect) -> str:
    return f"{suspect.path}::{suspect.name}:{suspect.first}"


def _named(suspect: Suspect, names: Collection[str]) -> bool:
    """Whether a call by one of `names` can land in the suspect: its own name, or its class for __init__."""
    parts = suspect.name.split(".")
    return parts[-1] in names or (parts[-1] == "__init__" and len(parts) > 1 and parts[-2] in names)


def _descriptions(suspects: Sequence[Suspect], nodes: dict[str, ast.AST]) -> dict[str, set[str]]:
    """The words of each suspect's qualified name and docstring: what it is for."""
    return {
        _id(suspect): words(suspect.name) | _described(nodes[_id(suspect)])
        for suspect in suspects
        if _id(suspect) in nodes
    }


def _nodes(root: Path, suspects: Sequence[Suspect]) -> dict[str, ast.AST]:
    """Each suspect's definition, by its id."""
    found: dict[str, ast.AST] = {}
    for path in {s.path for s in suspects}:
        tree = _parse(root / path)
        if tree is None:
            continue
        by_start = {def_start(node): node for node, _classes in walk_defs(tree)}
        for suspect in (s for s in suspects if s.path == path):
            node = by_start.get(suspect.first)
            if node is not None:
                found[_id(suspect)] = node
    return found


def _described(node: ast.AST) -> set[str]:
    """The words of a definition's own name and docstring."""
    name = getattr(node, "name", "")
    doc = ast.get_docstring(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None
    return words(f"{name} {doc or ''}")


def words(text: str) -> set[str]:
    """The content words of names and prose: split at '_' and at capitals, lower case, a plural's 's'
    dropped, three letters or more, the words every test and function says left out."""
    found = set()
    for word in WORD.findall(text):
        word = word.lower()
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        if len(word) >= 3 and word not in COMMON:
            found.add(word)
    return found


def _parse(path: Path) -> ast.Module | None:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _enclosing(tree: ast.Module, line: int, name: str) -> ast.AST | None:
    """The test function called `name` around `line` (a method of a test class too)."""
    best = None
    for node, _classes in walk_defs(tree):
        if node.name == name and node.lineno <= line <= (node.end_lineno or node.lineno):
            best = node
    return best


def _statement_at(function: ast.AST, line: int) -> ast.stmt | None:
    """The innermost statement of `function` holding `line` (the failing assert)."""
    best = None
    for node in _walk(function):
        if isinstance(node, ast.stmt) and node is not function:
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                best = node
    return best


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(node):
        yield child
        yield from _walk(child)


def _called(node: ast.AST) -> set[str]:
    names = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Call):
            if isinstance(item.func, ast.Name):
                names.add(item.func.id)
            elif isinstance(item.func, ast.Attribute):
                names.add(item.func.attr)
    return names


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
        tree = parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    found: list[Suspect] = []
    for node, classes in walk_defs(tree):
        body_first = node.body[0].lineno if node.body else node.lineno
        last = node.end_lineno or node.lineno
        tests: set[str] = set()
        lines: list[tuple[int, float]] = []
        for line in range(body_first, last + 1):
            on = set(tests_by_line.get(line, ()))
            tests |= on
            if on & failing:
                lines.append((line, _ochiai(len(on & failing), len(on & passing), len(failing))))
        failed, passed = len(tests & failing), len(tests & passing)
        if not failed:
            continue
        score = _ochiai(failed, passed, len(failing))
        lines.sort(key=lambda pair: (-pair[1], pair[0]))
        found.append(
            Suspect(rel, qualname(node, classes), def_start(node), last, score, failed, passed, tuple(lines))
        )
    return found


def _ochiai(failed: int, passed: int, all_failing: int) -> float:
    return failed / math.sqrt(all_failing * (failed + passed))


def module_names_read(root: Path, suspects: Sequence[Suspect]) -> list[Suspect]:
    """The module-level assignments (a constant, a compiled pattern, a table) the suspect functions read in
    their own file, each as a suspect with its reader's score, best reader first: a bug there is fixed by
    a code answer that carries the assignment."""
    found: dict[tuple[str, str], Suspect] = {}
    trees: dict[str, ast.Module | None] = {}
    for suspect in suspects:
        if suspect.path not in trees:
            trees[suspect.path] = _parse(root / suspect.path)
        tree = trees[suspect.path]
        if tree is None:
            continue
        assigned = {name: node for node in tree.body for name in _assigned_names(node)}
        reader = next((n for n, _c in walk_defs(tree) if def_start(n) == suspect.first), None)
        if reader is None:
            continue
        read = {n.id for n in ast.walk(reader) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in sorted(read & set(assigned)):
            node = assigned[name]
            key = (suspect.path, name)
            if key not in found:
                last = node.end_lineno or node.lineno
                found[key] = Suspect(
                    suspect.path, name, node.lineno, last, suspect.score, suspect.failed, suspect.passed
                )
    return list(found.values())


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [target.id for target in node.targets if isinstance(target, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []
