"""The pure parts of a sampling round: what each draw is shown (agent/draws.py), the ask after a copy back,
which candidate is a copy back, the round's figures, and the bench's distinct-per-round figure."""

from __future__ import annotations

from fixloop.agent.candidates import Candidate
from fixloop.agent.draws import DrawVariety, plan_draw, reask_messages, unchanged_ask
from fixloop.agent.round_result import RoundResult
from fixloop.bench.store import RunRecord
from fixloop.bench.table import distinct_per_round
from fixloop.pytest_runner.failing_inputs import Comparison, FailingInputs
from fixloop.result import FileChange

PROMPT = [{"role": "system", "content": "s"}, {"role": "user", "content": "fix it"}]
ONE = FailingInputs(
    params=(("score", "90"),), line="assert grade(score) == 'A'", compare=Comparison("==", "'B'", "'A'")
)
TWO = FailingInputs(params=(("score", "100"),), line="assert grade(score) == 'A'")
FOCUS = ("`grade` in school.py", "`report` in card.py")
TRIED = ["- school.py: replaced grade (`>` -> `>=`): still failing"]


def test_the_best_guess_is_drawn_from_the_prompt_as_it_is() -> None:
    draw = plan_draw(PROMPT, 1, FOCUS, DrawVariety(inputs=(ONE, TWO)), TRIED)
    assert draw.messages == PROMPT and draw.inputs is None


def test_sampled_draws_differ_in_suspect_and_failing_call_and_show_what_was_tried() -> None:
    variety = DrawVariety(inputs=(ONE, TWO))
    second, third = (plan_draw(PROMPT, n, FOCUS, variety, TRIED) for n in (2, 3))
    assert second.messages[:-1] == PROMPT[:-1] == third.messages[:-1]
    two, three = second.messages[-1]["content"], third.messages[-1]["content"]
    assert two != three and two.startswith("fix it\n\n") and three.startswith("fix it\n\n")
    assert "`report` in card.py" in two and "`grade` in school.py" in three
    assert "called with: score=100" in two and "called with: score=90" in three
    assert (second.inputs, third.inputs) == (TWO, ONE)
    assert TRIED[0] in two and "Tried and failed" in three
    assert PROMPT[-1]["content"] == "fix it"  # the round's prompt is not changed


def test_one_failing_call_or_variety_off_adds_no_call_and_a_tried_line_the_prompt_holds_is_not_repeated():
    lone = plan_draw(PROMPT, 2, (), DrawVariety(inputs=(ONE,)), TRIED)
    assert "called with" not in lone.messages[-1]["content"] and TRIED[0] in lone.messages[-1]["content"]
    off = plan_draw(PROMPT, 2, FOCUS, DrawVariety(on=False, inputs=(ONE, TWO)), TRIED)
    assert (
        off.messages[-1]["content"]
        == "fix it\n\nHint: the bug may well be in `report` in card.py; check it first."
    )
    held = [*PROMPT[:-1], {"role": "user", "content": "fix it\n" + TRIED[0]}]
    assert plan_draw(held, 2, (), DrawVariety(), TRIED).messages == held


def test_a_copy_back_is_told_what_its_code_produces_and_what_is_expected() -> None:
    ask = unchanged_ask(ONE)
    assert "called with: score=90" in ask and "actual: 'B'" in ask
    assert "This code produces 'B' for that input; the expected value is 'A'; change it." in ask
    assert "changes nothing" in unchanged_ask(None) and "produces" not in unchanged_ask(None)
    no_compare = unchanged_ask(TWO)
    assert "called with: score=100" in no_compare and "This code fails for that input" in no_compare
    plan = plan_draw(PROMPT, 1, (), DrawVariety())
    messages = reask_messages(plan, "```python\ncode\n```\n", ONE)
    assert messages[:2] == PROMPT and messages[2] == {"role": "assistant", "content": "```python\ncode\n```"}
    assert messages[3]["role"] == "user" and messages[3]["content"] == ask


def test_a_copy_back_is_told_the_bug_may_be_in_another_function_than_the_one_it_copied() -> None:
    reply = "card.py\n```python\ndef grade(score):\n    return 'B'\n\n\nasync def report(x):\n    pass\n```"
    messages = reask_messages(plan_draw(PROMPT, 1, (), DrawVariety()), reply, ONE)

    said = messages[-1]["content"]
    assert (
        "If the bug is not in `grade`, `report`, it is in another function shown above: fix that one." in said
    )
    assert "This code produces 'B' for that input" in said
    assert "another function" not in unchanged_ask(ONE)  # no function named: no such sentence


