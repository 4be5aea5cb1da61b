"""Finding edit_file's old_text in a file: exact, then modulo indentation and trailing whitespace."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass

from fixloop.tools.textfile import GUTTER, FileToolError, fenced

MIN_SIMILARITY = 0.5
MAX_CANDIDATES = 20


@dataclass(frozen=True)
class Replacement:
    """The file's new text and where the change is, as 1-based line numbers."""

    text: str
    old_first: int
    old_last: int
    new_first: int
    new_last: int  # new_first - 1 when the lines were deleted
    reindented: bool = False


def replace_unique(text: str, old: str, new: str, rel: str) -> Replacement:
    """`text` with the one place matching `old` replaced by `new`; FileToolError when none or several match.

    All three use '\\n' newlines. Tries an exact match first, then a line match that ignores trailing
    whitespace and a uniform indentation difference (re-indenting `new` to fit), then the same with
    read_file's line-number gutters ('  12 | ') removed from old and new, then with a literal '\\n'
    read as the newline the model meant.
    """
    exact = _positions(text, old)
    if len(exact) == 1:
        return _splice(text, exact[0], old, new)
    if len(exact) > 1:
        raise _multiple(rel, [text.count("\n", 0, at) + 1 for at in exact])
    found = _line_match(text, old, new, rel)
    if found is not None:
        return found
    old_lines = old.split("\n")
    if any(line.strip() for line in old_lines) and all(
        GUTTER.match(line) for line in old_lines if line.strip()
    ):
        new_lines = new.split("\n")
        if all(GUTTER.match(line) for line in new_lines if line.strip()):
            new = "\n".join(GUTTER.sub("", line) for line in new_lines)
        found = _line_match(text, "\n".join(GUTTER.sub("", line) for line in old_lines), new, rel)
        if found is not None:
            return found
    if "\n" not in old and "\\n" in old:  # escaped twice on the way: '\\n' where a newline was meant
        return replace_unique(text, _unescape(old), new if "\n" in new else _unescape(new), rel)
    raise FileToolError(near_miss_message(text, old, rel))


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')


def _positions(text: str, old: str) -> list[int]:
    positions: list[int] = []
    at = text.find(old)
    while at != -1:
        positions.append(at)
        at = text.find(old, at + 1)
    return positions


def _splice(text: str, at: int, old: str, new: str) -> Replacement:
    result = text[:at] + new + text[at + len(old) :]
    first = text.count("\n", 0, at) + 1
    old_last = first + old.count("\n") - (1 if old.endswith("\n") else 0)
    new_last = first + new.count("\n") - (1 if new.endswith("\n") or not new else 0)
    return Replacement(result, first, max(first, old_last), first, new_last)


def _multiple(rel: str, lines: list[int]) -> FileToolError:
    shown = ", ".join(str(n) for n in lines[:10]) + (", …" if len(lines) > 10 else "")
    return FileToolError(
        f"old_text matches {len(lines)} places in '{rel}' (lines {shown}); include more "
        f"surrounding lines in old_text so that it matches exactly one place"
    )


