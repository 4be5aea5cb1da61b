"""write_file replaces small files whole, keeps CRLF, and refuses big files and broken Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.tools import Toolbox, build_toolbox
from fixloop.tools.workspace import Workspace


@pytest.fixture()
def toolbox(tmp_path: Path) -> Toolbox:
    return build_toolbox(Workspace(tmp_path), runner=None, write_file_max_bytes=200)


async def test_creates_a_file_and_its_folders(toolbox: Toolbox, tmp_path: Path) -> None:
    result = await toolbox.call("write_file", {"path": "pkg/sub/mod.py", "content": "x = 1\ny = 2\n"})
    assert result.text == "created pkg/sub/mod.py (2 lines)"
    assert (tmp_path / "pkg" / "sub" / "mod.py").read_text() == "x = 1\ny = 2\n"


async def test_replaces_an_existing_file(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("old = True\n")
    result = await toolbox.call("write_file", {"path": "a.py", "content": "new = True\n"})
    assert result.text == "wrote a.py (1 line)"
    assert (tmp_path / "a.py").read_text() == "new = True\n"


async def test_keeps_crlf_and_trailing_newline(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    result = await toolbox.call("write_file", {"path": "w.py", "content": "a = 1\nb = 3"})
    assert not result.is_error
    assert (tmp_path / "w.py").read_bytes() == b"a = 1\r\nb = 3\r\n"


async def test_content_over_the_limit_points_to_edit_file(toolbox: Toolbox, tmp_path: Path) -> None:
    result = await toolbox.call("write_file", {"path": "big.py", "content": "x = 1\n" * 100})
    assert result.is_error
    assert result.text == (
        "content is 600 bytes; write_file takes at most 200 bytes, so change 'big.py' with edit_file instead"
    )
    assert not (tmp_path / "big.py").exists()


async def test_existing_file_over_the_limit_points_to_edit_file(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 100)
    result = await toolbox.call("write_file", {"path": "big.py", "content": "x = 2\n"})
    assert result.is_error and "over write_file's limit of 200; change it with edit_file" in result.text
    assert (tmp_path / "big.py").read_text() == "x = 1\n" * 100


async def test_syntax_error_is_refused(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("ok = 1\n")
    result = await toolbox.call("write_file", {"path": "a.py", "content": "def broken(:\n    pass\n"})
    assert result.is_error
    assert "write refused: 'a.py' would have a SyntaxError at line 1" in result.text
    assert (tmp_path / "a.py").read_text() == "ok = 1\n"


async def test_refuses_escapes_secrets_and_folders(toolbox: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for path, message in [
        ("../x.py", "outside the project"),
        (".git/config", "off limits"),
        ("id_rsa", "off limits"),
        ("src", "is a folder"),
        ("", "path is empty"),
    ]:
        result = await toolbox.call("write_file", {"path": path, "content": "x"})
        assert result.is_error and message in result.text, (path, result.text)
    assert not (tmp_path.parent / "x.py").exists()


async def test_a_code_fence_around_the_content_is_dropped(toolbox: Toolbox, tmp_path: Path) -> None:
    result = await toolbox.call("write_file", {"path": "f.py", "content": "```python\nx = 1\n```"})
    assert not result.is_error, result.text
    assert (tmp_path / "f.py").read_text() == "x = 1\n"
    await toolbox.call("write_file", {"path": "notes.md", "content": "```\ncode\n```\n"})
    assert (tmp_path / "notes.md").read_text() == "```\ncode\n```\n"
