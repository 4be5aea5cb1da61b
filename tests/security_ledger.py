"""The adversarial suite's ledger as plain rows: kept per process, gathered from the workers, printed once."""

from __future__ import annotations

import json
import os
from typing import Any

BAD = ("escape", "leak", "accepted tamper", "traceback", "hang", "left behind")
ROWS: list[dict[str, Any]] = []  # this process's attempts, and the workers' once they report


def add(category: str, tool: str, label: str, outcome: str, detail: str) -> None:
    row = {"category": category, "tool": tool, "label": label, "outcome": outcome, "detail": detail[:2000]}
    ROWS.append(row)


def write() -> None:
    """Every attempt with its outcome as JSON lines, where FIXLOOP_SECURITY_LEDGER names a file."""
    path = os.environ.get("FIXLOOP_SECURITY_LEDGER")
    if path and ROWS:
        with open(path, "w", encoding="utf-8") as file:
            file.writelines(json.dumps(row) + "\n" for row in ROWS)


def table(rows: list[dict[str, Any]] = ROWS) -> list[str]:
    """The summary printed at the end of the session: attempts and outcomes per category."""
    columns = ["attempts", "refused", "contained", "rejected", "one line", *BAD]
    by_category: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = by_category.setdefault(row["category"], dict.fromkeys(columns, 0))
        counts["attempts"] += 1
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    if not by_category:
        return []
    total = {name: sum(counts.get(name, 0) for counts in by_category.values()) for name in columns}
    width = max(len(name) for name in [*by_category, "total"]) + 2
    lines = ["".ljust(width) + " ".join(name.rjust(max(len(name), 4)) for name in columns)]
    for name, counts in [*sorted(by_category.items()), ("total", total)]:
        cells = " ".join(str(counts.get(c, 0)).rjust(max(len(c), 4)) for c in columns)
        lines.append(name.ljust(width) + cells)
    tools = sorted({row["tool"] for row in rows if row["category"] == "confinement"})
    if tools:
        lines.append(f"confinement attempts cover: {', '.join(tools)}")
    return lines
