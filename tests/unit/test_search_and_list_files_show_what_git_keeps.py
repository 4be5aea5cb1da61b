"""search finds regex matches in text files as path:line: text; list_files lists what git would keep."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.list_files import ListFilesTool
from fixloop.tools.search import SearchTool
from fixloop.tools.workspace import Workspace


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    files = {
        ".gitignore": "build/\n",
        "src/app.py": "def parse_date(text):\n    return text.split('-')\n",
        "src/util.py": "from app import parse_date\n\nparse_date('2024-01-01')\n",
        "tests/test_app.py": "def test_parse_date():\n    assert parse_date('a-b') == ['a', 'b']\n",
        "build/gen.py": "def parse_date(): pass\n",
        ".env": "parse_date=secret\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "data.bin").write_bytes(b"parse_date\x00\x01\x02")
    return tmp_path


@pytest.fixture()
def toolbox(root: Path) -> Toolbox:
    return build_toolbox(Workspace(root), runner=None)


async def test_search_shows_path_line_text(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": r"def \w*parse_date"})
    assert not result.is_error
    assert result.text.splitlines() == [
        "src/app.py:1: def parse_date(text):",
        "tests/test_app.py:1: def test_parse_date():",
    ]


async def test_search_skips_binary_ignored_and_secret_files(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": "parse_date"})
    assert "data.bin" not in result.text and "build/" not in result.text and ".env" not in result.text
    assert "secret" not in result.text
    assert "src/util.py:3: parse_date('2024-01-01')" in result.text


async def test_search_under_a_path(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": "parse_date", "path": "tests"})
    assert (
        result.text == "tests/test_app.py:1: def test_parse_date():\ntests/test_app.py:2: "
        "assert parse_date('a-b') == ['a', 'b']"
    )


async def test_invalid_regex_shows_the_problem(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": "parse_date("})
    assert result.is_error
    assert result.text.startswith(
        "invalid regular expression 'parse_date(': missing ), unterminated "
        "subpattern at position 10; escape special characters"
    )


async def test_no_matches_says_so(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": "nowhere_to_be_found", "path": "src"})
    assert not result.is_error
    assert result.text == "no matches for 'nowhere_to_be_found' under src (2 files searched)"


async def test_search_outside_is_refused(toolbox: Toolbox) -> None:
    result = await toolbox.call("search", {"pattern": "x", "path": "../"})
    assert result.is_error and "outside the project" in result.text


async def test_search_results_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "many.py").write_text("hit = 1\n" * 30)
    result = await SearchTool(Workspace(tmp_path), max_matches=10).run(pattern="hit")
    lines = result.text.splitlines()
    assert len(lines) == 11
    assert lines[-1] == "[20 more matches not shown (30 in all); narrow the pattern or path]"


async def test_list_files_tool(toolbox: Toolbox) -> None:
    result = await toolbox.call("list_files", {})
    expected = [".gitignore", "data.bin", "src/app.py", "src/util.py", "tests/test_app.py"]
    assert result.text.splitlines() == expected
    tests = await toolbox.call("list_files", {"path": "tests", "pattern": "test_*.py"})
    assert tests.text == "tests/test_app.py"
    none = await toolbox.call("list_files", {"pattern": "*.rs"})
    assert none.text == "no files matching '*.rs'"
    secret = await toolbox.call("list_files", {"path": ".git"})
    assert secret.is_error and "off limits" in secret.text


async def test_list_files_is_bounded_with_a_notice(tmp_path: Path) -> None:
    for n in range(12):
        (tmp_path / f"m{n:02}.py").write_text("")
    result = await ListFilesTool(Workspace(tmp_path), max_files=5).run()
    lines = result.text.splitlines()
    assert lines[:5] == ["m00.py", "m01.py", "m02.py", "m03.py", "m04.py"]
    assert lines[5] == "[7 more files not shown (12 in all); give a folder path or a narrower pattern]"
