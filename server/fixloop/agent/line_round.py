"""The line-level round: the top-ranked lines shown with the failing inputs, many short draws of "line N:
<new code>", each applied to the file as the run found it and judged by the gate like any candidate; its
figures tell the answers refused as invalid from those that copy the lines back unchanged."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fixloop.agent.asking import Drawer
from fixloop.agent.call_protocols import ToolCall
from fixloop.agent.edit_forms import CONTINUE_WITH_TOOLS
from fixloop.agent.line_answers import apply_line_edits, canonical, read_line_answer
from fixloop.agent.round_result import FATES, RoundFigures
from fixloop.agent.sampling import CandidateSearch, RoundRequest, RoundResult
from fixloop.agent.warm_start import ShownFunction
from fixloop.events import Notice
from fixloop.model.replies import ModelReply
from fixloop.model.request_options import Sampling
from fixloop.project import is_test_path
from fixloop.pytest_runner.failing_inputs import failing_input_lines
from fixloop.pytest_runner.results import TestOutcome
from fixloop.python_syntax import parse

SYSTEM = "You fix bugs in Python code by correcting single lines. You answer with corrected lines only."
ASK = (
    "One or two of these lines are wrong. Answer with the corrected line(s) only, one per line, each as\n"
    "line N: <the new code of line N>\n"
    "No explanation, no code fence."
)
MOST_FUNCTIONS = 3
MOST_LINES = 60  # lines shown at most
FRAME_WINDOW = 3  # lines either side of a failing frame's line


@dataclass(frozen=True)
class LineSpot:
    """The lines of one file a line-level round shows: their numbers, in order."""

    path: str
    numbers: tuple[int, ...]


class ShortDraws:
    """A `Drawer` whose replies are short (`max_tokens`), a line answer read out of any fence around it."""

    def __init__(self, model: Drawer, max_tokens: int) -> None:
        self.model, self.max_tokens = model, max_tokens

    async def complete(self, messages: Sequence[dict[str, Any]], **options: Any) -> ModelReply:
        options["sampling"] = self._short(options.get("sampling"))
        return _plain(await self.model.complete(messages, **options))

    async def complete_choices(
        self, messages: Sequence[dict[str, Any]], sampling: Sampling, **options: Any
    ) -> list[ModelReply]:
        replies = await self.model.complete_choices(messages, self._short(sampling), **options)
        return [_plain(reply) for reply in replies]

    def _short(self, sampling: Sampling | None) -> Sampling:
        return replace(sampling or Sampling(None), max_tokens=self.max_tokens)


def _plain(reply: ModelReply) -> ModelReply:
    """The reply's line answer, canonical; an answer cut at `max_tokens` loses its last line, unfinished
    (live, discount_rounding's answers copied the function and stopped inside an f-string: 6 of 8 refused
    as a SyntaxError, when the lines before it were whole)."""
    text = reply.content
    if reply.finish_reason == "length":
        text = text.rsplit("\n", 1)[0] if "\n" in text.strip() else ""
    edits = read_line_answer(text)
    return replace(reply, content=canonical(edits)) if edits else reply


class LineRound:
    """One line-level round a run (the engine builds it from the warm start's functions and the failures)."""

    def __init__(
        self,
        search: CandidateSearch,
        functions: Sequence[ShownFunction],
        failures: Sequence[TestOutcome],
        samples: int,
    ) -> None:
        self.search, self.functions, self.failures, self.samples = (
            search,
            tuple(functions),
            tuple(failures),
            samples,
        )

    async def round(self, step: int, count: Any, deadline: float | None = None) -> tuple[str | None, str]:
        """(the verified fix's summary, else None; what the model is told of the round)."""
        base = await self.search.base()
        spot = line_spot(self.functions, self.failures, lambda path: base.texts([path]).get(path))
        text = base.texts([spot.path]).get(spot.path) if spot is not None else None
        if spot is None or text is None:
            self.search.emit(
                Notice("line-level round: no lines of the code under test to show", step, "rounds")
            )
            return None, ""
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": line_prompt(spot, text, self.failures)},
        ]
        read = _line_calls(spot.path, text)
        request = RoundRequest(
            messages=messages,
            tools=None,
            stop=None,
            read_calls=read,
            step=step,
            count=count,
            samples=self.samples,
            seed_base=100 * self.search.rounds + 50,
            deadline=deadline,
        )
        result = await self.search.round(request)
        self._count(result, text, step)
        if result.winner is not None:
            await self.search.gate.accept(result.verdicts[result.winner.number].changes)
            where = f"candidate {result.winner.number} of {len(result.candidates)}"
            return f"verified fix (line-level round, {where}): {result.winner.describe()}", ""
        return None, _feedback(result, self.search.tried.lines())

    def _count(self, result: RoundResult, text: str, step: int) -> None:
        """The round's figures, as the search keeps them, told apart as a line round's; and said."""
        figures = line_figures(result, text)
        if self.search.figures:
            self.search.figures[-1] = figures
        invalid, unchanged = figures.count("invalid"), figures.count("unchanged")
        said = f"{figures.drawn} answer(s) drawn: {invalid} refused as invalid, {unchanged} unchanged"
        self.search.emit(Notice(f"line-level round: {said}", step, "round"))


