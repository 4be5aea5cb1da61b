"""The command line of `fixloop bench`: its own options, validated into one object before anything runs."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from fixloop.bench.cases import BenchCase, find_cases, pick, select
from fixloop.bench.modes import parse_modes
from fixloop.bench.report import check_report_path
from fixloop.bench.shards import in_shard, parse_shard
from fixloop.bench.store import default_results_path
from fixloop.bundled import bundled_case_folders
from fixloop.errors import ConfigError


@dataclass(frozen=True)
class BenchOptions:
    """The bench's own options (the model and loop settings travel as setting overrides)."""

    cases: tuple[BenchCase, ...]
    modes: tuple[str, ...]
    repeat: int
    jobs: int
    results: Path
    fresh: bool
    report: Path | None
    judge_test_timeout: float
    judge_timeout: float
    bundled: Path | None = None  # where the cases that ship with fixloop are, when no CASES_DIR was named
    run_timeout: float = 300.0  # seconds one run may take, copy and setup included
    shard: tuple[int, int] | None = None  # (K, N): this bench runs part K of N

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BenchOptions:
        """Validated options; every bad value is a ConfigError naming it (exit 2)."""
        for name, value in (("--jobs", args.jobs), ("--repeat", args.repeat)):
            if value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value}")
        for name, value in (
            ("--judge-test-timeout", args.judge_test_timeout),
            ("--judge-timeout", args.judge_timeout),
            ("--run-timeout", args.run_timeout),
        ):
            if value <= 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value:g}")
        if args.subset is not None and not args.subset.is_file():
            raise ConfigError(f"--subset {args.subset} is not a file: give a text file of case names")
        check_report_path(args.report)
        modes = parse_modes(args.mode)
        folders = args.cases or bundled_case_folders()
        shard = parse_shard(args.shard)
        cases = tuple(in_shard(pick(select(find_cases(folders), args.subset), _names(args.case)), shard))
        return cls(
            cases,
            modes,
            args.repeat,
            args.jobs,
            args.results or default_results_path(),
            args.fresh,
            args.report,
            args.judge_test_timeout,
            args.judge_timeout,
            None if args.cases else folders[0].parent,
            args.run_timeout,
            shard,
        )


def _names(values: list[str] | None) -> list[str]:
    return [name.strip() for value in values or [] for name in value.split(",") if name.strip()]


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench's own command-line options (the run options are added by the CLI)."""
    _what_to_run(parser)
    _how_to_run(parser)


def _what_to_run(parser: argparse.ArgumentParser) -> None:
    """Which cases, in which modes, how often, and which shard of them."""
    parser.add_argument(
        "cases",
        nargs="*",
        type=Path,
        metavar="CASES_DIR",
        help="a case folder (with case.json) or a folder of them (default: the fixture "
        "projects and bench projects that ship with fixloop); `report FILE…` instead merges results "
        "files into one table",
    )
    parser.add_argument(
        "--case",
        action="append",
        metavar="NAME",
        help="run only the case(s) of this name; repeat or comma-separate for several",
    )
    parser.add_argument("--subset", type=Path, help="text file of case names to run, one a line")
    parser.add_argument(
        "--mode",
        action="append",
        metavar="MODE",
        help="react (default), oneshot or sample; repeat or comma-separate for several",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per case and mode")
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run only part K of N of the cases (split by a hash of each case's name, the same on every "
        "machine); merge the parts' results files with `fixloop bench report FILE…`",
    )


def _how_to_run(parser: argparse.ArgumentParser) -> None:
    """How many at once, where results go, and how long a run and the judge may take."""
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel, each in its own copy")
    parser.add_argument(
        "--results",
        type=Path,
        help="JSONL results file to append to and resume from (default: under the user cache folder)",
    )
    parser.add_argument("--fresh", action="store_true", help="run everything again, ignoring earlier results")
    parser.add_argument("--report", type=Path, help="also write the tables to this .html or .md file")
    parser.add_argument(
        "--judge-test-timeout",
        type=float,
        default=60.0,
        help="seconds one test may take in the judge's run (default 60)",
    )
    parser.add_argument(
        "--judge-timeout",
        type=float,
        default=600.0,
        help="seconds the judge's whole-suite run may take (default 600)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=300.0,
        help="seconds one run may take (copy and setup included); past it the run is stopped, its "
        "processes killed, and it counts as not fixed (default 300)",
    )
