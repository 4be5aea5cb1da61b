"""The baseline: which tests pass before the agent touches anything, and which tests a fix could break."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fixloop.errors import NothingToFix, TestRunError
from fixloop.project import is_test_path, module_map, python_files
from fixloop.pytest_runner import TestOutcome, TestRun, TestRunner
from fixloop.verify.imports import imports_of


@dataclass(frozen=True)
class Baseline:
    """What passed before the agent touched anything: the targets and the other tests of their modules."""

    target_ids: tuple[str, ...]
    passing: frozenset[str]
    run: TestRun
    scope: tuple[str, ...] = ()  # what was run: targets, their modules, related test modules

    def run_ids(self) -> list[str]:
        """The node ids to run again at the gate (the baseline's own scope)."""
        return list(self.scope or _scope(self.target_ids))


def _scope(target_ids: Sequence[str], related: Sequence[str] = ()) -> tuple[str, ...]:
    modules = [target.split("::", 1)[0] for target in target_ids]
    return tuple(dict.fromkeys([*target_ids, *modules, *related]))


def matches(test_id: str, target: str) -> bool:
    """Whether result `test_id` belongs to `target` (a module, class, function or parametrized id)."""
    return (
        test_id == target
        or test_id.startswith((target + "::", target + "["))
        or target.startswith(test_id + "::")  # a collection error reported for the module or class
    )


def target_outcomes(run: TestRun, target: str) -> list[TestOutcome]:
    return [outcome for test_id, outcome in run.results.items() if matches(test_id, target)]


async def record_baseline(
    runner: TestRunner, target_ids: Sequence[str], *, root: Path | None = None
) -> Baseline:
    """Run the targets, their modules and related test modules; raise NothingToFix when no target fails.

    Related test modules are those importing project code that the targets' modules reach (a fix in
    that code could break them); `root` defaults to the runner's root.
    """
    if not target_ids:
        raise TestRunError("no test ids given: name the failing test(s) to fix")
    targets = tuple(dict.fromkeys(target_ids))
    modules = list(dict.fromkeys(target.split("::", 1)[0] for target in targets))
    related = await asyncio.to_thread(related_test_modules, root or runner.root, modules)
    scope = _scope(targets, related)
    run = await runner.run(list(scope))
    failing = False
    for target in targets:
        outcomes = target_outcomes(run, target)
        if not outcomes and not run.timed_out:
            raise TestRunError(f"test {target!r} was not collected: check the test id")
        # A target that hung, or never ran because another test hung first, counts as failing.
        failing = failing or not outcomes or any(outcome.failing for outcome in outcomes)
    if not failing:
        verb = "already passes" if len(targets) == 1 else "already pass"
        raise NothingToFix(f"{', '.join(targets)} {verb}: nothing to fix")
    return Baseline(targets, frozenset(run.passed_ids()), run, scope)


def related_test_modules(root: Path, modules: Sequence[str], limit: int = 40) -> list[str]:
    """Other test modules importing project code that `modules` reach through imports (nearest first), or a
    package whose `__init__` they reach (`from semver import compare` reaches `semver/version.py`)."""
    imports = _Imports(root)
    reach = imports.reach(modules)
    if not reach:
        return []
    words = _import_words(reach)
    target_dirs = {PurePosixPath(module).parent for module in modules}
    related = []
    for rel in imports.files:
        name = PurePosixPath(rel).name
        if rel in modules or not (name.startswith("test_") or name.endswith("_test.py")):
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if any(word in text for word in words) and imports.of(rel) & reach:  # `from pkg import f` too
            related.append(rel)
    related.sort(key=lambda rel: (PurePosixPath(rel).parent not in target_dirs, rel))
    return related[:limit]


class _Imports:
    """The project's Python files and the ones each imports (each file parsed once, when first asked)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = set(python_files(root))
        self.by_name = module_map(self.files)
        self.parsed: dict[str, tuple[set[str], set[str]]] = {}

    def of(self, rel: str) -> set[str]:
        """The project files `rel` imports."""
        if rel not in self.parsed:
            try:
                self.parsed[rel] = imports_of(rel, (self.root / rel).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self.parsed[rel] = (set(), set())
        names, paths = self.parsed[rel]
        found = {self.by_name[name] for name in names if name in self.by_name}
        found |= {candidate for path in paths for candidate in (f"{path}.py", f"{path}/__init__.py")}
        return found & self.files

    def reach(self, modules: Sequence[str]) -> set[str]:
        """The project's non-test files that `modules` reach through imports."""
        reach: set[str] = set()
        queue = [module for module in modules if module in self.files]
        while queue:
            for dependency in self.of(queue.pop()):
                if dependency not in reach and not is_test_path(dependency):
                    reach.add(dependency)
                    queue.append(dependency)
        return reach


def _import_words(modules: set[str]) -> set[str]:
    """The words a test importing one of `modules` names: a module's stem, a package's folder."""
    words = {PurePosixPath(rel).stem for rel in modules if not rel.endswith("__init__.py")}
    return words | {PurePosixPath(rel).parent.name for rel in modules if rel.endswith("__init__.py")} - {""}
