"""The efficacy table (before vs after a change) from the bench's result files, printed, and with --write put
between its markers in README.md (the summary) and docs/bench.md (the summary, every case, the sources);
--write also records the files and labels in benchmarks/results/efficacy-table.json, from which the suite
checks that the committed tables are what those files give.

    python benchmarks/efficacy_table.py --before benchmarks/results/efficacy-before-sample.jsonl \
        --after benchmarks/results/efficacy-after-sample*.jsonl --write
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fixloop.bench.efficacy import (
    Side,
    case_table,
    only_one_side,
    provenance_lines,
    replace_block,
    summary_table,
)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "benchmarks" / "results" / "efficacy-table.json"  # which files and labels the tables show


def blocks(before: Side, after: Side) -> tuple[str, str]:
    """(README's block, docs/bench.md's block)."""
    summary = summary_table(before, after)
    readme = summary + "\nEvery case and where the rows come from: [docs/bench.md](docs/bench.md#efficacy).\n"
    cases, changed = case_table(before, after), only_one_side(before, after)
    docs = f"{summary}\n{cases}\n{changed}\nResult files:\n\n{provenance_lines(before, after)}"
    return readme, docs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", nargs="+", type=Path, required=True, help="results files of the old code")
    parser.add_argument("--after", nargs="+", type=Path, required=True, help="results files of the new code")
    parser.add_argument("--before-label", default="before")
    parser.add_argument("--after-label", default="after")
    parser.add_argument(
        "--write", action="store_true", help="write the blocks into README.md and docs/bench.md"
    )
    args = parser.parse_args()
    before = Side.load(args.before_label, args.before, [_relative(p) for p in args.before])
    after = Side.load(args.after_label, args.after, [_relative(p) for p in args.after])
    readme, docs = blocks(before, after)
    print(docs)
    if args.write:
        for path, block in ((ROOT / "README.md", readme), (ROOT / "docs" / "bench.md", docs)):
            path.write_text(replace_block(path.read_text(encoding="utf-8"), block, path), encoding="utf-8")
            print(f"written: {path.relative_to(ROOT)}")
        sides = {
            "before": {"label": args.before_label, "files": [str(_relative(p)) for p in args.before]},
            "after": {"label": args.after_label, "files": [str(_relative(p)) for p in args.after]},
        }
        SOURCES.write_text(json.dumps(sides, indent=2) + "\n", encoding="utf-8")
        print(f"written: {SOURCES.relative_to(ROOT)}")
    return 0


def _relative(path: Path) -> Path:
    """The path as the docs should name it: relative to the checkout when it lies inside it."""
    resolved = path.resolve()
    return resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else path


if __name__ == "__main__":
    raise SystemExit(main())
