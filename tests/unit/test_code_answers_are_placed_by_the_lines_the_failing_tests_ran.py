"""The placement hints a run hands its code answers: the lines the failing targets' tracebacks pass
through, by file (the definition the failing test runs, of two of one name), with the suspects."""

from __future__ import annotations

from fixloop.config import Settings
from fixloop.engine.assembly import placement_hints, plan_run
from fixloop.engine.preparation import lines_in_tracebacks
from fixloop.pytest_runner.results import Frame, TestOutcome, TestRun
from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.code_reply import CodeBlock, apply_code_blocks

TEXT = (
    "def load(rows):\n    def parse(row):\n        return int(row) + 1\n\n"
    "    return [parse(r) for r in rows]\n\n\n"
    "def parse(text):\n    return text.strip()\n"
)


def _run() -> TestRun:
    frames = (Frame("tests/test_x.py", 4, "test_load"), Frame("x.py", 5, "load"), Frame("x.py", 3, "parse"))
    failing = TestOutcome("tests/test_x.py::test_load", "failed", frames=frames)
    passing = TestOutcome("tests/test_x.py::test_parse", "passed", frames=(Frame("x.py", 9, "parse"),))
    return TestRun({o.test_id: o for o in (failing, passing)}, 1, False, 0.1, "")


def test_the_lines_the_failing_targets_ran_place_an_answer_on_the_nested_definition() -> None:
    lines = lines_in_tracebacks(_run(), ["tests/test_x.py::test_load"])
    assert lines == {"tests/test_x.py": (4,), "x.py": (3, 5)}

    hints = placement_hints(plan_run(Settings()), ("x.py::load",), lines)
    assert hints == PlacementHints(("x.py::load",), lines, anywhere=True)
    edit = apply_code_blocks(
        [CodeBlock("def parse(row):\n    return int(row)\n", "x.py")], {"x.py": TEXT}, hints
    )
    assert "        return int(row)\n\n    return [parse(r)" in edit.files["x.py"]
    assert edit.choices and "the one the failing test runs" in edit.choices[0]

    off = placement_hints(plan_run(Settings(code_answer_placement=False)), (), {})
    assert off.anywhere is False
