"""run_tests runs the given (or default) tests and reports failures compactly; runner errors are observed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.errors import TestRunError
from fixloop.pytest_runner import TestOutcome, TestRun
from fixloop.tools import build_toolbox, format_test_run
from fixloop.tools.workspace import Workspace

Outcome = TestOutcome


def Run(
    results: dict[str, TestOutcome],
    exit_code: int = 1,
    timed_out: bool = False,
    duration: float = 0.31,
    output: str = "",
    errors: tuple[str, ...] = (),
    hung_test: str | None = None,
) -> TestRun:
    return TestRun(results, exit_code, timed_out, duration, output, errors, hung_test)


@dataclass
class FakeRunner:
    """A runner that answers with a prepared TestRun (or raises), recording what it was asked to run."""

    run_result: TestRun | None = None
    error: Exception | None = None
    timeout: float = 60.0
    root: Path = Path(".")
    calls: list[list[str]] = field(default_factory=list)

    async def run(self, test_ids: Sequence[str] = ()) -> TestRun:
        self.calls.append(list(test_ids))
        if self.error:
            raise self.error
        assert self.run_result is not None
        return self.run_result


TRACEBACK = "tests/test_app.py:5: in test_add\n    assert add(1, 2) == 3\nE   assert -1 == 3"
FAILED = Outcome(
    "tests/test_app.py::test_add", "failed", "AssertionError: assert -1 == 3", "src/app.py:2", TRACEBACK
)


def passed(n: int) -> dict[str, Outcome]:
    ids = [f"tests/test_app.py::test_ok{i}" for i in range(n)]
    return {test_id: Outcome(test_id, "passed") for test_id in ids}


async def test_default_ids_and_compact_report(tmp_path) -> None:
    runner = FakeRunner(Run({FAILED.test_id: FAILED, **passed(4)}))
    toolbox = build_toolbox(Workspace(tmp_path), runner, default_test_ids=["tests/test_app.py::test_add"])
    result = await toolbox.call("run_tests", {})
    assert runner.calls == [["tests/test_app.py::test_add"]]
    assert not result.is_error
    assert result.text == (
        "1 failed, 4 passed in 0.31s\n"
        "\n"
        "FAILED tests/test_app.py::test_add\n"
        "  AssertionError: assert -1 == 3\n"
        "  at src/app.py:2\n"
        "    tests/test_app.py:5: in test_add\n"
        "        assert add(1, 2) == 3\n"
        "    E   assert -1 == 3"
    )


async def test_given_ids_and_a_bare_string_are_passed_through(tmp_path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_app.py").write_text("def test_ok0():\n    pass\n")
    runner = FakeRunner(Run(passed(1), exit_code=0))
    toolbox = build_toolbox(Workspace(tmp_path), runner, default_test_ids=["tests/test_app.py::test_add"])
    await toolbox.call("run_tests", {"test_ids": ["tests/test_app.py", " "]})
    result = await toolbox.call("run_tests", '{"test_ids": "tests/test_app.py::test_ok0"}')
    assert runner.calls == [["tests/test_app.py"], ["tests/test_app.py::test_ok0"]]
    assert result.text.startswith("1 passed in 0.31s")
    assert "call submit" in result.text and "\n" not in result.text  # a green run is one line


async def test_timeout_names_the_hung_test(tmp_path) -> None:
    runner = FakeRunner(Run(passed(2), timed_out=True, hung_test="tests/test_app.py::test_loop"), timeout=5)
    result = await build_toolbox(Workspace(tmp_path), runner).call("run_tests", {})
    assert result.text.splitlines()[0].startswith(
        "tests timed out after 5 s while running tests/test_app.py::test_loop"
    )
    assert result.text.splitlines()[1] == "2 passed in 0.31s"


async def test_bad_test_id_is_an_error_observation(tmp_path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_app.py").write_text("def test_add():\n    pass\n")
    runner = FakeRunner(error=TestRunError("no test 'tests/test_app.py::nope'; tests there: test_add"))
    toolbox = build_toolbox(Workspace(tmp_path), runner)
    result = await toolbox.call("run_tests", {"test_ids": ["tests/test_app.py::nope"]})
    assert result.is_error
    assert result.text == "no test 'tests/test_app.py::nope'; tests there: test_add"
    missing = await toolbox.call("run_tests", {"test_ids": ["nope"]})
    assert missing.is_error and missing.text.startswith("test id 'nope': 'nope' does not exist")


def test_collection_errors_and_setup_errors() -> None:
    setup = Outcome(
        "tests/test_db.py::test_q", "error", "RuntimeError: no db", "tests/conftest.py:3", when="setup"
    )
    text = format_test_run(Run({setup.test_id: setup}, errors=("tests/test_bad.py: SyntaxError: invalid",)))
    assert text.splitlines()[:3] == [
        "1 error, 1 collection error in 0.31s",
        "collection error: tests/test_bad.py: SyntaxError: invalid",
        "",
    ]
    assert "ERROR tests/test_db.py::test_q (in setup)" in text


def test_long_tracebacks_are_trimmed_and_many_failures_listed() -> None:
    long_tb = "\n".join(f"frame {n}" for n in range(200))
    results = {f"t::f{n}": Outcome(f"t::f{n}", "failed", "boom", traceback=long_tb) for n in range(12)}
    text = format_test_run(Run(results))
    assert text.count("FAILED t::f") == 8
    assert "frame 0\n" not in text and "frame 199" in text
    assert text.splitlines()[-1] == "4 more failing: t::f8, t::f9, t::f10, t::f11"


def test_nothing_ran_shows_the_output_tail() -> None:
    text = format_test_run(Run({}, exit_code=4, output="ERROR: file or directory not found: tests/nope.py\n"))
    assert text == (
        "no tests ran in 0.31s\npytest exited with code 4; its output ends:\n"
        "ERROR: file or directory not found: tests/nope.py"
    )


async def test_long_reports_are_capped_with_run_fewer_tests(tmp_path) -> None:
    results = {
        f"t::f{n}": Outcome(f"t::f{n}", "failed", "boom " * 50, traceback="x" * 2000) for n in range(8)
    }
    toolbox = build_toolbox(Workspace(tmp_path), FakeRunner(Run(results)), output_cap=1000)
    result = await toolbox.call("run_tests", {})
    assert result.text.endswith("more bytes not shown; run fewer tests]")
