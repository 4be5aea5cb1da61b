"""Where the suite's time goes, from the JSON lines FIXLOOP_CPU_PROFILE=FILE makes pytest write (each test's
wall and CPU seconds, its own process and the children it waited for): totals by folder, the slowest tests
and files by CPU and by wall, and, given a second file, the same files before and after.

    FIXLOOP_CPU_PROFILE=/tmp/after.jsonl scripts/test.sh -m "not e2e"
    python benchmarks/suite_profile.py /tmp/after.jsonl [--before /tmp/before.jsonl] [--top 20]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def by_file(rows: list[dict], field: str) -> Counter[str]:
    totals: Counter[str] = Counter()
    for row in rows:
        totals[row["id"].split("::", 1)[0]] += row[field]
    return totals


def report(rows: list[dict], top: int) -> list[str]:
    folders: Counter[str] = Counter()
    for row in rows:
        folders[row["id"].split("/")[1] if row["id"].count("/") > 1 else "."] += row["cpu"]
    cpu_total, wall_total = sum(r["cpu"] for r in rows), sum(r["wall"] for r in rows)
    lines = [
        f"{len(rows)} tests: {cpu_total:.0f} CPU s, {wall_total:.0f} wall s",
        "CPU s by folder: " + ", ".join(f"{name} {seconds:.0f}" for name, seconds in folders.most_common()),
    ]
    for field in ("cpu", "wall"):
        lines.append(f"\n{top} slowest tests by {field} (cpu s, wall s):")
        for row in sorted(rows, key=lambda r: -r[field])[:top]:
            lines.append(f"  {row['cpu']:6.1f} {row['wall']:6.1f}  {row['id'][:120]}")
        cpu, wall = by_file(rows, "cpu"), by_file(rows, "wall")
        lines.append(f"\n{top} slowest files by {field} (cpu s, wall s):")
        for name, _ in (cpu if field == "cpu" else wall).most_common(top):
            lines.append(f"  {cpu[name]:6.1f} {wall[name]:6.1f}  {name}")
    return lines


def compared(before: list[dict], after: list[dict], top: int) -> list[str]:
    old, new = by_file(before, "cpu"), by_file(after, "cpu")
    lines = [f"\n{top} files that cost the most CPU before (cpu s before -> after):"]
    for name, seconds in old.most_common(top):
        lines.append(f"  {seconds:6.1f} -> {new.get(name, 0.0):6.1f}  {name}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    after = load(args.profile)
    lines = report(after, args.top)
    if args.before:
        lines += compared(load(args.before), after, args.top)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
