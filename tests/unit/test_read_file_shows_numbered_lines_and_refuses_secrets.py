"""read_file shows numbered lines with a header, validates ranges and refuses binaries and secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    return tmp_path


@pytest.fixture()
def toolbox(root: Path) -> Toolbox:
    return build_toolbox(Workspace(root), runner=None)


async def test_whole_file_in_a_fence_with_the_line_numbers_in_its_header(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"path": "src/app.py"})
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0] == "src/app.py (lines 1-20 of 20)"
    assert lines[1] == "```python" and lines[-1] == "```"
    assert lines[2] == "line 1" and lines[-2] == "line 20"  # as in the file: no line-number gutters


async def test_line_range(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", '{"path": "src/app.py", "start_line": 5, "end_line": 7}')
    assert result.text == "src/app.py (lines 5-7 of 20)\n```python\nline 5\nline 6\nline 7\n```"


async def test_end_past_the_end_is_clamped(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"path": "src/app.py", "start_line": 19, "end_line": 400})
    assert result.text.splitlines()[0] == "src/app.py (lines 19-20 of 20)"


async def test_start_only(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"path": "src/app.py", "start_line": "18"})
    assert result.text.splitlines()[0] == "src/app.py (lines 18-20 of 20)"


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (0, None, "start_line must be 1 or more"),
        (21, None, "start_line 21 is past the end of 'src/app.py', which has 20 lines"),
        (10, 5, "end_line 5 is before start_line 10"),
    ],
)
async def test_bad_ranges_are_explained(toolbox: Toolbox, start: int, end: int | None, message: str) -> None:
    result = await toolbox.call("read_file", {"path": "src/app.py", "start_line": start, "end_line": end})
    assert result.is_error
    assert message in result.text


async def test_binary_file_gives_a_clear_error(toolbox: Toolbox, root: Path) -> None:
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = await toolbox.call("read_file", {"path": "logo.png"})
    assert result.is_error
    assert result.text == (
        "'logo.png' is a binary file (16 bytes), not text; only text files can be read or edited"
    )


async def test_empty_file(toolbox: Toolbox, root: Path) -> None:
    (root / "empty.py").write_text("")
    result = await toolbox.call("read_file", {"path": "empty.py"})
    assert result.text == "empty.py is empty (0 lines)"


async def test_crlf_and_latin1_files_read_as_text(toolbox: Toolbox, root: Path) -> None:
    (root / "w.txt").write_bytes(b"caf\xe9\r\nsecond\r\n")
    result = await toolbox.call("read_file", {"path": "w.txt"})
    assert result.text == "w.txt (lines 1-2 of 2)\n```\ncafé\nsecond\n```"


async def test_folder_and_missing_and_escape(toolbox: Toolbox, root: Path) -> None:
    folder = await toolbox.call("read_file", {"path": "src"})
    missing = await toolbox.call("read_file", {"path": "src/ap.py"})
    escape = await toolbox.call("read_file", {"path": "../../etc/passwd"})
    assert folder.is_error and "is a folder, not a file; use list_files" in folder.text
    assert missing.is_error and "did you mean 'src/app.py'" in missing.text
    assert escape.is_error and "outside the project" in escape.text


async def test_secrets_are_not_readable(toolbox: Toolbox, root: Path) -> None:
    (root / ".env").write_text("OPENAI_API_KEY=sk-123\n")
    result = await toolbox.call("read_file", {"path": ".env"})
    assert result.is_error
    assert "sk-123" not in result.text


async def test_long_output_is_capped_with_where_to_continue(root: Path) -> None:
    (root / "big.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1, 2001)))
    toolbox = build_toolbox(Workspace(root), runner=None, output_cap=2000)
    result = await toolbox.call("read_file", {"path": "big.py"})
    assert len(result.text.encode()) < 2200
    last = result.text.splitlines()[-1]
    assert last.startswith("[output truncated at line ")
    assert "use start_line=" in last and "to read the rest" in last
    shown_line = int(last.split("line ")[1].split(";")[0])
    assert f"\nvalue_{shown_line} = " in result.text


async def test_a_traceback_location_reads_around_the_line(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"path": "src/app.py:18"})
    assert result.text.splitlines()[0] == "src/app.py (lines 3-20 of 20)"
    column = await toolbox.call("read_file", {"path": "src/app.py:2:5"})
    assert column.text.splitlines()[0] == "src/app.py (lines 1-17 of 20)"


async def test_a_test_id_reads_its_file(toolbox: Toolbox, root: Path) -> None:
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_x():\n    pass\n")
    result = await toolbox.call("read_file", {"path": "tests/test_app.py::test_x[a-1]"})
    assert result.text.splitlines()[0] == "tests/test_app.py (lines 1-2 of 2)"
