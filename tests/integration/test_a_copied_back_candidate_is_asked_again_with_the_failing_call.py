"""With `reaskUnchanged` on, a candidate that copies the function back unchanged is not dropped: its draw is
answered at once, in the same round, with the failing call and "this code produces X for that input; the
expected value is Y", and the answer is judged in that round; by default (off) the copy back is dropped
and the round draws on. The round's figures count what became of each candidate."""

from __future__ import annotations

from fixloop.events import Notice

HEAD = "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"


def code(step: str) -> str:
    body = f"    result = 1\n    for i in range(2, n + 1):\n        {step}\n    return result\n"
    return f"mathutils.py\n```python\n{HEAD}{body}```\n"


UNCHANGED = code("result += i")  # the function as it is
FIX = code("result *= i")
SAMPLE = {"strategy": "sample", "editForm": "code", "sampleParallel": 2, "sampleRounds": 0, "temperature": 0}
REASK = {**SAMPLE, "reaskUnchanged": True}
ASKED = "This code produces 15 for that input; the expected value is 120; change it."


async def test_a_copy_back_is_asked_again_with_the_failing_call_and_fixed_in_the_same_round(run_fix) -> None:
    script = [
        {"content": UNCHANGED},
        {"content": FIX, "expect": {"last_message_contains": [ASKED, "factorial(5) == 120"]}},
    ]
    outcome = await run_fix("demo", script, samples=3, **REASK)

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    assert "+        result *= i" in outcome.result.diff
    first, again = outcome.server.requests
    assert again["messages"][: len(first["messages"])] == first["messages"]  # a follow-up of that draw
    assert again["messages"][-2] == {"role": "assistant", "content": UNCHANGED.strip()}
    asked = again["messages"][-1]["content"]
    assert "failing line (tests/test_mathutils.py:13): assert factorial(5) == 120" in asked
    assert "actual: factorial(5) = 15" in asked and "expected: 120" in asked
    assert again["temperature"] == 0  # the best guess is asked again as it was drawn
    assert any(
        text.startswith("candidate 1 of 3: changes nothing") and "asking again" in text
        for text in outcome.notices
    )
    assert "candidate 1 of 3, asked again: verified (2 changed line(s))" in outcome.notices
    figures = [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "round"]
    assert figures == [
        "round 1: 2 candidate(s) drawn (1 asked again), 1 distinct: "
        "unchanged 1, duplicates 0, tried before 0, invalid 0, judged 1"
    ]


async def test_the_round_figures_count_each_fate(run_fix) -> None:
    wrong = code("result -= i")
    script = [
        {"content": wrong},  # judged, rejected
        {"content": UNCHANGED, "choices": [{"content": wrong}, {"content": "no code at all"}]},
        {"content": wrong},  # the re-ask of the copy back: the same as candidate 1
    ]
    outcome = await run_fix("demo", script, samples=4, **REASK)

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status != "fixed"
    figures = [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "round"]
    assert figures[0] == (
        "round 1: 5 candidate(s) drawn (1 asked again), 1 distinct: "
        "unchanged 1, duplicates 2, tried before 0, invalid 1, judged 1"
    )


async def test_by_default_a_copy_back_is_dropped_and_the_round_draws_on(run_fix) -> None:
    script = [{"content": UNCHANGED}, {"content": FIX}]
    outcome = await run_fix("demo", script, samples=2, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    first, second = outcome.server.requests
    assert len(second["messages"]) == len(first["messages"]) and second["temperature"] > 0
    assert ASKED not in second["messages"][-1]["content"]
    assert "candidate 2 of 2: verified (2 changed line(s))" in outcome.notices
    assert "candidate 1 of 2: changes nothing — the code block changes nothing in mathutils.py" in (
        outcome.notices
    )  # no "asking again"


async def test_with_failing_inputs_off_the_copy_back_is_asked_again_without_the_call(run_fix) -> None:
    script = [{"content": UNCHANGED}, {"content": FIX}]
    outcome = await run_fix("demo", script, samples=3, failingInputs=False, **REASK)

    assert outcome.result.status == "fixed", outcome.notices
    asked = outcome.server.requests[1]["messages"][-1]["content"]
    assert "changes nothing" in asked and ASKED not in asked and "failing line" not in asked


async def test_a_later_round_counts_a_fix_tried_before_and_does_not_repeat_the_tried_lines(run_fix) -> None:
    wrong_edit = {"path": "mathutils.py", "old_text": "result += i", "new_text": "result -= i"}
    script = [
        {"content": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments": wrong_edit}]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "subtract"}}]},
        {"content": code("result -= i")},  # the round's best guess: the rejected submit again
        {"content": FIX},
    ]
    outcome = await run_fix("demo", script, strategy="react", editForm="tools", samples=2, sampleRounds=1)

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    figures = [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "round"]
    assert figures == [
        "round 1: 2 candidate(s) drawn, 2 distinct: "
        "unchanged 0, duplicates 0, tried before 1, invalid 0, judged 1"
    ]
    sampled = outcome.server.requests[-1]["messages"][-1]["content"]
    assert sampled.count("result -= i") == 1  # the round's ask lists it; the draw's hint does not again


async def test_like_copies_back_of_one_request_are_asked_again_in_one_request_with_n(run_fix) -> None:
    wrong = code("result -= i")
    script = [
        {"content": wrong},  # the best guess: judged, rejected
        {"content": UNCHANGED, "choices": [{"content": UNCHANGED}, {"content": code("result = i")}]},
        {"content": code("result += 2 * i"), "choices": [{"content": FIX}]},  # both copies' follow-up at once
    ]
    outcome = await run_fix("demo", script, samples=4, **REASK)

    assert outcome.server.failures == [], "\n".join(outcome.notices)
    assert outcome.result.status == "fixed", outcome.notices
    asked = outcome.server.requests[2]
    assert ASKED in asked["messages"][-1]["content"] and asked["n"] == 2  # one prompt for both
    assert len(outcome.server.requests) == 3
    figures = [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "round"]
    assert figures[0].startswith("round 1: 6 candidate(s) drawn (2 asked again)"), figures


async def test_different_copies_back_are_asked_again_together_where_the_endpoint_serves_several(
    run_fix,
) -> None:
    wrong = code("result -= i")
    other_copy = UNCHANGED + "\n" + UNCHANGED  # the function twice: a copy back, shown otherwise
    script = [
        {"content": wrong},  # the best guess: judged, rejected
        {"content": UNCHANGED, "choices": [{"content": other_copy}, {"content": code("result = i")}]},
        {"content": FIX, "together": 2},  # both re-asks are in flight at once: the endpoint serves two
        {"content": code("result += 2 * i"), "together": 2},
    ]
    outcome = await run_fix("demo", script, samples=4, **REASK)

    assert outcome.server.failures == [], "\n".join(outcome.notices)
    assert outcome.result.status == "fixed", outcome.notices
    asked = [r["messages"][-1]["content"] for r in outcome.server.requests[2:]]
    assert len(asked) == 2 and all(ASKED in text for text in asked)
    figures = [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "round"]
    assert figures[0].startswith("round 1: 6 candidate(s) drawn (2 asked again)"), figures
