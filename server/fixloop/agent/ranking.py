"""Ranking the pool's verified fixes by evidence the target tests do not give, each piece recorded per fix.

- The model's judgment: one short prompt (the failure, the function before the fix, each version's diff)
  asks which version is right for every input the code describes; scored from the answer token's
  logprobs where the endpoint returns them, else from its text; asked twice, the versions in reverse
  order the second time, so that a model that always answers "1" speaks for no version.
- Naturalness of the changed lines: not scored (an OpenAI-compatible chat endpoint scores no given text);
  recorded as such.
- Then: a fix the model wrote above a one-token change no model chose, and the smaller change.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fixloop.agent.fix_pool import PooledFix
from fixloop.errors import FixloopError
from fixloop.python_syntax import parse

# (messages) -> (answer text, {token: logprob} of the answer's first token; empty when not sent)
Choose = Callable[[list[dict[str, str]]], Awaitable[tuple[str, dict[str, float]]]]
JUDGE_SECONDS = 90.0  # the judgment's two requests, at most
NATURALNESS = "not scored: the endpoint returns no logprobs of given text"
JUDGE_SYSTEM = "You review bug fixes. Answer with one number."
ANSWER = re.compile(r"\W*(?:version\s*)?(\d+)\b", re.IGNORECASE)  # "2", "Version 2", "**2**"


@dataclass(frozen=True)
class Ranking:
    """The pool in rank order, and one line a fix saying why."""

    fixes: tuple[PooledFix, ...]
    said: str


async def rank(fixes: Sequence[PooledFix], choose: Choose | None, failure: str, seconds: float) -> Ranking:
    """The fixes best first: the model's judgment (when there are two or more and time for it), then a
    model's fix above a mechanical one, then the smaller change, then the order found."""
    for fix in fixes:
        fix.evidence.setdefault("naturalness", NATURALNESS)
    if len(fixes) > 1 and choose is not None and seconds > 5:
        await _judge(list(fixes), choose, failure, min(seconds, JUDGE_SECONDS))
    order = sorted(range(len(fixes)), key=lambda i: _key(fixes[i], i))
    ranked = tuple(fixes[i] for i in order)
    return Ranking(ranked, "; ".join(f"{n}. {_said(fix)}" for n, fix in enumerate(ranked, 1)))


def _key(fix: PooledFix, found: int) -> tuple[float, bool, int, int]:
    judged = fix.evidence.get("judgment")
    score = judged["score"] if isinstance(judged, dict) else 0.0
    return (-round(score, 2), fix.mechanical, fix.size, found)


def _said(fix: PooledFix) -> str:
    judged = fix.evidence.get("judgment")
    why = f"judged {judged['score']:.2f} ({judged['from']})" if isinstance(judged, dict) else "not judged"
    return f"{fix.origin}, {fix.size} line(s), {why}: {fix.describe()}"


async def _judge(fixes: list[PooledFix], choose: Choose, failure: str, seconds: float) -> None:
    """Both orders asked; each fix's score is its mean probability of being the one chosen."""
    scores = [0.0] * len(fixes)
    sources: set[str] = set()
    try:
        async with asyncio.timeout(seconds):
            for order in (list(range(len(fixes))), list(reversed(range(len(fixes))))):
                probabilities, source = await _ask(fixes, order, choose, failure)
                sources.add(source)
                for shown, index in enumerate(order):
                    scores[index] += probabilities[shown] / 2
    except (TimeoutError, FixloopError) as error:
        for fix in fixes:
            fix.evidence["judgment"] = f"not judged: {getattr(error, 'message', None) or 'no time left'}"
        return
    for fix, score in zip(fixes, scores, strict=True):
        fix.evidence["judgment"] = {"score": round(score, 3), "from": "+".join(sorted(sources))}


async def _ask(
    fixes: list[PooledFix], order: list[int], choose: Choose, failure: str
) -> tuple[list[float], str]:
    """Per shown version, the probability that the model chose it; and whether logprobs or text said so."""
    answer, logprobs = await choose(judgment_prompt([fixes[i] for i in order], failure))
    numbers = [str(n) for n in range(1, len(order) + 1)]
    weights = [math.exp(logprobs[n]) if n in logprobs else 0.0 for n in numbers]
    if sum(weights) > 0:
        return [w / sum(weights) for w in weights], "logprobs"
    said = ANSWER.match(answer)
    return [1.0 if said and said.group(1) == n else 0.0 for n in numbers], "text"


def judgment_prompt(fixes: Sequence[PooledFix], failure: str) -> list[dict[str, str]]:
    """A short prompt: the failure, the function before any fix, and the versions' diffs, numbered."""
    before = function_before(fixes[0])
    versions = "\n\n".join(f"Version {n}:\n```diff\n{_hunks(fix)}\n```" for n, fix in enumerate(fixes, 1))
    text = (
        f"A test failed:\n{failure.strip()[:1200]}\n\n"
        + (f"The code before the fix:\n```python\n{before}\n```\n\n" if before else "")
        + f"Each version below makes every test pass.\n\n{versions}\n\n"
        "Which version is correct for every input that the function's name, docstring and comments "
        "describe, not only the tested ones? Answer with the version's number only."
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": text}]


def _hunks(fix: PooledFix) -> str:
    """The changed lines with one line of context, no file headers (the versions change the same code)."""
    lines: list[str] = []
    for change in fix.changes:
        old, new = (change.old_text or "").splitlines(), (change.new_text or "").splitlines()
        diff = difflib.unified_diff(old, new, n=1, lineterm="")
        lines += [line for line in diff if not line.startswith(("---", "+++"))]
    return "\n".join(lines)[:1500]


def function_before(fix: PooledFix, most_lines: int = 40) -> str:
    """The function (or lines) around the first changed line of the fix's first file, as it was."""
    change = fix.changes[0]
    old, new = (change.old_text or "").splitlines(), (change.new_text or "").splitlines()
    line = next((i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(old))
    try:
        tree = parse(change.old_text or "")
    except SyntaxError:
        tree = None
    span = range(max(1, line - 8), line + 8)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= line <= (
            node.end_lineno or node.lineno
        ):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)  # the innermost one wins
    return "\n".join(old[span.start - 1 : span.stop - 1][:most_lines])
