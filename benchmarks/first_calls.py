"""What the model's first call and first edit aimed at, per bench mode: a test file or the code under test.

Reads a bench results file (JSONL) and each run's transcript; prints, per mode, how many first tool calls and
first edits (edit_file, write_file, replace_function) named a test file. With the code edit form the first
turn is corrected code, which is never applied to a test file; it counts as an edit of the code.

    python benchmarks/first_calls.py RESULTS.jsonl [RESULTS.jsonl ...]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from fixloop.project import is_test_path

EDITS = ("edit_file", "write_file", "replace_function")


def first_calls(transcript: Path) -> tuple[str | None, str | None]:
    """(what the first call aimed at, what the first edit aimed at): "test", "code", or None."""
    first = edit = None
    for line in transcript.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        kind = event.get("type")
        if kind == "notice" and event.get("kind") == "candidate" and edit is None:
            return first or "code", "code"  # a code reply came first: applied to code only
        if kind != "action":
            continue
        path = str((event.get("arguments") or {}).get("path", ""))
        aim = "test" if path and is_test_path(path.lstrip("./")) else "code"
        first = first or aim
        if event.get("tool") in EDITS:
            return first, aim
    return first, edit


def main(paths: list[str]) -> None:
    counts: dict[str, Counter[str]] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            transcript = Path(record.get("transcript") or "")
            if record.get("mode") == "oneshot" or not transcript.is_file():
                continue
            first, edit = first_calls(transcript)
            tally = counts.setdefault(record["mode"], Counter())
            tally["runs"] += 1
            tally[f"first call: {first}"] += 1
            tally[f"first edit: {edit}"] += 1
    for mode, tally in counts.items():
        print(
            f"{mode}: {tally['runs']} runs; first call at a test file {tally['first call: test']}, first "
            f"edit of a test file {tally['first edit: test']}, of the code {tally['first edit: code']}, no "
            f"edit {tally['first edit: None']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
