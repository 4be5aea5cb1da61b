"""The pytest runner turns unknown ids, a missing pytest and broken modules into clear errors or results."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixloop.errors import TestRunError
from fixloop.pytest_runner import PytestRunner
from support import write_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path.resolve(),
        {
            "shapes.py": """
                def area(w, h):
                    return w * h
            """,
            "tests/test_shapes.py": """
                from shapes import area


                def test_area():
                    assert area(2, 3) == 6
            """,
        },
    )


async def test_an_unknown_test_name_is_a_one_line_error(project: Path) -> None:
    with pytest.raises(TestRunError) as caught:
        await PytestRunner(project, timeout=120).run(["tests/test_shapes.py::test_nope"])
    message = str(caught.value)
    assert message.startswith(f"test 'tests/test_shapes.py::test_nope' not found in {project} (pytest: ")
    assert "\n" not in message


async def test_an_unknown_file_is_a_one_line_error(project: Path) -> None:
    expected = r"test 'tests/test_gone.py::test_x' not found .*file or directory"
    with pytest.raises(TestRunError, match=expected):
        await PytestRunner(project, timeout=120).run(["tests/test_gone.py::test_x"])


async def test_missing_pytest_says_to_set_the_test_command(project: Path) -> None:
    # -S leaves site-packages off sys.path: this interpreter has no pytest.
    runner = PytestRunner(project, command=(sys.executable, "-S", "-m", "pytest"), timeout=120)
    with pytest.raises(TestRunError, match=r"^pytest is not installed for .*python.*: set testCommand$"):
        await runner.run()


async def test_a_missing_command_says_to_set_the_test_command(project: Path) -> None:
    runner = PytestRunner(project, command=("no-such-pytest-binary", "-q"), timeout=120)
    expected = "test command not found: 'no-such-pytest-binary': set testCommand"
    with pytest.raises(TestRunError, match=expected):
        await runner.run()


async def test_python_off_the_path_falls_back_to_this_interpreter(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(project / "no-bin-here"))
    runner = PytestRunner(project, timeout=120)
    assert runner.command[0] == sys.executable
    run = await runner.run()
    assert run.passed_ids() == ["tests/test_shapes.py::test_area"]


async def test_a_test_module_that_fails_to_import_is_a_collection_error(project: Path) -> None:
    write_project(
        project,
        {
            "tests/test_broken.py": """
                import shapes_v2


                def test_new():
                    pass
            """
        },
    )
    run = await PytestRunner(project, timeout=120).run()
    assert run.errors == ("tests/test_broken.py: ModuleNotFoundError: No module named 'shapes_v2'",)
    assert run.passed_ids() == ["tests/test_shapes.py::test_area"]  # the other modules still run


async def test_requested_ids_in_a_broken_module_are_errors_and_the_rest_still_run(project: Path) -> None:
    write_project(
        project,
        {
            "tests/test_broken.py": """
                from shapes import perimeter


                def test_perimeter():
                    assert perimeter(1, 1) == 4
            """
        },
    )
    run = await PytestRunner(project, timeout=120).run(
        ["tests/test_broken.py::test_perimeter", "tests/test_shapes.py::test_area"]
    )
    broken = run.outcome("tests/test_broken.py::test_perimeter")
    assert broken is not None
    assert broken.outcome == "error"
    assert broken.when == "collect"
    expected = f"ImportError: cannot import name 'perimeter' from 'shapes' ({project}/shapes.py)"
    assert broken.message == expected
    assert broken.location == "tests/test_broken.py:1"
    assert run.outcome("tests/test_shapes.py::test_area") is not None
    assert run.failed_ids() == ["tests/test_broken.py::test_perimeter"]
    assert run.passed_ids() == ["tests/test_shapes.py::test_area"]


async def test_a_syntax_error_in_code_under_test_names_the_file(project: Path) -> None:
    (project / "shapes.py").write_text("def area(w, h)\n    return w * h\n", encoding="utf-8")
    run = await PytestRunner(project, timeout=120).run(["tests/test_shapes.py::test_area"])
    outcome = run.outcome("tests/test_shapes.py::test_area")
    assert outcome is not None and outcome.outcome == "error"
    assert outcome.message.startswith("SyntaxError: ")
    assert "shapes.py" in outcome.traceback


async def test_a_broken_conftest_is_reported_not_raised(project: Path) -> None:
    write_project(project, {"tests/conftest.py": "import not_there\n"})
    run = await PytestRunner(project, timeout=120).run()
    assert run.results == {}
    assert len(run.errors) == 1
    assert "conftest.py failed to import: ModuleNotFoundError: No module named 'not_there'" in run.errors[0]


async def test_an_option_pytest_rejects_says_to_check_the_test_command(project: Path) -> None:
    runner = PytestRunner(project, command=("python", "-m", "pytest", "--no-such-option"), timeout=120)
    with pytest.raises(TestRunError, match=r"^pytest did not start \(exit 4\): .*check testCommand$"):
        await runner.run()


async def test_an_unknown_parameter_set_is_named_in_full(project: Path) -> None:
    expected = r"^test 'tests/test_shapes.py::test_area\[9-9\]' not found in "
    with pytest.raises(TestRunError, match=expected):
        await PytestRunner(project, timeout=120).run(["tests/test_shapes.py::test_area[9-9]"])
