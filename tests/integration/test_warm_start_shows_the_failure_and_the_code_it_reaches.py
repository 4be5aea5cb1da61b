"""The warm start shows each failure, the test's source and the project code it reaches, within a budget."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from fixloop.agent.warm_start import build_warm_start
from fixloop.pytest_runner import PytestRunner, TestRun
from support import write_project

SHOP = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        pythonpath = ["src"]
    """,
    "src/shop/__init__.py": """
        from shop.cart import total
    """,
    "src/shop/cart.py": """
        from shop import pricing


        def total(prices):
            rate = pricing.discount_rate(len(prices))
            return round(sum(prices) * rate, 2)
    """,
    "src/shop/pricing.py": """
        def discount_rate(count):
            if count > 3:
                return 0.9
            return 1.1
    """,
    "src/shop/calc.py": """
        class Calculator:
            def __init__(self):
                self.memory = 0

            def add(self, a, b):
                return a - b

            def div(self, a, b):
                return a / b
    """,
    "src/shop/money.py": """
        def fmt(cents):
            return f"${cents // 100}.{cents % 100}"
    """,
    "src/shop/text.py": """
        def slug(s):
            return s.lower().replace(" ", "_")
    """,
    "src/shop/queue.py": """
        class Queue:
            def append(self, item):
                pass
    """,
    "tests/test_lists.py": """
        def test_local_list():
            items = []
            items.append(1)
            assert items == [2]
    """,
    "tests/conftest.py": """
        import pytest

        from shop.calc import Calculator


        @pytest.fixture
        def calc():
            return Calculator()
    """,
    "tests/test_cart.py": """
        from shop import total


        def test_total_without_discount():
            assert total([1.0, 2.0]) == 3.0
    """,
    "tests/test_calc.py": """
        from shop.calc import Calculator


        class TestCalculator:
            def test_add(self):
                calc = Calculator()
                assert calc.add(2, 2) == 4

            def test_div_by_zero_is_none(self):
                assert Calculator().div(1, 0) is None

            def test_div_by_zero_again(self):
                assert Calculator().div(2, 0) is None


        def test_add_with_fixture(calc):
            assert calc.add(1, 1) == 2
    """,
    "tests/test_money.py": """
        import shop.money as m


        def test_fmt():
            assert m.fmt(105) == "$1.05"
    """,
    "tests/test_text.py": """
        import pytest

        from shop import text


        @pytest.mark.parametrize("raw, expected", [("a b", "a-b"), ("c d", "c-d"), ("e", "e")])
        def test_slug(raw, expected):
            assert text.slug(raw) == expected
    """,
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TestRun]:
    root = write_project(tmp_path_factory.mktemp("shop"), SHOP)
    return root, asyncio.run(PytestRunner(root, timeout=120).run())


def test_the_run_fails_where_the_shapes_expect(shop: tuple[Path, TestRun]) -> None:
    _, run = shop
    assert sorted(run.failed_ids()) == [
        "tests/test_calc.py::TestCalculator::test_add",
        "tests/test_calc.py::TestCalculator::test_div_by_zero_again",
        "tests/test_calc.py::TestCalculator::test_div_by_zero_is_none",
        "tests/test_calc.py::test_add_with_fixture",
        "tests/test_cart.py::test_total_without_discount",
        "tests/test_lists.py::test_local_list",
        "tests/test_money.py::test_fmt",
        "tests/test_text.py::test_slug[a b-a-b]",
        "tests/test_text.py::test_slug[c d-c-d]",
    ]


