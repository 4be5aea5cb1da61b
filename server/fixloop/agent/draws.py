"""What each candidate draw of a round is shown: the round's prompt, varied per sampled draw by the suspect
it is pointed at, the failing call it looks at and the fixes tried and failed so far; and the ask that
answers a candidate which copied the code back unchanged.

The best guess (draw 1) gets the round's prompt as it is; a sampled draw gets one hint added to the last
message, so the server's prompt cache still serves the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fixloop.pytest_runner.failing_inputs import FailingInputs, failing_input_lines

TRIED_SHOWN = 4  # tried fixes a draw's hint lists at most


@dataclass(frozen=True)
class DrawVariety:
    """What sampled draws are varied by: the suspects (one each), the failing calls (one each, when several
    targets or parameters fail), and the fixes tried and failed; `on` False: every draw the same prompt
    but for the suspect (the `sampleFocus` hint)."""

    on: bool = True
    inputs: tuple[FailingInputs, ...] = ()


@dataclass(frozen=True)
class Draw:
    """One draw of a round: its number (1: the best guess) and the messages it is drawn from."""

    number: int
    messages: list[dict[str, Any]]
    inputs: FailingInputs | None = None  # the failing call it was pointed at, if any


def pick(items: Sequence[Any], number: int) -> Any:
    """The item sampled draw `number` (2, 3, ...) gets: the second, the third, ... round and round."""
    return items[(number - 1) % len(items)] if items else None


def plan_draw(
    messages: list[dict[str, Any]],
    number: int,
    focus: Sequence[str],
    variety: DrawVariety,
    tried: Sequence[str] = (),
) -> Draw:
    """Draw `number`'s prompt: the best guess's is the round's; a sampled one's last message adds the
    suspect to check first, and (with variety) the failing call to look at and what was tried and failed
    (only lines the prompt does not hold already)."""
    inputs = pick(variety.inputs, number) if variety.on and len(variety.inputs) > 1 else None
    if number <= 1:
        return Draw(number, messages)
    point = pick(focus, number)
    prompt = "\n".join(str(message.get("content") or "") for message in messages)
    shown = [line for line in tried if line not in prompt][-TRIED_SHOWN:] if variety.on else []
    hints = []
    if point:
        hints.append(f"Hint: the bug may well be in {point}; check it first.")
    if inputs is not None:
        hints.append("Look at this failing call:\n" + "\n".join(failing_input_lines(inputs)))
    if shown:
        hints.append("Tried and failed (write a different fix):\n" + "\n".join(shown))
    return Draw(number, with_hints(messages, hints), inputs)


def with_hints(messages: list[dict[str, Any]], hints: Sequence[str]) -> list[dict[str, Any]]:
    """`messages` with `hints` added to the last one (the cached prefix stays)."""
    if not hints:
        return messages
    last = dict(messages[-1])
    last["content"] = f"{last.get('content') or ''}\n\n" + "\n\n".join(hints)
    return [*messages[:-1], last]


def unchanged_ask(inputs: FailingInputs | None, copied: Sequence[str] = ()) -> str:
    """What a draw that copied the code back unchanged is told at once: the functions it copied (`copied`)
    may not hold the bug, the failing call, what this code produces for it and what is expected, and to
    change it."""
    head = "Your code is the code that is there already: it changes nothing, and the test still fails."
    if copied:
        names = ", ".join(f"`{name}`" for name in copied)
        head += f" If the bug is not in {names}, it is in another function shown above: fix that one."
    lines = failing_input_lines(inputs)
    if not lines:
        return f"{head} Find what is wrong in it, change it, and reply with the corrected code."
    compare = inputs.compare if inputs is not None else None
    told = (
        f"This code produces {compare.actual} for that input; the expected value is {compare.expected}; "
        "change it."
        if compare is not None
        else "This code fails for that input; change it."
    )
    return (
        f"{head}\nThe failing call:\n" + "\n".join(lines) + f"\n{told} Reply with the corrected code, "
        "whole, in a ```python block with the file's path on the line before it."
    )


def reask_messages(draw: Draw, reply: str, inputs: FailingInputs | None) -> list[dict[str, Any]]:
    """The follow-up request of a draw whose candidate changed nothing: its prompt, its reply, the ask."""
    return [
        *draw.messages,
        {"role": "assistant", "content": reply.strip() or "(a change that changes nothing)"},
        {"role": "user", "content": unchanged_ask(inputs, defined_functions(reply))},
    ]


_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


def defined_functions(reply: str) -> tuple[str, ...]:
    """The names of the functions a reply's code defines, in order, each once."""
    return tuple(dict.fromkeys(_DEF.findall(reply)))
