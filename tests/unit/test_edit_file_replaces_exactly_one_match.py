"""edit_file replaces exactly one match, tolerates whitespace drift, never leaves broken Python behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace

APP = """\
def add(a, b):
    return a - b


class Calculator:
    def total(self, items):
        result = 0
        for item in items:
            result += item
        return result

    def reset(self):
        self.value = 0
"""


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP)
    return tmp_path


@pytest.fixture()
def toolbox(root: Path) -> Toolbox:
    return build_toolbox(Workspace(root), runner=None)


async def edit(toolbox: Toolbox, path: str, old: str, new: str):
    return await toolbox.call("edit_file", {"path": path, "old_text": old, "new_text": new})


async def test_unique_exact_match_is_replaced(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/app.py", "return a - b", "return a + b")
    assert not result.is_error, result.text
    assert (root / "src" / "app.py").read_text() == APP.replace("a - b", "a + b")
    assert result.text.startswith("edited src/app.py: replaced lines 2 with lines 2:")
    assert "src/app.py lines 1-4:\n```python\ndef add(a, b):\n    return a + b\n" in result.text  # no gutters


async def test_confirmation_shows_the_changed_region(toolbox: Toolbox) -> None:
    result = await edit(
        toolbox, "src/app.py", "        return result\n", "        total = result\n        return total\n"
    )
    assert "replaced lines 10 with lines 10-11" in result.text
    assert "src/app.py lines 8-13:\n```python\n        for item in items:\n" in result.text  # context above
    assert "\n        return total\n" in result.text


async def test_multiple_matches_are_refused_with_their_lines(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/app.py", "result", "res")
    assert result.is_error
    assert "old_text matches 3 places in 'src/app.py' (lines 7, 9, 10)" in result.text
    assert "include more surrounding lines in old_text" in result.text
    assert (root / "src" / "app.py").read_text() == APP


async def test_multiple_line_matches_name_each_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    result = await edit(build_toolbox(Workspace(tmp_path), None), "m.py", "x = 1\n", "x = 3\n")
    assert result.is_error
    assert "old_text matches 2 places in 'm.py' (lines 1, 3)" in result.text


async def test_different_uniform_indentation_matches_and_reindents(toolbox: Toolbox, root: Path) -> None:
    old = "def total(self, items):\n    result = 0\n    for item in items:\n        result += item\n"
    new = "def total(self, items):\n    result = 0\n    for item in items:\n        result += item * 2\n"
    result = await edit(toolbox, "src/app.py", old, new)
    assert not result.is_error, result.text
    assert "re-indented" in result.text
    assert "            result += item * 2\n" in (root / "src" / "app.py").read_text()
    assert (root / "src" / "app.py").read_text() == APP.replace("result += item\n", "result += item * 2\n")


async def test_deeper_indentation_in_old_text_matches_too(toolbox: Toolbox, root: Path) -> None:
    result = await edit(
        toolbox,
        "src/app.py",
        "            def reset(self):\n                self.value = 0",
        "            def reset(self):\n                self.value = None",
    )
    assert not result.is_error, result.text
    assert "    def reset(self):\n        self.value = None\n" in (root / "src" / "app.py").read_text()


async def test_trailing_whitespace_differences_are_tolerated(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("a = 1   \nb = 2\t\nc = 3\n")
    toolbox = build_toolbox(Workspace(tmp_path), None)
    result = await edit(toolbox, "t.py", "a = 1\nb = 2\n", "a = 10\nb = 20\n")
    assert not result.is_error, result.text
    assert (tmp_path / "t.py").read_text() == "a = 10\nb = 20\nc = 3\n"


async def test_line_number_gutters_copied_from_read_file_are_ignored(toolbox: Toolbox, root: Path) -> None:
    result = await edit(
        toolbox,
        "src/app.py",
        "   1 | def add(a, b):\n   2 |     return a - b",
        "   1 | def add(a, b):\n   2 |     return a + b",
    )
    assert not result.is_error, result.text
    assert (root / "src" / "app.py").read_text().startswith("def add(a, b):\n    return a + b\n")


async def test_crlf_file_stays_crlf(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(b"def f():\r\n    return 1\r\n\r\nx = f()\r\n")
    toolbox = build_toolbox(Workspace(tmp_path), None)
    result = await edit(toolbox, "w.py", "def f():\n    return 1\n", "def f():\n    # two\n    return 2\n")
    assert not result.is_error, result.text
    assert (tmp_path / "w.py").read_bytes() == b"def f():\r\n    # two\r\n    return 2\r\n\r\nx = f()\r\n"


async def test_crlf_in_old_text_matches_lf_file(toolbox: Toolbox, root: Path) -> None:
    result = await edit(
        toolbox,
        "src/app.py",
        "def add(a, b):\r\n    return a - b\r\n",
        "def add(a, b):\r\n    return a + b\r\n",
    )
    assert not result.is_error, result.text
    assert b"\r\n" not in (root / "src" / "app.py").read_bytes()


async def test_trailing_newline_is_kept(tmp_path: Path) -> None:
    (tmp_path / "n.py").write_text("a = 1\nb = 2\n")
    result = await edit(build_toolbox(Workspace(tmp_path), None), "n.py", "b = 2\n", "b = 3")
    assert not result.is_error, result.text
    assert (tmp_path / "n.py").read_text() == "a = 1\nb = 3\n"


async def test_missing_trailing_newline_is_not_added(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb")
    result = await edit(build_toolbox(Workspace(tmp_path), None), "n.txt", "b", "c")
    assert not result.is_error
    assert (tmp_path / "n.txt").read_text() == "a\nc"


async def test_no_match_shows_the_nearest_lines(toolbox: Toolbox, root: Path) -> None:
    result = await edit(
        toolbox, "src/app.py", "def add(x, y):\n    return x - y\n", "def add(x, y):\n    return x + y\n"
    )
    assert result.is_error
    assert "old_text was not found in 'src/app.py'. Did you mean lines 1-2?" in result.text
    assert "src/app.py lines 1-2:\n```python\ndef add(a, b):\n    return a - b\n```" in result.text
    assert "Copy old_text exactly from the file" in result.text
    assert (root / "src" / "app.py").read_text() == APP


async def test_no_match_and_nothing_similar(toolbox: Toolbox) -> None:
    result = await edit(toolbox, "src/app.py", "import numpy as np\nnp.zeros(3)\n", "pass\n")
    assert result.is_error
    assert "no lines in it look similar; read_file 'src/app.py'" in result.text


async def test_syntax_error_is_refused_and_file_unchanged(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/app.py", "return a - b", "return (a + b")
    assert result.is_error
    assert "edit refused: it would leave 'src/app.py' with a SyntaxError at line" in result.text
    assert "The file is unchanged" in result.text
    assert " | " in result.text  # the offending line is shown
    assert (root / "src" / "app.py").read_text() == APP


async def test_already_broken_file_can_still_be_edited(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text("def f(:\n    return 1\nx = (\n")
    toolbox = build_toolbox(Workspace(tmp_path), None)
    result = await edit(toolbox, "b.py", "def f(:", "def f():")
    assert not result.is_error, result.text
    assert "note: 'b.py' still has a SyntaxError" in result.text


async def test_non_python_files_are_not_syntax_checked(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello (\n")
    result = await edit(build_toolbox(Workspace(tmp_path), None), "notes.txt", "hello (", "hello ((")
    assert not result.is_error


async def test_empty_old_text_creates_a_new_file(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/pkg/new_mod.py", "", "def f():\n    return 1\n")
    assert not result.is_error, result.text
    assert result.text == "created src/pkg/new_mod.py (2 lines)"
    assert (root / "src" / "pkg" / "new_mod.py").read_text() == "def f():\n    return 1\n"


async def test_create_fills_an_empty_existing_file(toolbox: Toolbox, root: Path) -> None:
    (root / "src" / "empty.py").write_text("")
    result = await edit(toolbox, "src/empty.py", "", "x = 1\n")
    assert not result.is_error
    assert (root / "src" / "empty.py").read_text() == "x = 1\n"


async def test_create_over_a_non_empty_file_suggests_write_file(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/app.py", "", "x = 1\n")
    assert result.is_error
    assert "already exists and is not empty" in result.text and "write_file" in result.text
    assert (root / "src" / "app.py").read_text() == APP


async def test_create_with_a_syntax_error_is_refused(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/bad.py", "", "def f(:\n")
    assert result.is_error and "SyntaxError at line 1" in result.text
    assert not (root / "src" / "bad.py").exists()


async def test_deleting_lines(toolbox: Toolbox, root: Path) -> None:
    result = await edit(toolbox, "src/app.py", "    def reset(self):\n        self.value = 0\n", "")
    assert not result.is_error, result.text
    assert "reset" not in (root / "src" / "app.py").read_text()


async def test_same_old_and_new_is_refused(toolbox: Toolbox) -> None:
    result = await edit(toolbox, "src/app.py", "return a - b", "return a - b")
    assert result.is_error and "nothing would change" in result.text


async def test_whitespace_only_old_text_is_refused(toolbox: Toolbox) -> None:
    result = await edit(toolbox, "src/app.py", "\n\n", "x")
    assert result.is_error and "only whitespace" in result.text


async def test_missing_file_suggests_a_name(toolbox: Toolbox) -> None:
    result = await edit(toolbox, "app.py", "x", "y")
    assert result.is_error and "did you mean 'src/app.py'" in result.text


async def test_edit_outside_or_secret_is_refused(toolbox: Toolbox, root: Path) -> None:
    (root / ".env").write_text("K=1\n")
    outside = await edit(toolbox, "../evil.py", "", "x = 1\n")
    secret = await edit(toolbox, ".env", "K=1", "K=2")
    assert outside.is_error and "outside the project" in outside.text
    assert secret.is_error and "off limits" in secret.text
    assert not (root.parent / "evil.py").exists()
    assert (root / ".env").read_text() == "K=1\n"


async def test_binary_file_cannot_be_edited(toolbox: Toolbox, root: Path) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    result = await edit(toolbox, "img.png", "PNG", "JPG")
    assert result.is_error and "binary file" in result.text


async def test_test_files_are_refused_when_tests_are_protected(root: Path) -> None:
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_x():\n    assert 1 == 2\n")
    toolbox = build_toolbox(Workspace(root), None, protect_tests=True)
    edited = await edit(toolbox, "tests/test_app.py", "1 == 2", "1 == 1")
    created = await edit(toolbox, "conftest.py", "", "import os\n")
    written = await toolbox.call("write_file", {"path": "tests/test_app.py", "content": "pass\n"})
    for result in (edited, created, written):
        assert result.is_error and "is a test file, and this run may not change tests" in result.text
    assert (root / "tests" / "test_app.py").read_text() == "def test_x():\n    assert 1 == 2\n"
    assert not (await edit(toolbox, "src/app.py", "a - b", "a + b")).is_error
    unprotected = build_toolbox(Workspace(root), None)
    assert not (await edit(unprotected, "tests/test_app.py", "1 == 2", "1 == 1")).is_error


async def test_latin1_file_keeps_its_encoding(tmp_path: Path) -> None:
    (tmp_path / "l.py").write_bytes("# caf\xe9\nname = 'Zo\xeb'\n".encode("latin-1"))
    toolbox = build_toolbox(Workspace(tmp_path), None)
    result = await edit(toolbox, "l.py", "name = 'Zoë'", "name = 'Zoé'")
    assert not result.is_error, result.text
    assert (tmp_path / "l.py").read_bytes() == "# caf\xe9\nname = 'Zo\xe9'\n".encode("latin-1")
    refused = await edit(toolbox, "l.py", "name = 'Zoé'", "name = '✓'")
    assert refused.is_error and "cannot hold" in refused.text


async def test_utf8_bom_is_kept_and_does_not_break_the_syntax_check(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_bytes(b"\xef\xbb\xbfx = 1\ny = 2\n")
    toolbox = build_toolbox(Workspace(tmp_path), None)
    result = await edit(toolbox, "b.py", "x = 1", "x = 3")
    assert not result.is_error and "still has" not in result.text, result.text
    assert (tmp_path / "b.py").read_bytes() == b"\xef\xbb\xbfx = 3\ny = 2\n"
    broken = await edit(toolbox, "b.py", "y = 2", "y = (")
    assert broken.is_error and "edit refused" in broken.text


async def test_single_line_near_miss_names_one_line(toolbox: Toolbox) -> None:
    result = await edit(toolbox, "src/app.py", "return a * b", "return a + b")
    assert "Did you mean line 2?\nsrc/app.py line 2:\n```python\n    return a - b\n```" in result.text


async def test_doubly_escaped_newlines_are_read_as_newlines(toolbox: Toolbox, root: Path) -> None:
    result = await edit(
        toolbox, "src/app.py", "def add(a, b):\\n    return a - b", "def add(a, b):\\n    return a + b"
    )
    assert not result.is_error, result.text
    assert (root / "src" / "app.py").read_text().startswith("def add(a, b):\n    return a + b\n")


async def test_literal_backslash_n_in_code_still_matches_exactly(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text('print("a\\nb")\n')
    result = await edit(build_toolbox(Workspace(tmp_path), None), "s.py", 'print("a\\nb")', 'print("a\\tb")')
    assert not result.is_error, result.text
    assert (tmp_path / "s.py").read_text() == 'print("a\\tb")\n'


async def test_a_guessed_folder_is_forgiven_when_name_and_text_agree(tmp_path):
    from fixloop.tools import build_toolbox
    from fixloop.tools.workspace import Workspace

    (tmp_path / "listutils.py").write_text("def last_n(items, n):\n    return items[n:]\n")
    toolbox = build_toolbox(Workspace(tmp_path), runner=None)
    result = await toolbox.call(
        "edit_file",
        {"path": "src/listutils.py", "old_text": "return items[n:]", "new_text": "return items[-n:]"},
    )
    assert not result.is_error, result.text
    assert "edited 'listutils.py', the one project file that does" in result.text
    assert "items[-n:]" in (tmp_path / "listutils.py").read_text()
    missing = await toolbox.call(
        "edit_file", {"path": "src/other.py", "old_text": "return items[n:]", "new_text": "x"}
    )
    assert missing.is_error


async def test_code_under_test_quoted_against_the_test_file_goes_to_its_file(tmp_path):
    from fixloop.tools import build_toolbox
    from fixloop.tools.workspace import Workspace

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text("from m import f\n\ndef test_f():\n    assert f() == 2\n")
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    toolbox = build_toolbox(Workspace(tmp_path), runner=None, protect_tests=True)
    result = await toolbox.call(
        "edit_file", {"path": "tests/test_m.py", "old_text": "    return 1", "new_text": "    return 2"}
    )
    assert not result.is_error, result.text
    assert "edited 'm.py'" in result.text
    assert "return 2" in (tmp_path / "m.py").read_text()
    assert "assert f() == 2" in (tmp_path / "tests" / "test_m.py").read_text()
    refused = await toolbox.call(
        "edit_file", {"path": "tests/test_m.py", "old_text": "assert f() == 2", "new_text": "assert f() == 1"}
    )
    assert refused.is_error and "test file" in refused.text
