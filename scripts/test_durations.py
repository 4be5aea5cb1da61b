"""Writes tests/file_durations.json from a pytest --junitxml report: each test file's seconds, so that
scripts/test.sh hands the slowest files to its workers first (a long file started last holds up the run).
    usage: python scripts/test_durations.py REPORT.xml   (a whole run's report, serial or parallel)
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "file_durations.json"


def file_seconds(report: Path) -> dict[str, float]:
    seconds: Counter[str] = Counter()
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")  # tests.unit.test_x, or tests.unit.test_x.TestClass
        while len(parts) > 1 and not (OUT.parent.parent / ("/".join(parts) + ".py")).is_file():
            parts.pop()
        seconds["/".join(parts) + ".py"] += float(case.get("time", 0))
    return {path: round(total, 1) for path, total in sorted(seconds.items())}


if __name__ == "__main__":
    OUT.write_text(json.dumps(file_seconds(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
