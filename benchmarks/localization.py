"""Where the buggy function shows: coverage ranking (SBFL) against the warm start's functions the test calls.

No model: for each bench case whose failure ends in the test (an assertion), the buggy function (from the
corpus: the mutated line, or the own project's known fix) is looked up in the Ochiai ranking and in the
order of the code blocks the warm start shows without suspects. Prints one row per case and the totals:
the plain ranking (SBFL) and the one whose near-ties go to the function nearer the test by calls, with
the failing assertion's callee kept among the first five (SBFL + calls), from the same coverage run.

    python benchmarks/localization.py fixtures/bench/projects /work/bench-cases \
        --subset fixtures/bench/subsets/small-model.txt
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import re
import sys
from pathlib import Path

from fixloop.agent.localize import by_call_distance, ends_in_test, find_suspects
from fixloop.agent.warm_start import build_warm_start
from fixloop.agent.warm_start.source_file import qualname, walk_defs
from fixloop.bench.cases import BenchCase, CaseCopy, find_cases, resolve_test_command, select
from fixloop.pytest_runner import PytestRunner
from fixloop.verify import record_baseline
from fixloop.verify.baseline import matches, target_outcomes

REPO = Path(__file__).resolve().parent.parent
HEADER = re.compile(r"^### (\S+) \(lines ([\d, -]+)\) ([\w.]+)", re.MULTILINE)


def bug_site(case: BenchCase) -> tuple[str, str] | None:
    """(file, the text the bug is in) from the corpus manifest or the own project's recorded fix."""
    case_file = case.folder / "case.json"
    data = json.loads(case_file.read_text()) if case_file.is_file() else {}
    mutant = data.get("source", {}).get("mutant")
    if mutant:
        for entry in json.loads((REPO / "fixtures/bench/mutants.json").read_text()):
            if entry["id"] == mutant:
                return entry["file"], entry["mutant"]
    fix = REPO / "fixtures/bench/fixes" / f"{case.name}.json"
    if fix.is_file():
        edit = json.loads(fix.read_text())["edits"][0]
        return edit["path"], edit["old_text"]
    return None


def bug_function(root: Path, site: tuple[str, str]) -> str | None:
    path, text = site
    source = (root / path).read_text(encoding="utf-8")
    at = source.find(text.strip().splitlines()[0].strip())
    if at < 0:
        return None
    line = source.count("\n", 0, at) + 1
    best = None
    for node, classes in walk_defs(ast.parse(source)):
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best[0].lineno:
                best = (node, classes)
    return f"{path}::{qualname(*best)}" if best else f"{path}::<module>"


async def measure(case: BenchCase) -> dict[str, object] | None:
    site = bug_site(case)
    if site is None:
        return None
    async with CaseCopy(case) as root:
        runner = PytestRunner(root, resolve_test_command(case, root), 120)
        baseline = await record_baseline(runner, case.failing_test_ids)
        failing = [o for t in case.failing_test_ids for o in target_outcomes(baseline.run, t) if o.failing]
        bug = bug_function(root, site)
        row: dict[str, object] = {
            "case": case.name,
            "bug": bug,
            "ends_in_test": bool(failing) and ends_in_test(failing[0]),
        }
        plain = build_warm_start(root, baseline.run, list(case.failing_test_ids))
        code = plain.split("# The failing test")[0]
        shown = [f"{m.group(1)}::{m.group(3).rstrip(',')}" for m in HEADER.finditer(code)]
        row["warm_start_rank"] = shown.index(bug) + 1 if bug in shown else None
        suspects, run = await find_suspects(runner, root, case.failing_test_ids, limit=10_000, by_calls=False)
        ranked = [f"{s.path}::{s.name}" for s in suspects]
        row["sbfl_rank"] = ranked.index(bug) + 1 if bug in ranked else None
        targets = case.failing_test_ids
        failing_now = [o for t, o in run.results.items() if o.failing and any(matches(t, x) for x in targets)]
        by_calls = [f"{s.path}::{s.name}" for s in by_call_distance(root, suspects, failing_now, 5)]
        row["calls_rank"] = by_calls.index(bug) + 1 if bug in by_calls else None
        row["sbfl_top_score"] = round(suspects[0].score, 2) if suspects else None
        row["sbfl_bug_score"] = round(suspects[ranked.index(bug)].score, 2) if bug in ranked else None
        return row


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="+", type=Path)
    parser.add_argument("--subset", type=Path)
    parser.add_argument("--json", type=Path, help="write the rows here too")
    args = parser.parse_args()
    rows = []
    for case in select(find_cases(args.cases), args.subset):
        try:
            row = await measure(case)
        except Exception as error:  # a case that cannot be measured is named, not fatal
            print(f"{case.name}: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        if row is not None:
            rows.append(row)
            print(json.dumps(row), flush=True)
    asserting = [r for r in rows if r["ends_in_test"]]
    for label, key in (
        ("warm start (functions the test calls)", "warm_start_rank"),
        ("SBFL", "sbfl_rank"),
        ("SBFL + calls", "calls_rank"),
    ):
        first = sum(1 for r in asserting if r[key] == 1)
        top3 = sum(1 for r in asserting if r[key] is not None and r[key] <= 3)
        print(
            f"{label}: bug function first in {first}/{len(asserting)}, in the top 3 in {top3}/"
            f"{len(asserting)} of the cases whose traceback ends in the test"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
