"""The warm start on other project shapes: flat layout, relative imports, base classes, import-time errors."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from fixloop.agent.warm_start import build_warm_start
from fixloop.pytest_runner import Frame, PytestRunner, TestOutcome, TestRun
from support import write_project

LONG_BODY = "\n".join(f"    total += {i}" for i in range(40))

FLAT = {
    "inventory/__init__.py": "",
    "inventory/stock.py": """
        from .helpers import clamp


        class Store:
            def count(self, n):
                return clamp(n, 0, 10)


        class Shop(Store):
            pass
    """,
    "inventory/helpers.py": """
        def clamp(n, low, high):
            return max(low, min(n, low))
    """,
    "inventory/report.py": f"""
        def long_sum(items):
            total = 0
{textwrap.indent(LONG_BODY, " " * 8)}
            return total / len(items)
    """,
    "inventory/broken.py": """
        LIMIT = int("ten")
    """,
    "inventory/a.py": """
        from inventory.b import b_step


        def a_step(x):
            return b_step(x)
    """,
    "inventory/b.py": """
        from inventory import c


        def b_step(x):
            return c.c_step(x)
    """,
    "inventory/c.py": """
        def c_step(x):
            return x - 1
    """,
    "tests/test_chain.py": """
        from inventory.a import a_step


        def test_chain():
            assert a_step(1) == 1
    """,
    "tests/test_inherit.py": """
        from inventory.c import c_step


        class BaseSteps:
            def test_step(self):
                assert c_step(2) == 2


        class TestSteps(BaseSteps):
            pass
    """,
    "inventory/typo.py": """
        def ratio(a, b)
            return a / b
    """,
    "tests/test_typo.py": """
        from inventory.typo import ratio


        def test_ratio():
            assert ratio(1, 2) == 0.5
    """,
    "tests/test_stock.py": """
        from inventory import stock


        def test_count_via_module():
            assert stock.Store().count(5) == 5


        def test_count_via_base_class():
            shop = stock.Shop()
            assert shop.count(7) == 7
    """,
    "tests/test_report.py": """
        from inventory.report import long_sum


        def test_long_sum_of_nothing():
            assert long_sum([]) == 0
    """,
    "tests/test_broken.py": """
        from inventory.broken import LIMIT


        def test_limit():
            assert LIMIT == 10
    """,
}


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TestRun]:
    root = write_project(tmp_path_factory.mktemp("flat"), FLAT)
    ids = [
        "tests/test_stock.py::test_count_via_module",
        "tests/test_stock.py::test_count_via_base_class",
        "tests/test_report.py::test_long_sum_of_nothing",
        "tests/test_broken.py::test_limit",
        "tests/test_typo.py::test_ratio",
        "tests/test_chain.py::test_chain",
        "tests/test_inherit.py::TestSteps::test_step",
    ]
    return root, asyncio.run(PytestRunner(root, timeout=120).run(ids))


def test_a_relative_import_two_calls_away_is_followed(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_stock.py::test_count_via_module"])
    assert "Outcome: failed: AssertionError: assert 0 == 5" in text
    count = "### inventory/stock.py (lines 4-6) Store.count, called by the test"
    clamp = "### inventory/helpers.py (lines 1-2) clamp, called by count"
    assert count in text and clamp in text
    assert text.index(count) < text.index(clamp)
    assert "\n    return max(low, min(n, low))" in text


def test_a_method_inherited_from_a_base_class_is_found(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_stock.py::test_count_via_base_class"])
    assert "### inventory/stock.py (lines 4-6) Store.count, called by the test" in text


def test_a_long_function_is_cut_to_the_failing_line_on_a_tight_budget(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    test_id = "tests/test_report.py::test_long_sum_of_nothing"
    outcome = run.outcome(test_id)
    assert outcome is not None and outcome.location == "inventory/report.py:43"
    whole = build_warm_start(root, run, [test_id], budget_chars=20_000)
    assert "### inventory/report.py (lines 1-43) long_sum, raised here: line 43" in whole
    tight = build_warm_start(root, run, [test_id], budget_chars=1400)
    assert len(tight) <= 1400
    assert "### inventory/report.py (lines 1, 37-43) long_sum, raised here: line 43" in tight
    assert "\n    return total / len(items)" in tight
    assert "\ndef long_sum(items):" in tight


def test_an_error_at_import_time_shows_the_module_lines(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_broken.py::test_limit"])
    assert "Outcome: error (in collect): ValueError: invalid literal for int() with base 10: 'ten'" in text
    assert "### inventory/broken.py (lines 1) raised here: line 1" in text
    assert '\nLIMIT = int("ten")' in text


def test_a_timed_out_run_says_which_test_was_running(flat: tuple[Path, TestRun]) -> None:
    root, _ = flat
    test_id = "tests/test_stock.py::test_count_via_module"
    hung = TestRun(results={}, exit_code=-9, timed_out=True, duration=60.0, output="", hung_test=test_id)
    text = build_warm_start(root, hung, [test_id])
    assert "No result in the last run." in text
    assert f"The run timed out while {test_id} was running." in text
    assert "\ndef test_count_via_module():" in text


def test_a_syntax_error_in_project_code_shows_the_offending_lines(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_typo.py::test_ratio"])
    assert "Outcome: error (in collect): SyntaxError: " in text
    assert "### inventory/typo.py (lines 1-2) syntax error here: line 1" in text
    assert "\ndef ratio(a, b)" in text


def test_a_helper_three_calls_away_is_shown(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_chain.py::test_chain"])
    a = "### inventory/a.py (lines 4-5) a_step, called by the test"
    b = "### inventory/b.py (lines 4-5) b_step, called by a_step"
    c = "### inventory/c.py (lines 1-2) c_step, called by b_step"
    assert a in text and b in text and c in text
    assert text.index(a) < text.index(b) < text.index(c)


def test_a_hung_test_shows_where_it_was_stopped(flat: tuple[Path, TestRun]) -> None:
    root, _ = flat
    test_id = "tests/test_stock.py::test_count_via_module"
    frames = (
        Frame("tests/test_stock.py", 5, "test_count_via_module"),
        Frame("inventory/helpers.py", 2, "clamp"),
    )
    message = "Timeout: the test did not finish within 5s"
    hung = TestOutcome(test_id, "failed", message, "inventory/helpers.py:2", frames=frames)
    run = TestRun({test_id: hung}, exit_code=-9, timed_out=True, duration=5.0, output="", hung_test=test_id)
    text = build_warm_start(root, run, [test_id])
    assert "Outcome: failed: Timeout: the test did not finish within 5s" in text
    assert "### inventory/helpers.py (lines 1-2) clamp, stopped here: line 2" in text


def test_an_inherited_test_method_shows_its_base_class_source(flat: tuple[Path, TestRun]) -> None:
    root, run = flat
    text = build_warm_start(root, run, ["tests/test_inherit.py::TestSteps::test_step"])
    assert "Outcome: failed: AssertionError: assert 1 == 2" in text
    assert "### tests/test_inherit.py (lines 4-6) the test" in text
    assert "\n    def test_step(self):" in text
    assert "### inventory/c.py (lines 1-2) c_step, called by the test" in text
