"""Prints where a suite run's CPU went, from the JSON lines FIXLOOP_CPU_PROFILE=FILE made pytest write:
the totals by folder, the N slowest tests and the N slowest files by CPU seconds (wall beside them).
    usage: python scripts/suite_profile.py FILE [N]   (N: 20 unless given)
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def totals(rows: list[dict], key) -> list[tuple[str, float, float]]:
    """(name, cpu, wall) summed by `key(test id)`, slowest by CPU first."""
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for row in rows:
        name = key(row["id"])
        cpu[name] += row["cpu"]
        wall[name] += row["wall"]
    return sorted(((name, cpu[name], wall[name]) for name in cpu), key=lambda item: -item[1])


def table(title: str, items: list[tuple[str, float, float]], width: int = 120) -> str:
    lines = [f"{title} (cpu s, wall s):"]
    lines += [f"  {cpu:7.1f} {wall:7.1f}  {name[:width]}" for name, cpu, wall in items]
    return "\n".join(lines)


def report(rows: list[dict], count: int) -> str:
    cpu, wall = sum(row["cpu"] for row in rows), sum(row["wall"] for row in rows)
    folders = totals(rows, lambda test_id: "/".join(test_id.split("::")[0].split("/")[:2]))
    parts = [
        f"{len(rows)} tests: {cpu:.0f} CPU s, {wall:.0f} wall s (summed over the workers)",
        table("by folder", folders),
        table(f"{count} slowest tests by cpu", totals(rows, lambda test_id: test_id)[:count]),
        table(f"{count} slowest files by cpu", totals(rows, lambda test_id: test_id.split("::")[0])[:count]),
    ]
    return "\n\n".join(parts)


if __name__ == "__main__":
    print(report(load(Path(sys.argv[1])), int(sys.argv[2]) if len(sys.argv) > 2 else 20))
