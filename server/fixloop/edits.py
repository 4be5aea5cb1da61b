"""Text diff to minimal LSP TextEdits, with positions in UTF-16 code units (non-ASCII and CRLF safe)."""

from __future__ import annotations

import bisect
import difflib
import re

from lsprotocol.types import Position, Range, TextEdit

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the three end-of-line sequences LSP recognises


def _utf16_len(text: str) -> int:
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


class _LineIndex:
    """Maps code-point offsets in one text to LSP positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]

    def position(self, offset: int) -> Position:
        if not 0 <= offset <= len(self.text):
            raise ValueError(f"offset {offset} is outside the text (length {len(self.text)})")
        line = bisect.bisect_right(self.starts, offset) - 1
        return Position(line=line, character=_utf16_len(self.text[self.starts[line] : offset]))


def position_at(text: str, offset: int) -> Position:
    """The LSP position of code-point `offset` in `text` (line breaks: \\n, \\r\\n, \\r)."""
    return _LineIndex(text).position(offset)


def _split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) if text else []


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def _common_suffix(a: str, b: str, limit: int) -> int:
    index = 0
    while index < limit and a[-1 - index] == b[-1 - index]:
        index += 1
    return index


def text_edits(old: str, new: str) -> list[TextEdit]:
    """Minimal, non-overlapping edits (in document order, against `old`) that turn `old` into `new`."""
    if old == new:
        return []
    old_lines = _split_lines(old)
    new_lines = _split_lines(new)
    old_starts = [0]
    for line in old_lines:
        old_starts.append(old_starts[-1] + len(line))
    new_starts = [0]
    for line in new_lines:
        new_starts.append(new_starts[-1] + len(line))
    index = _LineIndex(old)
    edits: list[TextEdit] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = old_starts[i1], old_starts[i2]
        old_block, new_block = old[start:end], new[new_starts[j1] : new_starts[j2]]
        prefix = _common_prefix(old_block, new_block)
        suffix = _common_suffix(old_block, new_block, min(len(old_block), len(new_block)) - prefix)
        # Never let a range end or start between the \r and \n of a CRLF: that is no valid position.
        if prefix and old[start + prefix - 1 : start + prefix + 1] == "\r\n":
            prefix -= 1
        edit_end = end - suffix
        if suffix and old[edit_end - 1 : edit_end + 1] == "\r\n":
            suffix -= 1
            edit_end += 1
        replacement = new_block[prefix : len(new_block) - suffix]
        edits.append(
            TextEdit(
                range=Range(start=index.position(start + prefix), end=index.position(edit_end)),
                new_text=replacement,
            )
        )
    return edits
