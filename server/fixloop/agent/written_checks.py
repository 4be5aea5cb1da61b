"""Checks the model writes from the code's name, docstring and comments and the failing test's examples, run
against every verified version of the pool and the code before any fix: evidence for ranking, never a
verdict.

One request asks for a few pytest functions that pin the function's intended behaviour at its edges; the
answer's code block, headed by the failing test file's imports and constants and by guarded imports of the
changed functions, runs beside that file on a clean copy of each version (never in the shadow, never in
the proposal), and on the code as it was. Only the checks the code before passes are weighed: there the
model's expectation and the old code agree, and a version that fails one `broke` behaviour nobody asked to
change (`(ka > kb) + (ka < kb)` makes compare answer 1 for a lower version too). A check the code before
fails may be the bug, or the model's mistake: live, text_layout's checks expected a 9-character line at
width 8 and the one wrong fix passed it; semver_compare's were near-copies of the failing test, some wrong,
and the wrong fix passed them all. Such a check is recorded (`mended` by a version that passes it), never
weighed. A version that breaks fewer checks ranks higher; a check that some versions pass and others fail
tells them apart. A generated check can be wrong, so it never rejects a fix on its own: it ranks and it
words the proposal.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from fixloop.agent.fix_pool import PooledFix, changed_function
from fixloop.errors import FixloopError
from fixloop.project import module_names
from fixloop.python_syntax import parse
from fixloop.result import FileChange
from fixloop.tools.code_reply import code_blocks

Write = Callable[[list[dict[str, str]]], Awaitable[str]]  # a short written answer's text
# (changes, check file's path, its text, seconds) -> {check name: passed}; None when it could not run
RunCheck = Callable[[Sequence[FileChange], str, str, float], Awaitable[dict[str, bool] | None]]
CHECK_FILE = "test_fixloop_written_checks.py"
MOST_CHECKS = 6
SYSTEM = "You write pytest tests from a function's documentation. You answer with one Python code block."


@dataclass(frozen=True)
class FailingTest:
    """What the checks are written beside: the failing test's file, what heads it (its imports and shared
    constants) and its function."""

    path: str  # relative to the project root
    head: str  # the file's imports and short constants, as the checks are headed
    source: str


@dataclass(frozen=True)
class WrittenChecks:
    """The run's means to write checks (`write`), to run them on a version (`run`), and what they follow."""

    write: Write
    run: RunCheck
    test: FailingTest
    tell: Callable[[str], None] = lambda text: None  # what the model wrote, for the transcript

    async def weigh(self, fixes: Sequence[PooledFix], failure: str, seconds: float) -> None:
        """Each fix's evidence gets `written_checks`: the checks it passes of those that tell the versions
        apart, or why there are none; within `seconds`."""
        try:
            async with asyncio.timeout(seconds):
                said = await self._weigh(fixes, failure)
        except (TimeoutError, FixloopError) as error:
            said = f"not run: {getattr(error, 'message', None) or 'no time left'}"
        for fix in fixes:
            if said is not None:
                fix.evidence["written_checks"] = said

    async def _weigh(self, fixes: Sequence[PooledFix], failure: str) -> str | None:
        answer = await self.write(checks_prompt(fixes, self.test, failure))
        module = check_module(answer, "\n".join(filter(None, (self.test.head, reach_imports(fixes)))))
        if module is None:
            self.tell(f"the checks the model wrote hold no test:\n{answer.strip()[:2000]}")
            return "not written: the answer held no test function"
        self.tell(f"the model wrote checks for the pool's fixes:\n{module[:3000]}")
        path = str(PurePosixPath(self.test.path).parent / CHECK_FILE)
        before = await self.run([], path, module, 60.0)  # the code as it was: what a fix keeps or breaks
        if before is None:  # nothing to weigh against: no version is run
            return "not weighed: the checks could not run on the code before any fix"
        results = [await self.run(fix.changes, path, module, 60.0) for fix in fixes]
        ran = [result for result in results if result is not None]
        names = sorted({name for result in ran for name in result})
        kept = [name for name in names if before.get(name)]  # the checks the code before passes
        apart = [name for name in kept if len({result.get(name, False) for result in ran}) > 1]
        for fix, result in zip(fixes, results, strict=True):
            fix.evidence["written_checks"] = _evidence(result, names, kept, apart, before)
        return None


def _evidence(
    result: dict[str, bool] | None,
    names: list[str],
    kept: list[str],
    apart: list[str],
    before: dict[str, bool],
) -> dict[str, Any] | str:
    if result is None:
        return "could not run on this version"
    said: dict[str, Any] = {"written": len(names), "kept_before": len(kept), "telling_apart": len(apart)}
    said["passed"] = sum(1 for name in apart if result.get(name))
    said["failed"] = [name for name in apart if not result.get(name)]
    said["broke"] = [name for name in kept if not result.get(name)]
    said["mended"] = [name for name in names if before.get(name) is False and result.get(name)]
    return said


def broken_checks(fix: PooledFix) -> list[str]:
    """The written checks the code before the fix passed and the fix fails."""
    said = fix.evidence.get("written_checks")
    return list(said.get("broke", [])) if isinstance(said, dict) else []


def checks_speak_for(fix: PooledFix) -> bool:
    """The written checks speak for a fix when it breaks none of them and passes every one that told the
    versions apart (of those the code before passed: there were some)."""
    said = fix.evidence.get("written_checks")
    if not isinstance(said, dict) or said.get("broke"):
        return False
    return bool(said["telling_apart"]) and said["telling_apart"] == said["passed"]


