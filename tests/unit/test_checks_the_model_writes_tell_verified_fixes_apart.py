"""Checks the model writes from the docstring and the failing test, run on every verified version: a version
that fails a check the others pass ranks lower; a check every version passes (or fails) says nothing; an
answer with no test function, or a check that cannot run, leaves the ranking to the other evidence."""

from __future__ import annotations

from collections.abc import Sequence

from fixloop.agent.fix_pool import PooledFix
from fixloop.agent.ranking import rank, speaks_for
from fixloop.agent.search import BROKE, PLAIN, proposal_summary
from fixloop.agent.written_checks import (
    CHECK_FILE,
    WrittenChecks,
    check_module,
    checks_prompt,
    failing_test,
    reach_imports,
)
from fixloop.result import FileChange
from leap_years import INNER, LEAP, OUTER

TEST_FILE = (
    "import pytest\nfrom dates import is_leap\n\n\n"
    "class TestLeap:\n    def test_2024(self):\n        assert is_leap(2024)\n\n\n"
    "def test_2000():\n    assert is_leap(2000)\n"
)

CHECKS = (
    "Here are the checks:\n```python\n"
    "def test_1900_is_not_leap():\n    assert not is_leap(1900)\n\n"
    "def test_2023_is_not_leap():\n    assert not is_leap(2023)\n```\n"
)


def fix(new: str) -> PooledFix:
    return PooledFix((FileChange("dates.py", LEAP, new),), "mutants", "dates.py")


def run_in_memory(ran: list[tuple[str, str]]):
    """Runs a check module against a version, in this process: each test function, passed or not."""

    async def run(changes: Sequence[FileChange], path: str, text: str, seconds: float) -> dict[str, bool]:
        ran.append((path, text))
        code = (changes[0].new_text if changes else LEAP) + text.replace("from dates import is_leap", "pass")
        space: dict = {}
        exec(compile(code, path, "exec"), space)
        results = {}
        for name, function in space.items():
            if name.startswith("test_"):
                try:
                    function()
                    results[name] = True
                except AssertionError:
                    results[name] = False
        return results

    return run


def checks(answer: str, ran: list[tuple[str, str]], told: list[str] | None = None) -> WrittenChecks:
    async def write(messages: list[dict[str, str]]) -> str:
        return answer

    test = failing_test("tests/test_dates.py::TestLeap::test_2024", TEST_FILE)
    assert test is not None
    return WrittenChecks(write, run_in_memory(ran), test, (told if told is not None else []).append)


def test_the_failing_test_is_found_with_its_file_imports_a_method_and_a_function():
    method = failing_test("tests/test_dates.py::TestLeap::test_2024", TEST_FILE)
    function = failing_test("tests/test_dates.py::test_2000[param]", TEST_FILE)

    assert method is not None and method.path == "tests/test_dates.py"
    assert method.head == "import pytest\nfrom dates import is_leap"
    assert method.source.strip().startswith("def test_2024(self):")
    assert function is not None and function.source.startswith("def test_2000():")
    assert failing_test("tests/test_dates.py::test_gone", TEST_FILE) is None
    assert failing_test("tests/test_dates.py::test_2000", "def broken(:\n") is None


def test_the_test_files_short_constants_head_the_checks_with_its_imports():
    long = "TABLE = [\n" + "    1,\n" * 12 + "]\n"
    head = "from reorder.policy import Rule\n\nRULES = {'tea': Rule(5, 20)}\n"
    text = head + long + "\n\ndef test_low():\n    pass\n"

    test = failing_test("tests/test_plan.py::test_low", text)

    assert test is not None and test.head == "from reorder.policy import Rule\nRULES = {'tea': Rule(5, 20)}"
    module = check_module("```python\ndef test_tea():\n    assert RULES['tea'].target == 20\n```", test.head)
    assert module is not None and module.startswith(test.head)


async def test_the_changed_functions_are_imported_for_the_checks_that_forget_to():
    """Live, the checks for stock_reorder called `order_quantity`, which the test file never imports: every
    check a NameError on every version. The functions the fixes change head the checks as well, guarded (a
    module path fixloop guessed wrong must not break the rest)."""
    ran: list[tuple[str, str]] = []
    forgot = CHECKS.replace("Here are the checks:\n", "")
    outer, inner = fix(OUTER), fix(INNER)

    await rank([outer, inner], None, "", seconds=60, checks=checks(forgot, ran))

    head = "try:\n    from dates import is_leap\nexcept ImportError:  # a path fixloop guessed\n    pass"
    assert all(head in text for _path, text in ran)
    assert "try:\n    from no.such import f\nexcept ImportError" in reach_imports(
        [
            PooledFix(
                (FileChange("no/such.py", "def f():\n    return 1\n", "def f():\n    return 2\n"),),
                "mutants",
                "",
            )
        ]
    )