def line_figures(result: RoundResult, text: str) -> RoundFigures:
    """A line round's figures: an answer that puts back the lines as they are counts as unchanged, not as
    invalid (the search sees no change in it: no edit to read)."""
    fates = [
        "unchanged" if fate == "invalid" and _copies(candidate.reply, text) else fate
        for candidate, fate in zip(result.candidates, result.fates, strict=False)
    ]
    counted = tuple((fate, fates.count(fate)) for fate in FATES)
    return replace(result.figures, fates=counted, kind="lines")


def _copies(reply: str, text: str) -> bool:
    edits = read_line_answer(reply)
    return bool(edits) and apply_line_edits(text, edits) == text


def _line_calls(path: str, text: str) -> Any:
    def read(reply: ModelReply) -> list[ToolCall]:
        edits = read_line_answer(reply.content)
        new = apply_line_edits(text, edits) if edits else None
        if new is None or new == text:
            return []
        return [ToolCall("line-answer", "write_file", {"path": path, "content": new})]

    return read


def line_prompt(spot: LineSpot, text: str, failures: Sequence[TestOutcome]) -> str:
    """The lines (numbered as in the file) and what failed, with its inputs; then the answer form."""
    lines = text.splitlines()
    shown, previous = [], 0
    for number in spot.numbers:
        if previous and number > previous + 1:
            shown.append("...")
        shown.append(f"{number}: {lines[number - 1]}")
        previous = number
    parts = [f"Lines of {spot.path} that the failing test runs, numbered as in the file:", "\n".join(shown)]
    for failure in failures[:2]:
        said = [
            f"The failing test {failure.test_id}: {failure.message}",
            *failing_input_lines(failure.inputs),
        ]
        parts.append("\n".join(said))
    parts.append(ASK)
    return "\n\n".join(parts)


def line_spot(
    functions: Sequence[ShownFunction], failures: Sequence[TestOutcome], read: Any
) -> LineSpot | None:
    """The top-ranked lines: the suspects' (the warm start's functions) in the first suspect's file, and the
    failing frames' lines in that file (in the innermost code frame's file when no function is shown)."""
    frames = [frame for failure in failures for frame in failure.frames if not is_test_path(frame.path)]
    path = functions[0].path if functions else (frames[-1].path if frames else "")
    text = read(path) if path and not is_test_path(path) else None
    if text is None:
        return None
    numbers: set[int] = set()
    for function in [f for f in functions if f.path == path][:MOST_FUNCTIONS]:
        numbers.update(function_lines(text, function.name))
    for frame in (frame for frame in frames if frame.path == path):
        numbers.update(range(frame.line - FRAME_WINDOW, frame.line + FRAME_WINDOW + 1))
    count = len(text.splitlines())
    kept = sorted(n for n in numbers if 1 <= n <= count and text.splitlines()[n - 1].strip())
    return LineSpot(path, tuple(kept[:MOST_LINES])) if kept else None


def function_lines(text: str, name: str) -> range:
    """The lines of the function `name` (qualified: Class.method, outer.inner) in `text`, empty if none."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return range(0)
    scopes: list[tuple[str, ast.AST]] = [("", tree)]
    while scopes:
        prefix, node = scopes.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualified = f"{prefix}{child.name}"
                if qualified == name and not isinstance(child, ast.ClassDef):
                    return range(child.lineno, (child.end_lineno or child.lineno) + 1)
                scopes.append((f"{qualified}.", child))
    return range(0)


def _feedback(result: RoundResult, tried: Sequence[str]) -> str:
    drawn = len(result.candidates)
    listed = "\nTried and failed (do not repeat these):\n" + "\n".join(tried[-6:]) if tried else ""
    said = f"A line-level round drew {drawn} single-line fix(es); none passed the tests."
    return f"{said}{listed}\n\n{CONTINUE_WITH_TOOLS}"
