"""The tamper guard names every way a change weakens the tests, and proposal_changes drops scratch files."""

from __future__ import annotations

from pathlib import Path

from fixloop.project import is_test_path
from fixloop.result import FileChange
from fixloop.verify import proposal_changes, tamper_reasons

TEST = """\
import pytest

from calc import add


def test_add():
    assert add(1, 2) == 3


def test_add_negative():
    assert add(-1, -2) == -3
"""


def reasons_for(path: str, old: str | None, new: str | None) -> list[str]:
    return tamper_reasons([FileChange(path, old, new)], is_test_path)


def test_edited_assertion_is_named_with_its_line() -> None:
    new = TEST.replace("== 3\n", "== -1\n")
    assert reasons_for("tests/test_calc.py", TEST, new) == [
        "tests/test_calc.py: assertion changed at line 7 — fix the code under test, not the test"
    ]


def test_deleted_assertion() -> None:
    new = TEST.replace("    assert add(-1, -2) == -3\n", "    pass\n")
    (reason,) = reasons_for("tests/test_calc.py", TEST, new)
    assert reason.startswith("tests/test_calc.py: assertion")
    assert "line 11" in reason


def test_added_skip_marker_and_skip_call() -> None:
    marked = TEST.replace("def test_add():", "@pytest.mark.skip(reason='later')\ndef test_add():")
    (reason,) = reasons_for("tests/test_calc.py", TEST, marked)
    assert reason == (
        "tests/test_calc.py: skip/xfail added at line 6 — a skipped test is not a fixed one; "
        "fix the code under test, not the test"
    )
    for line in ("    pytest.skip('x')\n", "    pytest.importorskip('numpy')\n", "    pytest.xfail('x')\n"):
        changed = TEST.replace("def test_add():\n", "def test_add():\n" + line)
        assert any(
            "skip/xfail added at line 7" in reason for reason in reasons_for("test_calc.py", TEST, changed)
        )
    xfail = TEST.replace("def test_add_negative", "@pytest.mark.xfail\ndef test_add_negative")
    assert "skip/xfail added" in reasons_for("tests/test_calc.py", TEST, xfail)[0]


def test_deleted_test_function() -> None:
    new = TEST.split("\n\ndef test_add_negative")[0] + "\n"
    assert reasons_for("tests/test_calc.py", TEST, new)[-1] == (
        "tests/test_calc.py: test test_add_negative deleted or renamed — restore it; "
        "fix the code under test, not the test"
    )


def test_monkeypatching_the_code_under_test() -> None:
    new = TEST.replace(
        "def test_add():\n",
        "def test_add(monkeypatch):\n    monkeypatch.setattr('calc.add', lambda a, b: 3)\n",
    )
    reasons = reasons_for("tests/test_calc.py", TEST, new)
    assert any("monkeypatching added at line 7" in reason for reason in reasons)


def test_any_other_test_change_is_still_rejected() -> None:
    new = TEST.replace("from calc import add", "from calc import add  # hm")
    assert reasons_for("tests/test_calc.py", TEST, new) == [
        "tests/test_calc.py: test file changed at line 3 — fix the code under test, not the test"
    ]


def test_conftest_edit_new_and_deleted_test_files() -> None:
    assert reasons_for("conftest.py", "X = 1\n", "X = 2\n") == [
        "conftest.py: conftest.py changed at line 1 — fixtures and hooks are part of the tests; "
        "fix the code under test, not the test"
    ]
    assert "new test file" in reasons_for("tests/conftest.py", None, "import pytest\n")[0]
    assert "test file deleted" in reasons_for("tests/test_calc.py", TEST, None)[0]


