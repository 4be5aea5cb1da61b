"""Warm start: the failing tests, their failures and the code they reach, gathered before the first turn.

Deterministic (same project and run, same text) and within a character budget, most relevant first: each
failure and its test's source, then the project code at the traceback's frames (innermost first), then the
project functions the test calls (resolved through its imports), then what those call, then fixtures.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fixloop.agent.warm_start.code_index import CodeIndex
from fixloop.agent.warm_start.failing_calls import failing_call_lines, failing_call_text
from fixloop.agent.warm_start.snippets import (
    TRACEBACK_CAP,
    Block,
    Ranked,
    Shown,
    ShownFunction,
    Snippet,
    WarmStart,
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


def gather_warm_start(
    root: Path,
    run: TestRun,
    test_ids: Sequence[str],
    budget_chars: int = 6000,
    suspects: Sequence[Ranked] = (),
    *,
    names_read: Sequence[Ranked] = (),
    failing_inputs: bool = True,
) -> WarmStart:
    """The warm start for `test_ids` after `run` (its text "" when there is nothing to say). `suspects`
    (best first) are shown ahead of the code the traceback and the test's calls reach, with the module-level
    assignments they read (`names_read`); `failing_inputs`: each failure shows its failing call."""
    builder = _Builder(Path(root).resolve(), run, suspects, names_read, failing_inputs)
    warm = assemble(builder.blocks(list(dict.fromkeys(test_ids))), budget_chars)
    calls = [failing_call_text(run, test_id) for test_id in builder.expand(list(test_ids))]
    return replace(warm, failing_calls=tuple(text for text in calls if text) if failing_inputs else ())


def build_warm_start(
    root: Path,
    run: TestRun,
    test_ids: Sequence[str],
    budget_chars: int = 6000,
    suspects: Sequence[Ranked] = (),
) -> str:
    """The warm-start text alone (see `gather_warm_start`)."""
    return gather_warm_start(root, run, test_ids, budget_chars, suspects).text


class _Builder:
    def __init__(
        self, root: Path, run: TestRun, suspects: Sequence[Ranked], names: Sequence[Ranked], inputs: bool
    ) -> None:
        self.root, self.run, self.index = root, run, CodeIndex(root)
        self.suspects, self.names_read, self.failing_inputs = suspects, names, inputs

    # ---- blocks -------------------------------------------------------------------------------------

    def blocks(self, test_ids: list[str]) -> list[Block]:
        """Blocks, most relevant first: per failure its test and the code it reaches, then the rest."""
        shown = Shown()
        later: list[list[Snippet]] = [[], []]  # calls of calls and constructors, then fixtures
        for index, members in enumerate(self.groups(test_ids)):
            deeper, fixtures = self.failure_blocks(shown, members, first=not index)
            later[0] += deeper
            later[1] += fixtures
        self.show(shown, later[0])
        self.show(shown, later[1], "evidence")  # fixtures are test code
        return shown.blocks

    def groups(self, test_ids: list[str]) -> list[list[str]]:
        """The tests, those failing the same way (same message, same place) in one group."""
        groups: dict[object, list[str]] = {}
        for test_id in self.expand(test_ids):
            outcome = self.run.outcome(test_id)
            key: object = (outcome.message, outcome.location) if outcome and outcome.failing else test_id
            groups.setdefault(key, []).append(test_id)
        return list(groups.values())

    def failure_blocks(self, shown: Shown, members: list[str], first: bool) -> tuple[list[Snippet], ...]:
        """Show one group's failure, its tests and the code they reach; what to show later if room is left
        (calls of calls and constructors, fixtures)."""
        lead = members[0]
        outcome = self.run.outcome(lead)
        path, name, _ = split_test_id(lead)
        # A second parametrized case failing on the same line needs no second traceback.
        where = (path, name, outcome.location if outcome else None)
        shown.blocks.append(
            self.failure_block(lead, members[1:], outcome, brief=where in shown.failed_at, first=first)
        )
        shown.failed_at.add(where)
        for test_id in members:
            test_key = split_test_id(test_id)[:2]
            test = (
                self.test_snippet(test_id, self.run.outcome(test_id)) if test_key not in shown.tests else None
            )
            shown.tests.add(test_key)
            if test is not None:
                shown.snippets.append(test)
                shown.blocks.append(self.code_block(test, essential=first, section="evidence"))
        try:
            frames, calls, deeper, fixtures = self.related(lead, outcome)
        except (RecursionError, ValueError, OSError):  # best effort: a strange file costs its code only
            frames, calls, deeper, fixtures = [], [], [], []
        self.show(shown, [*(self.suspect_snippets() if first else []), *frames, *calls])
        return deeper, fixtures

    def show(self, shown: Shown, snippets: list[Snippet], section: str = "code") -> None:
        """Add the snippets not covered by one shown already (and whose text is new)."""
        for snippet in snippets:
            if any(covers(other, snippet) for other in shown.snippets):
                continue
            shown.snippets.append(snippet)
            block = self.code_block(snippet, section=section)
            if block.text not in shown.texts:
                shown.texts.add(block.text)
                shown.blocks.append(block)

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
            shown.append(Snippet(suspect.path, ((suspect.first, suspect.last),), note, function=suspect.name))
        note = "{}, a module-level assignment the suspects read (a code answer may replace it)"
        return shown + [
            Snippet(name.path, ((name.first, name.last),), note.format(name.name), function=name.name)
            for name in self.names_read[:limit]
        ]

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
        calls = failing_call_lines(self.run, [test_id, *same]) if self.failing_inputs else []
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
            lines += calls
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
        short = "\n".join(lines[: (3 if same else 2) + len(calls)])
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
        function = ShownFunction(snippet.path, snippet.function) if snippet.function else None
        return Block(text, shorter, essential, label, section, function)

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
        """The code a test reaches: its traceback's frames, what it calls, what those call, its fixtures."""
        path, name, _ = split_test_id(test_id)
        frames = self.frames(outcome) if outcome is not None and outcome.failing else []
        source = self.index.source(path)
        found = (
            self.find_test(source, name) if source is not None and source.tree is not None and name else None
        )
        if source is None or found is None:
            return frames, [], [], []
        node, classes = found
        first_level = self.index.callees(source, node, classes[-1] if classes else None)
        calls: list[Snippet] = []
        deeper: list[Snippet] = []
        for target_source, target, owner in first_level:
            # Constructors matter less than the functions and methods the test calls.
            tier = deeper if isinstance(target, ast.ClassDef) else calls
            tier.append(self.def_snippet(target_source, target, owner, "called by the test"))
        deeper += self.callees_below(first_level)
        fixtures = self.fixtures(source, node) if isinstance(node, FunctionNode) else []
        return frames, calls, deeper, fixtures

    def frames(self, outcome: TestOutcome) -> list[Snippet]:
        """The project code at a failure's frames, innermost first (a syntax error's place first)."""
        frames: list[Snippet] = []
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
        return frames

    def callees_below(
        self, first_level: list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]]
    ) -> list[Snippet]:
        """Breadth first through what the test's callees call, a few levels down: the bug is often in a
        helper."""
        found: list[Snippet] = []
        visited = {(t[0].rel, t[1].lineno) for t in first_level}
        level = [t for t in first_level if isinstance(t[1], FunctionNode)]
        for _ in range(MAX_CALL_DEPTH - 1):
            following: list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]] = []
            for target_source, target, owner in level:
                assert isinstance(target, FunctionNode)
                for inner in self.index.callees(target_source, target, owner):
                    key = (inner[0].rel, inner[1].lineno)
                    if key in visited or len(following) >= MAX_PER_LEVEL:
                        continue
                    visited.add(key)
                    found.append(self.def_snippet(*inner, f"called by {target.name}"))
                    if isinstance(inner[1], FunctionNode):
                        following.append(inner)
            level = following
        return found

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
        return Snippet(rel, merge_ranges(ranges), f"{name}, {note}: line {line}", line, name)

    def def_snippet(
        self, source: SourceFile, node: ast.stmt, owner: ast.ClassDef | None, note: str
    ) -> Snippet:
        if isinstance(node, ast.ClassDef):
            # The constructor: __init__ with its class line, else the class body up to the first method
            # (the fields of a dataclass, say).
            init = next((n for n in node.body if isinstance(n, FunctionNode) and n.name == "__init__"), None)
            if init is not None:
                ranges = [(node.lineno, node.lineno), (def_start(init), init.end_lineno or init.lineno)]
                name = f"{node.name}.__init__"
                return Snippet(source.rel, merge_ranges(ranges), f"{name}, {note}", function=name)
            first_def = next((n for n in node.body if isinstance(n, FunctionNode)), None)
            end = def_start(first_def) - 1 if first_def is not None else node.end_lineno or node.lineno
            while end > node.lineno and not source.lines[end - 1].strip():
                end -= 1
            return Snippet(source.rel, ((def_start(node), end),), f"class {node.name}, {note}")
        assert isinstance(node, FunctionNode)
        ranges = [(owner.lineno, owner.lineno)] if owner is not None else []
        ranges.append((def_start(node), node.end_lineno or node.lineno))
        name = f"{owner.name}.{node.name}" if owner is not None else node.name
        return Snippet(source.rel, merge_ranges(ranges), f"{name}, {note}", function=name)

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
