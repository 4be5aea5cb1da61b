"""Generate and validate: N candidate fixes drawn, each distinct one judged once, the smallest verified one
proposed, the budget kept; a round that finds nothing teaches the loop what was tried."""

from __future__ import annotations

from fixloop.events import Notice, Reply, Usage, Verdict

DEF = "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"


def code(body: str, head: str = DEF) -> str:
    return f"The bug is in factorial.\n\nmathutils.py\n```python\n{head}{body}```\n"


WRONG = code("    result = 1\n    for i in range(2, n + 1):\n        result -= i\n    return result\n")
OTHER_WRONG = code("    result = 0\n    for i in range(2, n + 1):\n        result += i\n    return result\n")
SMALL_FIX = code("    result = 1\n    for i in range(2, n + 1):\n        result *= i\n    return result\n")
BIG_FIX = code(
    "    result = 1\n    for i in range(1, n + 1):\n        result = result * i\n    return result\n",
    head="def factorial(n):\n",
)
SAMPLE = {"strategy": "sample", "editForm": "code", "sampleParallel": 2, "sampleRounds": 0, "temperature": 0}


def candidate_lines(outcome) -> list[str]:
    return [text for text in outcome.notices if text.startswith(("candidate ", "the corrected code"))]


async def test_the_smallest_verified_candidate_is_proposed_and_a_duplicate_is_judged_once(run_fix) -> None:
    script = [
        {"content": WRONG},  # the best guess, at temperature 0
        {"content": BIG_FIX, "choices": [{"content": WRONG}, {"content": SMALL_FIX}]},  # one request, n=3
    ]
    outcome = await run_fix("demo", script, samples=4, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    assert "-        result += i\n+        result *= i\n" in outcome.result.diff
    added = [line for line in outcome.result.diff.splitlines() if line.startswith("+ ")]
    assert len(added) == 1  # the smallest of the two verified candidates
    lines = candidate_lines(outcome)
    assert lines[0].startswith("candidate 1 of 4: rejected — tests/test_mathutils.py::test_factorial_of_five")
    assert sorted(line.split(" (")[0] for line in lines[1:]) == [
        "candidate 2 of 4: verified",
        "candidate 3 of 4: same as candidate 1; not judged again",
        "candidate 4 of 4: verified",
    ]
    proposing = "2 of 4 candidate(s) verified; proposing candidate 4 (the smallest diff: 2 line(s))"
    assert proposing in outcome.notices
    requests = outcome.server.requests
    assert len(requests) == 2 and requests[0]["temperature"] == 0 and requests[1]["n"] == 3
    assert requests[1]["temperature"] > 0 and requests[0]["messages"][:-1] == requests[1]["messages"][:-1]
    first, batch = (request["messages"][-1]["content"] for request in requests)
    assert batch.startswith(first) and "Tried and failed" in batch and "result -= i" in batch
    assert [verdict.accepted for verdict in outcome.of(Verdict)] == [True]
    assert "candidate 4 of 4" in outcome.result.summary


async def test_a_batched_reply_that_goes_on_after_its_code_is_cut_and_holds_no_other(run_fix) -> None:
    rambling = SMALL_FIX + "Let me explain the whole fix once more, in great detail.\n" * 60
    script = [
        {"content": WRONG},
        {  # one streamed request, n=3: its chunks interleaved, a choice named by its index
            "content": OTHER_WRONG,
            "choices": [{"content": rambling}, {"content": WRONG}],
            "chunk_chars": 4,
            "chunk_delay": 0.002,
        },
    ]
    outcome = await run_fix("demo", script, samples=4, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    batch = outcome.server.requests[1]
    assert batch["n"] == 3 and batch["stream"]
    stream = outcome.server.streams[1]
    assert stream["disconnected"] and stream["sent"] < stream["chunks"] // 2  # closed once all were over
    replies = [reply for reply in outcome.of(Reply)][1:]
    assert [reply.cut for reply in replies] == [None, "code", None]
    assert "great detail" not in replies[1].text and "great detail" in replies[1].unused
    usages = outcome.of(Usage)[1:]
    assert usages[0].prompt_tokens > 0 and [usage.prompt_tokens for usage in usages[1:]] == [0, 0]


async def test_without_n_each_candidate_is_its_own_request_and_the_budget_is_kept(run_fix) -> None:
    script = [
        {"content": WRONG},
        {"content": OTHER_WRONG},  # asked for n=2; the endpoint gives one: the rest are drawn one by one
        {"content": SMALL_FIX},
        {"content": SMALL_FIX},  # never asked for: three candidates is the budget
    ]
    outcome = await run_fix("demo", script, samples=3, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    assert len(outcome.server.requests) == 3 and outcome.server.remaining == 1
    seeds = [request.get("seed") for request in outcome.server.requests]
    assert seeds[0] is None and len(set(seeds[1:])) == 2
    hint = "Hint: the bug may well be in `factorial` in mathutils.py"
    lasts = [request["messages"][-1]["content"] for request in outcome.server.requests]
    assert hint not in lasts[0] and hint not in lasts[1] and hint in lasts[2]  # one by one: a function each
    assert sorted(line.split(" —")[0].split(" (")[0] for line in candidate_lines(outcome)) == [
        "candidate 1 of 3: rejected",
        "candidate 2 of 3: rejected",
        "candidate 3 of 3: verified",
    ]


async def test_a_round_that_finds_nothing_leaves_the_loop_what_was_tried(run_fix) -> None:
    # The start round asks for code and sends no tool schemas (a shorter prompt); the loop's turns do.
    script = [
        {"content": WRONG, "expect": {"has_tools": False}},
        {"content": OTHER_WRONG, "expect": {"has_tools": False}},
        {
            "content": "Let me fix it.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "mathutils.py",
                        "old_text": "result += i",
                        "new_text": "result *= i",
                    },
                }
            ],
            "expect": {
                "last_message_contains": ["Tried and failed", "result -= i", "assert -13 == 120"],
                "has_tools": True,
            },
        },
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "multiply"}}]},
    ]
    # roundKinds off: the loop's turn comes right after the start round (else the code rounds come first)
    outcome = await run_fix("demo", script, samples=2, roundKinds=False, **SAMPLE)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
    assert [verdict.accepted for verdict in outcome.of(Verdict)] == [True]
    assert "none of 2 candidate(s) passed the tests" in outcome.notices


