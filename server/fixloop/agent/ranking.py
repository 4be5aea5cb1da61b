"""Ranking the pool's verified fixes by evidence the target tests do not give, each piece recorded per fix.

- The model's judgment: one short prompt (the failure, the function before the fix, each version's diff)
  asks which version is right for every input the code describes; scored from the answer token's
  logprobs where the endpoint returns them, else from its text; asked twice, the versions rotated by one
  place the second time, and what a place draws in both asks taken as bias for the place, so that a
  model that always answers "1" speaks for no version.
- Naturalness of the changed lines (naturalness.py): the model writes each changed line on from the code
  above it, and a fix whose line is nearer to the model's own ranks higher, first of all (a pool of one
  mechanical fix too: one short request a line).
- Checks the model writes from the docstring and the failing test (written_checks.py), run on every
  version and on the code before any fix (a pool of one mechanical fix too: nothing else weighs it): a
  version that breaks fewer of the checks the code before passed ranks higher, after naturalness and
  before the judgment. Live, the checks were the wrong ones where the two pointed different ways: on
  billing_dates (8b27aa8) the model expected `is_leap(0) == False`, which the code before (never a leap
  year) passed and the right rule breaks, while it writes the rule right; on stock_reorder (b5822a0) the
  checks copied the bug, while it writes `needs_reorder` as `on_hand <= rule.reorder_point`.
- Then: a fix the model wrote above a one-token change no model chose, and the smaller change.
"""

from __future__ import annotations

import asyncio
import difflib
import math
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fixloop.agent.fix_pool import PooledFix, changed_function
from fixloop.agent.naturalness import Complete, naturalness_said, naturalness_score, weigh
from fixloop.agent.written_checks import WrittenChecks, broken_checks, checks_speak_for
from fixloop.errors import FixloopError

# (messages) -> (answer text, {token: logprob} of the answer's first token; empty when not sent)
Choose = Callable[[list[dict[str, str]]], Awaitable[tuple[str, dict[str, float]]]]
JUDGE_SECONDS = 90.0  # the judgment's two requests, at most
CHOSEN = 0.65  # a judgment score from which the judge speaks for a fix (0.5 between two is no evidence)
CHECKS_SECONDS = 150.0  # writing the checks and running them on every fix, at most
NATURALNESS_SECONDS = 60.0  # the changed lines' completions, at most
NATURALNESS = "not scored: no text completions asked"
JUDGE_SYSTEM = "You review bug fixes. Answer with one number."
ANSWER = re.compile(r"\W*(?:version\s*)?(\d+)\b", re.IGNORECASE)  # "2", "Version 2", "**2**"


@dataclass(frozen=True)
class Ranking:
    """The pool in rank order, and one line a fix saying why."""

    fixes: tuple[PooledFix, ...]
    said: str


async def rank(
    fixes: Sequence[PooledFix],
    choose: Choose | None,
    failure: str,
    seconds: float,
    checks: WrittenChecks | None = None,
    complete: Complete | None = None,
) -> Ranking:
    """The fixes best first: the checks the model wrote (when there is time for them, and two or more fixes
    or a lone mechanical one), the naturalness of their lines (the same fixes) and the model's judgment (two
    or more fixes), then a model's fix above a mechanical one, then the smaller change, then the order
    found."""
    for fix in fixes:
        fix.evidence.setdefault("naturalness", NATURALNESS)
    until = time.monotonic() + seconds
    weighed = len(fixes) > 1 or bool(fixes and fixes[0].mechanical)
    if weighed and complete is not None and seconds > 5:
        await weigh(fixes, complete, min(seconds / 3, NATURALNESS_SECONDS))
    if len(fixes) > 1 and choose is not None and seconds > 5:
        await _judge(list(fixes), choose, failure, min(seconds, JUDGE_SECONDS))
    left = until - time.monotonic()
    if weighed and checks is not None and left > 20:
        await checks.weigh(fixes, failure, min(left, CHECKS_SECONDS))
    order = sorted(range(len(fixes)), key=lambda i: _key(fixes[i], i))
    ranked = tuple(fixes[i] for i in order)
    return Ranking(ranked, "; ".join(f"{n}. {_said(fix)}" for n, fix in enumerate(ranked, 1)))


