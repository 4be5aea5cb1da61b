"""Snippets of the warm start: line ranges of project files, rendered and fitted into the budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from fixloop.tools.fences import FENCE, opening_for

HEADER = (
    "Context gathered before your first turn: code as it is in the files, its line numbers in each header."
)
# Shown in this order, whatever order the budget chose them in: the code to change first (small models
# reach for what they see first), then the failing test as evidence.
SECTIONS = (
    ("code", "# The code under test: the bug is here, change this code"),
    ("evidence", "# The failing test: read-only evidence (tests are never changed)"),
)
TRACEBACK_CAP = 1500
MAX_LINE = 400
WINDOW = 6  # lines either side of the focus line when a function is too long for the budget


@dataclass(frozen=True)
class ShownFunction:
    """A function of the code under test that the warm start shows (a place a fix may well go)."""

    path: str  # relative to the root, '/' separators
    name: str  # qualified: Class.method


class Ranked(Protocol):
    """A suspect function from fault localization (`agent.localize.Suspect`)."""

    path: str
    name: str
    first: int
    last: int
    score: float
    failed: int
    passed: int


@dataclass(frozen=True)
class WarmStart:
    """The warm-start text, and the functions of the code under test it shows in its order (suspects
    first): the engine hands those on as data, so nothing reads them back out of the text."""

    text: str = ""
    functions: tuple[ShownFunction, ...] = ()
    # per failing target, its failing call headed by its test id (`failing_call_text`); none when the
    # failingInputs setting is off: for prompts that show a failure besides the first one
    failing_calls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Snippet:
    """Lines of one project file to show: a few ranges (a class line and a method, say)."""

    path: str  # relative to the root, '/' separators
    ranges: tuple[tuple[int, int], ...]
    note: str
    focus: int | None = None  # the line that matters most (raised here, failing assertion)
    function: str = ""  # the function shown (Class.method), "" for a class body or lines outside any


@dataclass(frozen=True)
class Block:
    text: str
    shorter: str | None = None  # a smaller form to use when `text` does not fit
    essential: bool = False  # trimmed to fit rather than left out
    label: str = ""  # how to name it when left out
    section: str = "code"  # "code" (the place to change) or "evidence" (the failing test)
    function: ShownFunction | None = None


@dataclass
class Shown:
    """What the warm start shows so far, while it is gathered: its blocks, and what they cover."""

    blocks: list[Block] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)
    texts: set[str] = field(default_factory=set)
    tests: set[tuple[str, str]] = field(default_factory=set)
    failed_at: set[tuple[str, str, str | None]] = field(default_factory=set)


def merge_ranges(ranges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def covers(shown: Snippet, snippet: Snippet) -> bool:
    if shown.path != snippet.path:
        return False
    return all(any(lo <= low and high <= hi for lo, hi in shown.ranges) for low, high in snippet.ranges)


def ranges_text(ranges: Sequence[tuple[int, int]]) -> str:
    return ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def render(snippet: Snippet, lines: list[str]) -> str:
    """The header (path, line numbers, why it is shown) and the code in a fenced block, as it is in the file:
    no line-number gutters, which small models copy into edits and re-type in their replies."""
    fence = opening_for(snippet.path)
    out = [f"### {snippet.path} (lines {ranges_text(snippet.ranges)}) {snippet.note}"]
    for low, high in snippet.ranges:
        out.append(fence)
        for number in range(low, min(high, len(lines)) + 1):
            line = lines[number - 1].rstrip()
            if len(line) > MAX_LINE:  # generated data or minified code: the start says enough
                line = line[:MAX_LINE] + " ... (line cut)"
            out.append(line)
        out.append(FENCE)
    return "\n".join(out)


def focus_window(snippet: Snippet, lines: list[str]) -> Snippet:
    """The snippet cut to the focus line's neighbourhood, keeping the ranges' first lines (class, def)."""
    assert snippet.focus is not None
    focus = snippet.focus
    ranges = [(low, low) for low, _ in snippet.ranges]
    ranges.append((max(1, focus - WINDOW), min(len(lines), focus + WINDOW)))
    return Snippet(snippet.path, merge_ranges(ranges), snippet.note, focus)


def clip_traceback(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in reversed(lines):  # the end (the E lines) matters most
        if size + len(line) + 1 > cap - 40:
            break
        kept.append(line)
        size += len(line) + 1
    return "... (traceback trimmed)\n" + "\n".join(reversed(kept))


def assemble(blocks: list[Block], budget: int) -> WarmStart:
    """The blocks that fit the budget, chosen in their order (most relevant first) and shown section by
    section (`SECTIONS`), each section under its heading."""
    if not blocks:
        return WarmStart()
    chosen, left_out = _choose(blocks, budget)
    parts = [HEADER]
    for name, heading in SECTIONS:
        if chosen[name]:
            parts += [heading, *(text for _, text in chosen[name])]
    used = sum(len(part) + 2 for part in parts)
    if left_out:
        note = "Left out for space (read_file them if needed): " + "; ".join(left_out)
        room = budget - used - 2
        if len(note) > room:
            note = note[: max(0, room - 3)] + "..."
        if note.strip("."):
            parts.append(note)
    functions = tuple(block.function for block, _ in chosen["code"] if block.function is not None)
    return WarmStart("\n\n".join(parts)[: max(0, budget)], functions)


def _choose(blocks: list[Block], budget: int) -> tuple[dict[str, list[tuple[Block, str]]], list[str]]:
    """Per section the blocks that fit (each in the form that fits), and the labels of those left out."""
    chosen: dict[str, list[tuple[Block, str]]] = {name: [] for name, _ in SECTIONS}
    used = len(HEADER) + sum(len(heading) + 2 for _, heading in SECTIONS)
    left_out: list[str] = []
    reserve = 160
    for block in blocks:
        room = budget - used - reserve - 2
        text = next((t for t in (block.text, block.shorter) if t is not None and len(t) <= room), None)
        if text is None and block.essential and room > 200:
            text = block.text[: room - 20].rsplit("\n", 1)[0] + "\n... (cut for space)"
        if text is not None:
            chosen[block.section].append((block, text))
            used += len(text) + 2
        elif block.label:
            left_out.append(block.label)
    return chosen, left_out
