"""Loop control: nudges, refusals, budgets, stuck detection, parallel calls, tool errors as observations."""

from __future__ import annotations

import time

from fixloop.events import Action, Notice, Observation
from support import fix_script, load_fix


def _demo_edit() -> dict:
    edit = load_fix("demo")["edits"][0]
    return {"name": "edit_file", "arguments": edit}


async def test_no_tool_call_gets_a_continuation_nudge(run_fix):
    outcome = await run_fix("demo", [{"content": "Hmm, let me think about this."}, *fix_script("demo")])
    assert outcome.result.status == "fixed"
    assert "did not call a tool" in outcome.server.requests[1]["messages"][-1]["content"]


async def test_refusal_is_retried_then_the_run_continues(run_fix):
    outcome = await run_fix("demo", [{"refusal": "I can't help with that."}, *fix_script("demo")])
    assert outcome.result.status == "fixed"
    assert any("refused" in n for n in outcome.notices)


async def test_repeated_refusals_end_the_run_not_fixed(run_fix):
    script = [{"content": "I'm sorry, I cannot help with that."}] * 3
    outcome = await run_fix("demo", script)
    assert outcome.result.status == "not_fixed"
    assert "refused" in outcome.result.summary


async def test_step_budget_ends_the_run(run_fix):
    read = {"tool_calls": [{"name": "list_files", "arguments": {}}]}
    outcome = await run_fix("demo", [read, {"content": "thinking"}, read, read], maxSteps=3)
    assert outcome.result.status == "not_fixed"
    assert "step budget" in outcome.result.summary
    assert len(outcome.server.requests) == 3


async def test_token_budget_ends_the_run(run_fix):
    read = {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]}
    outcome = await run_fix("demo", [read] * 5, maxTokens=10)
    assert outcome.result.status == "not_fixed"
    assert "token budget" in outcome.result.summary
    assert len(outcome.server.requests) == 1


async def test_wall_time_budget_ends_the_run(run_fix):
    slow = {"delay": 1.5, "tool_calls": [{"name": "list_files", "arguments": {}}]}
    outcome = await run_fix("demo", [slow, slow, slow], maxSeconds=1)
    assert outcome.result.status == "not_fixed"
    assert "time budget" in outcome.result.summary
    assert len(outcome.server.requests) == 1


async def test_a_model_turn_under_way_stops_when_the_runs_time_is_up(run_fix):
    slow = {
        "delay": 30,
        "tool_calls": [{"name": "list_files", "arguments": {}}],
    }  # a long prompt, read slowly
    started = time.monotonic()
    outcome = await run_fix("demo", [slow], maxSeconds=2)
    assert outcome.result.status == "not_fixed"
    assert "time budget used up (2 s): the model's turn was stopped" in outcome.result.summary
    assert time.monotonic() - started < 20  # not the 30 s the turn would have taken


async def test_same_action_and_observation_nudges_then_stops(run_fix):
    same = {"tool_calls": [{"name": "read_file", "arguments": {"path": "does_not_exist.py"}}]}
    outcome = await run_fix("demo", [same, same, same, same])
    assert outcome.result.status == "not_fixed"
    assert "stuck" in outcome.result.summary
    assert len(outcome.server.requests) == 3
    second = next(o for o in outcome.of(Observation) if o.step == 2)
    assert "already made this exact call" in second.text
    assert any(isinstance(e, Notice) and e.kind == "stuck" for e in outcome.events)


async def test_tool_errors_become_observations_and_the_run_goes_on(run_fix):
    edit = load_fix("demo")["edits"][0]
    bad_turn = {
        "tool_calls": [
            {"name": "read_file", "arguments": '{"path": "mathutils.py",'},  # malformed JSON
            {"name": "delete_everything", "arguments": {}},  # unknown tool
            {"name": "read_file", "arguments": {"path": "../../etc/passwd"}},  # outside the project
            {
                "name": "edit_file",
                "arguments": {"path": edit["path"], "old_text": "no such text here", "new_text": "x"},
            },  # edit mismatch
        ]
    }
    outcome = await run_fix("demo", [bad_turn, *fix_script("demo")])
    assert outcome.result.status == "fixed"
    first = [o for o in outcome.of(Observation) if o.step == 1]
    assert len(first) == 4 and all(o.is_error for o in first)
    assert "read_file" in first[0].text  # malformed JSON: shows the correct form
    assert "submit" in first[1].text  # unknown tool: lists the tools
    assert "outside" in first[2].text
    assert edit["path"] in first[3].text
    # the results went back to the model, in the model's order, as tool messages
    tool_messages = [m for m in outcome.server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [o.call_id for o in first]


async def test_parallel_calls_keep_order_and_writes_happen_in_sequence(run_fix):
    edit = load_fix("demo")["edits"][0]
    turn = {
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": edit["path"]}},
            {"name": "edit_file", "arguments": edit},
            {"name": "read_file", "arguments": {"path": edit["path"]}},
            {"name": "search", "arguments": {"pattern": "def "}},
        ]
    }
    outcome = await run_fix(
        "demo", [turn, {"tool_calls": [{"name": "submit", "arguments": {"summary": "fixed"}}]}]
    )
    assert outcome.result.status == "fixed"
    observations = [o for o in outcome.of(Observation) if o.step == 1]
    assert [o.tool for o in observations] == ["read_file", "edit_file", "read_file", "search"]
    # the read before the edit sees the old code, the read after it the new code
    assert edit["old_text"] in observations[0].text and edit["new_text"] not in observations[0].text
    assert edit["new_text"] in observations[2].text and edit["old_text"] not in observations[2].text
    assert [a.tool for a in outcome.of(Action) if a.step == 1] == [
        "read_file",
        "edit_file",
        "read_file",
        "search",
    ]


async def test_a_rejected_submit_goes_back_to_the_model_and_attempts_end_the_run(run_fix):
    submit = {"tool_calls": [{"name": "submit", "arguments": {"summary": "done"}}]}
    outcome = await run_fix("demo", [submit, submit], attempts=2)
    assert outcome.result.status == "not_fixed"
    assert outcome.result.attempts == 2
    assert "rejected" in outcome.server.requests[1]["messages"][-1]["content"]
    assert outcome.result.reasons


async def test_a_fix_the_model_never_submits_is_still_verified_and_proposed(run_fix):
    edit = load_fix("demo")["edits"][0]
    run = {"tool_calls": [{"name": "run_tests", "arguments": {}}]}
    edit_turn = {"tool_calls": [{"name": "edit_file", "arguments": edit}]}
    outcome = await run_fix("demo", [edit_turn, run, run, run, run])
    assert outcome.result.status == "fixed", outcome.result.summary
    assert "did not submit" in outcome.result.summary
    assert outcome.result.files == [edit["path"]]
    passing = next(o for o in outcome.of(Observation) if o.tool == "run_tests")
    assert "call submit" in passing.text
