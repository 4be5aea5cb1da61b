"""A reply that goes on after its tool calls is cut there: the stream is closed (the server sees the client
go), the calls run at once, a batch of calls stays whole, and the usage of the cut turn is estimated."""

from __future__ import annotations

import json
from typing import Any

from fixloop.events import Action, Calling, Reply, Usage
from support import load_fix

BABBLE = (
    "\n\n### tests/test_mathutils.py (lines 12-13) the test\n  12 | def test_factorial_of_five():\n"
    + "Let me explain the whole thing once more in great detail. " * 40
)
PACE = {"chunk_chars": 4, "chunk_delay": 0.002}  # about a token a piece, as llama.cpp streams


def fenced(tool: str, arguments: dict[str, Any]) -> str:
    return "```json\n" + json.dumps({"name": tool, "arguments": arguments}) + "\n```"


def demo_edit() -> dict[str, str]:
    edit = load_fix("demo")["edits"][0]
    return {"path": edit["path"], "old_text": edit["old_text"], "new_text": edit["new_text"]}


def babbling_fix() -> list[dict[str, Any]]:
    """The demo fix written in content, each call followed by text the loop must never wait for."""
    return [
        {
            "content": "factorial adds; it must multiply.\n" + fenced("edit_file", demo_edit()) + BABBLE,
            **PACE,
        },
        {
            "content": "<tool_call>\n"
            + json.dumps({"name": "run_tests", "arguments": {}})
            + "\n</tool_call>"
            + BABBLE,
            **PACE,
        },
        {"content": fenced("submit", {"summary": "factorial multiplies"}) + BABBLE, **PACE},
    ]


async def test_the_stream_is_closed_after_the_call_and_the_babble_never_enters_the_history(run_fix) -> None:
    outcome = await run_fix("demo", babbling_fix())
    assert outcome.result.status == "fixed", outcome.result.reasons
    streams = outcome.server.streams
    assert len(streams) == 3 and all(s["disconnected"] and s["sent"] < s["chunks"] // 4 for s in streams)
    second = outcome.server.requests[1]["messages"]
    assert second[-2] == {
        "role": "assistant",
        "content": "factorial adds; it must multiply.\n" + fenced("edit_file", demo_edit()),
    }
    assert not any("great detail" in str(m.get("content")) for m in outcome.server.requests[2]["messages"])
    replies = outcome.of(Reply)
    assert [r.cut for r in replies] == ["call", "call", "call"]
    assert all(r.unused and "great detail" not in r.text for r in replies)  # the transcript keeps both


async def test_the_usage_of_a_cut_turn_is_estimated_and_marked(run_fix) -> None:
    outcome = await run_fix("demo", babbling_fix())
    usages = outcome.of(Usage)
    assert usages and all(u.estimated for u in usages)  # no usage chunk comes once the stream is closed
    assert all(u.prompt_tokens > 0 and u.completion_tokens > 0 for u in usages)
    assert all(0 < u.unused_tokens <= 8 for u in usages)  # what came after the call before the close
    assert outcome.result.prompt_tokens == sum(u.prompt_tokens for u in usages)
    assert outcome.result.to_json()["usage"]["estimated"] is True  # the run's figures say so too


async def test_a_two_call_batch_is_kept_whole(run_fix) -> None:
    both = (
        fenced("read_file", {"path": "mathutils.py"})
        + "\n"
        + fenced("read_file", {"path": "tests/test_mathutils.py"})
        + BABBLE
    )
    script = [{"content": "Let me read both.\n" + both, **PACE}, *babbling_fix()]
    outcome = await run_fix("demo", script)
    assert outcome.result.status == "fixed", outcome.result.reasons
    first = [(a.tool, a.arguments) for a in outcome.of(Action) if a.step == 1]
    assert first == [
        ("read_file", {"path": "mathutils.py"}),
        ("read_file", {"path": "tests/test_mathutils.py"}),
    ]
    assert [(c.tool, c.target) for c in outcome.of(Calling) if c.step == 1] == [
        ("read_file", "mathutils.py"),
        ("read_file", "tests/test_mathutils.py"),
    ]
    assert outcome.server.streams[0]["disconnected"]
    observation = outcome.server.requests[1]["messages"][-1]["content"]
    assert "[read_file] mathutils.py" in observation and "[read_file] tests/test_mathutils.py" in observation


async def test_run_tests_without_arguments_runs_the_failing_targets_and_says_so(run_fix) -> None:
    outcome = await run_fix("demo", babbling_fix())
    system = outcome.server.requests[0]["messages"][0]["content"]
    assert "run_tests with no arguments" in system
    green = outcome.server.requests[2]["messages"][-1]["content"]
    assert green.startswith("Observation: 1 passed") and "\n" not in green  # a green run is one line
