"""The bench's judge applies a proposed diff to a fresh copy, puts the case's tests back, runs the whole
suite in its own pytest with per-test and whole-run limits, and scores the run."""

from __future__ import annotations

from pathlib import Path

from fixloop.bench.cases import find_cases
from fixloop.bench.judge import Judge
from fixloop.result import FileChange
from fixloop.shadow import unified_diff
from support import PROJECTS_DIR, load_fix, write_project


def case(name: str):
    return find_cases([PROJECTS_DIR / name])[0]


def edited(name: str, path: str, old: str, new: str) -> FileChange:
    text = (PROJECTS_DIR / name / path).read_text(encoding="utf-8")
    assert text.count(old) == 1
    return FileChange(path, text, text.replace(old, new))


def recorded_fix(name: str) -> list[FileChange]:
    return [edited(name, e["path"], e["old_text"], e["new_text"]) for e in load_fix(name)["edits"]]


async def test_test_files_are_put_back_before_the_suite_runs():
    judge = Judge(test_timeout=30)
    money = "tests/test_money.py"
    deleted = FileChange(money, (PROJECTS_DIR / "careless_fix" / money).read_text(encoding="utf-8"), None)
    added = FileChange("tests/test_scratch.py", None, "def test_scratch():\n    assert False\n")
    diff = unified_diff([*recorded_fix("careless_fix"), deleted, added])
    fixed = await judge.judge(case("careless_fix"), diff, claimed=True)
    assert fixed.status == "fixed_unchecked", fixed.note  # the fixture project has no hidden checks
    assert set(fixed.restored) == {money, "tests/test_scratch.py"}

    weakened = edited("demo", "tests/test_mathutils.py", "factorial(5) == 120", "factorial(5) == 15")
    tampered = await judge.judge(case("demo"), unified_diff([weakened]), claimed=True)
    assert tampered.status == "claimed_but_wrong"
    assert "test_factorial_of_five still fails" in tampered.note
    assert tampered.restored == ("tests/test_mathutils.py",)
    assert (await judge.judge(case("demo"), unified_diff([weakened]), claimed=False)).status == "not_fixed"


async def test_a_hanging_test_is_cut_at_the_per_test_limit_and_a_hanging_suite_at_the_run_limit():
    harmless = edited("hangs", "lookup/bisect_search.py", "lo = mid\n", "lo = mid  # still wrong\n")
    hung = await Judge(test_timeout=1).judge(case("hangs"), unified_diff([harmless]), claimed=False)
    assert hung.status == "timeout", hung.note
    assert "test_finds_last_item hit the per-test limit" in hung.note

    loop = "    result = 1\n    while True:\n        pass\n"
    endless = edited("demo", "mathutils.py", "    result = 1\n", loop)
    stuck = await Judge(test_timeout=0, run_timeout=4).judge(
        case("demo"), unified_diff([endless]), claimed=False
    )
    assert stuck.status == "timeout" and "ran past 4s" in stuck.note


async def test_no_diff_a_diff_that_does_not_apply_and_a_case_that_does_not_fail(tmp_path: Path):
    judge = Judge(test_timeout=30)
    nothing = await judge.judge(case("demo"), "", claimed=False)
    assert nothing.status == "not_fixed" and nothing.note == "no change was proposed"
    garbage = "--- a/mathutils.py\n+++ b/mathutils.py\n@@ -1,1 +1,1 @@\n-no such line\n+x\n"
    assert (await judge.judge(case("demo"), garbage, claimed=False)).status == "error"
    assert (await judge.judge(case("demo"), garbage, claimed=True)).status == "claimed_but_wrong"
    write_project(
        tmp_path / "passes",
        {
            "case.json": '{"failing_test_ids": ["test_ok.py::test_ok"]}',
            "test_ok.py": "def test_ok():\n    assert True\n",
        },
    )
    passes = await judge.judge(find_cases([tmp_path / "passes"])[0], garbage, claimed=True)
    assert passes.status == "error" and "passes on the original case" in passes.note
