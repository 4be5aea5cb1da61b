"""A line-level round's figures say how many of its answers were refused as invalid and how many copied the
lines back unchanged; a bench row carries them, and the unchanged copies of every round, per run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from fixloop.agent.candidates import Candidate
from fixloop.agent.line_round import line_figures
from fixloop.agent.round_result import RoundFigures, RoundResult
from fixloop.bench.cases import BenchCase
from fixloop.bench.judge import Verdict
from fixloop.bench.mode_run import ModeRun
from fixloop.bench.modes import round_figures
from fixloop.bench.running import Unit, _record
from fixloop.bench.store import read_row
from fixloop.result import FileChange

TEXT = "def f(x):\n    return x + 1\n"
FIX = (FileChange("m.py", TEXT, TEXT.replace("+", "-")),)


def test_a_line_round_tells_copies_back_from_answers_refused_as_invalid() -> None:
    result = RoundResult(
        candidates=[
            Candidate(1, "line 2:     return x + 1", problem="no corrected code in the reply"),
            Candidate(2, "line 2: return x +", problem="write_file m.py: write refused: SyntaxError"),
            Candidate(3, "I am not sure.", problem="no corrected code in the reply"),
            Candidate(4, "line 2: return x - 1", FIX),
        ],
        fates=["invalid", "invalid", "invalid", "judged"],
    )
    figures = line_figures(result, TEXT)
    assert figures.kind == "lines" and figures.drawn == 4
    assert (figures.count("unchanged"), figures.count("invalid"), figures.count("judged")) == (1, 2, 1)


def test_the_run_figures_sum_the_line_answers_and_the_copies_of_every_round() -> None:
    run = SimpleNamespace(
        round_figures=[
            RoundFigures(6, 1, 2, (("unchanged", 3), ("judged", 3))),
            RoundFigures(8, 0, 1, (("unchanged", 1), ("invalid", 2), ("judged", 5)), kind="lines"),
        ]
    )
    figures = round_figures(run)  # type: ignore[arg-type]
    assert figures["distinct"] == (2, 1) and figures["drawn"] == (6, 8)
    assert (figures["line_answers_invalid"], figures["line_answers_drawn"]) == (2, 8)
    assert (figures["candidates_unchanged"], figures["candidates_drawn"]) == (4, 14)


def test_a_bench_row_carries_the_counts_and_an_old_row_reads_as_none_counted() -> None:
    counts = {
        "line_answers_invalid": 1,
        "line_answers_drawn": 8,
        "candidates_unchanged": 3,
        "candidates_drawn": 14,
    }
    outcome = ModeRun(False, "", **counts)
    case = BenchCase("demo", Path("."), ("tests/test_m.py::test_f",))
    context = SimpleNamespace(model="m", origin=SimpleNamespace(commit="c", model_id="m", machine="x"))
    record = _record(Unit(case, "sample", 1), context, outcome, Verdict("failed", "still failing"), 1.0)  # type: ignore[arg-type]
    row = record.to_json()
    assert {name: row[name] for name in counts} == counts
    assert read_row(row) == record
    old = read_row({"case": "demo", "mode": "sample", "repeat": 1, "model": "m", "status": "failed"})
    assert (old.line_answers_invalid, old.line_answers_drawn, old.candidates_unchanged) == (0, 0, 0)
