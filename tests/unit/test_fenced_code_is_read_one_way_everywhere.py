"""Fenced code blocks are read by one module: the tools, the code answer and the call readers agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.agent.edit_forms import code_end
from fixloop.tools.code_reply import code_blocks
from fixloop.tools.fences import fence_language, opening_for, unfence, wrapped_body
from fixloop.tools.textfile import strip_code_fence

SERVER = Path(__file__).resolve().parents[2] / "server" / "fixloop"


def test_a_fence_line_names_its_language() -> None:
    assert fence_language("```python\n") == "python"
    assert fence_language("  ```Python3.11  ") == "python3.11"
    assert fence_language("```") == ""
    assert fence_language("x = '```'") is None


def test_a_block_is_unwrapped_on_several_lines_or_on_one() -> None:
    assert unfence('```json\n{"path": "a.py"}\n```') == '{"path": "a.py"}'
    assert unfence('```json{"path": "a.py"}```') == '{"path": "a.py"}'
    assert unfence('```{"path": "a.py"}```') == '{"path": "a.py"}'
    assert unfence('{"path": "a.py"}') == '{"path": "a.py"}'
    assert unfence("```python\nx = 1") == "x = 1"  # a block the reply ends inside


def test_only_text_wrapped_whole_loses_its_fence() -> None:
    assert wrapped_body("```python\nx = 1\n```\n") == "x = 1\n"
    assert wrapped_body("see\n```python\nx = 1\n```") is None
    assert strip_code_fence("```py\nx = 1\n```", Path("a.py")) == "x = 1\n"
    assert strip_code_fence("```py\nx = 1\n```", Path("notes.md")) == "```py\nx = 1\n```"


def test_a_python_file_opens_its_block_with_the_language() -> None:
    assert opening_for("pkg/a.py") == "```python"
    assert opening_for("setup.cfg") == "```"


@pytest.mark.parametrize("path_line", ["pkg/a.py", "**pkg/a.py:**", "`pkg/a.py`", "pkg/a.py :"])
def test_the_code_answer_and_its_stream_watch_see_the_same_blocks(path_line: str) -> None:
    reply = f"```python\n{path_line}\n```python\ndef f():\n    return 1\n```\n{path_line}\nThat fixes it.\n"
    assert [(block.path, block.code) for block in code_blocks(reply)] == [
        ("pkg/a.py", "def f():\n    return 1\n")
    ]
    end = code_end(reply)
    assert end is not None and reply[end:] == "That fixes it.\n"


def test_the_fence_is_spelled_in_one_module() -> None:
    spelled = [
        path.relative_to(SERVER).as_posix()
        for path in SERVER.rglob("*.py")
        if any(
            "```" in line and ("re.compile" in line or "startswith" in line or "find(" in line)
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert spelled == ["tools/fences.py"]
