"""Line answers: "line N: <new code>", the answer form of a line-level round, read and applied to a file.

How an answer is placed: a run of consecutive numbered lines (each number the last one or one more) is one
block that replaces the range of lines it names, whatever its own line count (an `else:` added, two lines
merged), its indentation re-based from its first line onto the file's first line of the range. A block's
first and last lines are matched by content: a line whose code is no plausible edit of the file's line of
that number (difflib's ratio under PLAUSIBLE) is read as the line within NEAR of it that it matches best, if
that one matches at least PLAUSIBLE and BETTER more (ties: the nearest, then the earlier). A block whose last
line matches nothing better ends as far from its first line as its numbers say."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

from fixloop.tools.fences import FENCE_LINE

# "line 12: return a - b", "Line 12 -> ...", "12: ...", "- `line 12: ...`"; the code may be empty (a deletion
# is written "line 12:" with nothing after it)
_LINE = re.compile(r"^\s*(?:[-*]\s+)?`?\s*(?:line\s+)?(\d{1,6})\s*(?::|->|=>)\s?(.*?)`?\s*$", re.IGNORECASE)
PLAUSIBLE = 0.6  # a numbered line at least this like the file's line of that number is an edit of it
BETTER = 0.25  # how much better another line must match to be the one a numbered line means
NEAR = 3  # lines either side where a numbered line's own line is looked for


@dataclass(frozen=True)
class LineEdit:
    """The new code of one line of the file (numbered from 1), as the answer numbers it."""

    number: int
    code: str


@dataclass(frozen=True)
class LineBlock:
    """A run of consecutive numbered lines: the range of the file it replaces (first to last, inclusive)
    and its new lines."""

    first: int
    last: int
    codes: tuple[str, ...]


def read_line_answer(reply: str) -> tuple[LineEdit, ...]:
    """The line edits a reply writes, in its order; fences and prose around them are skipped."""
    edits = []
    for raw in reply.splitlines():
        if FENCE_LINE.match(raw):
            continue
        match = _LINE.match(raw)
        if match is not None and int(match.group(1)) > 0:
            edits.append(LineEdit(int(match.group(1)), match.group(2).rstrip()))
    return tuple(edits)


def consecutive_runs(edits: Sequence[LineEdit]) -> list[list[LineEdit]]:
    """The edits in runs of consecutive numbers (a number repeated: more new lines in its place), in order."""
    runs: list[list[LineEdit]] = []
    for edit in edits:
        if runs and edit.number - runs[-1][-1].number in (0, 1):
            runs[-1].append(edit)
        else:
            runs.append([edit])
    return runs


def placed_block(run: Sequence[LineEdit], lines: Sequence[str]) -> LineBlock:
    """The range a run of numbered lines replaces, its ends matched by content (see the module's rule)."""
    first, last = run[0], run[-1]
    start = meant_line(first.number, first.code, lines)
    end = meant_line(last.number, last.code, lines) if len(run) > 1 else start
    if len(run) > 1 and end == last.number:
        end = last.number + start - first.number  # nothing better matched: it moves as its first line did
    return LineBlock(start, max(start, end), tuple(edit.code for edit in run))


def meant_line(number: int, code: str, lines: Sequence[str]) -> int:
    """The line a numbered line means: its number, unless its code is no plausible edit of that line and
    a line within NEAR is a much better match."""
    if not code.strip():
        return number  # a deletion says nothing of its line
    here = _likeness(code, lines[number - 1]) if number <= len(lines) else 0.0
    if here >= PLAUSIBLE:
        return number
    near = [n for n in range(number - NEAR, number + NEAR + 1) if 1 <= n <= len(lines) and n != number]
    best = max(near, key=lambda n: (_likeness(code, lines[n - 1]), -abs(n - number), -n), default=number)
    likeness = _likeness(code, lines[best - 1]) if near else 0.0
    return best if likeness >= max(PLAUSIBLE, here + BETTER) else number


def _likeness(code: str, line: str) -> float:
    return SequenceMatcher(None, code.strip(), line.strip()).ratio()


def apply_line_edits(text: str, edits: Sequence[LineEdit]) -> str | None:
    """`text` with each block of edits in place of the range it names, at the range's first line's
    indentation; None when a range is not in the file or two ranges overlap."""
    lines = text.splitlines(keepends=True)
    blocks = sorted((placed_block(run, lines) for run in consecutive_runs(edits)), key=lambda b: b.first)
    if any(b.last > len(lines) for b in blocks) or any(a.last >= b.first for a, b in pairwise(blocks)):
        return None
    out: list[str] = []
    done = 0  # lines of `text` written or replaced so far
    for block in blocks:
        out.extend(lines[done : block.first - 1])
        out.extend(_reindented(block.codes, lines[block.first - 1]))
        done = block.last
    out.extend(lines[done:])
    return "".join(out)


def _reindented(codes: Sequence[str], line: str) -> list[str]:
    ending = line[len(line.rstrip("\r\n")) :] or "\n"
    bare = line.rstrip("\r\n")
    indent = bare[: len(bare) - len(bare.lstrip())]
    kept = [code.expandtabs(4) for code in codes if code.strip()]
    first = _lead(kept[0]) if kept else 0
    return [indent + " " * max(0, _lead(code) - first) + code.strip() + ending for code in kept]


def _lead(code: str) -> int:
    return len(code) - len(code.lstrip())


def canonical(edits: Sequence[LineEdit]) -> str:
    """The edits written back as a line answer (one per line)."""
    return "\n".join(f"line {edit.number}: {edit.code}" for edit in edits)