def test_pytest_configuration_in_every_file_that_can_hold_it() -> None:
    assert (
        "pytest configuration changed" in reasons_for("pytest.ini", "[pytest]\n", "[pytest]\naddopts=-x\n")[0]
    )
    pyproject = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    weakened = pyproject.replace('"-q"', "\"-q -k 'not test_add'\"")
    assert (
        "pyproject.toml: pytest configuration section changed"
        in reasons_for("pyproject.toml", pyproject, weakened)[0]
    )
    assert reasons_for("pyproject.toml", pyproject, pyproject.replace('"x"', '"y"')) == []
    setup_cfg = "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests\n"
    assert reasons_for("setup.cfg", setup_cfg, setup_cfg + "addopts = --deselect tests/test_calc.py\n")
    assert reasons_for("setup.cfg", setup_cfg, setup_cfg.replace("name = x", "name = y")) == []
    tox = "[tox]\nenvlist = py311\n[pytest]\nmarkers = slow\n"
    assert reasons_for("tox.ini", tox, tox.replace("slow", "slow\nfilterwarnings = ignore"))
    assert reasons_for("tox.ini", tox, tox.replace("py311", "py312")) == []


def test_code_under_test_may_not_skip_or_detect_pytest() -> None:
    old = "def add(a, b):\n    return a - b\n"
    cheat = (
        "import os\n\ndef add(a, b):\n    if os.environ.get('PYTEST_CURRENT_TEST'):\n"
        "        return 3\n    return a - b\n"
    )
    assert reasons_for("calc.py", old, cheat) == [
        "calc.py: line 4 makes tests skip or exit instead of passing — fix the behaviour the test checks"
    ]
    assert reasons_for("calc.py", old, "def add(a, b):\n    return a + b\n") == []


def test_each_reason_is_one_line_naming_the_file() -> None:
    new = TEST.replace("== 3", "== 4").replace(
        "def test_add_negative", "@pytest.mark.skip\ndef test_add_negative"
    )
    reasons = reasons_for("tests/test_calc.py", TEST, new)
    assert len(reasons) == 2
    assert all("\n" not in reason and reason.startswith("tests/test_calc.py: ") for reason in reasons)


def test_is_test_path() -> None:
    assert is_test_path("tests/helpers.py")
    assert is_test_path("pkg/test_x.py")
    assert is_test_path("pkg/x_test.py")
    assert is_test_path("conftest.py")
    assert not is_test_path("src/calc.py")
    assert not is_test_path("src/testing_utils.py")


def test_proposal_drops_scratch_files_and_keeps_what_the_fix_imports(tmp_path: Path) -> None:
    changes = [
        FileChange(
            "src/calc.py",
            "def add(a, b):\n    return a - b\n",
            "from calc_helpers import plus\n\nadd = plus\n",
        ),
        FileChange(
            "src/calc_helpers.py", None, "from .numbers import ZERO\n\ndef plus(a, b):\n    return a + b\n"
        ),
        FileChange("src/numbers.py", None, "ZERO = 0\n"),
        FileChange("debug_add.py", None, "from calc import add\nprint(add(1, 2))\n"),
        FileChange("tests/test_scratch.py", None, "def test_x():\n    assert True\n"),
        FileChange("notes.txt", None, "tried a few things\n"),
        FileChange("src/old.py", "X = 1\n", None),
    ]
    kept = [change.path for change in proposal_changes(changes)]
    assert kept == ["src/calc.py", "src/calc_helpers.py", "src/numbers.py", "src/old.py"]


def test_proposal_keeps_a_new_module_that_existing_code_already_imports(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app/__init__.py").write_text("")
    (tmp_path / "app/main.py").write_text("from app.config import DEFAULTS\n")
    (tmp_path / "app/config.py").write_text("DEFAULTS = {}\n")
    (tmp_path / "scratch.py").write_text("print(1)\n")
    changes = [
        FileChange("app/config.py", None, "DEFAULTS = {}\n"),
        FileChange("scratch.py", None, "print(1)\n"),
    ]
    assert [change.path for change in proposal_changes(changes, root=tmp_path)] == ["app/config.py"]
    assert proposal_changes(changes) == []


def test_proposal_keeps_new_pytest_configuration_so_the_guard_sees_it() -> None:
    changes = [FileChange("tests/conftest.py", None, "import pytest\n")]
    assert proposal_changes(changes) == changes
    assert tamper_reasons(proposal_changes(changes), is_test_path)
