"""Silence, repeats and stuck calls move the run to the next kind of round (candidates on the next suspect,
a line-level round, the loop) instead of nudging again, and a start round of candidates that found nothing
goes on through the code rounds before the loop; a run ends early only once every kind was tried."""

from __future__ import annotations

from fixloop.events import Notice

DEF = "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"


def code(body: str) -> str:
    return f"The bug is in factorial.\n\nmathutils.py\n```python\n{DEF}{body}```\n"


WRONG = code("    result = 1\n    for i in range(2, n + 1):\n        result -= i\n    return result\n")
OTHER_WRONG = code("    result = 0\n    for i in range(2, n + 1):\n        result += i\n    return result\n")
PROSE = {"content": "The bug is probably in the loop of factorial; it should multiply."}
NO_LINE = {"content": "I am not sure which line is wrong."}
SAMPLE = {"strategy": "sample", "editForm": "code", "samples": 2, "sampleRounds": 0, "temperature": 0}
HINT = "Hint: the bug may well be in `factorial` in mathutils.py"


def rounds(outcome) -> list[str]:
    return [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == "rounds"]


def line_requests(outcome) -> list[dict]:
    return [r for r in outcome.server.requests if r.get("max_tokens") == 96]


async def test_a_failed_start_round_goes_on_to_a_suspect_round_then_a_line_round_then_the_loop(run_fix):
    script = [
        {"content": WRONG},  # the start round: the best guess and one sampled candidate
        {"content": OTHER_WRONG},
        {"content": WRONG},  # candidates on the next suspect, from the start round's prompt (no tools)
        {"content": OTHER_WRONG},
        *[NO_LINE] * 8,  # the line-level round
        PROSE,  # the loop: nudged once
        PROSE,  # two in a row: the last kind, the loop's ask
        PROSE,  # one silent reply is enough now: every kind tried, the run ends
        *[PROSE] * 10,
    ]
    outcome = await run_fix("demo", script, maxSteps=30, **SAMPLE)

    assert outcome.result.status == "not_fixed"
    assert outcome.notices.count("no tool call; nudging the model to continue") == 1
    assert rounds(outcome)[:3] == [
        "no fix yet: moving on to candidates focused on the next suspect",
        "no fix yet: moving on to a line-level round",
        "no tool call: moving on to the loop's tool turns",
    ]
    requests = outcome.server.requests
    assert HINT in requests[2]["messages"][-1]["content"] and HINT in requests[3]["messages"][-1]["content"]
    assert not any(request.get("tools") for request in requests[:4])  # the start round's prompt, cached
    assert requests[2]["messages"][:-1] == requests[0]["messages"]  # and one ask: the fixes tried
    said = str(requests[2]["messages"][-1]["content"])
    assert "tried and failed" in said and "Find the real cause now" not in said  # code, no tools
    lines = line_requests(outcome)
    assert len(lines) == 8 and requests.index(lines[0]) == 4
    shown = lines[0]["messages"][-1]["content"]
    assert "8:         result += i" in shown and "line N: <the new code of line N>" in shown
    assert "test_factorial_of_five" in shown  # what failed, with its inputs
    assert "every kind of round tried (suspect, lines, loop)" in outcome.result.summary
    assert len(requests) == 15 and outcome.result.steps < 30  # stopped with its budget left, saying why


