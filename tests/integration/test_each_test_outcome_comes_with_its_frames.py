"""The pytest runner reports each test's outcome, message, traceback and project frames from a real run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fixloop.pytest_runner import Frame, PytestRunner, TestRun
from support import write_project

CALC = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        pythonpath = ["src"]
    """,
    "src/calc/__init__.py": """
        from calc.ops import add, div, parse
    """,
    "src/calc/ops.py": """
        import json


        def add(a, b):
            return a - b


        def div(a, b):
            return a / b


        def parse(text):
            return json.loads(text)
    """,
    "tests/test_calc.py": """
        import pytest

        from calc import add, div, parse


        def test_add():
            assert add(1, 2) == 3


        def test_div():
            assert div(1, 0) == 0


        def test_parse():
            assert parse("{nope") == {}


        def test_ok():
            assert add(2, 0) == 2


        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass


        @pytest.mark.xfail(reason="known bug")
        def test_xfail():
            assert add(1, 1) == 2


        @pytest.mark.xfail(reason="was a bug")
        def test_xpass():
            assert add(1, 0) == 1


        @pytest.fixture
        def broken():
            raise RuntimeError("fixture broke")


        def test_uses_broken(broken):
            pass


        @pytest.mark.parametrize("a, b, total", [(1, 2, 3), (0, 0, 0)])
        def test_param(a, b, total):
            assert add(a, b) == total


        class TestMore:
            def test_method(self):
                assert add(5, 5) == 10, "ten expected"
    """,
}


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return write_project(tmp_path, CALC)


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory) -> TestRun:
    root = write_project(tmp_path_factory.mktemp("calc"), CALC)
    return asyncio.run(PytestRunner(root, timeout=120).run())


async def test_every_outcome_is_reported_under_its_node_id(whole_run: TestRun) -> None:
    outcomes = {tid: res.outcome for tid, res in whole_run.results.items()}
    assert outcomes == {
        "tests/test_calc.py::test_add": "failed",
        "tests/test_calc.py::test_div": "failed",
        "tests/test_calc.py::test_parse": "failed",
        "tests/test_calc.py::test_ok": "passed",
        "tests/test_calc.py::test_skipped": "skipped",
        "tests/test_calc.py::test_xfail": "xfailed",
        "tests/test_calc.py::test_xpass": "xpassed",
        "tests/test_calc.py::test_uses_broken": "error",
        "tests/test_calc.py::test_param[1-2-3]": "failed",
        "tests/test_calc.py::test_param[0-0-0]": "passed",
        "tests/test_calc.py::TestMore::test_method": "failed",
    }
    assert whole_run.exit_code == 1
    assert not whole_run.timed_out
    assert whole_run.hung_test is None
    assert whole_run.errors == ()
    assert set(whole_run.failed_ids()) == {
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_div",
        "tests/test_calc.py::test_parse",
        "tests/test_calc.py::test_uses_broken",
        "tests/test_calc.py::test_param[1-2-3]",
        "tests/test_calc.py::TestMore::test_method",
    }
    assert set(whole_run.passed_ids()) == {
        "tests/test_calc.py::test_ok",
        "tests/test_calc.py::test_param[0-0-0]",
    }


async def test_assertion_message_carries_expected_and_actual(whole_run: TestRun) -> None:
    add = whole_run.outcome("tests/test_calc.py::test_add")
    assert add is not None
    assert add.message == "AssertionError: assert -1 == 3"
    assert add.location == "tests/test_calc.py:7"
    assert add.frames == (Frame("tests/test_calc.py", 7, "test_add"),)
    assert "where -1 = add(1, 2)" in add.traceback
    assert add.when == "call"


async def test_custom_assertion_message_keeps_the_comparison(whole_run: TestRun) -> None:
    method = whole_run.outcome("tests/test_calc.py::TestMore::test_method")
    assert method is not None
    assert method.message == "AssertionError: ten expected (assert 0 == 10)"


async def test_exception_in_project_code_has_project_frames_outermost_first(whole_run: TestRun) -> None:
    div = whole_run.outcome("tests/test_calc.py::test_div")
    assert div is not None
    assert div.message == "ZeroDivisionError: division by zero"
    assert div.frames == (Frame("tests/test_calc.py", 11, "test_div"), Frame("src/calc/ops.py", 9, "div"))
    assert div.location == "src/calc/ops.py:9"
    assert div.frame_in("tests/test_calc.py") == Frame("tests/test_calc.py", 11, "test_div")
    assert "src/calc/ops.py:9: in div" in div.traceback


async def test_frames_in_the_standard_library_are_left_out(whole_run: TestRun) -> None:
    parse = whole_run.outcome("tests/test_calc.py::test_parse")
    assert parse is not None
    assert parse.message.startswith("json.decoder.JSONDecodeError: Expecting property name")
    assert [f.path for f in parse.frames] == ["tests/test_calc.py", "src/calc/ops.py"]
    assert parse.location == "src/calc/ops.py:13"


async def test_fixture_error_is_a_setup_error_with_the_fixture_frame(whole_run: TestRun) -> None:
    broken = whole_run.outcome("tests/test_calc.py::test_uses_broken")
    assert broken is not None
    assert broken.when == "setup"
    assert broken.message == "RuntimeError: fixture broke"
    assert broken.frames[-1].function == "broken"


async def test_skip_and_xfail_reasons_are_the_message(whole_run: TestRun) -> None:
    skipped = whole_run.outcome("tests/test_calc.py::test_skipped")
    xfail = whole_run.outcome("tests/test_calc.py::test_xfail")
    assert skipped is not None and "not today" in skipped.message
    assert xfail is not None and xfail.message == "known bug"
    assert whole_run.summary().startswith("5 failed, 1 error, 2 passed, 1 skipped, 1 xfailed, 1 xpassed in ")


async def test_only_the_requested_ids_run(calc: Path) -> None:
    runner = PytestRunner(calc, timeout=120)
    run = await runner.run(["tests/test_calc.py::test_ok", "tests/test_calc.py::test_param[1-2-3]"])
    assert list(run.results) == ["tests/test_calc.py::test_ok", "tests/test_calc.py::test_param[1-2-3]"]
    assert run.failed_ids() == ["tests/test_calc.py::test_param[1-2-3]"]
    assert run.exit_code == 1


async def test_a_passing_run_exits_zero(calc: Path) -> None:
    runner = PytestRunner(calc, timeout=120)
    run = await runner.run(["tests/test_calc.py::TestMore", "tests/test_calc.py::test_ok"])
    assert run.outcome("tests/test_calc.py::test_ok") is not None
    assert run.outcome("tests/test_calc.py::TestMore::test_method") is not None
    run = await runner.run(["tests/test_calc.py::test_ok"])
    assert run.exit_code == 0
    assert run.passed_ids() == ["tests/test_calc.py::test_ok"]
    assert "1 passed" in run.output
