"""A line answer's run of consecutive numbered lines is one block replacing the range it names (an `else:`
added, two lines merged), re-indented onto the range's first line; a number a few lines off the line its code
plainly edits is read as that line's."""

from __future__ import annotations

from fixloop.agent.line_answers import apply_line_edits, read_line_answer

FACTORIAL = (
    "# Small math helpers.\n"
    "\n"
    "\n"
    "def factorial(n: int) -> int:\n"
    "    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"
    "    result = 1\n"
    "    for i in range(2, n + 1):\n"
    "        result += i\n"
    "    return result\n"
)
CLAMP = (
    "def clamp(x, low, high):\n"
    "    if x < low:\n"
    "        return low\n"
    "    return min(x, high)\n"
    "\n"
    "\n"
    "def double(x):\n"
    "    return 2 * x\n"
)
MEAN = (
    "def mean(values):\n"
    "    if not values:\n"
    "        return 0.0\n"
    "    total = sum(values)\n"
    "    return total / (len(values) - 1)\n"
)


def applied(text: str, answer: str) -> str | None:
    return apply_line_edits(text, read_line_answer(answer))


def test_a_block_with_an_else_added_replaces_the_range_it_restructures() -> None:
    answer = (
        "line 2:     if x < low:\nline 3:         return low\n"
        "line 4:     else:\nline 5:         return min(x, high)"
    )
    assert applied(CLAMP, answer) == CLAMP.replace(
        "    return min(x, high)\n", "    else:\n        return min(x, high)\n"
    )


def test_an_else_added_at_the_end_of_the_file_is_not_refused_as_past_its_end() -> None:
    text = CLAMP[: CLAMP.index("\n\n")] + "\n"
    answer = "line 2: if x < low:\nline 3:     return low\nline 4: else:\nline 5:     return min(x, high)"
    assert applied(text, answer) == text.replace(
        "    return min(x, high)\n", "    else:\n        return min(x, high)\n"
    )


def test_two_lines_merged_into_one_replace_both() -> None:
    answer = "line 7:     for i in range(2, n + 1): result *= i\nline 8:     return result"
    assert applied(FACTORIAL, answer) == FACTORIAL.replace(
        "    for i in range(2, n + 1):\n        result += i\n", "    for i in range(2, n + 1): result *= i\n"
    )


def test_a_number_off_by_two_is_matched_to_the_line_its_code_edits() -> None:
    assert applied(MEAN, "line 3: return total / len(values)") == MEAN.replace(
        "total / (len(values) - 1)", "total / len(values)"
    )
    assert applied(FACTORIAL, "line 10: result *= i") == FACTORIAL.replace("result += i", "result *= i")


def test_a_line_that_plausibly_edits_the_line_it_names_stays_there() -> None:
    assert applied(FACTORIAL, "line 6: result = 0") == FACTORIAL.replace("result = 1", "result = 0")
    assert applied(FACTORIAL, "line 30: something else entirely") is None


def test_a_block_written_at_any_indentation_is_rebased_onto_its_first_lines() -> None:
    deep = "line 7:             for i in range(1, n + 1):\nline 8:                 result *= i"
    flat = "line 7: for i in range(1, n + 1):\nline 8:     result *= i"
    expected = FACTORIAL.replace(
        "range(2, n + 1):\n        result += i", "range(1, n + 1):\n        result *= i"
    )
    assert applied(FACTORIAL, deep) == expected
    assert applied(FACTORIAL, flat) == expected


def test_a_block_whose_numbers_are_all_off_moves_as_a_whole() -> None:
    answer = "line 9:     for i in range(1, n + 1):\nline 10:         result *= i"
    assert applied(FACTORIAL, answer) == FACTORIAL.replace(
        "range(2, n + 1):\n        result += i", "range(1, n + 1):\n        result *= i"
    )
