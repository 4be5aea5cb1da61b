"""A reply asked for as code is closed once its code blocks are complete and prose follows (a small model
explains its fix at length; on a CPU each token of that costs time), never inside a block."""

from __future__ import annotations

import pytest

from fixloop.agent.edit_forms import CodeReplyWatch, code_ask, code_end

CODE = "shop.py\n```python\ndef total(items):\n    return sum(items)\n```\n"


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (CODE + "\nThis fixes the off-by-one.\n", CODE + "\n"),
        (
            CODE + "\nother.py\n```python\ndef f():\n    pass\n```\nDone.\n",
            CODE + "\nother.py\n```python\ndef f():\n    pass\n```\n",
        ),
        (
            "```python\npath/to/shop.py\n```python\n    def total(self):\n        return 1\n```\nWhy:\n",
            "```python\npath/to/shop.py\n```python\n    def total(self):\n        return 1\n```\n",
        ),
    ],
)
def test_the_stream_ends_after_the_code(reply: str, kept: str) -> None:
    assert reply[: code_end(reply)] == kept
    watch = CodeReplyWatch()
    pieces = [reply[i : i + 7] for i in range(0, len(reply), 7)]
    cuts = [cut for piece in pieces if (cut := watch.on_text(piece))]
    assert cuts[0].keep == len(kept) and cuts[0].reason == "code"


@pytest.mark.parametrize("reply", [CODE[:-5], CODE, CODE + "\n", CODE + "\nThis fixes"])
def test_nothing_is_cut_before_it_is_known(reply: str) -> None:
    assert code_end(reply) is None


def test_the_example_names_a_real_file_of_the_prompt() -> None:
    assert "billing/dates.py\n```python\ndef the_function" in code_ask(["setup.cfg", "billing/dates.py"])
    assert "path/to/module.py" in code_ask([])
