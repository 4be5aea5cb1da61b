"""How each run of a bench results file went, from its transcript: which kind of round found the fix (the
start round, candidates on the next suspect, the line-level round, the loop's tool turns), whether the
winner was a copy back asked again with the failing call, where a code answer was placed, what the
localization said, and the rounds' figures. For the closing note's "which ingredient made the difference".

    python benchmarks/fix_story.py benchmarks/results/efficacy-after-sample.jsonl [--case NAME] [--all]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fixloop.bench.merge import merge_results
from fixloop.bench.statuses import counts_as_fixed
from fixloop.bench.store import RunRecord

ROUND_OF = {
    "candidates focused on the next suspect": "suspect round",
    "a line-level round": "line-level round",
    "the loop's tool turns": "loop",
}


def story(record: RunRecord) -> list[str]:
    """The lines that tell how the run went (its transcript's notices that matter)."""
    path = Path(record.transcript or "")
    if not path.is_file():
        return [f"  (no transcript at {path})"]
    found_in, lines = "start round", []
    for raw in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(raw)
        text, kind = str(event.get("text") or ""), event.get("kind")
        if event.get("type") != "notice":
            continue
        if kind == "rounds" and "moving on to" in text:
            found_in = ROUND_OF.get(text.split("moving on to ", 1)[1], found_in)
            lines.append(f"  {event['t']:6.0f} s  {text}")
        elif kind == "nudge" or (kind == "protocol" and found_in == "start round"):
            found_in = "loop"
        if kind in ("localize", "placement", "round") or (kind == "candidate" and "verified" in text):
            lines.append(f"  {event['t']:6.0f} s  {text[:200]}")
    if counts_as_fixed(record.status):
        lines.append(f"  found in: {found_in}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument("--all", action="store_true", help="runs not fixed too")
    args = parser.parse_args()
    records, _ = merge_results(args.results)
    for record in records:
        wanted = counts_as_fixed(record.status) or args.all
        if (args.case and record.case not in args.case) or not wanted:
            continue
        tried = record.rounds_tried or "-"
        print(f"{record.case}: {record.status}, {record.wall_seconds:.0f} s, rounds tried: {tried}")
        print("\n".join(story(record)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
