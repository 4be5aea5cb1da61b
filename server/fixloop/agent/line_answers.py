"""Line answers: "line N: <new code>", the answer form of a line-level round, read and applied to a file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fixloop.tools.fences import FENCE_LINE

# "line 12: return a - b", "Line 12 -> ...", "12: ...", "- `line 12: ...`"; the code may be empty (a deletion
# is written "line 12:" with nothing after it)
_LINE = re.compile(r"^\s*(?:[-*]\s+)?`?\s*(?:line\s+)?(\d{1,6})\s*(?::|->|=>)\s?(.*?)`?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class LineEdit:
    """The new code of one line of the file (numbered from 1); several edits of one line: its new lines."""

    number: int
    code: str


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


def apply_line_edits(text: str, edits: Sequence[LineEdit]) -> str | None:
    """`text` with each edited line replaced by its new code at the old line's indentation (several new lines
    of one line keep their indentation relative to the first); None when a line number is not in the file."""
    lines = text.splitlines(keepends=True)
    replaced: dict[int, list[str]] = {}
    for edit in edits:
        if edit.number > len(lines):
            return None
        replaced.setdefault(edit.number, []).append(edit.code)
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        if number in replaced:
            out.extend(_reindented(replaced[number], line))
        else:
            out.append(line)
    return "".join(out)


def _reindented(codes: Sequence[str], line: str) -> list[str]:
    ending = line[len(line.rstrip("\r\n")) :] or "\n"
    indent = line[: len(line) - len(line.lstrip())]
    kept = [code.expandtabs(4) for code in codes if code.strip()]
    first = _lead(kept[0]) if kept else 0
    return [indent + " " * max(0, _lead(code) - first) + code.strip() + ending for code in kept]


def _lead(code: str) -> int:
    return len(code) - len(code.lstrip())


def canonical(edits: Sequence[LineEdit]) -> str:
    """The edits written back as a line answer (one per line)."""
    return "\n".join(f"line {edit.number}: {edit.code}" for edit in edits)
