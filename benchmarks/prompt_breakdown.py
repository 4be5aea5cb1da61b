"""Where a run's prompt tokens come from, request by request: the system prompt, the task, the warm start,
file text (what read_file showed), observations (other tool results, nudges, rejections), history (the
model's own earlier replies) and the tool schemas, beside what the server counted: prompt tokens sent,
processed anew and found in its prompt cache, completion tokens, and the seconds each request took.

Reads a run's JSONL transcript (its "request" records, one per model request, and the "result" record);
the path is in the FixResult (`transcript`) and on the CLI's last line. Without a path, the newest
transcript in the cache folder.

    python benchmarks/prompt_breakdown.py [TRANSCRIPT.jsonl ...]

The sizes by origin are estimates, characters / 4, not the model's tokenizer: compare them with one
another and across requests. Sent, processed, cached and completion are the server's own counts; "?"
where it did not report them (llama-cpp-python sends no timings, so what it processed is unknown).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fixloop.agent.prompt_parts import ORIGINS
from fixloop.bench.table import render
from fixloop.transcript import read_transcript, transcripts_dir

LABELS = {
    "warm_start": "warm start",
    "file_text": "file text",
    "observation": "observations",
    "line_completion": "line completion",
}
FIGURES = ("prompt_tokens", "prompt_processed", "prompt_cached", "completion_tokens")
HEADER = ("request", *(LABELS.get(origin, origin) for origin in ORIGINS), "sent", "processed", "cached",
          "completion", "s")  # fmt: skip


def count(value: Any) -> str:
    return "?" if value is None else f"{value:,}"


def row(label: str, sizes: dict[str, int], figures: Sequence[Any], seconds: float) -> list[str]:
    return [
        label,
        *(f"{sizes.get(origin, 0):,}" for origin in ORIGINS),
        *map(count, figures),
        f"{seconds:.1f}",
    ]


def total(requests: list[dict[str, Any]], key: str) -> int | None:
    """A figure summed over the requests that reported it; None when none did."""
    known = [request[key] for request in requests if request.get(key) is not None]
    return sum(known) if known else None


def breakdown(records: list[dict[str, Any]]) -> str:
    """The table of a transcript's requests with a total row, then the run's own totals from its result."""
    requests = [record for record in records if record.get("type") == "request"]
    if not requests:
        return "no request records (a transcript from before they were written, or a run that asked nothing)"
    rows = [
        row(str(r.get("number", at)), r["by_origin"], [r.get(key) for key in FIGURES], r["seconds"])
        for at, r in enumerate(requests, start=1)
    ]
    sizes = {origin: sum(r["by_origin"].get(origin, 0) for r in requests) for origin in ORIGINS}
    seconds = sum(r["seconds"] for r in requests)
    rows.append(row("all", sizes, [total(requests, key) for key in FIGURES], seconds))
    result = next((record for record in reversed(records) if record.get("type") == "result"), None)
    lines = [render(HEADER, rows), *([run_line(result)] if result is not None else [])]
    lines.append(
        "sizes by origin: estimated tokens (characters / 4); sent to completion: the server's counts"
    )
    return "\n".join(lines)


def run_line(result: dict[str, Any]) -> str:
    """The run's totals, as its result says them."""
    usage = result.get("usage") or {}
    return (
        f"run: {result.get('status')}, {usage.get('requests', '?')} requests, "
        f"{count(usage.get('promptTokens'))} prompt tokens sent, {count(usage.get('promptProcessed'))} "
        f"processed, {count(usage.get('promptCached'))} cached, {count(usage.get('completionTokens'))} "
        f"completion, {usage.get('candidatesDrawn', 0)} candidates drawn, "
        f"{result.get('modelSeconds', 0):.1f} s waiting for the model"
    )


def newest_transcript() -> Path:
    found = sorted(transcripts_dir().glob("*.jsonl"), key=lambda path: path.stat().st_mtime)
    if not found:
        raise SystemExit(f"no transcript in {transcripts_dir()}; pass one's path")
    return found[-1]


def main(paths: list[str]) -> None:
    for path in [Path(p) for p in paths] or [newest_transcript()]:
        print(f"{path}\n{breakdown(read_transcript(path))}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