def test_a_copy_back_is_told_apart_from_a_reply_that_could_not_be_used() -> None:
    assert Candidate(1, "r", problem="the code block changes nothing in school.py").unchanged
    assert Candidate(
        1, "r", problem="block 1 changes nothing in a.py; block 2 changes nothing in b.py"
    ).unchanged
    assert Candidate(1, "r", problem="the reply changes nothing").unchanged
    assert not Candidate(
        1, "r", problem="the code block is not valid Python (line 1: unexpected indent)"
    ).unchanged
    assert not Candidate(
        1, "r", problem="block 1 changes nothing in a.py; block 2 is not valid Python"
    ).unchanged
    assert not Candidate(1, "r", problem="no corrected code in the reply").unchanged
    changed = Candidate(
        1, "r", (FileChange("a.py", "x = 1\n", "x = 2\n"),), problem="changes nothing in b.py"
    )
    assert not changed.unchanged


def test_the_round_figures_count_each_fate_and_the_distinct_change_sets() -> None:
    fix = (FileChange("a.py", "x = 1\n", "x = 2\n"),)
    other = (FileChange("a.py", "x = 1\n", "x = 3\n"),)
    result = RoundResult(
        candidates=[
            Candidate(1, "r", problem="the reply changes nothing"),
            Candidate(1, "r", fix),
            Candidate(2, "r", fix),
            Candidate(3, "r", other),
            Candidate(4, "r", problem="no corrected code in the reply"),
        ],
        fates=["unchanged", "judged", "duplicates", "tried before", "invalid"],
        asked_again=1,
    )
    figures = result.figures
    assert (figures.drawn, figures.asked_again, figures.distinct) == (5, 1, 2)
    assert figures.describe() == (
        "5 candidate(s) drawn (1 asked again), 2 distinct: "
        "unchanged 1, duplicates 1, tried before 1, invalid 1, judged 1"
    )
    assert result.first is not None and result.first.changes == fix  # the best guess's re-ask


def test_the_bench_figure_is_the_mean_distinct_and_drawn_per_round() -> None:
    runs = [
        RunRecord("demo", "sample", 1, "m", "fixed", distinct=(3, 2), drawn=(6, 6)),
        RunRecord("demo", "sample", 2, "m", "fixed", distinct=(1,), drawn=(1,)),
    ]
    assert distinct_per_round(runs) == "2/4.3"
    assert distinct_per_round([RunRecord("demo", "react", 1, "m", "fixed")]) == "-"


def test_a_batch_of_candidates_is_capped_near_the_best_guess_length() -> None:
    from fixloop.agent.asking import reply_cap as _batch_cap
    from fixloop.model.replies import ModelReply

    def guess(tokens: int) -> ModelReply:
        return ModelReply("code", (), "stop", None, 100, tokens)

    assert _batch_cap(guess(32)) == 160  # a three-line property: one rewritten file must not hold up the rest
    assert _batch_cap(guess(120)) == 360 and _batch_cap(guess(600)) == 900  # a long function: 300 more
    assert _batch_cap(guess(0)) is None and _batch_cap(None) is None


def test_like_follow_ups_are_grouped_up_to_a_requests_n_and_different_ones_apart() -> None:
    from fixloop.agent.asking import FollowUp, grouped
    from fixloop.agent.draws import Draw
    from fixloop.model.replies import ModelReply
    from fixloop.model.request_options import Sampling

    copy = ModelReply("code", (), "stop", None, 100, 30)

    def ask(number: int, reply: str, temperature: float = 0.8) -> FollowUp:
        messages = reask_messages(plan_draw(PROMPT, 2, (), DrawVariety()), reply, ONE)
        return FollowUp(Draw(number, messages, ONE), Sampling(temperature, 50 + number), copy)

    asks = [ask(2, "same"), ask(3, "other"), ask(4, "same"), ask(5, "same"), ask(6, "same", temperature=0)]
    numbers = [[one.draw.number for one in group] for group in grouped(asks, 8)]
    assert numbers == [[2, 4, 5], [3], [6]]  # in order of each group's first draw
    assert [[one.draw.number for one in group] for group in grouped(asks, 2)] == [[2, 4], [5], [3], [6]]
    assert all(len(group) == 1 for group in grouped(asks, 1))


def test_copies_alike_but_for_their_fences_are_shown_alike_in_their_follow_up() -> None:
    from fixloop.agent.asking import copy_shown

    code = "    @property\n    def total(self):\n        return 1\n"
    plain = f"shipping/quote.py\n```python\n{code}```"
    fenced_twice = f"```python\nshipping/quote.py\n```python\n{code}```\n"
    assert copy_shown(fenced_twice) == copy_shown(plain)
    assert copy_shown(plain) == "shipping/quote.py\n```python\n@property\ndef total(self):\n    return 1\n```"
    assert copy_shown("no code here") == "no code here"
    assert copy_shown("```python\nx = 1\n```") == "```python\nx = 1\n```"  # no path: the reply as it is
