"""The pool of verified fixes and its ranking: distinct fixes only, settled by count or by the time after
the first the model wrote (a one-token change waits for evidence); ranked by the model's judgment
(logprobs, else text, asked in both orders), then a fix the model wrote above a mechanical one-token
change, then the smaller change; the summary says where a fix came from and claims no more for a
mechanical fix than the tests show."""

from __future__ import annotations

import time

import pytest

from fixloop.agent.fix_pool import FixPool, KeepSearching, PooledFix
from fixloop.agent.ranking import judgment_prompt, rank
from fixloop.agent.search import PLAIN, proposal_summary
from fixloop.result import FileChange, FixResult
from leap_years import INNER, LEAP, OUTER, REWRITE


def fix(new: str, round: str = "mutants") -> PooledFix:
    return PooledFix((FileChange("dates.py", LEAP, new),), round, f"dates.py ({round})")


def test_the_pool_keeps_distinct_fixes_and_settles_by_count_or_by_time():
    pool = FixPool(KeepSearching(most=3, share=0.5))
    deadline = time.monotonic() + 100

    assert pool.add(fix(OUTER).changes, "mutants", "outer", deadline)
    assert pool.until is None and not pool.settled()  # a one-token change leaves the clock to the evidence
    assert not pool.add(fix(OUTER).changes, "start", "the same text again", deadline)
    assert pool.add(fix(INNER).changes, "start", "inner", deadline)  # the model's: the clock starts
    assert pool.until is not None and 40 < pool.until - time.monotonic() <= 50  # half of what was left
    assert not pool.settled() and pool.wanted() == 1
    assert pool.add(fix(REWRITE).changes, "lines", "rewrite", deadline)
    assert pool.settled() and pool.wanted() == 0

    full = FixPool(KeepSearching(most=1, share=0.5))
    full.add(fix(OUTER).changes, "mutants", "outer", deadline)
    assert full.until is None and full.settled()  # enough fixes settle it, whoever found them

    at_once = FixPool(KeepSearching(most=3, share=0.0))
    at_once.add(fix(OUTER).changes, "mutants", "outer", deadline)
    assert at_once.settled()  # share 0: the first verified fix ends the search


def test_a_fix_that_differs_only_in_comments_and_blank_lines_is_the_same_fix():
    pool = FixPool()
    deadline = time.monotonic() + 100
    assert pool.add(fix(OUTER).changes, "mutants", "outer", deadline)
    commented = OUTER.replace("== 0)\n", "== 0)  # fixed: either rule  \n\n# done\n")
    assert commented != OUTER and not pool.add(fix(commented, "start").changes, "start", "same", deadline)
    hashed = OUTER.replace("every 400th", "every 400th, # not a comment")  # inside the docstring: code
    assert pool.add(fix(hashed, "start").changes, "start", "a docstring differs", deadline)
    assert len(pool) == 2


def test_a_round_of_one_token_changes_stops_at_its_own_share_or_the_pools_end():
    pool = FixPool(KeepSearching(most=3, share=0.5))
    cutoff = pool.round_cutoff(time.monotonic() + 100)
    until = cutoff()  # asked at the round's first win
    assert 40 < until - time.monotonic() <= 50 and pool.until is None
    pool.add(fix(OUTER).changes, "mutants", "outer", time.monotonic() + 500)
    assert cutoff() == until and pool.until is None  # the mechanical fix leaves the pool's clock alone
    pool.add(fix(INNER).changes, "start", "inner", time.monotonic() + 20)
    assert pool.until is not None and cutoff() == pool.until < until  # the pool's end, when sooner


async def test_with_no_evidence_a_model_fix_ranks_above_a_mechanical_one_and_smaller_above_larger():
    mechanical, rewrite, inner = fix(OUTER), fix(REWRITE, "start"), fix(INNER, "lines")

    ranking = await rank([mechanical, rewrite, inner], None, "", seconds=0)

    assert [f.summary for f in ranking.fixes] == [inner.summary, rewrite.summary, mechanical.summary]
    assert all("naturalness" in f.evidence for f in ranking.fixes)  # recorded, even as not scored
    assert "not judged" in ranking.said


