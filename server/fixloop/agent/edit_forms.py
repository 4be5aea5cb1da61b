"""The code edit form: asking for whole corrected functions in a ```python block, and reading such a reply.

Small models rewrite a function they were shown far more reliably than they write JSON tool calls with an
exact `old_text`; the reply is applied by AST (`tools.code_reply`) and verified like any other fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fixloop.model.replies import StreamCut

CODE_ASK = """Now reply with the fix as code, not as a tool call: the corrected function(s) or method(s) of \
the code under test, each whole (from its `def` line, decorators included, to its end), in a ```python \
block, with the file's path on the line before the block. Change only what the fix needs; never change \
the tests. For example:

{path}
```python
def the_function(argument):
    ...
```"""
_HEADER_PATH = re.compile(r"^(?:### |--- a/)(\S+\.py)\b", re.MULTILINE)


def code_ask(context: str) -> str:
    """CODE_ASK, its example under the path of the first code file `context` shows (a small model copies
    the example's path)."""
    found = _HEADER_PATH.search(context)
    return CODE_ASK.format(path=found.group(1) if found else "path/to/module.py")


RESAMPLE_ASK = """Let us try fixes as code. {tried}Reply with the corrected function(s) of the code under \
test, each whole, in a ```python block with the file's path on the line before it, and nothing else."""
CONTINUE_WITH_TOOLS = (
    "Find the real cause now: read the code the failing test reaches (read_file), fix it "
    "with edit_file or replace_function, run_tests, then submit."
)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[ \t]*$")
_PATH_LINE = re.compile(r"^[ \t]*[#*`]*[ \t]*[\w./\\-]+\.py[`*:]*[ \t]*$")


class CodeReplyWatch:
    """A `StreamWatch` that closes a code reply once its code blocks are complete and prose follows (small
    models explain the fix at length after it; on a CPU every token of that costs time)."""

    def __init__(self) -> None:
        self.text = ""

    def on_text(self, delta: str) -> StreamCut | None:
        self.text += delta
        end = code_end(self.text)
        return StreamCut(end, "code") if end is not None else None

    def on_call(self, index: int, name: str, arguments: str) -> StreamCut | None:
        return None


def code_end(text: str) -> int | None:
    """Where the code of a reply ends: after a closing fence followed by a complete line of prose (not a
    blank line, a file path or another block's opening fence); None while that cannot be known yet. A
    fence with a language right after an opening one and a path line opens the block again."""
    inside = False
    closed_at: int | None = None
    written: list[str] = []
    position = 0
    for line in text.splitlines(keepends=True):
        start, position = position, position + len(line)
        if not line.endswith("\n"):
            break  # an incomplete line decides nothing yet
        fence = _FENCE.match(line)
        if fence is not None:
            reopened = (
                inside
                and fence.group(1)
                and (not written or (len(written) == 1 and _PATH_LINE.match(written[0])))
            )
            if not inside or reopened:
                inside, closed_at, written = True, None, []
            else:
                inside, closed_at = False, position
        elif inside:
            written += [line] if line.strip() else []
        elif closed_at is not None and line.strip() and not _PATH_LINE.match(line):
            return start
    return None


_CODE_HEADER = re.compile(r"^### (\S+) \(lines [^)]*\) ([\w.]+)", re.MULTILINE)
CODE_SECTION_END = "# The failing test"


def focus_points(context: str, most: int = 5) -> list[str]:
    """The functions the prompt's code section shows, in its order (suspects first), as hints for sampled
    candidates: each sampled candidate is told to look at one of them, so that they do not all fix the
    first function shown."""
    code = context.split(CODE_SECTION_END, 1)[0]
    points: list[str] = []
    for path, name in _CODE_HEADER.findall(code):
        point = f"`{name.rstrip(',')}` in {path}"
        if point not in points and not name.startswith("class"):
            points.append(point)
    return points[:most]


def with_focus(messages: list[dict[str, Any]], point: str) -> list[dict[str, Any]]:
    """`messages` with a hint to look at `point` added to the last one (the cached prefix stays)."""
    last = dict(messages[-1])
    last["content"] = f"{last.get('content') or ''}\n\nHint: the bug may well be in {point}; check it first."
    return [*messages[:-1], last]


def resample_ask(tried: Sequence[str]) -> str:
    """The message that opens a sampling round in the middle of a run."""
    listed = (
        "These fixes were tried and failed, so do not repeat them:\n" + "\n".join(tried) + "\n"
        if tried
        else ""
    )
    return RESAMPLE_ASK.format(tried=listed)


def round_feedback(
    evidence: Sequence[str], diff: str, tried: Sequence[str], drawn: int, problem: str = ""
) -> str:
    """What the model is told after a round of candidates in which none passed the tests."""
    tried_here = f" ({drawn} candidate fixes were tried; none passed)" if drawn > 1 else ""
    parts = [f"That fix did not pass the tests{tried_here}."]
    if problem:
        parts = [f"Your reply could not be applied as a fix: {problem}.{tried_here}"]
    if evidence:
        parts.append("What the tests say now (expected vs actual):\n" + "\n".join(evidence[:3]))
    if diff:
        parts.append(f"Your change was:\n```diff\n{diff.strip()[:1500]}\n```")
    if tried:
        parts.append("Tried and failed (do not repeat these):\n" + "\n".join(tried))
    parts.append(CONTINUE_WITH_TOOLS)
    return "\n\n".join(parts)
