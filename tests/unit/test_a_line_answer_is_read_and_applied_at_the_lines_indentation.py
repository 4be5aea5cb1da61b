"""The line-level round's answer form, "line N: <new code>": read from a reply, applied to a file."""

from __future__ import annotations

from fixloop.agent.line_answers import LineEdit, apply_line_edits, canonical, read_line_answer

CODE = (
    "def factorial(n):\n    result = 1\n"
    "    for i in range(2, n + 1):\n        result += i\n    return result\n"
)


def test_a_plain_line_answer_is_read() -> None:
    assert read_line_answer("line 4: result *= i") == (LineEdit(4, "result *= i"),)


def test_prose_fences_bullets_and_other_spellings_are_skipped_or_read() -> None:
    reply = "The loop adds.\n```python\nLine 4: result *= i\n```\n- `line 5 -> return result`\n12 => x = 1\n"
    assert read_line_answer(reply) == (
        LineEdit(4, "result *= i"),
        LineEdit(5, "return result"),
        LineEdit(12, "x = 1"),
    )


def test_a_reply_without_line_answers_reads_as_none() -> None:
    assert read_line_answer("I think the bug is in the loop; result should be multiplied.") == ()
    assert read_line_answer("line 0: nothing") == ()


def test_the_new_code_takes_the_old_lines_indentation() -> None:
    fixed = apply_line_edits(CODE, read_line_answer("line 4: result *= i"))
    assert fixed == CODE.replace("result += i", "result *= i")


def test_code_written_indented_is_reindented_to_the_file() -> None:
    fixed = apply_line_edits(CODE, read_line_answer("line 4:  result *= i"))
    assert fixed == CODE.replace("result += i", "result *= i")


def test_several_new_lines_for_one_line_keep_their_relative_indentation() -> None:
    answer = "line 2: if n < 0:\nline 2:     raise ValueError(n)\nline 2: result = 1"
    fixed = apply_line_edits(CODE, read_line_answer(answer))
    assert fixed is not None
    assert "    if n < 0:\n        raise ValueError(n)\n    result = 1\n" in fixed


def test_an_empty_line_answer_deletes_the_line_and_a_line_past_the_end_is_refused() -> None:
    assert apply_line_edits(CODE, [LineEdit(2, "")]) == CODE.replace("    result = 1\n", "")
    assert apply_line_edits(CODE, [LineEdit(99, "x")]) is None


def test_crlf_files_keep_their_newlines() -> None:
    text = CODE.replace("\n", "\r\n")
    assert apply_line_edits(text, [LineEdit(4, "result *= i")]) == text.replace("result += i", "result *= i")


def test_edits_are_written_back_in_the_canonical_form() -> None:
    assert canonical([LineEdit(4, "result *= i"), LineEdit(5, "return result")]) == (
        "line 4: result *= i\nline 5: return result"
    )
