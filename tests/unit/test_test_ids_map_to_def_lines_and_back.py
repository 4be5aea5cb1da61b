"""Test ids map to `def` lines and source lines map back to the enclosing test, on tricky test modules."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fixloop.pytest_runner import TestFunction, position_of, test_functions, test_id_at
from fixloop.pytest_runner.locate import split_test_id

TRICKY = textwrap.dedent(
    '''
    import pytest
    import unittest


    def helper():
        def test_inner():  # nested: not collected
            pass
        return test_inner


    @pytest.mark.parametrize(
        "a, b",
        [(1, 2), (3, 4)],
    )
    @pytest.mark.slow
    def test_param(a, b):
        assert a < b


    async def test_async():
        assert True


    class TestOuter:
        x = 1

        def test_method(self):
            def nested():
                return 1
            assert nested() == 1

        @staticmethod
        def test_static():
            pass

        class TestInner:
            async def test_deep(self):
                pass

        def not_a_test(self):
            pass


    class Helper:
        def test_ignored(self):
            pass


    class CheckThings(unittest.TestCase):
        def test_case(self):
            self.assertTrue(True)


    def test_last():
        """Docstring."""
        x = 1

        assert x
    '''
).lstrip("\n")


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_collects_functions_methods_nested_classes_and_testcases() -> None:
    names = [t.test_id_suffix for t in test_functions(TRICKY)]
    assert names == [
        "test_param",
        "test_async",
        "TestOuter::test_method",
        "TestOuter::test_static",
        "TestOuter::TestInner::test_deep",
        "CheckThings::test_case",
        "test_last",
    ]


def test_start_line_includes_decorators_and_def_line_is_the_def() -> None:
    param = test_functions(TRICKY)[0]
    assert param == TestFunction(
        "test_param",
        def_line=line_of(TRICKY, "def test_param"),
        start_line=line_of(TRICKY, "@pytest.mark.parametrize("),
        end_line=line_of(TRICKY, "assert a < b"),
    )
    static = next(t for t in test_functions(TRICKY) if t.test_id_suffix == "TestOuter::test_static")
    assert static.start_line == line_of(TRICKY, "@staticmethod")
    last = test_functions(TRICKY)[-1]
    assert last.end_line == len(TRICKY.splitlines())


def test_a_source_that_does_not_parse_has_no_tests() -> None:
    assert test_functions("def test_x(:\n    pass\n") == []


def test_id_at_finds_the_innermost_enclosing_test(tmp_path: Path) -> None:
    path = tmp_path / "tests" / "test_tricky.py"
    path.parent.mkdir()
    path.write_text(TRICKY, encoding="utf-8")

    def at(needle: str) -> str | None:
        return test_id_at(tmp_path, path, line_of(TRICKY, needle))

    assert at("assert a < b") == "tests/test_tricky.py::test_param"
    assert at('"a, b",') == "tests/test_tricky.py::test_param"  # inside a decorator
    assert at("return 1") == "tests/test_tricky.py::TestOuter::test_method"  # nested function
    assert at("async def test_deep") == "tests/test_tricky.py::TestOuter::TestInner::test_deep"
    assert at("assert True") == "tests/test_tricky.py::test_async"
    assert at("self.assertTrue") == "tests/test_tricky.py::CheckThings::test_case"
    assert at("x = 1") is None  # a class attribute is not in a test
    assert at("def not_a_test") is None
    assert at("def test_inner") is None
    assert at("def test_ignored") is None
    assert at("import pytest") is None


def test_id_at_uses_the_given_source_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "test_unsaved.py"
    path.write_text("", encoding="utf-8")
    buffer = "\n\ndef test_buffer():\n    pass\n"
    assert test_id_at(tmp_path, path, 2, source=buffer) is None
    assert test_id_at(tmp_path, path, 4, source=buffer) == "test_unsaved.py::test_buffer"


def test_id_at_outside_the_root_is_none(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    outside = tmp_path / "test_other.py"
    outside.write_text("def test_x():\n    pass\n", encoding="utf-8")
    assert test_id_at(root, outside, 2) is None


def test_position_of_handles_classes_and_parametrized_ids(tmp_path: Path) -> None:
    path = tmp_path / "tests" / "test_tricky.py"
    path.parent.mkdir()
    path.write_text(TRICKY, encoding="utf-8")
    def_line = line_of(TRICKY, "def test_param")
    assert position_of(tmp_path, "tests/test_tricky.py::test_param[1-2]") == (path, def_line)
    assert position_of(tmp_path, "tests/test_tricky.py::test_param[a::b[c]]") == (
        path,
        line_of(TRICKY, "def test_param"),
    )
    assert position_of(tmp_path, "tests/test_tricky.py::TestOuter::TestInner::test_deep") == (
        path,
        line_of(TRICKY, "async def test_deep"),
    )
    assert position_of(tmp_path, "tests/test_tricky.py::test_nope") is None
    assert position_of(tmp_path, "tests/test_tricky.py::TestOuter") is None
    assert position_of(tmp_path, "tests/test_tricky.py") is None
    assert position_of(tmp_path, "tests/test_missing.py::test_x") is None


def test_split_test_id_separates_path_name_and_parameters() -> None:
    parts = ("tests/test_x.py", "TestC::test_m", "[1-a::b]")
    assert split_test_id("tests/test_x.py::TestC::test_m[1-a::b]") == parts
    assert split_test_id("tests/test_x.py::test_y") == ("tests/test_x.py", "test_y", "")
    assert split_test_id("tests/test_x.py") == ("tests/test_x.py", "", "")


INHERITED = textwrap.dedent(
    """
    class BaseChecks:
        def test_shared(self):
            pass


    class TestFast(BaseChecks):
        def test_own(self):
            pass


    class TestSlow(TestFast):
        def test_shared(self):
            pass


    class TestWithInit:
        def __init__(self):
            pass

        def test_skipped_by_pytest(self):
            pass
    """
).lstrip("\n")


def test_inherited_test_methods_run_under_the_subclass() -> None:
    found = {t.test_id_suffix: t.def_line for t in test_functions(INHERITED)}
    assert found == {
        "TestFast::test_own": 7,
        "TestFast::test_shared": 2,
        "TestSlow::test_shared": 12,
        "TestSlow::test_own": 7,
    }
