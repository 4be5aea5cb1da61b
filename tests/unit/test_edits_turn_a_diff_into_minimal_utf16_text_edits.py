"""edits.py: applying the TextEdits to the old text, as an LSP client does in UTF-16, gives the new text."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from lsprotocol.types import Position, TextEdit

from fixloop.edits import position_at, text_edits

PIECES = ["a", "b", "x = 1", "é", "ß", "😀", "👨‍👩‍👧", "中文", "한", " ", "\t", "\n", "\r\n", "\r"]
PIECES += ["def f():", "    ", "#"]


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def apply_utf16(text: str, edits: list[TextEdit]) -> str:
    """A client's applier: LSP lines (\\n, \\r\\n, \\r) and characters counted in UTF-16 code units."""
    units = text.encode("utf-16-le")
    # (start, end of content) of each line in UTF-16 units; a position may not point into a line break.
    lines: list[tuple[int, int]] = []
    begin = 0
    for match in [*re.finditer(r"\r\n|\r|\n", text), None]:
        stop = match.start() if match else len(text)
        lines.append((utf16(text[:begin]), utf16(text[:stop])))
        begin = match.end() if match else 0

    def offset(position: Position) -> int:
        assert position.line < len(lines), position
        line_start, content_end = lines[position.line]
        assert line_start + position.character <= content_end, (position, "past the end of its line")
        return line_start + position.character

    spans = [(offset(edit.range.start), offset(edit.range.end), edit.new_text) for edit in edits]
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert end <= start, "edits overlap or are out of order"
    for start, end, new_text in reversed(spans):
        units = units[: start * 2] + new_text.encode("utf-16-le") + units[end * 2 :]
    return units.decode("utf-16-le")


def random_text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(PIECES) for _ in range(size))


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        where = rng.randint(0, len(chars))
        kind = rng.random()
        if kind < 0.4:
            chars[where:where] = list(rng.choice(PIECES))
        elif kind < 0.7:
            del chars[where : where + rng.randint(1, 5)]
        else:
            chars[where : where + rng.randint(1, 3)] = list(rng.choice(PIECES))
    return "".join(chars)


def test_thousands_of_random_pairs_round_trip() -> None:
    rng = random.Random(20261129)
    for _ in range(3000):
        old = random_text(rng, rng.randint(0, 40))
        new = mutate(rng, old) if rng.random() < 0.8 else random_text(rng, rng.randint(0, 40))
        edits = text_edits(old, new)
        assert apply_utf16(old, edits) == new, (old, new, edits)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("", ""),
        ("", "hello\n"),
        ("hello\n", ""),
        ("a\r\nb\r\n", "a\r\nB\r\n"),
        ("a\r\nb\r\n", "a\nb\n"),
        ("a\nb\n", "a\r\nb\r\n"),
        ("a\r\n", "b\n"),
        ("x\ry\rz", "x\rY\rz"),
        ("😀😀\n", "😀x😀\n"),
        ("名前 = '中文'\n", "名前 = '日本語'\n"),
        ("no newline", "no newline\n"),
        ("line\n", "line"),
        ("👨‍👩‍👧 family\n", "👨‍👩 family\n"),
    ],
)
def test_edge_cases_round_trip(old: str, new: str) -> None:
    assert apply_utf16(old, text_edits(old, new)) == new


def test_one_character_change_is_one_small_edit_in_utf16_units() -> None:
    old = "def f():\n    return '😀' + 1\n"
    new = "def f():\n    return '😀' + 2\n"
    (edit,) = text_edits(old, new)
    # '    return ' is 11 units, the emoji is 2 (a surrogate pair), then "' + " is 4.
    assert (edit.range.start.line, edit.range.start.character) == (1, 18)
    assert (edit.range.end.line, edit.range.end.character) == (1, 19)
    assert edit.new_text == "2"


def test_distant_changes_stay_separate_and_leave_the_rest_alone() -> None:
    body = [f"line {number}\n" for number in range(200)]
    new = list(body)
    new[10] = "line ten\n"
    new[150] = "line one-fifty\n"
    edits = text_edits("".join(body), "".join(new))
    assert [edit.range.start.line for edit in edits] == [10, 150]
    assert all(len(edit.new_text) < 12 for edit in edits)


def test_identical_texts_need_no_edits() -> None:
    assert text_edits("same\r\n", "same\r\n") == []


def test_position_at_counts_utf16_and_every_line_break() -> None:
    text = "a😀b\r\nc\rd\ne"
    assert position_at(text, 0) == Position(line=0, character=0)
    assert position_at(text, 2) == Position(line=0, character=3)  # after the surrogate pair
    assert position_at(text, 5) == Position(line=1, character=0)  # after CRLF
    assert position_at(text, 7) == Position(line=2, character=0)  # after a lone CR
    assert position_at(text, len(text)) == Position(line=3, character=1)
    with pytest.raises(ValueError):
        position_at(text, len(text) + 1)
