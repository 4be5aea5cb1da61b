"""The verification gate: a fix is accepted only if targets pass, nothing regressed, no test was weakened."""

from __future__ import annotations

import ast
import asyncio
import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from fixloop.errors import NothingToFix, TestRunError
from fixloop.project import is_test_path, module_map, module_names, python_files
from fixloop.pytest_runner import TestOutcome, TestRun
from fixloop.result import FileChange
from fixloop.shadow import ShadowWorkspace

MAX_LISTED = 10  # newly failing tests named one by one before "and N more"

_FIX_THE_CODE = "fix the code under test, not the test"
_SKIP = re.compile(
    r"pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail|importorskip)\s*\(|\bimportorskip\s*\("
    r"|unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|@(skip|skipIf|skipUnless|expectedFailure|xfail)\b"
    r"|\.skipTest\s*\("
)
_ASSERT = re.compile(
    r"^\s*assert\b|\bself\.(assert|fail)\w*\s*\(|\.assert_\w+\s*\(|pytest\.(raises|approx|warns|fail)\b"
)
_PATCH = re.compile(
    r"\bmonkeypatch\.(setattr|setitem|delattr|delitem|syspath_prepend)\b|\bmock\.patch\b|@patch\b"
    r"|\bpatch(\.object|\.dict)?\s*\(|\bmocker\.patch\b|\bsetattr\s*\(|\bsys\.modules\["
)
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(|^\s*class\s+(Test\w*)\b", re.MULTILINE)
# What code under test must never do to make a test "pass".
_CHEAT = re.compile(
    r"pytest\.(skip|xfail|exit|importorskip)\s*\(|PYTEST_CURRENT_TEST|[\"']pytest[\"']\s+in\s+sys\.modules"
    r"|\bos\._exit\s*\("
)
_CONFIG_SECTIONS = {
    "pyproject.toml": re.compile(r"tool\.pytest(\..*)?"),
    "setup.cfg": re.compile(r"tool:pytest"),
    "tox.ini": re.compile(r"pytest"),
}
_SECTION_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


class TestRunner(Protocol):
    """What the gate needs of `fixloop.pytest_runner.PytestRunner`."""

    __test__ = False  # not a pytest test class

    async def run(self, test_ids: Sequence[str] = ()) -> TestRun: ...


# -- baseline ------------------------------------------------------------------------------------------


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


def _matches(test_id: str, target: str) -> bool:
    """Whether result `test_id` belongs to `target` (a module, class, function or parametrized id)."""
    return (
        test_id == target
        or test_id.startswith((target + "::", target + "["))
        or target.startswith(test_id + "::")  # a collection error reported for the module or class
    )


def _target_outcomes(run: TestRun, target: str) -> list[TestOutcome]:
    return [outcome for test_id, outcome in run.results.items() if _matches(test_id, target)]


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
    root = root if root is not None else getattr(runner, "root", None)
    modules = list(dict.fromkeys(target.split("::", 1)[0] for target in targets))
    related = await asyncio.to_thread(related_test_modules, Path(root), modules) if root is not None else []
    scope = _scope(targets, related)
    run = await runner.run(list(scope))
    failing = False
    for target in targets:
        outcomes = _target_outcomes(run, target)
        if not outcomes and not run.timed_out:
            raise TestRunError(f"test {target!r} was not collected: check the test id")
        # A target that hung, or never ran because another test hung first, counts as failing.
        failing = failing or not outcomes or any(outcome.failing for outcome in outcomes)
    if not failing:
        verb = "already passes" if len(targets) == 1 else "already pass"
        raise NothingToFix(f"{', '.join(targets)} {verb}: nothing to fix")
    return Baseline(targets, frozenset(run.passed_ids()), run, scope)


def related_test_modules(root: Path, modules: Sequence[str], limit: int = 40) -> list[str]:
    """Other test modules importing project code that `modules` reach through imports (nearest first)."""
    files = set(python_files(root))
    by_name = module_map(files)
    parsed: dict[str, tuple[set[str], set[str]]] = {}

    def dependencies(rel: str) -> set[str]:
        if rel not in parsed:
            try:
                parsed[rel] = _imports(rel, (root / rel).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                parsed[rel] = (set(), set())
        names, paths = parsed[rel]
        found = {by_name[name] for name in names if name in by_name}
        found |= {candidate for path in paths for candidate in (f"{path}.py", f"{path}/__init__.py")}
        return found & files

    reach: set[str] = set()
    queue = [module for module in modules if module in files]
    while queue:
        current = queue.pop()
        for dependency in dependencies(current):
            if dependency not in reach and not is_test_path(dependency):
                reach.add(dependency)
                queue.append(dependency)
    code = {rel for rel in reach if not rel.endswith("__init__.py")}
    if not code:
        return []
    words = {PurePosixPath(rel).stem for rel in code}
    target_dirs = {PurePosixPath(module).parent for module in modules}
    related = []
    for rel in files:
        name = PurePosixPath(rel).name
        if rel in modules or not (name.startswith("test_") or name.endswith("_test.py")):
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if any(word in text for word in words) and dependencies(rel) & code:
            related.append(rel)
    related.sort(key=lambda rel: (PurePosixPath(rel).parent not in target_dirs, rel))
    return related[:limit]


# -- the gate ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateVerdict:
    """The gate's answer to one submit; `reasons` are written for the model to act on."""

    accepted: bool
    reasons: tuple[str, ...]
    newly_failing: tuple[str, ...] = ()
    still_failing: tuple[str, ...] = ()


class VerificationGate:
    """Checks a submitted fix in the shadow: tamper guard first (cheap), then the tests."""

    def __init__(
        self,
        shadow: ShadowWorkspace,
        runner: TestRunner,
        baseline: Baseline,
        *,
        allow_test_edits: bool = False,
    ) -> None:
        self.shadow = shadow
        self.runner = runner
        self.baseline = baseline
        self.allow_test_edits = allow_test_edits

    async def check(self) -> GateVerdict:
        changes = await asyncio.to_thread(self.shadow.changes)
        if not changes:
            return GateVerdict(False, ("nothing was changed: edit the code under test, then submit",))
        proposed = await asyncio.to_thread(proposal_changes, changes, root=self.shadow.root)
        if not proposed:
            scratch = ", ".join(change.path for change in changes[:5])
            return GateVerdict(
                False,
                (f"only new files that nothing imports were added ({scratch}): edit the code under test",),
            )
        if not self.allow_test_edits:
            reasons = tamper_reasons(proposed, is_test_path)
            if reasons:
                return GateVerdict(False, tuple(reasons))
        scope = [test_id for test_id in self.baseline.run_ids() if self._module_exists(test_id)]
        try:
            run = await self.runner.run(scope) if scope else None
        except TestRunError as error:
            return GateVerdict(False, (f"the tests could not run: {error.message}",))
        if run is None:
            return GateVerdict(False, ("the target tests' modules no longer exist: restore them",))
        return self._judge(run)

    def _module_exists(self, test_id: str) -> bool:
        return (self.shadow.root / test_id.split("::", 1)[0]).exists()

    def _judge(self, run: TestRun) -> GateVerdict:
        if run.timed_out:
            limit = getattr(self.runner, "timeout", None)
            after = f" after {limit:g}s" if isinstance(limit, int | float) else ""
            hung = f" while running {run.hung_test}" if run.hung_test else ""
            return GateVerdict(
                False,
                (
                    f"the test run timed out{after}{hung} — make sure the code terminates "
                    "(no endless loop, no blocking wait) and submit again",
                ),
            )
        reasons: list[str] = []
        still: list[str] = []
        for target in self.baseline.target_ids:
            outcomes = _target_outcomes(run, target)
            bad = [outcome for outcome in outcomes if outcome.outcome != "passed"]
            if not outcomes:
                still.append(target)
                reasons.append(f"{target} did not run — was it renamed or deleted? It must run and pass")
            elif bad:
                still.append(target)
                worst = next((outcome for outcome in bad if outcome.failing), bad[0])
                reasons.append(f"{worst.test_id} still {_verb(worst)}{_detail(worst)}")
        newly: list[str] = []
        for test_id in sorted(self.baseline.passing):
            if any(_matches(test_id, target) for target in self.baseline.target_ids) and test_id in still:
                continue
            outcome = run.results.get(test_id)
            if outcome is None:
                if not self.allow_test_edits:
                    newly.append(test_id)
                    if len(newly) <= MAX_LISTED:
                        reasons.append(f"{test_id} passed before this change and no longer runs")
            elif outcome.outcome != "passed":
                newly.append(test_id)
                if len(newly) <= MAX_LISTED:
                    reasons.append(
                        f"{test_id} passed before this change and now {_verb(outcome)}{_detail(outcome)}"
                        " — the fix must keep it passing"
                    )
        if len(newly) > MAX_LISTED:
            reasons.append(f"and {len(newly) - MAX_LISTED} more test(s) that passed before now fail")
        return GateVerdict(not reasons, tuple(reasons), tuple(newly), tuple(still))


def _verb(outcome: TestOutcome) -> str:
    return {"failed": "fails", "error": "errors", "skipped": "is skipped", "xfailed": "is xfailed"}.get(
        outcome.outcome, outcome.outcome
    )


def _detail(outcome: TestOutcome) -> str:
    message = outcome.message.strip().splitlines()[0][:300] if outcome.message.strip() else ""
    where = f" at {outcome.location}" if outcome.location else ""
    return f": {message}{where}" if message else where


# -- tamper guard --------------------------------------------------------------------------------------


def _section_texts(text: str | None, pattern: re.Pattern[str]) -> list[str]:
    """The pytest sections of an ini/toml file, header and body, in order."""
    if not text:
        return []
    sections: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        header = _SECTION_HEADER.match(line)
        if header:
            if current is not None:
                sections.append("\n".join(current).rstrip())
            current = [line.strip()] if pattern.fullmatch(header.group(1)) else None
        elif current is not None:
            current.append(line.rstrip())
    if current is not None:
        sections.append("\n".join(current).rstrip())
    return sections


def _first_changed_line(old: str, new: str) -> int:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for index, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return index + 1
    return min(len(old_lines), len(new_lines)) + 1


def _config_reasons(change: FileChange) -> list[str]:
    name = PurePosixPath(change.path).name
    if name == "pytest.ini":
        return [f"{change.path}: pytest configuration changed — leave the test setup alone; {_FIX_THE_CODE}"]
    pattern = _CONFIG_SECTIONS.get(name)
    if pattern is None:
        return []
    if _section_texts(change.old_text, pattern) == _section_texts(change.new_text, pattern):
        return []
    return [
        f"{change.path}: pytest configuration section changed — leave the test setup alone; {_FIX_THE_CODE}"
    ]


def _test_file_reasons(change: FileChange) -> list[str]:
    path = change.path
    if change.old_text is None:
        return [f"{path}: new test file — tests define the expected behaviour; {_FIX_THE_CODE}"]
    if change.new_text is None:
        return [f"{path}: test file deleted — restore it; {_FIX_THE_CODE}"]
    old, new = change.old_text, change.new_text
    if PurePosixPath(path).name == "conftest.py":
        line = _first_changed_line(old, new)
        return [f"{path}: conftest.py changed at line {line} — fixtures and hooks are part of the tests; "
                f"{_FIX_THE_CODE}"]  # fmt: skip
    old_lines, new_lines = old.splitlines(), new.splitlines()
    reasons: list[str] = []
    skip_added = len(_SKIP.findall(new)) > len(_SKIP.findall(old))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for offset, line in enumerate(old_lines[i1:i2]):
            if _ASSERT.search(line):
                if tag == "replace" and j1 + offset < j2:
                    reasons.append(f"{path}: assertion changed at line {j1 + offset + 1} — {_FIX_THE_CODE}")
                else:
                    reasons.append(
                        f"{path}: assertion deleted (was line {i1 + offset + 1}) — {_FIX_THE_CODE}"
                    )
        for offset, line in enumerate(new_lines[j1:j2]):
            number = j1 + offset + 1
            if skip_added and _SKIP.search(line):
                reasons.append(
                    f"{path}: skip/xfail added at line {number} — a skipped test is not a fixed one; "
                    f"{_FIX_THE_CODE}"
                )
            if _PATCH.search(line) and not _PATCH.search(old_lines[i1 + offset] if i1 + offset < i2 else ""):
                reasons.append(
                    f"{path}: monkeypatching added at line {number} — do not replace the code under test "
                    f"from the test side; fix the code itself"
                )
    old_tests = {a or b for a, b in _TEST_DEF.findall(old)}
    new_tests = {a or b for a, b in _TEST_DEF.findall(new)}
    for name in sorted(old_tests - new_tests):
        reasons.append(f"{path}: test {name} deleted or renamed — restore it; {_FIX_THE_CODE}")
    if not reasons:
        line = _first_changed_line(old, new)
        reasons.append(f"{path}: test file changed at line {line} — {_FIX_THE_CODE}")
    return list(dict.fromkeys(reasons))


def _cheat_reasons(change: FileChange) -> list[str]:
    if not change.path.endswith(".py") or change.new_text is None:
        return []
    old_lines = set((change.old_text or "").splitlines())
    reasons = []
    for number, line in enumerate(change.new_text.splitlines(), start=1):
        if line not in old_lines and _CHEAT.search(line):
            reasons.append(
                f"{change.path}: line {number} makes tests skip or exit instead of passing — "
                "fix the behaviour the test checks"
            )
    return reasons


def tamper_reasons(changes: list[FileChange], is_test_file: Callable[[str], bool]) -> list[str]:
    """One line per way the changes weaken the tests, each naming the file and saying what to do instead."""
    reasons: list[str] = []
    for change in changes:
        config = _config_reasons(change)
        if config:
            reasons.extend(config)
        elif PurePosixPath(change.path).name == "conftest.py" or is_test_file(change.path):
            reasons.extend(_test_file_reasons(change))
        else:
            reasons.extend(_cheat_reasons(change))
    return reasons


# -- what goes into the proposal -----------------------------------------------------------------------

_ALWAYS_KEPT = frozenset(
    {"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "setup.py", "sitecustomize.py"}
)


def _imports(path: str, text: str) -> tuple[set[str], set[str]]:
    """(absolute dotted names, relative-import file stems as paths) that `text` imports."""
    names: set[str] = set()
    paths: set[str] = set()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return names, paths
    package = PurePosixPath(path).parent
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.update(".".join(parts[: index + 1]) for index in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.parent
                stem = base.joinpath(*node.module.split(".")) if node.module else base
                paths.add(stem.as_posix())
                paths.update((stem / alias.name).as_posix() for alias in node.names)
            elif node.module:
                parts = node.module.split(".")
                names.update(".".join(parts[: index + 1]) for index in range(len(parts)))
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            for argument in node.args[:1]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    names.add(argument.value)
    return names, paths


def _imported(change: FileChange, names: set[str], paths: set[str]) -> bool:
    stem = PurePosixPath(change.path).with_suffix("")
    if stem.name == "__init__":
        stem = stem.parent
    return bool(module_names(change.path) & names) or stem.as_posix() in paths


def _project_sources(root: Path) -> list[tuple[str, str]]:
    sources = []
    for rel in python_files(root):
        try:
            sources.append((rel, (root / rel).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return sources


def proposal_changes(changes: list[FileChange], *, root: Path | None = None) -> list[FileChange]:
    """The changes minus new files the fix does not need (debug scripts, scratch tests, notes).

    A new file stays when a kept change imports it (Python files) or names it (other files), when it
    is an `__init__.py` of a folder holding a kept file, or when it configures pytest. With `root`
    (the shadow), existing files' imports count too: a fix may create a module that code already imports.
    """
    kept = [change for change in changes if change.old_text is not None]
    pending = [change for change in changes if change.old_text is None]
    names: set[str] = set()
    paths: set[str] = set()
    texts: list[str] = []

    def learn(path: str, text: str | None) -> None:
        if text is None:
            return
        texts.append(text)
        if path.endswith(".py"):
            more_names, more_paths = _imports(path, text)
            names.update(more_names)
            paths.update(more_paths)

    for change in kept:
        learn(change.path, change.new_text)
    if root is not None and pending:
        new_paths = {change.path for change in changes}
        wanted = {name.rsplit(".", 1)[-1] for change in pending for name in module_names(change.path)}
        for rel, text in _project_sources(root):
            if rel not in new_paths and any(word in text for word in wanted):
                learn(rel, text)
    progress = True
    while pending and progress:
        progress = False
        for change in list(pending):
            name = PurePosixPath(change.path).name
            folder = PurePosixPath(change.path).parent
            needed = (
                name in _ALWAYS_KEPT
                or (change.path.endswith(".py") and _imported(change, names, paths))
                or (not change.path.endswith(".py") and any(name in text for text in texts))
                or (
                    name == "__init__.py"
                    and any(PurePosixPath(other.path).is_relative_to(folder) for other in kept)
                )
            )
            if needed:
                kept.append(change)
                pending.remove(change)
                learn(change.path, change.new_text)
                progress = True
    return sorted(kept, key=lambda change: change.path)