def _trim_blank(lines: list[str]) -> tuple[list[str], int, int]:
    """`lines` without leading and trailing blank lines, and how many were removed at each end."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end], start, len(lines) - end


def _dedented(lines: list[str]) -> tuple[list[str], str]:
    stripped = [line.rstrip() for line in lines]
    leads = [line[: len(line) - len(line.lstrip())] for line in stripped if line]
    prefix = os.path.commonprefix(leads) if leads else ""  # noqa: RUF071 - a string prefix, not a path
    return [line[len(prefix) :] if line else "" for line in stripped], prefix


def _line_match(text: str, old: str, new: str, rel: str) -> Replacement | None:
    old_lines, lead_blank, trail_blank = _trim_blank(old.split("\n"))
    if not old_lines:
        return None
    key, old_prefix = _dedented(old_lines)
    file_lines = text.split("\n")
    n = len(old_lines)
    matches = _windows(file_lines, key)
    if not matches:
        return None
    if len(matches) > 1:
        raise _multiple(rel, [i + 1 for i, _ in matches])
    i, window_prefix = matches[0]
    reindented = [
        _reindent(line, old_prefix, window_prefix) for line in _new_lines(new, lead_blank, trail_blank)
    ]
    result_lines = file_lines[:i] + reindented + file_lines[i + n :]
    return Replacement(
        "\n".join(result_lines),
        i + 1,
        i + n,
        i + 1,
        i + len(reindented),
        reindented=old_prefix != window_prefix,
    )


def _windows(file_lines: list[str], key: list[str]) -> list[tuple[int, str]]:
    """Where the file's lines equal `key` but for their common indent: (first line's index, that indent)."""
    first_key = key[0].strip()
    matches: list[tuple[int, str]] = []
    for i in range(len(file_lines) - len(key) + 1):
        if file_lines[i].strip() != first_key:
            continue
        window_key, window_prefix = _dedented(file_lines[i : i + len(key)])
        if window_key == key:
            matches.append((i, window_prefix))
    return matches


def _new_lines(new: str, lead_blank: int, trail_blank: int) -> list[str]:
    """The replacement's lines, less the blank lines the model wrapped around old_text (dropped from new_text
    the same way)."""
    if new == "":
        return []
    new_lines = new.split("\n")
    if new.endswith("\n"):
        new_lines.pop()
    while lead_blank and new_lines and not new_lines[0].strip():
        new_lines.pop(0)
        lead_blank -= 1
    while trail_blank and new_lines and not new_lines[-1].strip():
        new_lines.pop()
        trail_blank -= 1
    return new_lines


def _reindent(line: str, old_prefix: str, window_prefix: str) -> str:
    if not line.strip():
        return ""
    if old_prefix == window_prefix:
        return line
    if line.startswith(old_prefix):
        return window_prefix + line[len(old_prefix) :]
    lead = line[: len(line) - len(line.lstrip())]
    keep = max(0, len(window_prefix) - (len(old_prefix) - len(lead)))
    return window_prefix[:keep] + line.lstrip()


def near_miss_message(text: str, old: str, rel: str) -> str:
    """'old_text was not found…' with the file's most similar lines, numbered, as a 'did you mean'."""
    old_lines, _, _ = _trim_blank(old.split("\n"))
    file_lines = text.split("\n")
    if text.endswith("\n"):
        file_lines.pop()
    base = f"old_text was not found in '{rel}'"
    if not old_lines:
        return f"{base}: old_text is only whitespace; give the exact lines to replace"
    n = min(len(old_lines), len(file_lines))
    if n == 0:
        return f"{base}: the file is empty; use write_file to give it content"
    target = "\n".join(line.strip() for line in old_lines)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    stripped = [line.strip() for line in file_lines]
    scored: list[tuple[float, int]] = []
    for i in range(len(file_lines) - n + 1):
        matcher.set_seq1("\n".join(stripped[i : i + n]))
        scored.append((matcher.quick_ratio(), i))
    scored.sort(key=lambda item: -item[0])
    best_ratio, best = 0.0, 0
    for _, i in scored[:MAX_CANDIDATES]:
        matcher.set_seq1("\n".join(stripped[i : i + n]))
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best = ratio, i
    if best_ratio < MIN_SIMILARITY:
        return (
            f"{base}, and no lines in it look similar; read_file '{rel}' to see its current text, then "
            f"copy old_text from it exactly"
        )
    window = file_lines[best : best + n]
    where = f"line {best + 1}" if n == 1 else f"lines {best + 1}-{best + n}"
    return (
        f"{base}. Did you mean {where}?\n{fenced(window, best + 1, rel)}\n"
        f"Copy old_text exactly from the file and try again."
    )