def test_code_under_test_comes_first_and_the_test_follows_as_evidence(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_calc.py::TestCalculator::test_add"])
    assert "## Failing test: tests/test_calc.py::TestCalculator::test_add" in text
    assert "Outcome: failed: AssertionError: assert 0 == 4" in text
    assert "E    +  where 0 = add(2, 2)" in text
    test_source = textwrap.dedent(
        """
        ### tests/test_calc.py (lines 4-7) the test
        ```python
        class TestCalculator:
            def test_add(self):
                calc = Calculator()
                assert calc.add(2, 2) == 4
        ```
        """
    ).strip()
    assert test_source in text  # code as in the file, its line numbers once in the header
    method = textwrap.dedent(
        """
        ### src/shop/calc.py (lines 1, 5-6) Calculator.add, called by the test
        ```python
        class Calculator:
        ```
        ```python
            def add(self, a, b):
                return a - b
        ```
        """
    ).strip()
    assert method in text
    code = text.index("# The code under test: the bug is here, change this code")
    evidence = text.index("# The failing test: read-only evidence (tests are never changed)")
    expected = text.index("Expected vs actual (pytest):\nE   assert 0 == 4")
    assert code < text.index(method) < evidence < expected < text.index(test_source)


def test_exception_in_project_code_shows_the_raising_function_first(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_calc.py::TestCalculator::test_div_by_zero_is_none"])
    assert "Outcome: failed: ZeroDivisionError: division by zero" in text
    raised = "### src/shop/calc.py (lines 1, 8-9) Calculator.div, raised here: line 9"
    assert raised in text
    assert "\n        return a / b" in text
    assert text.count("def div(self, a, b):") == 1  # the frame and the call are the same code: shown once


def test_a_helper_two_imports_away_follows_the_function_the_test_calls(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_cart.py::test_total_without_discount"])
    assert "Outcome: failed: AssertionError: assert 3.3 == 3.0" in text
    total = "### src/shop/cart.py (lines 4-6) total, called by the test"
    helper = "### src/shop/pricing.py (lines 1-4) discount_rate, called by total"
    assert total in text and helper in text
    assert text.index(total) < text.index(helper)
    assert "\n    return 1.1" in text


def test_module_alias_calls_resolve_to_the_module(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_money.py::test_fmt"])
    assert "### src/shop/money.py (lines 1-2) fmt, called by the test" in text
    assert "AssertionError: assert '$1.5' == '$1.05'" in text


def test_a_method_on_a_fixture_is_found_by_searching_the_project(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_calc.py::test_add_with_fixture"])
    assert "### src/shop/calc.py (lines 1, 5-6) Calculator.add, called by the test" in text
    fixture = "### tests/conftest.py (lines 6-8) fixture calc"
    assert fixture in text
    assert text.index("Calculator.add") < text.index(fixture)


def test_tests_that_fail_the_same_way_share_one_failure(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    ids = [
        "tests/test_calc.py::TestCalculator::test_div_by_zero_is_none",
        "tests/test_calc.py::TestCalculator::test_div_by_zero_again",
    ]
    text = build_warm_start(root, run, ids)
    assert text.count("## Failing test:") == 1
    assert "(fails the same way: tests/test_calc.py::TestCalculator::test_div_by_zero_again)" in text
    assert "def test_div_by_zero_again(self):" in text
    assert text.count("def div(self, a, b):") == 1


def test_parametrized_cases_share_the_test_source(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    ids = ["tests/test_text.py::test_slug[a b-a-b]", "tests/test_text.py::test_slug[c d-c-d]"]
    text = build_warm_start(root, run, ids)
    assert "AssertionError: assert 'a_b' == 'a-b'" in text
    assert "AssertionError: assert 'c_d' == 'c-d'" in text
    assert text.count('\n@pytest.mark.parametrize("raw, expected"') == 1
    assert text.count("### src/shop/text.py (lines 1-2) slug, called by the test") == 1
    assert text.count("Traceback:") == 1  # the second case failed on the same line


def test_the_same_input_gives_the_same_text(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    ids = run.failed_ids()
    assert build_warm_start(root, run, ids) == build_warm_start(root, run, ids)


def test_the_budget_is_kept_and_what_is_left_out_is_named(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    ids = sorted(run.failed_ids())
    full = build_warm_start(root, run, ids, budget_chars=100_000)
    assert "Left out" not in full
    small = build_warm_start(root, run, ids, budget_chars=1500)
    assert len(small) <= 1500
    assert small.startswith("Context gathered before your first turn:")
    assert "## Failing test: tests/test_calc.py::TestCalculator::test_add" in small
    assert "Left out for space (read_file them if needed): " in small
    assert len(build_warm_start(root, run, ids, budget_chars=50)) <= 50


def test_a_test_without_a_result_still_shows_its_source(shop: tuple[Path, TestRun]) -> None:
    root, _ = shop
    empty = TestRun(results={}, exit_code=5, timed_out=False, duration=0.0, output="")
    text = build_warm_start(root, empty, ["tests/test_money.py::test_fmt"])
    assert "No result in the last run." in text
    assert "\ndef test_fmt():" in text
    assert "### src/shop/money.py (lines 1-2) fmt, called by the test" in text


def test_nothing_to_show_is_an_empty_string(tmp_path: Path) -> None:
    empty = TestRun(results={}, exit_code=5, timed_out=False, duration=0.0, output="")
    assert build_warm_start(tmp_path, empty, []) == ""


def test_a_module_id_stands_for_its_failing_tests(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_text.py"])
    assert "## Failing test: tests/test_text.py::test_slug[a b-a-b]" in text
    assert "## Failing test: tests/test_text.py::test_slug[c d-c-d]" in text
    assert "test_slug[e-e]" not in text
    assert "No result in the last run." not in text


def test_a_list_method_is_not_searched_for_in_the_project(shop: tuple[Path, TestRun]) -> None:
    root, run = shop
    text = build_warm_start(root, run, ["tests/test_lists.py::test_local_list"])
    assert "## Failing test: tests/test_lists.py::test_local_list" in text
    assert "queue.py" not in text