def test_the_changed_functions_module_is_named_without_src_and_only_top_level_functions_are_imported():
    def changed(path: str, old: str) -> PooledFix:
        return PooledFix((FileChange(path, old, old.replace("return 1", "return 2")),), "mutants", "")

    long_def = "def count(\n    text: str,\n    sep: str = ':',\n) -> dict[str, int]:\n" + "    x = 1\n" * 50
    long_def += "    return 1\n"  # past the 40 lines shown: the function is shown cut short
    assert "from words.counting import count\n" in reach_imports([changed("src/words/counting.py", long_def)])
    assert "from pkg import f\n" in reach_imports([changed("pkg/__init__.py", "def f():\n    return 1\n")])
    method = "class A:\n    def f(self):\n        return 1\n"
    assert reach_imports([changed("pkg/a.py", method)]) == ""  # a method is not importable by name


def test_a_check_module_is_the_answers_test_functions_headed_by_the_test_files_imports():
    module = check_module(CHECKS, "from dates import is_leap")

    assert module is not None and module.startswith("from dates import is_leap\n")
    assert "def test_1900_is_not_leap" in module
    cut = CHECKS.replace(
        "    assert not is_leap(2023)\n```\n", "    assert not is_leap(20"
    )  # the answer ran out
    kept = check_module(cut, "from dates import is_leap")
    assert kept is not None and "test_1900_is_not_leap" in kept and "test_2023" not in kept
    classy = "```python\nclass TestLeap:\n    def test_1900(self):\n        assert not is_leap(1900)\n```"
    assert check_module(classy, "from dates import is_leap") is not None
    assert check_module("No code here.", "import x") is None
    assert check_module("```python\nx = 1\n```", "import x") is None  # no test function
    assert check_module("```python\ndef test_a(:\n```", "import x") is None  # not Python


def test_the_prompt_shows_the_function_the_test_and_the_failure_and_asks_for_edges():
    test = failing_test("tests/test_dates.py::test_2000", TEST_FILE)
    assert test is not None
    messages = checks_prompt([fix(OUTER)], test, "assert False\n where False = is_leap(2024)")
    text = messages[-1]["content"]

    assert "def is_leap(year):" in text and "every 400th" in text  # the code before any fix
    assert "def test_2000():" in text and "from dates import is_leap" in text
    assert "is_leap(2024)" in text and "edge case" in text
    assert "Call `is_leap` itself in every test" in text and "`from dates import is_leap`" in text
    assert "def test_edge_case_1():\n    assert is_leap(...) == ...\n" in text  # valid Python if copied
    assert len(text) < 3000


def test_a_fix_of_two_files_shows_the_function_it_changes_in_each():
    test = failing_test("tests/test_dates.py::test_2000", TEST_FILE)
    assert test is not None
    helper = "def days_in(year):\n    return 365\n"
    both = PooledFix(
        (
            FileChange("dates.py", LEAP, INNER),
            FileChange("calendar.py", helper, helper.replace("365", "366")),
        ),
        "start",
        "two files",
    )
    text = checks_prompt([both], test, "assert 0 == 1")[-1]["content"]
    assert "In dates.py:" in text and "In calendar.py:\n```python\ndef days_in(year):" in text
    assert "`from calendar import days_in`" in text and "`from dates import is_leap`" in text


async def test_a_version_failing_a_check_the_other_passes_ranks_lower():
    ran: list[tuple[str, str]] = []
    outer, inner = fix(OUTER), fix(INNER)

    told: list[str] = []
    ranking = await rank([outer, inner], None, "", seconds=60, checks=checks(CHECKS, ran, told))

    assert ranking.fixes[0] is inner  # without the checks the first found (outer) came first
    assert inner.evidence["written_checks"] == {
        "written": 2, "kept_before": 2, "telling_apart": 1, "passed": 1,
        "failed": [], "broke": [], "mended": [],
    }  # fmt: skip
    assert outer.evidence["written_checks"]["failed"] == ["test_1900_is_not_leap"]
    assert outer.evidence["written_checks"]["broke"] == ["test_1900_is_not_leap"]  # the code before passed it
    assert "passes 1 of 1 telling written check(s)" in ranking.said
    assert "breaks 1 written check(s) the code passed before (test_1900_is_not_leap)" in ranking.said
    assert [path for path, _ in ran] == [f"tests/{CHECK_FILE}"] * 3  # the code before, then each version
    assert (
        len(told) == 1 and "def test_1900_is_not_leap" in told[0]
    )  # what the model wrote, for the transcript


async def test_a_check_the_code_before_fails_is_recorded_and_never_weighed():
    """Live, text_layout's checks expected a 9-character line at width 8: the code before failed that check,
    the one wrong fix passed it, and it ranked the wrong fix first. A check the code before fails may be the
    bug or the model's mistake (here: 1900 asserted a leap year); only checks the old code passes weigh."""
    wrong = "```python\ndef test_1900_is_leap():\n    assert is_leap(1900)\n```"
    inner, outer = fix(INNER), fix(OUTER)

    ranking = await rank([inner, outer], None, "", seconds=60, checks=checks(wrong, []))

    assert ranking.fixes[0] is inner  # the order found: the wrong check did not lift `or` outside
    assert outer.evidence["written_checks"]["mended"] == ["test_1900_is_leap"]
    assert outer.evidence["written_checks"]["telling_apart"] == 0 and not speaks_for(outer)


