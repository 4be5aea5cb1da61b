"""`fixloop bench report FILE…`: results files from several shards, machines or runs merged into one table."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from fixloop.bench.report import check_report_path, write_report
from fixloop.bench.store import ResultsStore, RunRecord
from fixloop.bench.table import bench_text
from fixloop.errors import ConfigError

REPORT_WORD = Path("report")


def is_report_command(args: argparse.Namespace) -> bool:
    """`fixloop bench report FILE…` (the first CASES_DIR is the word `report`)."""
    cases = getattr(args, "cases", None) or []
    return bool(cases) and cases[0] == REPORT_WORD


def merge_results(paths: Sequence[Path]) -> tuple[list[RunRecord], str]:
    """Every run of the files, one per case, mode and repeat: the latest finished row wins (rows of one
    file in file order, then by their finish time). Returns the rows and a line saying what was merged."""
    if not paths:
        raise ConfigError(
            "bench report: name the results files to merge, e.g. `fixloop bench report a.jsonl`"
        )
    latest: dict[tuple[str, str, int], RunRecord] = {}
    rows = 0
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"bench report: {path} is not a file: name .jsonl results files")
        for record in ResultsStore(path).load().values():
            rows += 1
            key = (record.case, record.mode, record.repeat)
            if key not in latest or record.finished >= latest[key].finished:
                latest[key] = record
    merged = sorted(latest.values(), key=lambda record: (record.case, record.mode, record.repeat))
    summary = f"bench report: merged {len(paths)} file(s), {rows} row(s): {len(merged)} run(s)" + (
        f" ({rows - len(merged)} older duplicate(s) dropped)" if rows > len(merged) else ""
    )
    return merged, summary


def run_report(args: argparse.Namespace) -> int:
    """Print the merged table (and write it to --report when given). Exit 0, 2 on bad input."""
    check_report_path(args.report)
    records, summary = merge_results(list(args.cases[1:]))
    modes = tuple(dict.fromkeys(record.mode for record in records))
    print(summary, flush=True)
    sources = sorted({f"{r.commit or '?'} | {r.model_id or r.model} | {r.machine or '?'}" for r in records})
    for source in sources:
        print(f"  from: {source}", flush=True)
    print("\n" + bench_text(records, modes), flush=True)
    if args.report is not None:
        models = ", ".join(sorted({record.model_id or record.model for record in records}))
        write_report(args.report, records, modes, f"fixloop bench: {models}, {len(records)} run(s)")
        print(f"\nreport: {args.report}", flush=True)
    return 0
