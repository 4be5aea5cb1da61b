"""Naturalness: each changed line's prompt ends where the old and new line part; a fix scores the tokens by
which its line comes nearer to what the model writes on from there; a change that is not line for line is
not scored, and an endpoint that fails leaves every fix unscored, never some."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from fixloop.agent.fix_pool import PooledFix
from fixloop.agent.naturalness import changed_lines, naturalness_score, toward, weigh
from fixloop.agent.prompt_parts import prompt_parts, sizes_by_origin
from fixloop.agent.ranking import rank, speaks_for
from fixloop.errors import ModelError
from fixloop.model.replies import COMPLETION_ROLE, text_completion_reply
from fixloop.result import FileChange

LEAP = "def is_leap(year: int) -> bool:\n    return year % 4 == 0 and (year % 100 != 0 and year % 400 == 0)\n"
OUTER = LEAP.replace("0 and (", "0 or (")
INNER = LEAP.replace("0 and year", "0 or year")


def fix(new: str, old: str = LEAP, round: str = "mutants") -> PooledFix:
    return PooledFix((FileChange("billing/calendar.py", old, new),), round, "s")


def test_the_prompt_ends_where_the_lines_part_at_a_token_start():
    outer, inner = changed_lines(fix(OUTER))[0], changed_lines(fix(INNER))[0]

    assert outer.prompt == "# billing/calendar.py\ndef is_leap(year: int) -> bool:\n    return year % 4 == 0"
    assert (outer.old, outer.new) == (
        " and (year % 100 != 0 and year % 400 == 0)",
        " or (year % 100 != 0 and year % 400 == 0)",
    )
    assert inner.start.endswith("(year % 100 != 0") and inner.new == " or year % 400 == 0)"
    cut = changed_lines(fix(LEAP.replace("== 0)", "!= 0)")))[0]
    assert cut.start.endswith("year % 400") and (cut.old, cut.new) == (" == 0)", " != 0)")
    first = changed_lines(fix(LEAP.replace("    return year", "    yield year")))[0]
    assert first.start == "" and first.prompt.endswith("-> bool:\n")  # parted in the first token


def test_a_fix_scores_the_tokens_it_comes_nearer_to_the_line_the_model_writes():
    written = " or year % 400 == 0)"
    assert toward(changed_lines(fix(INNER))[0], written) == 1
    assert toward(changed_lines(fix(LEAP.replace("== 0)", "!= 0)")))[0], " == 0)") == -1
    assert toward(changed_lines(fix(OUTER))[0], " and (year % 100 != 0 or year % 400 == 0)") == -1
    fits = "def fits(a: int, width: int) -> bool:\n    return a < width\n"
    wider = fix(fits.replace("<", "<="), fits)  # one token more than the old line: half a token farther
    wider.evidence["naturalness"] = {"score": toward(changed_lines(wider)[0], " > width"), "lines": []}
    assert wider.evidence["naturalness"]["score"] == -0.5 and naturalness_score(wider) == 0


def test_only_a_change_line_for_line_of_a_few_lines_is_scored():
    assert changed_lines(fix(LEAP + "\n\nX = 1\n")) is None  # a line added
    many = "".join(f"x{n} = {n}\n" for n in range(6))
    assert changed_lines(fix(many.replace("= ", "= -"), many)) is None  # six lines changed
    assert changed_lines(fix(LEAP)) is None  # nothing changed


def test_one_completion_per_distinct_prompt_and_all_or_none_unscored():
    asked: list[str] = []

    async def complete(prompt: str) -> str:
        asked.append(prompt)
        return (
            " or year % 400 == 0)" if prompt.endswith("!= 0") else " and (year % 100 != 0 or year % 400 == 0)"
        )

    fixes = [fix(OUTER), fix(INNER), fix(LEAP.replace("0 and year", "0 or  year"))]
    asyncio.run(weigh(fixes, complete, 10))
    assert [naturalness_score(f) for f in fixes] == [-1, 1, 1]
    assert len(asked) == 2  # the third fix's line (another spacing) has the second's prompt

    async def failing(prompt: str) -> str:
        if prompt.endswith("!= 0"):
            raise ModelError("no text completion from http://x/v1: 404")
        return " and"

    asyncio.run(weigh(fixes, failing, 10))
    assert all(
        f.evidence["naturalness"] == "not scored: no text completion from http://x/v1: 404" for f in fixes
    )


def test_naturalness_ranks_before_the_model_fix_rule_and_speaks_for_a_mechanical_fix():
    async def complete(prompt: str) -> str:
        return (
            " or year % 400 == 0)" if prompt.endswith("!= 0") else " and (year % 100 != 0 or year % 400 == 0)"
        )

    model_fix, mechanical = fix(OUTER, round="start"), fix(INNER)
    ranking = asyncio.run(rank([model_fix, mechanical], None, "failed", 60, None, complete))

    assert ranking.fixes[0] is mechanical and speaks_for(mechanical) and not speaks_for(model_fix)
    assert (
        "nearer to the line the model writes (`return year % 4 == 0 and (year % 100 != 0 or" in ranking.said
    )


def test_naturalness_ranks_before_a_written_check_the_right_rule_breaks():
    """Live (billing_dates): the model's check `is_leap(0) == False`, which the code before passed, broke the
    right rule; the line the model writes itself is the right rule."""

    async def complete(prompt: str) -> str:
        return (
            " or year % 400 == 0)" if prompt.endswith("!= 0") else " and (year % 100 != 0 or year % 400 == 0)"
        )

    right, wrong = fix(INNER), fix(LEAP.replace("== 0)", "!= 0)"))
    checks = {"written": 5, "kept_before": 2, "telling_apart": 2, "passed": 1, "failed": [], "mended": []}
    right.evidence["written_checks"] = {**checks, "broke": ["test_edge_case_2"]}
    wrong.evidence["written_checks"] = {**checks, "broke": []}
    ranking = asyncio.run(rank([wrong, right], None, "failed", 60, None, complete))

    assert ranking.fixes[0] is right
    assert not speaks_for(right)  # a broken check still keeps it from being called proven


def test_a_text_completion_is_read_as_a_reply_with_the_servers_counts():
    response = SimpleNamespace(
        choices=[SimpleNamespace(text=" *= i", finish_reason="stop")],
        usage=SimpleNamespace(prompt_tokens=120, completion_tokens=3, prompt_tokens_details=None),
        timings={"prompt_n": 20, "cache_n": 100},  # llama-server's, beside the usage
    )
    reply = text_completion_reply(response)
    assert (reply.content, reply.finish_reason) == (" *= i", "stop")
    assert (reply.prompt_tokens, reply.completion_tokens) == (120, 3)
    assert (reply.prompt_processed, reply.prompt_cached) == (20, 100)
    empty = text_completion_reply(SimpleNamespace(choices=[], usage=None))
    assert (empty.content, empty.prompt_tokens, empty.prompt_processed) == ("", 0, None)


def test_a_text_completion_prompt_counts_as_line_completion_text():
    parts = prompt_parts([{"role": COMPLETION_ROLE, "content": "# calc.py\nx = 1\n" * 10}], None)
    assert [(part.role, part.origin) for part in parts] == [(COMPLETION_ROLE, "line_completion")]
    assert sizes_by_origin(parts)["line_completion"] == parts[0].tokens > 0