async def test_checks_that_tell_nothing_or_cannot_be_written_leave_the_order_found():
    same = "```python\ndef test_2024():\n    assert is_leap(2024)\n```"
    outer, inner = fix(OUTER), fix(INNER)

    told_nothing = await rank([outer, inner], None, "", seconds=60, checks=checks(same, []))
    assert told_nothing.fixes[0] is outer
    assert told_nothing.said.count("mends 1 written check(s) the code failed before") == 2  # both mend 2024
    assert outer.evidence["written_checks"]["telling_apart"] == 0

    outer, inner = fix(OUTER), fix(INNER)
    unwritten = await rank([outer, inner], None, "", seconds=60, checks=checks("I cannot.", []))
    assert unwritten.fixes[0] is outer
    assert "written checks not written: the answer held no test function" in unwritten.said
    assert inner.evidence["written_checks"] == "not written: the answer held no test function"

    outer, inner = fix(OUTER), fix(INNER)
    await rank([outer, inner], None, "", seconds=10, checks=checks(CHECKS, []))
    assert "written_checks" not in outer.evidence  # too little time: not asked


async def test_a_lone_fix_that_breaks_a_check_the_code_passed_before_is_proposed_with_the_doubt_said():
    """One verified fix and nothing to weigh it against: the checks still run, on it and on the code before
    it; `or` makes 1900 a leap year where the code before did not, so nothing speaks for the fix and the
    proposal says which check it breaks."""
    ran: list[tuple[str, str]] = []
    outer = fix(OUTER)

    ranking = await rank([outer], None, "", seconds=60, checks=checks(CHECKS, ran))

    assert ranking.fixes == (outer,) and len(ran) == 2  # the code before, then the fix
    assert outer.evidence["written_checks"]["broke"] == ["test_1900_is_not_leap"]
    assert not speaks_for(outer)
    said = proposal_summary(outer, 1)
    assert said.startswith(PLAIN) and f"{BROKE} (test_1900_is_not_leap): check the logic" in said

    inner = fix(INNER)  # the right rule keeps both checks, and mends neither: they say nothing of it
    quiet = await rank([inner], None, "", seconds=60, checks=checks(CHECKS, []))
    assert "2 written check(s) told nothing" in quiet.said and not speaks_for(inner)


async def test_a_check_a_lone_fix_mends_is_recorded_and_speaks_for_nothing():
    """Live, the model's checks for semver_compare were near-copies of the failing test, some wrong
    (`compare("1.0.0-rc.0", "1.0.0-rc.9") == 1`); the wrong one-token fix `(ka > kb) + (ka < kb)` mended
    them all. A mended check is no evidence for a fix."""
    mends = CHECKS.replace("def test_2023_is_not_leap():\n    assert not is_leap(2023)",
                           "def test_2000_is_leap():\n    assert is_leap(2000)")  # fmt: skip
    inner = fix(INNER)

    ranking = await rank([inner], None, "", seconds=60, checks=checks(mends, []))

    assert inner.evidence["written_checks"]["mended"] == ["test_2000_is_leap"]
    assert "mends 1 written check(s) the code failed before" in ranking.said
    assert not speaks_for(inner)
    assert proposal_summary(inner, 1).startswith(PLAIN)


def test_the_prompt_shows_each_function_the_fixes_change_and_names_each_to_call():
    code = "def needs(n, point):\n    return n > point\n\n\ndef quantity(n, point):\n"
    code += "    return 5 if needs(n, point) else 0\n"

    def changed(old: str, new: str) -> PooledFix:
        return PooledFix((FileChange("stock/policy.py", code, code.replace(old, new)),), "mutants", "")

    operator, negated = changed("n > point", "n < point"), changed("if needs", "if not needs")
    test = failing_test("tests/test_dates.py::test_2000", TEST_FILE)
    assert test is not None

    text = checks_prompt([negated, operator, negated], test, "assert 0 == 5")[-1]["content"]

    assert text.count("def needs(n, point):") == 1 and text.count("def quantity(n, point):") == 1
    assert "Call `quantity` or `needs` itself in every test" in text
    assert "`from stock.policy import quantity, needs`" in text


async def test_checks_that_cannot_run_on_the_code_before_weigh_nothing_and_run_no_version():
    ran: list[tuple[str, str]] = []
    run = run_in_memory(ran)

    async def before_fails(changes, path, text, seconds):
        return None if not changes else await run(changes, path, text, seconds)

    test = failing_test("tests/test_dates.py::TestLeap::test_2024", TEST_FILE)
    assert test is not None

    async def write(messages):
        return CHECKS

    outer, inner = fix(OUTER), fix(INNER)
    await rank([outer, inner], None, "", seconds=60, checks=WrittenChecks(write, before_fails, test))

    said = "not weighed: the checks could not run on the code before any fix"
    assert outer.evidence["written_checks"] == inner.evidence["written_checks"] == said
    assert ran == []  # no version was run for nothing
