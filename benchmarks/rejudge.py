"""Re-judges recorded bench runs with today's cases: each row's diff goes through the judge again, hidden
checks included, so runs recorded before the checks existed are told fixed from plausible.

No model is asked: the diffs are the ones the runs proposed. Rows without a diff keep their verdict.
    usage: python benchmarks/rejudge.py RESULTS.jsonl OUT.jsonl [--cases DIR ...]
    (--cases: where to find the cases; default fixtures/bench/projects and fixtures/bench/cases, the
    folder `python fixtures/bench/build.py --out fixtures/bench/cases` builds the library cases into)
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from fixloop.bench.cases import find_cases
from fixloop.bench.judge import Judge

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CASES = (REPO / "fixtures" / "bench" / "projects", REPO / "fixtures" / "bench" / "cases")


async def rejudge(rows: list[dict], folders: list[Path]) -> list[dict]:
    cases = {case.name: case for case in find_cases([f for f in folders if f.is_dir()])}
    judge = Judge()
    out = []
    for row in rows:
        case = cases.get(row["case"])
        if not row.get("diff") or case is None:
            out.append(row)
            continue
        verdict = await judge.judge(case, row["diff"], claimed=bool(row.get("claimed")))
        note = f"re-judged with hidden checks: {verdict.note} (recorded: {row['status']}: {row['note']})"
        reference = case.reference.text if case.reference and verdict.status == "plausible" else ""
        judged = {"status": verdict.status, "note": note, "judge_seconds": round(verdict.seconds, 2)}
        out.append({**row, **judged, "hidden_checks": len(case.hidden_tests), "reference": reference})
        print(f"{row['case']:34} {row['status']:18} -> {verdict.status:16} {verdict.note[:100]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cases", type=Path, action="append", default=None)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.results.read_text(encoding="utf-8").splitlines() if line]
    judged = asyncio.run(rejudge(rows, args.cases or list(DEFAULT_CASES)))
    args.out.write_text("".join(json.dumps(row) + "\n" for row in judged), encoding="utf-8")


if __name__ == "__main__":
    main()
