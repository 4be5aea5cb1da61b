"""The bench's tables, reports, merged results and efficacy table show `plausible` and `fixed (unchecked)`
beside `fixed`: the fix rate counts checked fixes only, a plausible row carries its case's reference, and a
results row written before hidden checks existed reads its `fixed` as `fixed (unchecked)`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from fixloop.bench.efficacy import Side, case_table, summary_table
from fixloop.bench.merge import merge_results
from fixloop.bench.report import html_report, markdown_report
from fixloop.bench.store import ResultsStore, RunRecord
from fixloop.bench.table import bench_text, case_rows, mode_totals

REFERENCE = "calendar_rules.py: return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"


def run(case: str, status: str, repeat: int = 1, **more: object) -> RunRecord:
    fields: dict[str, object] = {"hidden_checks": 1, "wall_seconds": 10, **more}
    return RunRecord(case, "react", repeat, "m", status, **fields)


RECORDS = [
    run(
        "leap",
        "plausible",
        note="hidden check t::x fails: line 6: assert not is_leap(1900)",
        reference=REFERENCE,
    ),
    run("dates", "fixed"),
    run("plain", "fixed_unchecked", hidden_checks=0),
    run("plain", "not_fixed", repeat=2, hidden_checks=0),
]


def test_each_verdict_has_its_line_and_the_fix_rate_counts_checked_fixes_only():
    totals = dict(mode_totals(RECORDS, ["react"]))
    assert totals["fix rate"] == ["1/4 = 25% (+1 unchecked)"]
    assert totals["fixed"] == ["1"] and totals["plausible"] == ["1"] and totals["fixed (unchecked)"] == ["1"]
    rows = {row.case: row for row in case_rows(RECORDS)}
    assert rows["plain"].status == "fixed (unchecked) 1/2" and rows["leap"].status == "plausible"
    assert rows["leap"].note.endswith(f"; reference {REFERENCE}")
    mixed = case_rows(
        [run("x", "fixed"), run("x", "fixed_unchecked", repeat=2), run("x", "plausible", repeat=3)]
    )
    assert mixed[0].status == "fixed 1/3 + 1 unchecked"
    assert "fixed (unchecked)" in bench_text(RECORDS, ["react"])


def test_the_reports_show_the_plausible_row_with_its_reference():
    markdown = markdown_report(RECORDS, ["react"], "t")
    assert "| leap | react | plausible |" in markdown and f"reference {REFERENCE}" in markdown
    assert "| fixed (unchecked) | 1 |" in markdown and "| plausible | 1 |" in markdown
    assert '<td class="plausible">plausible</td>' in html_report(RECORDS, ["react"], "t")


def test_a_row_from_before_hidden_checks_reads_fixed_as_unchecked_and_merges_so(tmp_path: Path):
    old = {
        "case": "a",
        "mode": "sample",
        "repeat": 1,
        "model": "m",
        "status": "fixed",
        "finished": "2026-01-01",
    }
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps({**old, "case": "b", "status": "not_fixed"}) + "\n")
    store = ResultsStore(tmp_path / "new.jsonl")
    store.append(run("c", "fixed"))
    assert {r.case: r.status for r in ResultsStore(path).load().values()} == {
        "a": "fixed_unchecked",
        "b": "not_fixed",
    }
    records, _ = merge_results([path, tmp_path / "new.jsonl"])
    assert {r.case: (r.status, r.hidden_checks) for r in records} == {
        "a": ("fixed_unchecked", None),
        "b": ("not_fixed", None),
        "c": ("fixed", 1),
    }


def test_the_efficacy_table_has_a_row_for_each_and_names_them_per_case(tmp_path: Path):
    before = Side("before", (), tuple(RECORDS[2:]))
    after = Side("after", (), tuple(RECORDS[:2]))
    summary = summary_table(before, after)
    assert "| **fixed** (the judge's verdict) | **0** | **1** |" in summary
    assert "| fixed (unchecked): no hidden checks | 1 | 0 |" in summary
    assert "| plausible: a hidden check fails | 0 | 1 |" in summary
    cases = case_table(before, after)
    assert "| leap | — | plausible, 10 s |" in cases and "| dates | — | **fixed**, 10 s |" in cases
    assert "| plain | not fixed, 10 s | — |" in cases  # the side's last row of the case


def test_the_efficacy_table_says_who_found_each_change_one_token_search_or_the_model():
    from fixloop.bench.statuses import MECHANICAL, MODEL, found_by

    mechanical = replace(run("leap", "plausible"), origin="mutants")
    model = replace(run("dates", "fixed"), origin="start")
    older = replace(
        run("old", "fixed"), summary="verified fix (one-token change 5 of 134): a.py line 7: `and` → `or`"
    )
    older_model = replace(run("older", "fixed"), summary="verified fix (candidate 5 of 7): a.py: replaced f")
    none = replace(run("plain", "not_fixed"), origin="")
    assert [found_by(r) for r in (mechanical, model, older, older_model, none)] == [
        MECHANICAL, MODEL, MECHANICAL, MODEL, ""
    ]  # fmt: skip

    summary = summary_table(
        Side("before", (), (older, none)), Side("after", (), (mechanical, model, older_model))
    )
    assert "| found by one-token search, no model (fixed / plausible) | 1 / 0 | 0 / 1 |" in summary
    assert "| found by the model's rounds (fixed / plausible) | 0 / 0 | 2 / 0 |" in summary
