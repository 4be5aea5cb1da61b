"""pytest's own words: its console output (ids not found, conftest errors) and the lines worth keeping."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from pathlib import Path

OUTPUT_CAP = 8 * 1024
MESSAGE_CAP = 400
TRACEBACK_CAP = 4000
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Failed)\b")
# "ValueError: ...", "json.decoder.JSONDecodeError: ..."
NAMES_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(: |$)")


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def assertion_line(text: str) -> str:
    """The first line, plus the `assert ...` comparison when a custom assertion message hid it."""
    first = first_line(text)
    if first.startswith("assert "):
        return first
    comparison = next((ln.strip() for ln in text.splitlines() if ln.startswith("assert ")), "")
    return f"{first} ({comparison})" if comparison else first


def exception_line(text: str) -> str:
    """The line naming the exception in a multi-line error (the last one that looks like `XError: ...`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    return lines[-1] if lines else ""


def cap(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 3] + "..."


def trim_traceback(text: str) -> str:
    text = text.strip("\n")
    if len(text) <= TRACEBACK_CAP:
        return text
    head = TRACEBACK_CAP // 4
    return text[:head] + "\n... (traceback trimmed) ...\n" + text[-(TRACEBACK_CAP - head) :]


def tail_of(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    cut = text[-OUTPUT_CAP:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < 200 else cut


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def error_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith(("ERROR:", "error:")) or "error: " in line:
            return line.strip()
    return last_line(text)


def conftest_error(output: str) -> str | None:
    match = re.search(r"ImportError while loading conftest '([^']+)'", output)
    if not match:
        return None
    after = output[match.end() :]
    exc = next((ln[1:].strip() for ln in after.splitlines() if ln.startswith("E ")), "")
    head = f"conftest {match.group(1)} failed to import"
    return f"{head}: {exc}" if exc else head


def ids_not_found(output: str, root: Path) -> list[tuple[str, str]]:
    """(test id relative to root, pytest's reason) for each id pytest could not find."""
    missing = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"ERROR: (not found|found no collectors for): (.+)$", line.strip())
        if match:
            following = lines[index + 1].strip() if index + 1 < len(lines) else ""
            why = following if following.startswith("(") else ""
            missing.append((relative_id(match.group(2), root), why.strip("()") or match.group(1)))
            continue
        match = re.match(r"ERROR: file or directory not found: (.+)$", line.strip())
        if match:
            missing.append((relative_id(match.group(1), root), "file or directory not found"))
    return missing


def requested_id(reported: str, test_ids: Sequence[str]) -> str:
    """The requested id pytest meant: it drops the "[...]" of a parametrized id from its message."""
    for test_id in test_ids:
        if test_id == reported or test_id.startswith(reported + "["):
            return test_id
    return reported


def relative_id(node: str, root: Path) -> str:
    path, sep, rest = node.partition("::")
    candidate = Path(path)
    if candidate.is_absolute():
        with contextlib.suppress(ValueError):
            path = candidate.relative_to(root).as_posix()
    return path + sep + rest


class OutputTail:
    """Keeps the last `cap` bytes of a stream while draining it (a full pipe would block pytest)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = bytearray()

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            self.buffer.extend(chunk)
            if len(self.buffer) > self.cap:
                del self.buffer[: len(self.buffer) - self.cap]

    def text(self) -> str:
        return self.buffer.decode("utf-8", errors="replace")
