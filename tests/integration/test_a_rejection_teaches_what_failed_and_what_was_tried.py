"""A rejected submit goes back with pytest's expected vs actual, the diff judged and the fixes tried before;
the same rejected change submitted again after an undo is named as such."""

from __future__ import annotations

from fixloop.events import Verdict

WRONG = {"path": "mathutils.py", "old_text": "result += i", "new_text": "result -= i"}
UNDO = {"path": "mathutils.py", "old_text": "result -= i", "new_text": "result += i"}
OTHER = {"path": "mathutils.py", "old_text": "result = 1", "new_text": "result = 0"}
RIGHT = {"path": "mathutils.py", "old_text": "result -= i", "new_text": "result *= i"}


def call(name: str, arguments: dict, expect: dict | None = None) -> dict:
    turn = {"content": f"{name}.", "tool_calls": [{"name": name, "arguments": arguments}]}
    return {**turn, "expect": expect} if expect else turn


SUBMIT = {"summary": "fixed"}


async def test_rejections_show_expected_vs_actual_the_diff_and_what_was_tried(run_fix) -> None:
    script = [
        call("edit_file", WRONG),
        call("submit", SUBMIT),
        call(
            "edit_file",
            UNDO,
            {
                "last_message_contains": [
                    "What the tests say (expected vs actual):",
                    "assert -13 == 120",
                    "```diff",
                    "+        result -= i",
                ]
            },
        ),
        call("edit_file", OTHER),
        call("submit", SUBMIT),
        call(
            "edit_file",
            {"path": "mathutils.py", "old_text": "result = 0", "new_text": "result = 1"},
            {
                "last_message_contains": [
                    "Tried and failed (do not repeat these):",
                    "`result += i` -> `result -= i`",
                ]
            },
        ),
        call("edit_file", WRONG),  # the first rejected change again, after undoing the second
        call("submit", SUBMIT, {"last_message_contains": "replaced lines"}),
        call(
            "edit_file",
            RIGHT,
            {"last_message_contains": "the same change that was already tried and rejected"},
        ),
        call("submit", SUBMIT),
    ]
    outcome = await run_fix("demo", script, attempts=4)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
    assert [v.accepted for v in outcome.of(Verdict)] == [False, False, False, True]


async def test_reasons_only_feedback_leaves_the_rest_out(run_fix) -> None:
    script = [
        call("edit_file", WRONG),
        call("submit", SUBMIT),
        call(
            "edit_file",
            RIGHT,
            {
                "messages_not_contain": ["expected vs actual", "```diff"],
                "last_message_contains": "still fails",
            },
        ),
        call("submit", SUBMIT),
    ]
    outcome = await run_fix("demo", script, feedback="reasons")
    assert outcome.server.failures == [] and outcome.result.status == "fixed"
