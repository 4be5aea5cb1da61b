"""The search tool's matcher, run as a child process (`python -I -S search_worker.py`) so a regex that
backtracks without end can be stopped: a time limit or the run's cancel kills the process.

Standard library only. Reads a JSON job on stdin, writes one JSON answer on stdout.
"""

import json
import re
import sys


def search(job: dict) -> dict:
    regex = re.compile(job["pattern"])
    max_matches, max_line, max_bytes = job["max_matches"], job["max_line"], job["max_bytes"]
    sniff = job["sniff"]
    matches: list[str] = []
    total = 0
    for rel, full in job["files"]:
        try:
            with open(full, "rb") as file:
                data = file.read(max_bytes + 1)
        except OSError:
            continue
        if len(data) > max_bytes or b"\0" in data[:sniff]:
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                total += 1
                if len(matches) < max_matches:
                    shown = line.strip()
                    if len(shown) > max_line:
                        shown = shown[:max_line] + "…"
                    matches.append(f"{rel}:{number}: {shown}")
    return {"matches": matches, "total": total}


if __name__ == "__main__":
    answer = search(json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogateescape")))
    sys.stdout.buffer.write(json.dumps(answer, ensure_ascii=True).encode("ascii"))