def _key(fix: PooledFix, found: int) -> tuple[int, int, float, bool, int, int]:
    judged = fix.evidence.get("judgment")
    score = judged["score"] if isinstance(judged, dict) else 0.0
    return (
        -naturalness_score(fix),
        len(broken_checks(fix)),
        -round(score, 2),
        fix.mechanical,
        fix.size,
        found,
    )


def _said(fix: PooledFix) -> str:
    judged = fix.evidence.get("judgment")
    why = f"judged {judged['score']:.2f} ({judged['from']})" if isinstance(judged, dict) else "not judged"
    checked = fix.evidence.get("written_checks")
    if isinstance(checked, dict) and checked["telling_apart"]:
        why += f", passes {checked['passed']} of {checked['telling_apart']} telling written check(s)"
    if broken := broken_checks(fix):
        why += f", breaks {len(broken)} written check(s) the code passed before ({', '.join(broken[:3])})"
    if isinstance(checked, dict) and checked.get("mended"):
        why += f", mends {len(checked['mended'])} written check(s) the code failed before"
    elif isinstance(checked, dict) and not checked["telling_apart"] and not broken:
        why += f", {checked['written']} written check(s) told nothing"
    elif isinstance(checked, str):
        why += f", written checks {checked}"
    if natural := naturalness_said(fix):
        why += f", {natural}"
    return f"{fix.origin}, {fix.size} line(s), {why}: {fix.describe()}"


async def _judge(fixes: list[PooledFix], choose: Choose, failure: str, seconds: float) -> None:
    """Asked twice, the second time with the versions rotated by one place, so that every version moves.
    What a place draws in both asks is the model's bias for that place, not for the version shown there:
    each version's score is 1/n plus what it drew beyond its places' bias (a judge that always answers
    "1" gives every version 1/n)."""
    n = len(fixes)
    orders = [list(range(n)), [*range(1, n), 0]]
    asked: list[list[float]] = []  # per ask, the probability of each shown place
    sources: set[str] = set()
    try:
        async with asyncio.timeout(seconds):
            for order in orders:
                probabilities, source = await _ask(fixes, order, choose, failure)
                asked.append(probabilities)
                sources.add(source)
    except (TimeoutError, FixloopError) as error:
        for fix in fixes:
            fix.evidence["judgment"] = f"not judged: {getattr(error, 'message', None) or 'no time left'}"
        return
    bias = [sum(place) / len(asked) for place in zip(*asked, strict=True)]
    scores = [1 / n] * n
    for order, probabilities in zip(orders, asked, strict=True):
        for shown, index in enumerate(order):
            scores[index] += (probabilities[shown] - bias[shown]) / len(asked)
    for fix, score in zip(fixes, scores, strict=True):
        fix.evidence["judgment"] = {
            "score": round(min(1.0, max(0.0, score)), 3),
            "from": "+".join(sorted(sources)),
        }


def speaks_for(fix: PooledFix) -> bool:
    """Whether evidence beyond the tests speaks for a fix: it breaks no written check the code passed
    before, and the judge chose it, or the written checks speak for it (written_checks.checks_speak_for),
    or its lines are nearer to those the model writes itself."""
    if broken_checks(fix):
        return False
    judged = fix.evidence.get("judgment")
    chosen = isinstance(judged, dict) and judged["score"] >= CHOSEN
    return chosen or checks_speak_for(fix) or naturalness_score(fix) > 0


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
    before = changed_function(fixes[0].changes[0])  # the first file's: the versions differ there
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
