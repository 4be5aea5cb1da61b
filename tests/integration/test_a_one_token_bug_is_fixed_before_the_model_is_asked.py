"""The mutant round: one-token changes of the suspect lines are tried before the model is asked, each
screened on the targets and judged whole by the gate; a change that hangs is cut at its screen's limit, and
a round that finds nothing hands the run on to the model's rounds, saying what it tried."""

from __future__ import annotations

from pathlib import Path

from fixloop.agent.written_checks import SYSTEM as CHECKS_SYSTEM
from fixloop.events import Notice
from support import write_project

SAMPLE = {"strategy": "sample", "editForm": "code", "samples": 2, "sampleRounds": 0, "temperature": 0}
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


def said(outcome, kind: str) -> list[str]:
    return [e.text for e in outcome.events if isinstance(e, Notice) and e.kind == kind]


async def test_a_one_token_bug_is_fixed_with_no_model_turn_and_weighed_by_written_checks(run_fix):
    # poolShare 0: the first verified fix ends the search (by default the search goes on a while)
    outcome = await run_fix("demo", [], mutants=True, poolShare=0, **SAMPLE)  # the model has nothing to say

    assert outcome.result.status == "fixed", outcome.notices
    summary = outcome.result.summary
    assert summary.startswith("passes the tests; check the logic — a one-token change found by mechanical"), (
        summary
    )
    assert "mathutils.py line 8: `+=` → `*=` (one-token change " in summary
    assert "-        result += i\n+        result *= i" in outcome.result.diff
    # no model turn found it; the one request asks for checks to weigh it (written_checks.py), and the
    # scripted model answers none, so nothing speaks for the fix
    assert [r["messages"][0]["content"] for r in outcome.server.requests] == [CHECKS_SYSTEM]
    assert said(outcome, "mutants")[0].startswith("trying ")


async def test_with_mutants_off_the_model_is_asked_first(run_fix):
    fixed = "mathutils.py\n```python\ndef factorial(n: int) -> int:\n    result = 1\n"
    fixed += "    for i in range(2, n + 1):\n        result *= i\n    return result\n```\n"
    outcome = await run_fix("demo", [{"content": fixed}], mutants=False, **SAMPLE)

    assert outcome.result.status == "fixed"
    assert not said(outcome, "mutants")
    assert len(outcome.server.requests) == 1


async def test_changes_that_hang_are_cut_and_a_fruitless_round_hands_on_to_the_model(run_fix, tmp_path: Path):
    # `i += 1` -> `i -= 1` (and `*=`, `+= 0`) loops for ever; the bug (a wrong word) is no one-token
    # change, so the round ends, and the model's start round comes next.
    root = write_project(
        tmp_path / "counting",
        {
            "pyproject.toml": PYPROJECT,
            "counting.py": (
                "def count_up(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n\n\n"
                'def describe(n):\n    return f"{count_up(n)} steps"\n'
            ),
            "tests/test_counting.py": (
                "from counting import count_up, describe\n\n\ndef test_describe():\n"
                '    assert describe(3) == "3 step(s)"\n\n\ndef test_count():\n    assert count_up(2) == 2\n'
            ),
        },
    )
    fixed = 'counting.py\n```python\ndef describe(n):\n    return f"{count_up(n)} step(s)"\n```\n'
    outcome = await run_fix(
        root, [{"content": fixed}], test_ids=["tests/test_counting.py::test_describe"], mutants=True, **SAMPLE
    )

    assert outcome.result.status == "fixed", outcome.notices
    assert "one-token change" not in outcome.result.summary
    last = said(outcome, "mutants")[-1]
    assert last.startswith("one-token changes: ") and last.endswith(", 0 verified"), last
    assert len(outcome.server.requests) == 1  # the model's best guess, after the round
