"""Warm start: the failing tests, their failures and the code they reach, gathered before the first turn.

Deterministic (same project and run, same text) and within a character budget, most relevant first: each
failure and its test's source, then the project code at the traceback's frames (innermost first), then the
project functions the test calls (resolved through its imports), then what those call, then fixtures.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from fixloop.agent.warm_start.code_index import CodeIndex
from fixloop.agent.warm_start.snippets import (
    TRACEBACK_CAP,
    Block,
    Snippet,
    assemble,
    clip_traceback,
    covers,
    focus_window,
    merge_ranges,
    ranges_text,
    render,
)
from fixloop.agent.warm_start.source_file import (
    FunctionNode,
    SourceFile,
    def_start,
    find_qualified,
    fixture_of,
    qualname,
    walk_defs,
)
from fixloop.pytest_runner.locate import split_test_id, test_functions
from fixloop.pytest_runner.results import TestOutcome, TestRun

MAX_CALL_DEPTH = 3  # the test's callees, theirs, and theirs
MAX_PER_LEVEL = 12
MAX_EXPANDED = 10  # failing tests shown for one module or class id
_SYNTAX_AT = re.compile(r'File "([^"]+)", line (\d+)')
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>)")  # object reprs differ from run to run


class Ranked(Protocol):
    """A suspect function from fault localization (`agent.localize.Suspect`)."""

    path: str
    name: str
    first: int
    last: int
    score: float
    failed: int
    passed: int


def build_warm_start(
    root: Path,
    run: TestRun,
    test_ids: Sequence[str],
    budget_chars: int = 6000,
    suspects: Sequence[Ranked] = (),
) -> str:
    """The warm-start text for `test_ids` after `run`; "" when there is nothing to say. `suspects` (best
    first) are shown ahead of the code the traceback and the test's calls reach."""
    builder = _Builder(Path(root).resolve(), run, suspects)
    blocks = builder.blocks(list(dict.fromkeys(test_ids)))
    return assemble(blocks, budget_chars)[: max(0, budget_chars)]