def checks_prompt(fixes: Sequence[PooledFix], test: FailingTest, failure: str) -> list[dict[str, str]]:
    """A short prompt: the code the fixes change, as it was before any fix (each changed function once, at
    most MOST_FUNCTIONS), the failing test and its failure; asks for edge checks of those functions."""
    shown = _functions_changed(fixes)
    code = "\n\n".join(f"In {path}:\n```python\n{text}\n```" for path, text in shown)
    text = (
        f"The code:\n{code}\n\n"
        f"A test of it, in {test.path}:\n```python\n{test.head}\n\n{test.source.strip()[:1500]}\n```\n"
        f"It fails:\n{failure.strip()[:800]}\n\n"
        f"Write up to {MOST_CHECKS} more pytest test functions for the code, each checking one edge case of "
        "what its name, docstring and comments promise (boundaries, empty or zero inputs, the values just "
        "inside and just outside a limit), with plain asserts of exact expected values. Use the same "
        "imports and names. Answer with one ```python block of test functions only." + _call_directly(shown)
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


MOST_FUNCTIONS = 3  # changed functions the checks prompt shows


def _functions_changed(fixes: Sequence[PooledFix]) -> list[tuple[str, str]]:
    """(path, the function before any fix) of each distinct function the fixes change, in the pool's order
    (every file a fix changes: a fix of a helper and its caller shows both)."""
    shown = dict.fromkeys((change.path, changed_function(change)) for fix in fixes for change in fix.changes)
    return [(path, code) for path, code in shown if code.strip()][:MOST_FUNCTIONS]


def _call_directly(shown: Sequence[tuple[str, str]]) -> str:
    """The ask to test the changed functions themselves, with the imports that reach them; "" when the code
    shown holds no top-level function."""
    imports = _reach(shown)
    names = [name for found in imports.values() for name in found]
    if not names:
        return ""
    called = " or ".join(f"`{name}`" for name in names)
    reach = "; ".join(f"`{line}`" for line in _import_lines(imports))
    # a form a small model copies, valid Python even copied as it is
    form = f"```python\ndef test_edge_case_1():\n    assert {names[0]}(...) == ...\n```"
    ask = f" Call {called} itself in every test, not only what the failing test calls: {reach}."
    return f"{ask} Each like:\n{form}"


def reach_imports(fixes: Sequence[PooledFix]) -> str:
    """The import lines that reach the functions the fixes change, one a module: they head the checks as
    well as the test file's imports (the model is asked to call those functions and often forgets to
    import them: `order_quantity` unimported, every check a NameError that tells nothing)."""
    lines = _import_lines(_reach(_functions_changed(fixes)))
    return "\n".join(
        f"try:\n    {line}\nexcept ImportError:  # a path fixloop guessed\n    pass" for line in lines
    )


def _import_lines(imports: dict[str, list[str]]) -> list[str]:
    return [f"from {module} import {', '.join(found)}" for module, found in imports.items()]


def _reach(shown: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """module -> the top-level functions of `shown` in it (the file's longest module name, a `src/` folder
    dropped)."""
    imports: dict[str, list[str]] = {}
    for path, code in shown:
        name = _function_named(code)
        names = [module for module in module_names(path) if not module.startswith("src.")]
        module = max(names, key=len, default="")
        if name and module and name not in imports.get(module, []):
            imports.setdefault(module, []).append(name)
    return imports


def _function_named(code: str) -> str:
    """The name of the top-level function `code` defines ("" for a method or lines that are no function);
    its `def` line alone is enough (the code shown may be cut short)."""
    if not code.startswith(("def ", "async def ")):
        return ""
    header = code.split(":\n", 1)[0] + ":\n    pass\n"
    try:
        node = parse(header).body[0]
    except (SyntaxError, IndexError):
        return ""
    return node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else ""


def check_module(answer: str, imports: str) -> str | None:
    """The answer's tests (functions `test…`, classes `Test…`) as a module headed by `imports`; a block cut
    short (the answer's length ran out) loses its unfinished last test; None when it holds no test."""
    for block in code_blocks(answer):
        lines = block.code.strip().splitlines()
        while lines:
            text = "\n".join([imports, "", "", *lines, ""])
            try:
                tree = parse(text)
            except SyntaxError:
                starts = [n for n, line in enumerate(lines) if line.startswith(("def ", "class ", "@"))]
                lines = lines[: starts[-1]] if starts and starts[-1] > 0 else []
                continue
            if any(getattr(n, "name", "").lower().startswith("test") for n in tree.body):
                return text
            break
    return None


def failing_test(test_id: str, text: str) -> FailingTest | None:
    """The failing test's file (`text`) as the checks need it: its imports and short module-level
    assignments (the constants its tests share, `RULES = {...}`), and the test's function (a method's class
    too); None when the function is not found there."""
    path, _, rest = test_id.partition("::")
    names = [part.split("[", 1)[0] for part in rest.split("::") if part]
    try:
        tree = parse(text)
    except SyntaxError:
        return None
    lines = text.splitlines()
    imports = [n for n in tree.body if _heads_checks(n)]
    found: ast.AST | None = None
    scope: list[ast.stmt] = tree.body
    for name in names:
        found = next((n for n in scope if getattr(n, "name", None) == name), None)
        scope = getattr(found, "body", [])
    if found is None or not names:
        return None
    head = "\n".join("\n".join(lines[n.lineno - 1 : n.end_lineno]) for n in imports)
    body = "\n".join(lines[found.lineno - 1 : found.end_lineno])  # type: ignore[attr-defined]
    return FailingTest(path, head, body)


SHARED_LINES = 12  # a module-level assignment of the test file longer than this does not head the checks


def _heads_checks(node: ast.stmt) -> bool:
    """An import, or a short module-level assignment the file's tests may share."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    short = (node.end_lineno or node.lineno) - node.lineno < SHARED_LINES
    return isinstance(node, ast.Assign | ast.AnnAssign) and short