async def test_a_rejected_submit_moves_the_run_to_sampling(run_fix) -> None:
    wrong_edit = {"path": "mathutils.py", "old_text": "result += i", "new_text": "result -= i"}
    script = [
        {"content": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments": wrong_edit}]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "subtract"}}]},
        {"content": SMALL_FIX, "expect": {"last_message_contains": "Let us try fixes as code"}},
    ]
    outcome = await run_fix("demo", script, strategy="react", editForm="tools", samples=3, sampleRounds=1)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
    assert [verdict.accepted for verdict in outcome.of(Verdict)] == [False, True]
    assert "+        result *= i" in outcome.result.diff and "result -= i" not in outcome.result.diff
    assert any(isinstance(event, Notice) and event.kind == "candidate" for event in outcome.events)


async def test_replies_without_a_call_in_a_row_move_the_run_to_sampling(run_fix) -> None:
    # A small model that keeps writing prose (or calls fixloop cannot read) is stuck: it gets a round,
    # not nudges until the step budget is gone.
    script = [
        {"content": "The bug is in factorial; I should change the loop."},
        {"content": "write_file(mathutils.py, factorial, 'result *= i')"},
        {"content": SMALL_FIX, "expect": {"last_message_contains": "Let us try fixes as code"}},
    ]
    outcome = await run_fix("demo", script, strategy="react", editForm="tools", samples=3, sampleRounds=1)

    assert outcome.server.failures == []
    assert outcome.result.status == "fixed", outcome.notices
    assert outcome.notices.count("no tool call; nudging the model to continue") == 1  # then the next round
    assert "no tool call: moving on to candidates focused on the next suspect" in outcome.notices
    assert "+        result *= i" in outcome.result.diff
    assert outcome.result.steps == 3  # two silent turns and the round


async def test_a_batch_that_fails_is_drawn_one_by_one_and_the_next_round_batches_again(run_fix) -> None:
    script = [
        {"content": WRONG},  # the start round's best guess
        {"fault": "401"},  # its batch of two fails (not an endpoint that ignores `n`)
        {"content": OTHER_WRONG},  # so the round draws the two one request each
        {"content": WRONG},
        {"content": WRONG},  # the next round's best guess
        {"content": SMALL_FIX, "choices": [{"content": WRONG}]},  # and its batch of two
    ]
    outcome = await run_fix("demo", script, samples=3, strategy="sample", editForm="code", sampleRounds=0)

    assert outcome.result.status == "fixed", outcome.notices
    said = "2 candidates could not be drawn at once: "
    assert any(text.startswith(said) for text in outcome.notices), outcome.notices
    ns = [request.get("n") for request in outcome.server.requests]
    assert ns[1] == 2 and ns[2:4] == [None, None] and ns[5] == 2, ns


async def test_a_batch_the_server_closes_unanswered_is_sent_again_not_drawn_one_by_one(run_fix) -> None:
    # llama.cpp's server lets a kept-alive connection go after 5 s idle; a batch sent on it just then is
    # never read ("Server disconnected without sending a response"): live, two rounds in 22 runs drew their
    # five candidates one request at a time after it
    script = [
        {"content": WRONG},  # the start round's best guess
        {"fault": "stall", "seconds": 0},  # its batch of two: the connection closes, nothing sent
        {"content": SMALL_FIX, "choices": [{"content": WRONG}]},  # the same batch, sent again
    ]
    outcome = await run_fix("demo", script, samples=3, strategy="sample", editForm="code", sampleRounds=0)

    assert outcome.result.status == "fixed", outcome.notices
    assert not any("could not be drawn at once" in text for text in outcome.notices), outcome.notices
    ns = [request.get("n") for request in outcome.server.requests]
    assert ns == [None, 2, 2], ns
