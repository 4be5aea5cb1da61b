"""Every prompt that shows a failure shows the failing call, as an engineer would look at it first: the
arguments (a parametrized case's values), the failing line and expected vs actual, in the warm start, in a
rejection and after a round of candidates that failed; none of it with the failingInputs setting off."""

from __future__ import annotations

from fixloop.events import Verdict

CALLED = "called with: score=90, expected='A'"
ACTUAL = "actual: letter_grade(score) = 'B'"
EXPECTED = "expected: expected = 'A'"
RIGHT = {"path": "school/grading.py", "old_text": "if score > 90:", "new_text": "if score >= 90:"}
WRONG = {"path": "school/grading.py", "old_text": "if score > 90:", "new_text": "if score > 91:"}
WRONG_CODE = (
    "school/grading.py\n```python\ndef letter_grade(score: int) -> str:\n    if score > 91:\n"
    '        return "A"\n    if score >= 80:\n        return "B"\n    if score >= 70:\n        return "C"\n'
    '    if score >= 60:\n        return "D"\n    return "F"\n```\n'
)


def call(name: str, arguments: dict, expect: dict | None = None) -> dict:
    turn = {"content": f"{name}.", "tool_calls": [{"name": name, "arguments": arguments}]}
    return {**turn, "expect": expect} if expect else turn


SUBMIT = {"summary": "fixed"}


async def test_the_warm_start_and_a_rejection_show_the_failing_parameters_and_values(run_fix) -> None:
    script = [
        call("edit_file", WRONG, {"messages_contain": [CALLED, ACTUAL, EXPECTED, "The failing call:"]}),
        call("submit", SUBMIT),
        call(
            "edit_file",
            {"path": "school/grading.py", "old_text": "if score > 91:", "new_text": "if score >= 90:"},
            {"last_message_contains": ["The failing call (its arguments", CALLED, ACTUAL, EXPECTED]},
        ),
        call("submit", SUBMIT),
    ]
    outcome = await run_fix("parametrized", script)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
    assert [v.accepted for v in outcome.of(Verdict)] == [False, True]
    first = outcome.server.requests[0]["messages"][-1]["content"]
    assert first.index(CALLED) < first.index("Expected vs actual (pytest)")  # before pytest's E lines


async def test_a_failed_round_of_candidates_leaves_the_failing_call_in_the_conversation(run_fix) -> None:
    script = [
        {"content": WRONG_CODE},  # the code form's best guess: still 'B' for 90
        call("edit_file", RIGHT, {"last_message_contains": ["That fix did not pass", CALLED, ACTUAL]}),
        call("submit", SUBMIT),
    ]
    outcome = await run_fix("parametrized", script, editForm="code")

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices


async def test_with_failing_inputs_off_no_prompt_shows_them(run_fix) -> None:
    absent = {"messages_not_contain": ["called with:", "The failing call"]}
    script = [
        call("edit_file", WRONG, absent),
        call("submit", SUBMIT),
        call(
            "run_tests",
            {},
            {**absent, "last_message_contains": "still fails"},
        ),
        call(
            "edit_file",
            {"path": "school/grading.py", "old_text": "if score > 91:", "new_text": "if score >= 90:"},
            absent,
        ),
        call("submit", SUBMIT),
    ]
    outcome = await run_fix("parametrized", script, failingInputs=False)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
