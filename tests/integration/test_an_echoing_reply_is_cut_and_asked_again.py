"""A reply that starts re-typing the context it was shown (with or without a listing's line numbers) is cut
while it streams and asked again with a short instruction; the warm start shows code the way it is in the
files, so there is no gutter to copy."""

from __future__ import annotations

import json

from fixloop.events import Notice, Reply
from support import REPO_ROOT, load_fix

PACE = {"chunk_chars": 4, "chunk_delay": 0.002}


def call(tool: str, arguments: dict) -> str:
    return "```json\n" + json.dumps({"name": tool, "arguments": arguments}) + "\n```"


async def test_an_echo_is_cut_and_the_model_asked_for_one_short_reply(run_fix) -> None:
    source = (REPO_ROOT / "fixtures" / "projects" / "demo" / "mathutils.py").read_text()
    body = source[source.index("def factorial") :]
    echo = "Looking at the code:\n" + body + "\n" + body  # the code it was shown, typed out again
    edit = load_fix("demo")["edits"][0]
    script = [
        {"content": echo, **PACE},
        {
            "content": "It adds instead of multiplying.\n"
            + call("edit_file", {k: edit[k] for k in ("path", "old_text", "new_text")}),
            "expect": {"last_message_contains": "Do not copy the context back"},
        },
        {"content": call("run_tests", {})},
        {"content": call("submit", {"summary": "factorial multiplies"})},
    ]
    outcome = await run_fix("demo", script)
    assert outcome.result.status == "fixed", (outcome.result.reasons, outcome.server.failures)
    assert outcome.server.streams[0]["disconnected"]
    first = next(r for r in outcome.of(Reply) if r.step == 1)
    assert first.cut == "echo" and first.text.strip() == "Looking at the code:"
    assert len(first.unused) < len(echo) // 2  # cut early, long before the reply's end
    assert [n.kind for n in outcome.of(Notice) if n.step == 1] == ["echo"]
    retry = outcome.server.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Looking at the code:"}  # the echo is left out


async def test_the_warm_start_shows_code_in_fences_with_line_numbers_only_in_headers(run_fix) -> None:
    outcome = await run_fix("demo", [{"content": call("submit", {"summary": "none"})}])
    task = outcome.server.requests[0]["messages"][1]["content"]
    assert "### mathutils.py (lines " in task and "```python\ndef factorial(n: int) -> int:\n" in task
    assert not any(line.lstrip()[:1].isdigit() and " | " in line for line in task.splitlines())