class _Builder:
    def __init__(self, root: Path, run: TestRun, suspects: Sequence[Ranked] = ()) -> None:
        self.root = root
        self.run = run
        self.index = CodeIndex(root)
        self.suspects = suspects

    # ---- blocks -------------------------------------------------------------------------------------

    def blocks(self, test_ids: list[str]) -> list[Block]:
        """Blocks, most relevant first: per failure its test and the code it reaches, then the rest."""
        groups: dict[object, list[str]] = {}
        for test_id in self.expand(test_ids):
            outcome = self.run.outcome(test_id)
            key: object = (outcome.message, outcome.location) if outcome and outcome.failing else test_id
            groups.setdefault(key, []).append(test_id)

        blocks: list[Block] = []
        shown: list[Snippet] = []
        seen_texts: set[str] = set()
        later: list[list[Snippet]] = [[], []]  # calls of calls and constructors, then fixtures
        seen_tests: set[tuple[str, str]] = set()
        failed_at: set[tuple[str, str, str | None]] = set()

        def add_snippets(snippets: list[Snippet], section: str = "code") -> None:
            for snippet in snippets:
                if any(covers(other, snippet) for other in shown):
                    continue
                shown.append(snippet)
                block = self.code_block(snippet, section=section)
                if block.text not in seen_texts:
                    seen_texts.add(block.text)
                    blocks.append(block)

        for index, members in enumerate(groups.values()):
            lead = members[0]
            outcome = self.run.outcome(lead)
            path, name, _ = split_test_id(lead)
            # A second parametrized case failing on the same line needs no second traceback.
            where = (path, name, outcome.location if outcome else None)
            brief = where in failed_at
            blocks.append(self.failure_block(lead, members[1:], outcome, brief=brief, first=not index))
            failed_at.add(where)
            for test_id in members:
                test_key = split_test_id(test_id)[:2]
                if test_key in seen_tests:
                    continue
                seen_tests.add(test_key)
                test = self.test_snippet(test_id, self.run.outcome(test_id))
                if test is not None:
                    shown.append(test)
                    blocks.append(self.code_block(test, essential=not index, section="evidence"))
            try:
                frames, calls, deeper, fixtures = self.related(lead, outcome)
            except (RecursionError, ValueError, OSError):  # best effort: a strange file costs its code only
                frames, calls, deeper, fixtures = [], [], [], []
            if not index:
                add_snippets(self.suspect_snippets())
            add_snippets(frames)
            add_snippets(calls)
            later[0] += deeper
            later[1] += fixtures
        add_snippets(later[0])
        add_snippets(later[1], "evidence")  # fixtures are test code
        return blocks

    def suspect_snippets(self, limit: int = 3) -> list[Snippet]:
        """The best suspects' code, each header saying how the tests rank it."""
        shown = []
        for rank, suspect in enumerate(self.suspects[:limit], start=1):
            runs = (
                "only the failing tests run it"
                if not suspect.passed
                else f"run by {suspect.failed} failing and {suspect.passed} passing test(s)"
            )
            note = f"{suspect.name}, suspect {rank} by coverage ({runs}, score {suspect.score:.2f})"
            shown.append(Snippet(suspect.path, ((suspect.first, suspect.last),), note))
        return shown

    def expand(self, test_ids: list[str]) -> list[str]:
        """Module and class ids ("tests/test_x.py", "...::TestC") stand for their failing tests."""
        expanded: list[str] = []
        for test_id in test_ids:
            if test_id in self.run.results:
                expanded.append(test_id)
                continue
            inside = [
                tid
                for tid, outcome in self.run.results.items()
                if outcome.failing and tid.startswith((test_id + "::", test_id + "["))
            ]
            expanded += inside[:MAX_EXPANDED] if inside else [test_id]
        return list(dict.fromkeys(expanded))

    def failure_block(
        self, test_id: str, same: list[str], outcome: TestOutcome | None, brief: bool, first: bool
    ) -> Block:
        lines = [f"## Failing test: {test_id}"]
        if same:
            lines.append(f"(fails the same way: {', '.join(same)})")
        if outcome is None:
            lines.append("No result in the last run.")
            lines += [f"Collection error: {error}" for error in self.run.errors]
            if self.run.timed_out:
                hung = f" while {self.run.hung_test} was running" if self.run.hung_test else ""
                lines.append(f"The run timed out{hung}.")
        else:
            where = f" (in {outcome.when})" if outcome.when not in ("call", "") else ""
            message = f": {outcome.message}" if outcome.message else ""
            lines.append(f"Outcome: {outcome.outcome}{where}{message}")
            if outcome.traceback and not brief:
                # pytest's expected vs actual (the E lines) first, then where it happened
                traceback = _ADDRESS.sub("", outcome.traceback).splitlines()
                said = [line for line in traceback if line.startswith("E ")]
                if said:
                    lines.append("Expected vs actual (pytest):\n" + "\n".join(said[:12]))
                rest = "\n".join(line for line in traceback if not line.startswith("E "))
                if rest.strip():
                    lines.append("Traceback:")
                    lines.append(clip_traceback(rest, TRACEBACK_CAP))
        text = "\n".join(lines)
        short = "\n".join(lines[: 3 if same else 2])
        return Block(text, shorter=short, essential=first, label=f"failure of {test_id}", section="evidence")

    def code_block(self, snippet: Snippet, essential: bool = False, section: str = "code") -> Block:
        source = self.index.source(snippet.path)
        lines = source.lines if source else []
        text = render(snippet, lines)
        shorter = None
        if snippet.focus is not None:
            window = focus_window(snippet, lines)
            if window != snippet:
                shorter = render(window, lines)
        label = f"{snippet.path} lines {ranges_text(snippet.ranges)}"
        return Block(text, shorter=shorter, essential=essential, label=label, section=section)

    # ---- the test ------------------------------------------------------------------------------------

    def test_snippet(self, test_id: str, outcome: TestOutcome | None) -> Snippet | None:
        path, name, _ = split_test_id(test_id)
        source = self.index.source(path)
        if source is None or source.tree is None or not name:
            return None
        found = self.find_test(source, name)
        if found is None:
            return None
        node, classes = found
        ranges = [(c.lineno, c.lineno) for c in classes] + [(def_start(node), node.end_lineno or node.lineno)]
        focus = None
        if outcome is not None:
            frame = outcome.frame_in(path)
            if frame is not None and ranges[-1][0] <= frame.line <= ranges[-1][1]:
                focus = frame.line
        return Snippet(path, merge_ranges(ranges), "the test", focus)

    def find_test(self, source: SourceFile, name: str) -> tuple[ast.stmt, list[ast.ClassDef]] | None:
        """The test's def and enclosing classes; an inherited test method is found in its base class."""
        assert source.tree is not None
        found = find_qualified(source.tree, name.split("::"))
        if found is not None:
            return found
        tests = test_functions("\n".join(source.lines))
        wanted = next((t.def_line for t in tests if t.test_id_suffix == name), None)
        for node, classes in walk_defs(source.tree):
            if node.lineno == wanted:
                return node, classes
        return None

    # ---- related code --------------------------------------------------------------------------------

    def related(
        self, test_id: str, outcome: TestOutcome | None
    ) -> tuple[list[Snippet], list[Snippet], list[Snippet], list[Snippet]]:
        path, name, _ = split_test_id(test_id)
        frames: list[Snippet] = []
        if outcome is not None and outcome.failing:
            bad_syntax = self.syntax_error(outcome)
            if bad_syntax is not None:
                frames.append(bad_syntax)
            innermost = bad_syntax is None
            timeout = outcome.message.startswith("Timeout:")
            for frame in reversed(outcome.frames):
                note = ("stopped here" if timeout else "raised here") if innermost else "in the traceback"
                snippet = self.enclosing(frame.path, frame.line, note)
                innermost = False
                if snippet is not None:
                    frames.append(snippet)
        source = self.index.source(path)
        calls: list[Snippet] = []
        deeper: list[Snippet] = []
        fixtures: list[Snippet] = []
        if source is None or source.tree is None or not name:
            return frames, calls, deeper, fixtures
        found = self.find_test(source, name)
        if found is None:
            return frames, calls, deeper, fixtures
        node, classes = found
        first_level = self.index.callees(source, node, classes[-1] if classes else None)
        for target_source, target, owner in first_level:
            # Constructors matter less than the functions and methods the test calls.
            tier = deeper if isinstance(target, ast.ClassDef) else calls
            tier.append(self.def_snippet(target_source, target, owner, "called by the test"))
        # Breadth first through what those call, a few levels down: the bug is often in a helper.
        visited = {(t[0].rel, t[1].lineno) for t in first_level}
        level = [t for t in first_level if isinstance(t[1], FunctionNode)]
        for _ in range(MAX_CALL_DEPTH - 1):
            following: list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]] = []
            for target_source, target, owner in level:
                assert isinstance(target, FunctionNode)
                note = f"called by {target.name}"
                for inner in self.index.callees(target_source, target, owner):
                    key = (inner[0].rel, inner[1].lineno)
                    if key in visited or len(following) >= MAX_PER_LEVEL:
                        continue
                    visited.add(key)
                    deeper.append(self.def_snippet(*inner, note))
                    if isinstance(inner[1], FunctionNode):
                        following.append(inner)
            level = following
        if isinstance(node, FunctionNode):
            fixtures = self.fixtures(source, node)
        return frames, calls, deeper, fixtures

    def syntax_error(self, outcome: TestOutcome) -> Snippet | None:
        """The lines around a syntax error in a project file: it is no frame, pytest only names it."""
        if not outcome.message.startswith(("SyntaxError", "IndentationError", "TabError")):
            return None
        match = _SYNTAX_AT.search(outcome.traceback)
        if match is None:
            return None
        path = Path(match.group(1))
        rel = self.index.rel(path if path.is_absolute() else self.root / path)
        return self.enclosing(rel, int(match.group(2)), "syntax error here") if rel else None

    def enclosing(self, rel: str, line: int, note: str) -> Snippet | None:
        source = self.index.source(rel)
        if source is None or not source.lines:
            return None
        best: tuple[FunctionNode, list[ast.ClassDef]] | None = None
        if source.tree is not None:
            for node, classes in walk_defs(source.tree):
                if def_start(node) <= line <= (node.end_lineno or node.lineno) and (
                    best is None or node.lineno >= best[0].lineno
                ):
                    best = (node, classes)
        if best is None:
            low, high = max(1, line - 3), min(len(source.lines), line + 3)
            return Snippet(rel, ((low, high),), f"{note}: line {line}", line)
        node, classes = best
        ranges = [(c.lineno, c.lineno) for c in classes[-1:]]
        ranges.append((def_start(node), node.end_lineno or node.lineno))
        name = qualname(node, classes)
        return Snippet(rel, merge_ranges(ranges), f"{name}, {note}: line {line}", line)

    def def_snippet(
        self, source: SourceFile, node: ast.stmt, owner: ast.ClassDef | None, note: str
    ) -> Snippet:
        if isinstance(node, ast.ClassDef):
            # The constructor: __init__ with its class line, else the class body up to the first method
            # (the fields of a dataclass, say).
            init = next((n for n in node.body if isinstance(n, FunctionNode) and n.name == "__init__"), None)
            if init is not None:
                ranges = [(node.lineno, node.lineno), (def_start(init), init.end_lineno or init.lineno)]
                return Snippet(source.rel, merge_ranges(ranges), f"{node.name}.__init__, {note}")
            first_def = next((n for n in node.body if isinstance(n, FunctionNode)), None)
            end = def_start(first_def) - 1 if first_def is not None else node.end_lineno or node.lineno
            while end > node.lineno and not source.lines[end - 1].strip():
                end -= 1
            return Snippet(source.rel, ((def_start(node), end),), f"class {node.name}, {note}")
        assert isinstance(node, FunctionNode)
        ranges = [(owner.lineno, owner.lineno)] if owner is not None else []
        ranges.append((def_start(node), node.end_lineno or node.lineno))
        name = f"{owner.name}.{node.name}" if owner is not None else node.name
        return Snippet(source.rel, merge_ranges(ranges), f"{name}, {note}")

    def fixtures(self, source: SourceFile, func: FunctionNode) -> list[Snippet]:
        names = [a.arg for a in func.args.args + func.args.kwonlyargs if a.arg not in ("self", "cls")]
        modules = [source]
        directory = source.path.parent
        while True:
            rel = self.index.rel(directory / "conftest.py")
            if rel is not None and (directory / "conftest.py").is_file():
                conftest = self.index.source(rel)
                if conftest is not None:
                    modules.append(conftest)
            if directory == self.root or self.root not in directory.parents:
                break
            directory = directory.parent
        found: list[Snippet] = []
        for name in names:
            for module in modules:
                node = fixture_of(module, name)
                if node is not None:
                    ranges = ((def_start(node), node.end_lineno or node.lineno),)
                    found.append(Snippet(module.rel, ranges, f"fixture {name}"))
                    break
        return found


# ---- ast helpers --------------------------------------------------------------------------------------


# ---- rendering and budget ----------------------------------------------------------------------------
