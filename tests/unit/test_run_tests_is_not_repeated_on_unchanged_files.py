"""run_tests without arguments runs the failing targets; tests that already ran on the same files are not
run again (a target that hung in the baseline is not re-run whole every turn), and a green run is one line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.pytest_runner.results import TestOutcome, TestRun
from fixloop.tools import build_toolbox
from fixloop.tools.workspace import Workspace

TARGET = "tests/test_app.py::test_add"


@dataclass
class Runner:
    answers: list[TestRun]
    root: Path = Path()
    timeout: float = 30.0
    calls: list[list[str]] = field(default_factory=list)

    async def run(self, test_ids: Sequence[str] = ()) -> TestRun:
        self.calls.append(list(test_ids))
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


FAILING = TestRun({TARGET: TestOutcome(TARGET, "failed", "assert -1 == 3")}, 1, False, 0.2, "")
PASSING = TestRun({TARGET: TestOutcome(TARGET, "passed")}, 0, False, 0.2, "")
HUNG = TestRun({}, 2, True, 30.0, "", hung_test=TARGET)


def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_app.py").write_text(
        "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    return tmp_path


async def test_the_same_tests_on_unchanged_files_are_not_run_again(tmp_path: Path) -> None:
    runner = Runner([FAILING, PASSING])
    toolbox = build_toolbox(Workspace(project(tmp_path)), runner, default_test_ids=[TARGET])
    first = await toolbox.call("run_tests", {})
    again = await toolbox.call("run_tests", {})
    assert runner.calls == [[TARGET]]
    assert again.text.startswith("not run again: no file changed") and first.text in again.text
    await toolbox.call("edit_file", {"path": "app.py", "old_text": "a - b", "new_text": "a + b"})
    green = await toolbox.call("run_tests", {})
    assert runner.calls == [[TARGET], [TARGET]]  # a change: run for real
    assert green.text.startswith("1 passed") and "call submit" in green.text and "\n" not in green.text


async def test_a_target_that_hung_in_the_baseline_is_not_run_whole_again_unchanged(tmp_path: Path) -> None:
    runner = Runner([HUNG])
    toolbox = build_toolbox(Workspace(project(tmp_path)), runner, default_test_ids=[TARGET], baseline=HUNG)
    result = await toolbox.call("run_tests", {})
    assert runner.calls == []  # the baseline's 30 s timeout stands for it
    assert "timed out after 30 s while running " + TARGET in result.text
    await toolbox.call("write_file", {"path": "app.py", "content": "def add(a, b):\n    return a + b\n"})
    await toolbox.call("run_tests", {})
    assert runner.calls == [[TARGET]]


async def test_other_ids_are_their_own_run(tmp_path: Path) -> None:
    runner = Runner([FAILING])
    toolbox = build_toolbox(Workspace(project(tmp_path)), runner, default_test_ids=[TARGET])
    await toolbox.call("run_tests", {})
    await toolbox.call("run_tests", {"test_ids": ["tests/test_app.py"]})
    assert runner.calls == [[TARGET], ["tests/test_app.py"]]