async def test_the_judgment_is_read_from_logprobs_in_both_orders():
    seen: list[str] = []

    async def choose(messages):
        text = messages[-1]["content"]
        seen.append(text)
        first_is_inner = text.index("!= 0 or year") < text.index("== 0 or (year")
        inner, outer = ("1", "2") if first_is_inner else ("2", "1")
        return "?", {inner: -0.1, outer: -2.5}

    outer, inner = fix(OUTER), fix(INNER)
    ranking = await rank([outer, inner], choose, "test_1900 failed: assert is_leap(1900) is False", 60)

    assert [f.summary for f in ranking.fixes] == [inner.summary, outer.summary]
    assert len(seen) == 2 and "test_1900" in seen[0] and "def is_leap(year):" in seen[0]
    assert inner.evidence["judgment"]["from"] == "logprobs" and inner.evidence["judgment"]["score"] > 0.85


async def test_a_judge_that_always_says_one_speaks_for_no_version():
    async def choose(messages):
        return "1", {}

    mechanical, model = fix(INNER), fix(OUTER, "start")
    ranking = await rank([mechanical, model], choose, "", 60)

    assert mechanical.evidence["judgment"] == {"score": 0.5, "from": "text"}
    assert ranking.fixes[0] is model  # a tie: the model's fix first

    three = [fix(OUTER), fix(INNER), fix(REWRITE)]
    await rank(three, choose, "", 60)
    assert [f.evidence["judgment"]["score"] for f in three] == [0.333] * 3  # the middle one too


async def test_a_judge_that_chooses_the_same_version_wherever_it_is_shown_speaks_for_it():
    async def choose(messages):
        text = messages[-1]["content"]
        place = [text.index(f"Version {n}:") for n in (1, 2, 3)]
        inner_at = text.index("!= 0 or year")
        return str(sum(1 for at in place if at < inner_at)), {}

    three = [fix(OUTER), fix(INNER), fix(REWRITE)]
    ranking = await rank(three, choose, "", 60)

    assert ranking.fixes[0] is three[1]
    assert three[1].evidence["judgment"]["score"] > 0.5 > three[0].evidence["judgment"]["score"]


async def test_a_judge_that_fails_leaves_the_ranking_to_the_rest():
    from fixloop.errors import ModelError

    async def choose(messages):
        raise ModelError("the model at http://127.0.0.1:1/v1 is not answering")

    ranking = await rank([fix(OUTER), fix(INNER, "start")], choose, "", 60)

    assert ranking.fixes[0].round == "start"
    assert ranking.fixes[0].evidence["judgment"].startswith("not judged: the model at")


def test_the_judgment_prompt_is_short_and_shows_the_function_once_and_each_diff():
    messages = judgment_prompt([fix(OUTER), fix(INNER)], "tests/test_dates.py::test_1900 failed")
    text = messages[-1]["content"]

    assert text.count("def is_leap(year):") == 1
    assert "Version 1:" in text and "Version 2:" in text and "---" not in text
    assert len(text) < 1500


@pytest.mark.parametrize(
    ("round", "judged", "head"),
    [
        ("mutants", None, PLAIN),
        ("mutants", {"score": 0.8, "from": "logprobs"}, "verified fix"),
        ("mutants", {"score": 0.3, "from": "logprobs"}, PLAIN),
    ],
)
def test_a_mechanical_fix_is_claimed_only_as_far_as_the_evidence_goes(round, judged, head):
    pooled = fix(INNER, round)
    if judged:
        pooled.evidence["judgment"] = judged

    summary = proposal_summary(pooled, 3)

    assert summary.startswith(f"{head} — a one-token change found by mechanical search, no model: ")
    assert summary.endswith("(2 other verified fix(es) in the pool)")


def test_a_model_fix_says_which_round_found_it():
    summary = proposal_summary(fix(INNER, "lines"), 1)

    assert summary == "dates.py (lines) — from the model's line-level round"


def test_the_result_json_carries_the_pool():
    entry = {**fix(INNER, "start").to_json()}
    result = FixResult("r1", "fixed", ("t",), pool=(entry,))

    pool = result.to_json()["pool"]

    assert pool[0]["origin"] == "the model's candidates (first round)" and pool[0]["mechanical"] is False
    assert pool[0]["diff"].startswith("--- a/dates.py") and pool[0]["lines"] == 2
