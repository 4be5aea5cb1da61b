"""run_tests through the real PytestRunner: a compact failure report, bad ids and timeouts as observations."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.pytest_runner import PytestRunner
from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace
from support import project_python

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "import time\n\nfrom calc import add\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n\n\n"
        "def test_slow():\n    time.sleep(30)\n"
    ),
    "conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n",
}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def toolbox_for(root: Path, timeout: float = 60.0) -> Toolbox:
    runner = PytestRunner(root, command=(project_python(), "-m", "pytest"), timeout=timeout)
    return build_toolbox(Workspace(root), runner, default_test_ids=["tests/test_calc.py::test_add"])


async def test_failing_and_passing_tests_are_reported(project: Path) -> None:
    toolbox = toolbox_for(project)
    result = await toolbox.call(
        "run_tests", {"test_ids": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_zero"]}
    )
    assert not result.is_error, result.text
    lines = result.text.splitlines()
    assert lines[0].startswith("1 failed, 1 passed in ")
    assert "FAILED tests/test_calc.py::test_add" in lines
    assert "assert -1 == 3" in result.text
    assert "calc.py:2" in result.text or "tests/test_calc.py:7" in result.text


async def test_fix_then_default_ids_pass(project: Path) -> None:
    toolbox = toolbox_for(project)
    edit = await toolbox.call("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})
    assert not edit.is_error, edit.text
    result = await toolbox.call("run_tests", None)
    assert result.text.startswith("1 passed in "), result.text


async def test_unknown_test_id_is_an_error_observation(project: Path) -> None:
    result = await toolbox_for(project).call("run_tests", {"test_ids": ["tests/test_calc.py::test_nope"]})
    assert result.is_error
    assert "test_nope" in result.text


async def test_timeout_names_the_hung_test(project: Path) -> None:
    result = await toolbox_for(project, timeout=4).call("run_tests", {"test_ids": ["tests/test_calc.py"]})
    assert not result.is_error, result.text
    assert result.text.startswith("tests timed out after 4 s while running tests/test_calc.py::test_slow")
