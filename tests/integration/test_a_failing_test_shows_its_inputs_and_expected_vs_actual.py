"""A failing test's outcome carries what an engineer looks at first: the failing call's arguments
(parametrize values, else the test's locals, cut, secrets hidden), the failing line, expected vs actual;
the run_tests observation shows them."""

from __future__ import annotations

from pathlib import Path

from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.failing_inputs import failing_input_lines
from fixloop.tools import build_toolbox
from fixloop.tools.run_tests import format_test_run
from fixloop.tools.workspace import Workspace
from support import project_python

FILES = {
    "words.py": "def is_word(text):\n    return text.isalpha() or text == ''\n",
    "conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n",
    "tests/test_words.py": (
        "import os\n\nimport pytest\n\nfrom words import is_word\n\n\n"
        '@pytest.mark.parametrize("text, expected", [("abc", True), ("", False)])\n'
        "def test_is_word(text, expected):\n    assert is_word(text) == expected\n\n\n"
        "def test_long_text(monkeypatch):\n"
        '    api_key = "sk-do-not-show"\n'
        '    text = "x" * 500 + "1"\n'
        "    helper = os.path.join\n"
        "    assert True == is_word(text)\n\n\n"
        "class TestWords:\n"
        "    def test_digits(self):\n"
        '        word = "abc1"\n'
        "        assert is_word(word)\n"
    ),
}
PARAM_ID = "tests/test_words.py::test_is_word[-False]"
LOCALS_ID = "tests/test_words.py::test_long_text"
METHOD_ID = "tests/test_words.py::TestWords::test_digits"


def _project(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


async def test_the_failing_inputs_come_with_the_outcome_and_in_the_run_tests_report(tmp_path: Path) -> None:
    root = _project(tmp_path)
    runner = PytestRunner(root, command=(project_python(), "-m", "pytest"), timeout=60)
    run = await runner.run([PARAM_ID, LOCALS_ID, METHOD_ID])

    param = run.results[PARAM_ID].inputs
    assert param is not None
    assert param.params == (("text", "''"), ("expected", "False"))
    assert param.line == "assert is_word(text) == expected"
    assert (param.path, param.line_number) == ("tests/test_words.py", 10)
    assert param.compare is not None
    assert (param.compare.actual_expr, param.compare.actual) == ("is_word(text)", "True")
    assert (param.compare.expected_expr, param.compare.expected) == ("expected", "False")

    local = run.results[LOCALS_ID].inputs
    assert local is not None and local.params == ()
    shown = dict(local.locals)
    assert shown["api_key"] == "<hidden>"
    assert set(shown) == {"api_key", "text"}  # functions, modules and pytest's fixtures are not inputs
    assert shown["text"] == "'" + "x" * 199 + "...[cut: 501 chars in all]"
    assert local.compare is not None  # `assert True == f(x)`: the literal is the expected value
    assert (local.compare.actual_expr, local.compare.expected) == ("is_word(text)", "True")
    assert "sk-do-not-show" not in repr(local)

    method = run.results[METHOD_ID].inputs
    assert method is not None and method.locals == (("word", "'abc1'"),)  # not `self`
    assert method.line == "assert is_word(word)" and method.compare is None

    lines = failing_input_lines(param)
    assert lines == [
        "  called with: text='', expected=False",
        "  failing line (tests/test_words.py:10): assert is_word(text) == expected",
        "  actual: is_word(text) = True",
        "  expected: expected = False",
    ]

    toolbox = build_toolbox(Workspace(root), runner, default_test_ids=[PARAM_ID])
    report = (await toolbox.call("run_tests", None)).text
    assert "called with: text='', expected=False" in report
    assert "actual: is_word(text) = True" in report
    assert "called with" not in format_test_run(run, show_inputs=False)  # the failingInputs setting off