async def test_a_line_answer_that_fixes_the_bug_is_verified_and_proposed(run_fix):
    script = [
        {"content": WRONG},
        {"content": OTHER_WRONG},
        {"content": WRONG},
        {"content": OTHER_WRONG},
        NO_LINE,
        {"content": "The loop adds instead of multiplying:\n```python\nline 8: result *= i\n```"},
    ]
    outcome = await run_fix("demo", script, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    assert "-        result += i\n+        result *= i\n" in outcome.result.diff
    assert "line-level round" in outcome.result.summary
    assert "candidate 2 of 8: verified (2 changed line(s))" in outcome.notices


async def test_a_stuck_run_with_kinds_left_goes_on_to_them_and_says_which_it_tried(run_fix):
    same = {"tool_calls": [{"name": "read_file", "arguments": {"path": "does_not_exist.py"}}]}
    script = [
        same,
        same,
        {"content": WRONG},
        {"content": OTHER_WRONG},
        same,
        *[NO_LINE] * 8,
        same,
        same,
        same,
    ]
    outcome = await run_fix("demo", script, strategy="react", editForm="tools", samples=2, sampleRounds=1)

    assert outcome.result.status == "not_fixed"
    said = rounds(outcome)
    assert said[0] == "a repeat: moving on to candidates focused on the next suspect"
    assert said[1] == "stuck: moving on to a line-level round"
    assert "every kind of round tried (suspect, lines, loop)" in outcome.result.summary
    assert len(line_requests(outcome)) == 8


async def test_with_round_kinds_off_a_silent_model_is_nudged_until_the_budget_ends_the_run(run_fix):
    outcome = await run_fix(
        "demo",
        [{"content": WRONG}, {"content": OTHER_WRONG}, *[PROSE] * 12],
        maxSteps=6,
        roundKinds=False,
        **SAMPLE,
    )

    assert outcome.result.status == "not_fixed"
    assert "step budget" in outcome.result.summary and "rounds tried" not in outcome.result.summary
    assert outcome.notices.count("no tool call; nudging the model to continue") >= 4
    assert rounds(outcome) == [] and line_requests(outcome) == []


async def test_after_a_start_round_of_long_answers_the_line_round_comes_before_the_suspect_round(run_fix):
    long = {"prompt_tokens": 900, "completion_tokens": 400, "total_tokens": 1300}  # a 40-line function
    script = [
        {"content": WRONG, "usage": long},  # the start round's best guess: a long answer, and no more of them
        *[NO_LINE] * 8,  # the line-level round at once: short answers
        {"content": WRONG},  # then candidates on the next suspect
        {"content": OTHER_WRONG},
        *[PROSE] * 12,
    ]
    outcome = await run_fix("demo", script, maxSteps=30, **SAMPLE)

    assert outcome.server.failures == [], outcome.notices
    assert rounds(outcome)[:3] == [
        "the corrected functions are long (400 tokens): lines first",
        "no fix yet: moving on to a line-level round",
        "no fix yet: moving on to candidates focused on the next suspect",
    ]
    requests = outcome.server.requests
    assert requests.index(line_requests(outcome)[0]) == 1 and HINT in requests[9]["messages"][-1]["content"]
    assert "the best guess is 400 tokens long: no more whole-function draws" in outcome.notices


async def test_a_round_under_way_stops_when_the_runs_time_is_up(run_fix):
    slow = {"content": WRONG, "delay": 2}  # each draw takes 2 s; six of them would take 12 s
    outcome = await run_fix("demo", [slow] * 12, maxSeconds=3, **{**SAMPLE, "samples": 6})

    assert outcome.result.status == "not_fixed"
    assert "the run's time is up: the round stops drawing and judging" in outcome.notices
    assert "time budget used up" in outcome.result.summary
    assert len(outcome.server.requests) <= 3  # not the six the round would have drawn


def rounding(step: str) -> str:
    code = (
        "def round_cents(amount: float) -> float:\n"
        '    """Round an amount of money to whole cents, halves away from zero."""\n'
        f'    return float(Decimal(str(amount)).quantize(Decimal("{step}"), rounding=ROUND_HALF_UP))\n'
    )
    return f"invoice/rounding.py\n```python\n{code}```\n"


async def test_suspects_not_yet_pointed_at_get_a_round_each_before_the_line_round(run_fix):
    wrong, other = {"content": rounding("1")}, {"content": rounding("10")}
    script = [wrong, other, wrong, other, {"content": rounding("0.01")}, *[NO_LINE] * 8, *[PROSE] * 8]
    outcome = await run_fix("helper_chain", script, maxSteps=30, **SAMPLE)

    assert outcome.result.status == "fixed", "\n".join(outcome.notices)
    assert rounds(outcome)[:2] == ["no fix yet: moving on to candidates focused on the next suspect"] * 2
    assert not any("line-level round" in said or "tool turns" in said for said in rounds(outcome))
    second, third = outcome.server.requests[2], outcome.server.requests[4]  # each later round's best guess
    pointed = [
        r["messages"][-1]["content"].split("Hint: the bug may well be in ")[-1][:40] for r in (second, third)
    ]
    assert pointed[0] != pointed[1] and all("`" in one for one in pointed), pointed  # another suspect
    # the start round's prompt as sent, cached, and one ask: not the rounds since, about other functions
    start = outcome.server.requests[0]["messages"]
    assert second["messages"][:-1] == third["messages"][:-1] == start
    tried = third["messages"][-1]["content"].split("do not repeat them:\n")[1].split("\nReply with")[0]
    assert len(tried.splitlines()) == 2 and all("round_cents" in line for line in tried.splitlines()), tried
    assert "a round on the next suspect" in str(outcome.result.to_json()["pool"][0]["origin"])
