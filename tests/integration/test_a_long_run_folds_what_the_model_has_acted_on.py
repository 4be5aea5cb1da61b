"""A long ReAct run keeps its turns small: an observation the model has acted on (older than the last three)
is folded once to its head and tail, a test run to its verdict, so the prompt stops growing with the run
while the last observations stay whole."""

from __future__ import annotations

import itertools

from fixloop.agent.context import SHRUNK_MARK
from support import fix_script

READS = 8


def _chars(request: dict) -> int:
    return sum(len(str(message.get("content") or "")) for message in request["messages"])


async def test_the_prompt_stops_growing_after_the_last_three_observations(run_fix, fixture_project):
    root = fixture_project("demo")
    for n in range(READS):
        lines = [f"VALUE_{n}_{i} = {i}  # a long module the model reads and moves on from" for i in range(90)]
        (root / f"notes_{n}.py").write_text("\n".join(lines) + "\n")
    calls = [{"name": "read_file", "arguments": {"path": f"notes_{n}.py"}} for n in range(READS)]
    reads = [{"content": f"Reading notes_{n}.py.", "tool_calls": [call]} for n, call in enumerate(calls)]
    outcome = await run_fix(root, [*reads, *fix_script("demo")], maxSteps=30)

    assert outcome.result.status == "fixed", outcome.notices
    sizes = [_chars(request) for request in outcome.server.requests[: READS + 1]]
    growth = [later - earlier for earlier, later in itertools.pairwise(sizes)]
    whole = growth[0]  # one read observation, whole, with its call
    assert whole > 5000
    assert max(growth[4:]) < whole / 2  # from the fifth turn on, each turn adds a folded observation only
    assert sizes[-1] < sizes[3] + READS * 1000
    last = outcome.server.requests[READS]["messages"]
    observations = [m["content"] for m in last if "VALUE_" in str(m.get("content"))]
    assert [text.startswith(SHRUNK_MARK) for text in observations] == [True] * (READS - 3) + [False] * 3
    assert any("folded" in notice or "shortened" in notice for notice in outcome.notices)
