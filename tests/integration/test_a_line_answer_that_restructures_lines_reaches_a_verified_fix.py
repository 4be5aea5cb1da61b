"""A line-level answer that merges two lines into one, names its line a couple of numbers off, or was cut
at its token limit in the middle of a line, is read as the block it means (not refused as a SyntaxError or
a line past the file's end) and reaches a verified fix."""

from __future__ import annotations

DEF = "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"


def code(body: str) -> str:
    return f"The bug is in factorial.\n\nmathutils.py\n```python\n{DEF}{body}```\n"


WRONG = code("    result = 1\n    for i in range(2, n + 1):\n        result -= i\n    return result\n")
OTHER_WRONG = code("    result = 0\n    for i in range(2, n + 1):\n        result += i\n    return result\n")
SAMPLE = {"strategy": "sample", "editForm": "code", "samples": 2, "sampleRounds": 0, "temperature": 0}
START = [{"content": WRONG}, {"content": OTHER_WRONG}, {"content": WRONG}, {"content": OTHER_WRONG}]
PROSE = {"content": "I am not sure which line is wrong."}


async def test_two_lines_merged_into_one_reach_a_verified_fix(run_fix):
    merged = "line 7:     for i in range(2, n + 1): result *= i\nline 8:     return result"
    outcome = await run_fix("demo", [*START, PROSE, {"content": merged}], **SAMPLE)

    assert outcome.result.status == "fixed", "\n".join(outcome.notices)
    assert "+    for i in range(2, n + 1): result *= i\n" in outcome.result.diff
    assert "-        result += i\n" in outcome.result.diff and "+    return result" not in outcome.result.diff
    assert "line-level round" in outcome.result.summary
    assert not any("SyntaxError" in notice for notice in outcome.notices)


async def test_a_line_named_two_past_the_files_end_is_matched_by_its_content(run_fix):
    outcome = await run_fix("demo", [*START, {"content": "line 10: result *= i"}], **SAMPLE)

    assert outcome.result.status == "fixed", "\n".join(outcome.notices)
    assert "-        result += i\n+        result *= i\n" in outcome.result.diff
    assert "candidate 1 of 8: verified (2 changed line(s))" in outcome.notices


async def test_the_line_round_says_how_many_answers_it_refused_and_how_many_copied_the_line(run_fix):
    copy = {"content": "line 8:         result += i"}
    broken = {"content": "line 7:     for i in range(2, n + 1)"}
    outcome = await run_fix(
        "demo", [*START, copy, broken, *[PROSE] * 6, *[PROSE] * 12], maxSteps=12, **SAMPLE
    )

    assert outcome.result.status == "not_fixed"
    assert "line-level round: 8 answer(s) drawn: 7 refused as invalid, 1 unchanged" in outcome.notices
    # the line round's answers count among the run's drawn candidates (the bench's line figures read them)
    assert outcome.result.candidates_drawn == len(START) + 8


async def test_an_answer_cut_at_its_token_limit_loses_its_unfinished_last_line(run_fix):
    cut = "line 7:     for i in range(2, n + 1):\nline 8:         result *= i\nline 9:     return (res"
    outcome = await run_fix("demo", [*START, {"content": cut, "finish_reason": "length"}], **SAMPLE)

    assert outcome.result.status == "fixed", "\n".join(outcome.notices)
    assert "-        result += i\n+        result *= i\n" in outcome.result.diff
    assert "candidate 1 of 8: verified (2 changed line(s))" in outcome.notices
    assert not any("SyntaxError" in notice for notice in outcome.notices)
