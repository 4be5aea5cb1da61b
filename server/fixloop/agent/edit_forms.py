"""The code edit form: asking for whole corrected functions in a ```python block, and reading such a reply.

Small models rewrite a function they were shown far more reliably than they write JSON tool calls with an
exact `old_text`; the reply is applied by AST (`tools.code_reply`) and verified like any other fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fixloop.agent.warm_start import ShownFunction
from fixloop.model.replies import StreamCut
from fixloop.tools.fences import PATH_LINE, fence_language, reopens

CODE_ASK = """Now reply with the fix as code, not as a tool call: the corrected function(s) or method(s) of \
the code under test, each whole (from its `def` line, decorators included, to its end), in a ```python \
block, with the file's path on the line before the block. Change only what the fix needs; never change \
the tests. For example:

{path}
```python
def the_function(argument):
    ...
```"""


def code_ask(paths: Sequence[str]) -> str:
    """CODE_ASK, its example under the first Python file of `paths`, the code files the prompt shows (a
    small model copies the example's path)."""
    path = next((path for path in paths if path.endswith(".py")), "path/to/module.py")
    return CODE_ASK.format(path=path)


RESAMPLE_ASK = """Let us try fixes as code. {tried}Reply with the corrected function(s) of the code under \
test, each whole, in a ```python block with the file's path on the line before it, and nothing else."""
FAILING_CALLS = "The failing call (its arguments, the failing line, actual and expected values):"
CONTINUE_WITH_TOOLS = (
    "Find the real cause now: read the code the failing test reaches (read_file), fix it "
    "with edit_file or replace_function, run_tests, then submit."
)


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
        language = fence_language(line)
        if language is not None:
            if not inside or reopens(language, written):
                inside, closed_at, written = True, None, []
            else:
                inside, closed_at = False, position
        elif inside:
            written += [line] if line.strip() else []
        elif closed_at is not None and line.strip() and not PATH_LINE.match(line):
            return start
    return None


def focus_points(functions: Sequence[ShownFunction], most: int = 5) -> tuple[str, ...]:
    """The functions the warm start shows as code under test, in its order (suspects first), as hints for
    sampled candidates: each sampled candidate is told to look at one of them, so that they do not all fix
    the first function shown."""
    points = dict.fromkeys(f"`{function.name}` in {function.path}" for function in functions)
    return tuple(points)[:most]


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
    evidence: Sequence[str],
    diff: str,
    tried: Sequence[str],
    drawn: int,
    problem: str = "",
    inputs: Sequence[str] = (),
    *,
    then_tools: bool = True,
) -> str:
    """What the model is told after a round of candidates in which none passed the tests: the failing calls
    (`inputs`: the gate's, for the change judged) first; last, what to do next with the tools, unless
    another round of code comes next (`then_tools` false: its own ask says what to do)."""
    tried_here = f" ({drawn} candidate fixes were tried; none passed)" if drawn > 1 else ""
    parts = [f"That fix did not pass the tests{tried_here}."]
    if problem:
        parts = [f"Your reply could not be applied as a fix: {problem}.{tried_here}"]
    if inputs:
        parts.append(f"{FAILING_CALLS}\n" + "\n".join(inputs[:3]))
    if evidence:
        parts.append("What the tests say now (expected vs actual):\n" + "\n".join(evidence[:3]))
    if diff:
        parts.append(f"Your change was:\n```diff\n{diff.strip()[:1500]}\n```")
    if tried:
        parts.append("Tried and failed (do not repeat these):\n" + "\n".join(tried))
    if then_tools:
        parts.append(CONTINUE_WITH_TOOLS)
    return "\n\n".join(parts)
