"""The warm start shows the failing call under each failure: the lead case in full, the other parametrized
cases failing the same way with their own values; it hands the failing calls on as data (for prompts that
show a failure later), and shows none of it with the failingInputs setting off."""

from __future__ import annotations

from pathlib import Path

from fixloop.agent.warm_start import gather_warm_start
from fixloop.pytest_runner import PytestRunner
from support import project_python

FILES = {
    "conftest.py": "",
    "grading.py": "def passed(score):\n    return score > 50\n",
    "tests/test_grading.py": (
        "import pytest\n\nfrom grading import passed\n\n\n"
        '@pytest.mark.parametrize("score, expected", [(50, True), (51, True), (49, False), (50.0, True)])\n'
        "def test_passed(score, expected):\n    assert passed(score) == expected\n"
    ),
}
MODULE = "tests/test_grading.py"


async def test_each_failing_case_shows_its_values_and_they_travel_as_data(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    runner = PytestRunner(tmp_path, (project_python(), "-m", "pytest"), 30)
    run = await runner.run([MODULE])

    warm = gather_warm_start(tmp_path, run, [MODULE])
    text = warm.text
    assert "The failing call:\n  called with: score=50, expected=True\n" in text
    assert "failing line (tests/test_grading.py:8): assert passed(score) == expected" in text
    assert "  actual: passed(score) = False\n  expected: expected = True" in text
    assert f"And {MODULE}::test_passed[50.0-True]:\n  called with: score=50.0, expected=True" in text
    assert text.count("failing line (") == 1  # the same line for every case: said once
    assert warm.failing_calls == (
        f"{MODULE}::test_passed[50-True]:\n    called with: score=50, expected=True\n"
        "    failing line (tests/test_grading.py:8): assert passed(score) == expected\n"
        "    actual: passed(score) = False\n    expected: expected = True",
        f"{MODULE}::test_passed[50.0-True]:\n    called with: score=50.0, expected=True\n"
        "    failing line (tests/test_grading.py:8): assert passed(score) == expected\n"
        "    actual: passed(score) = False\n    expected: expected = True",
    )

    off = gather_warm_start(tmp_path, run, [MODULE], failing_inputs=False)
    assert "called with" not in off.text and off.failing_calls == ()
    assert "Expected vs actual (pytest)" in off.text
