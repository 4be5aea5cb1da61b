"""replace_function puts a whole corrected function or method in place by name; the rest stays as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace

SOURCE = '''"""Shapes."""


def area(w, h):
    return w + h


class Box:
    def volume(self):
        return 0

    def label(self):
        return "box"


def perimeter(w, h):
    return 2 * (w + h)
'''


@pytest.fixture()
def toolbox(tmp_path: Path) -> Toolbox:
    (tmp_path / "shapes.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text("def test_area():\n    assert True\n")
    return build_toolbox(Workspace(tmp_path), runner=None, protect_tests=True)


async def test_a_function_is_replaced_and_nothing_else_changes(toolbox: Toolbox, tmp_path: Path) -> None:
    result = await toolbox.call(
        "replace_function",
        {"path": "shapes.py", "name": "area", "code": "def area(w, h):\n    return w * h\n"},
    )
    assert not result.is_error and result.text == "shapes.py: replaced function area"
    assert (tmp_path / "shapes.py").read_text() == SOURCE.replace("return w + h", "return w * h")


async def test_a_method_is_found_by_its_class_even_when_indented(toolbox: Toolbox, tmp_path: Path) -> None:
    code = "    def volume(self):\n        return 1\n"
    result = await toolbox.call("replace_function", {"path": "shapes.py", "name": "Box.volume", "code": code})
    assert result.text == "shapes.py: replaced function Box.volume"
    assert (tmp_path / "shapes.py").read_text() == SOURCE.replace("return 0", "return 1")


async def test_crlf_files_stay_crlf(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_bytes(SOURCE.replace("\n", "\r\n").encode())
    fenced = "```python\ndef perimeter(w, h):\n    return w + w + h + h\n```"
    await toolbox.call("replace_function", {"path": "shapes.py", "name": "perimeter", "code": fenced})
    expected = SOURCE.replace("2 * (w + h)", "w + w + h + h").replace("\n", "\r\n")
    assert (tmp_path / "shapes.py").read_bytes() == expected.encode()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"path": "tests/test_shapes.py", "name": "test_area", "code": "def test_area():\n    pass\n"},
            "is a test file, and this run may not change tests",
        ),
        (
            {"path": "shapes.py", "name": "area", "code": "def surface(w, h):\n    return w * h\n"},
            "code does not define 'area'",
        ),
        (
            {"path": "shapes.py", "name": "area", "code": "def area(w, h)\n    return w * h\n"},
            "code is not valid Python",
        ),
        (
            {"path": "shapes.py", "name": "area", "code": "def area(w, h):\n    return w + h\n"},
            "changes nothing",
        ),
    ],
)
async def test_bad_calls_are_refused_and_leave_the_file(
    toolbox: Toolbox, tmp_path: Path, arguments: dict[str, str], message: str
) -> None:
    result = await toolbox.call("replace_function", arguments)
    assert result.is_error and message in result.text, result.text
    assert (tmp_path / "shapes.py").read_text() == SOURCE
