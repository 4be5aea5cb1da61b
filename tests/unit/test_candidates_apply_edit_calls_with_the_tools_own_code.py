"""A candidate's edit calls are applied by the tools' own code, as the loop would apply them, in memory."""

from __future__ import annotations

from fixloop.agent.call_protocols import ToolCall
from fixloop.agent.candidates import BaseFiles, read_candidate

SHOP = (
    "class Cart:\n    def total(self):\n        return 1\n\n\n"
    "class Till:\n    def total(self):\n        return 2\n"
)
FILES = {"shop.py": SHOP, "notes.py": "x = 1\r\ny = 2\r\n", "tests/test_shop.py": "def test(): pass\n"}


def candidate(*calls: tuple[str, dict[str, str]]):
    base = BaseFiles(FILES.get)
    return read_candidate(
        1, "(no code)", [ToolCall(str(n), name, args) for n, (name, args) in enumerate(calls)], base
    )


def test_replace_function_replaces_the_method_of_the_class_it_names() -> None:
    found = candidate(
        (
            "replace_function",
            {"path": "shop.py", "name": "Till.total", "code": "def total(self):\n    return 3\n"},
        )
    )
    assert not found.problem
    (change,) = found.changes
    assert change.new_text == SHOP.replace("return 2", "return 3")
    assert found.applied == ("shop.py: replaced Till.total",)


def test_an_edit_that_would_break_the_syntax_is_refused_as_the_tool_refuses_it() -> None:
    found = candidate(("edit_file", {"path": "shop.py", "old_text": "return 1", "new_text": "return (1"}))
    assert not found.changes
    assert "edit refused" in found.problem and "SyntaxError" in found.problem


def test_an_edit_keeps_the_files_newlines() -> None:
    found = candidate(("edit_file", {"path": "notes.py", "old_text": "y = 2", "new_text": "y = 3"}))
    assert [change.new_text for change in found.changes] == ["x = 1\r\ny = 3\r\n"]


def test_write_file_content_in_a_fence_is_written_without_it() -> None:
    found = candidate(("write_file", {"path": "notes.py", "content": "```python\nx = 1\ny = 4\n```"}))
    assert [change.new_text for change in found.changes] == ["x = 1\r\ny = 4\r\n"]


def test_tests_are_never_changed_and_a_missing_file_is_named() -> None:
    found = candidate(
        ("edit_file", {"path": "tests/test_shop.py", "old_text": "pass", "new_text": "assert 0"}),
        ("edit_file", {"path": "gone.py", "old_text": "a", "new_text": "b"}),
    )
    assert not found.changes
    assert "tests are never changed" in found.problem and "gone.py: no such code file" in found.problem
