"""replace_function with a wrong folder (or a file that does not define the function) goes to the one project
file that defines it, and says so, as edit_file does for old_text."""

from __future__ import annotations

from pathlib import Path

from fixloop.tools import build_toolbox
from fixloop.tools.workspace import Workspace

SHAPES = "def area(w, h):\n    return w + h\n\n\nclass Box:\n    def volume(self):\n        return 0\n"


def _toolbox(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return build_toolbox(Workspace(root), runner=None, protect_tests=True)


async def test_a_wrong_folder_goes_to_the_one_file_that_defines_the_function(tmp_path: Path) -> None:
    toolbox = _toolbox(
        tmp_path, {"pkg/shapes.py": SHAPES, "tests/test_shapes.py": "def test_x():\n    pass\n"}
    )
    code = "def area(w, h):\n    return w * h\n"
    result = await toolbox.call("replace_function", {"path": "src/shapes.py", "name": "area", "code": code})
    assert not result.is_error, result.text
    assert result.text == (
        "note: 'src/shapes.py' does not define area; replaced it in 'pkg/shapes.py', the one project file "
        "that does\npkg/shapes.py: replaced function area"
    )
    assert (tmp_path / "pkg/shapes.py").read_text() == SHAPES.replace("w + h", "w * h")
    assert not (tmp_path / "src").exists()


async def test_a_method_named_in_the_test_file_goes_to_the_file_with_its_class(tmp_path: Path) -> None:
    toolbox = _toolbox(
        tmp_path,
        {"lib/shapes.py": SHAPES, "lib/other.py": "def volume():\n    return 1\n", "tests/test_s.py": ""},
    )
    code = "def volume(self):\n    return 2\n"
    result = await toolbox.call(
        "replace_function", {"path": "tests/test_s.py", "name": "Box.volume", "code": code}
    )
    assert not result.is_error, result.text
    assert "replaced it in 'lib/shapes.py'" in result.text
    assert (tmp_path / "lib/shapes.py").read_text() == SHAPES.replace("return 0", "return 2")


async def test_two_files_defining_the_function_leave_the_error_as_it_was(tmp_path: Path) -> None:
    toolbox = _toolbox(tmp_path, {"a/shapes.py": SHAPES, "b/shapes.py": SHAPES})
    code = "def area(w, h):\n    return w * h\n"
    result = await toolbox.call("replace_function", {"path": "src/shapes.py", "name": "area", "code": code})
    assert result.is_error and "src/shapes.py" in result.text
    assert (tmp_path / "a/shapes.py").read_text() == SHAPES == (tmp_path / "b/shapes.py").read_text()


async def test_a_method_whose_first_line_lost_its_indentation_is_moved_left(tmp_path: Path) -> None:
    toolbox = _toolbox(tmp_path, {"shapes.py": SHAPES})
    code = "def volume(self):\n        return 3\n"  # body still at the class's indentation: parses
    skewed = "@staticmethod\n    def volume():\n        return 3\n"  # decorator line flush: does not
    assert not (
        await toolbox.call("replace_function", {"path": "shapes.py", "name": "Box.volume", "code": code})
    ).is_error
    (tmp_path / "shapes.py").write_text(SHAPES)
    result = await toolbox.call(
        "replace_function", {"path": "shapes.py", "name": "Box.volume", "code": skewed}
    )
    assert not result.is_error, result.text
    assert "    @staticmethod\n    def volume():\n        return 3\n" in (tmp_path / "shapes.py").read_text()
