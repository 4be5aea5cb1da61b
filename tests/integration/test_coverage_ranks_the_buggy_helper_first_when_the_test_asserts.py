"""Localize by evidence: when the traceback ends in the test, the functions only the failing test runs rank
first (coverage per test, Ochiai over functions), and the warm start leads with them."""

from __future__ import annotations

from pathlib import Path

from fixloop.agent.localize import ends_in_test, find_suspects
from fixloop.agent.warm_start import build_warm_start
from fixloop.pytest_runner import PytestRunner
from fixloop.verify import record_baseline
from support import copy_project, project_python

TARGET = "tests/test_receipt.py::test_a_discount_takes_its_percentage_off"


async def test_the_helper_only_the_failing_test_runs_is_the_first_suspect(tmp_path: Path) -> None:
    root = copy_project("discount_helper", tmp_path / "discount_helper")
    runner = PytestRunner(root, (project_python(), "-m", "pytest"), 30, scratch=tmp_path / "scratch")
    baseline = await record_baseline(runner, [TARGET])
    assert ends_in_test(baseline.run.outcome(TARGET))  # an assertion: the traceback names no helper

    suspects, run = await find_suspects(runner, root, [TARGET])

    assert run.outcome(TARGET).failing and len(run.passed_ids()) == 3
    first = suspects[0]
    assert (first.path, first.name, first.failed, first.passed) == ("receipts/pricing.py", "discounted", 1, 0)
    assert first.score == 1.0 and all(other.score < 1.0 for other in suspects[1:])
    assert "render" in [suspect.name for suspect in suspects]  # what the test calls ranks lower
    text = build_warm_start(root, baseline.run, [TARGET], suspects=suspects)
    code = text[: text.index("# The failing test")]
    assert code.index(
        "### receipts/pricing.py (lines 8-10) discounted, suspect 1 by coverage (only the "
        "failing tests run it, score 1.00)"
    ) < code.index("render")


async def test_a_run_with_coverage_leaves_the_outcomes_as_they_are(tmp_path: Path) -> None:
    root = copy_project("discount_helper", tmp_path / "discount_helper")
    runner = PytestRunner(root, (project_python(), "-m", "pytest"), 30)
    plain = await runner.run(["tests/test_receipt.py"])
    _suspects, covered = await find_suspects(runner, root, [TARGET])
    outcomes = [{test_id: o.outcome for test_id, o in run.results.items()} for run in (plain, covered)]
    assert outcomes[0] == outcomes[1]
