"""Naturalness of a verified fix: the model writes each changed line itself, on from the code above it and
the part of the line that the fix leaves as it was, and a fix whose new line is nearer to what the model
writes than the old line was scores for it.

A cousin of entropy-delta (Yang et al. 2024) for endpoints that return no logprobs of given text: instead of
how surprised the model is by each version, which version it would write. One short text completion a
changed line (temperature 0, up to the line's end), each prompt the file's lines above the line, so the
server's prompt cache serves the lines the fixes share. The score is in tokens: how many the fix moves the
line towards the model's own (positive) or away from it (negative), summed over its changed lines.

Live, with the managed 1.5B model, on plausible one-token changes the bench's hidden checks judged wrong:
it writes `is_leap` on from `return year % 4 == 0 and (year % 100 != 0` as `or year % 400 == 0)` (the
right fix, not the outer `and` -> `or`), and `needs_reorder` as `on_hand <= rule.reorder_point` (the
right function, not `not needs_reorder(...)` in its caller). A fix changed otherwise than line for line
(lines added or removed), or in more than MOST_LINES lines, is not scored; nor where the endpoint has no
text completions (a hosted chat-only model).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from fixloop.agent.fix_pool import PooledFix
from fixloop.errors import FixloopError

Complete = Callable[[str], Awaitable[str]]  # a prompt -> what the model writes on from it, to the line's end
PREFIX_LINES = 40  # lines above a changed line its prompt shows
MOST_LINES = 4  # changed lines a fix is scored on at most
TOKEN = re.compile(r"\w+|\S")


@dataclass(frozen=True)
class ChangedLine:
    """One line a fix changes: the prompt's text (the file's path, the lines above, the line's start that
    the old and new line share) and the rest of each version of the line."""

    prompt: str
    start: str
    old: str
    new: str


def changed_lines(fix: PooledFix) -> list[ChangedLine] | None:
    """The lines the fix changes, line for line; None when it adds or removes lines, or changes none or
    more than MOST_LINES."""
    found: list[ChangedLine] = []
    for change in fix.changes:
        old, new = (change.old_text or "").splitlines(), (change.new_text or "").splitlines()
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            if tag != "replace" or i2 - i1 != j2 - j1:
                return None
            for k in range(i2 - i1):
                if old[i1 + k].strip() != new[j1 + k].strip():
                    above = new[max(0, j1 + k - PREFIX_LINES) : j1 + k]
                    found.append(_changed_line(change.path, above, old[i1 + k], new[j1 + k]))
    return found if 0 < len(found) <= MOST_LINES else None


def _changed_line(path: str, above: Sequence[str], old: str, new: str) -> ChangedLine:
    """The prompt ends where the two versions part, at the start of the token where they do (its space left
    to the model, whose tokens carry it), or at the line's start when they part in its first token."""
    where = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
    )
    starts = [m.start() for m in TOKEN.finditer(old) if m.start() <= where]
    start = old[: max(starts, default=0)].rstrip()  # "" when they part in the first token
    prompt = "\n".join([f"# {path}", *above, start])
    return ChangedLine(prompt, start, old[len(start) :], new[len(start) :])


def toward(line: ChangedLine, written: str) -> float:
    """Tokens the new version is nearer to what the model wrote than the old one (negative: farther)."""
    said = TOKEN.findall(written)
    return (_distance(TOKEN.findall(line.old), said) - _distance(TOKEN.findall(line.new), said)) / 2


def _distance(a: list[str], b: list[str]) -> int:
    """Tokens to remove and add to turn `a` into `b`."""
    same = sum(block.size for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return len(a) + len(b) - 2 * same


async def weigh(fixes: Sequence[PooledFix], complete: Complete, seconds: float) -> None:
    """Each fix's evidence gets `naturalness`: its score and, per changed line, what the model wrote; or why
    it was not scored. One completion per distinct prompt, within `seconds` in all."""
    written: dict[str, str] = {}
    try:
        async with asyncio.timeout(seconds):
            for fix in fixes:
                fix.evidence["naturalness"] = await _scored(fix, complete, written)
    except (TimeoutError, FixloopError) as error:  # all or none: a fix left unscored would rank as neutral
        why = getattr(error, "message", None) or "no time left"
        for fix in fixes:
            fix.evidence["naturalness"] = f"not scored: {why}"


async def _scored(fix: PooledFix, complete: Complete, written: dict[str, str]) -> dict[str, Any] | str:
    lines = changed_lines(fix)
    if lines is None:
        return f"not scored: the fix does not change 1 to {MOST_LINES} lines line for line"
    said: list[dict[str, Any]] = []
    for line in lines:
        if line.prompt not in written:
            written[line.prompt] = (await complete(line.prompt)).split("\n", 1)[0]
        text = written[line.prompt]
        said.append({"written": (line.start + text).strip()[:160], "toward": toward(line, text)})
    return {"score": sum(one["toward"] for one in said), "lines": said}


def naturalness_score(fix: PooledFix) -> int:
    """The fix's naturalness score in whole tokens (half a token, where one version has one token more,
    counts for nothing: live, text_layout's `<=` scored -0.5 against a line the model wrote as `> width`);
    0 when it was not scored."""
    said = fix.evidence.get("naturalness")
    return round(said["score"]) if isinstance(said, dict) else 0


def naturalness_said(fix: PooledFix) -> str:
    """A few words for the ranking's line: what the model writes and whether the fix comes nearer."""
    said = fix.evidence.get("naturalness")
    if not isinstance(said, dict):
        return ""
    score, first = said["score"], said["lines"][0]["written"]
    way = "nearer to" if score > 0 else "farther from" if score < 0 else "no nearer to"
    return f"{way} the line the model writes (`{first[:80]}`, {score:+g} token(s))"


def once_per_prompt(complete: Complete) -> Complete:
    """`complete`, remembering each prompt's answer (a failure is not remembered)."""
    written: dict[str, str] = {}

    async def remembered(prompt: str) -> str:
        if prompt not in written:
            written[prompt] = await complete(prompt)
        return written[prompt]

    return remembered
