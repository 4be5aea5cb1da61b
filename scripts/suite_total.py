"""Sums up the parts of scripts/test.sh: one closing line of outcome counts, and the suite's exit code.

A part that selected no test (pytest's exit 5) is fine while the other part ran tests; a suite that ran
none at all fails, as does any part that failed or could not run.
    usage: python scripts/suite_total.py FOLDER   (FOLDER holds <part>.json counts and <part>.code)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PARTS = ("main", "apart")
KINDS = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def main(folder: Path) -> int:
    totals = dict.fromkeys(KINDS, 0)
    codes = {}
    for part in PARTS:
        code_file, counts_file = folder / f"{part}.code", folder / f"{part}.json"
        codes[part] = int(code_file.read_text()) if code_file.is_file() else 2
        if counts_file.is_file():
            for kind, count in json.loads(counts_file.read_text()).items():
                totals[kind] = totals.get(kind, 0) + count
    failed = totals["failed"] + totals["error"]
    extra = "".join(f", {totals[k]} {k}" for k in ("error", "xfailed", "xpassed") if totals[k])
    print(f"suite: {totals['passed']} passed, {failed} failed, {totals['skipped']} skipped{extra}")
    broken = {part: code for part, code in codes.items() if code not in (0, 5)}
    if broken:
        print("suite: " + ", ".join(f"the {p} part exited {c}" for p, c in broken.items()), file=sys.stderr)
        return next(iter(broken.values()))
    if sum(totals.values()) == 0:
        print("suite: no tests collected", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
