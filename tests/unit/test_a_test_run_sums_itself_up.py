"""A TestRun answers which tests passed and failed, and sums itself up in one line."""

from __future__ import annotations

from fixloop.pytest_runner import Frame, TestOutcome, TestRun


def make_run(**kwargs: object) -> TestRun:
    results = {
        "t.py::a": TestOutcome("t.py::a", "passed"),
        "t.py::b": TestOutcome("t.py::b", "failed", "AssertionError: assert 1 == 2", "t.py:5"),
        "t.py::c": TestOutcome("t.py::c", "error", "RuntimeError: boom", when="setup"),
        "t.py::d": TestOutcome("t.py::d", "skipped", "Skipped: later"),
        "t.py::e": TestOutcome("t.py::e", "xfailed", "known"),
        "t.py::f": TestOutcome("t.py::f", "xpassed"),
    }
    fields: dict[str, object] = {"exit_code": 1, "timed_out": False, "duration": 1.5, "output": ""}
    fields.update(kwargs)
    return TestRun(results=results, **fields)  # type: ignore[arg-type]


def test_passed_and_failed_ids_keep_the_run_order() -> None:
    run = make_run()
    assert run.passed_ids() == ["t.py::a"]
    assert run.failed_ids() == ["t.py::b", "t.py::c"]
    assert run.outcome("t.py::c") == run.results["t.py::c"]
    assert run.outcome("t.py::zzz") is None
    assert run.results["t.py::b"].failing and not run.results["t.py::e"].failing


def test_summary_counts_outcomes_errors_and_timeouts() -> None:
    assert make_run().summary() == "1 failed, 1 error, 1 passed, 1 skipped, 1 xfailed, 1 xpassed in 1.50s"
    hung = make_run(timed_out=True, hung_test="t.py::g", errors=("t.py: ImportError: x",))
    assert hung.summary().endswith("1 collection error in 1.50s (timed out in t.py::g)")
    empty = TestRun(results={}, exit_code=5, timed_out=False, duration=0.25, output="")
    assert empty.summary() == "no tests ran in 0.25s"


def test_frame_in_finds_the_innermost_frame_of_a_file() -> None:
    frames = (Frame("tests/t.py", 9, "test_x"), Frame("src/m.py", 3, "f"), Frame("tests/t.py", 20, "helper"))
    outcome = TestOutcome("tests/t.py::test_x", "failed", frames=frames)
    assert outcome.frame_in("tests/t.py") == Frame("tests/t.py", 20, "helper")
    assert outcome.frame_in("src/m.py") == Frame("src/m.py", 3, "f")
    assert outcome.frame_in("other.py") is None
