"""Fenced code blocks as models write them: the ``` fence, the line that opens or closes a block, a body.

The one place the fence syntax is defined; the tools, the code answer, the call readers and the stream
watches all read fences through it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FENCE = "```"
_FENCE = rf"{FENCE}[ \t]*([\w+.-]*)[ \t]*"  # group 1: the block's language ("" for a bare fence)

FENCE_LINE = re.compile(rf"^[ \t]*{_FENCE}$")
"""A whole line that opens or closes a block (matched one line at a time)."""
OPENING = re.compile(rf"{_FENCE}\n")
"""A fence and the rest of its line, complete (the language is known once the newline has come)."""
OPENING_BEFORE = re.compile(rf"{_FENCE}\n[ \t]*\Z")
"""An opening fence line ending where a search stops (what is searched next is the block's body)."""
CLOSING = re.compile(rf"{FENCE}[ \t]*(?:\n|$)")
"""A fence that closes a block (nothing but blanks after it on its line)."""
CLOSING_AFTER = re.compile(rf"[ \t]*\n?[ \t]*{FENCE}[ \t]*")
"""The fence closing a block, right after its body (on the body's last line or the next)."""
PATH_LINE = re.compile(r"^[ \t]*[#*`]*[ \t]*[\w./\\-]+\.py[ \t]*[`*:]*[ \t]*$")
"""A line naming only a Python file ("pkg/x.py", "**pkg/x.py:**"), as models write it before a block."""
EMPTY_BLOCK = re.compile(rf"{_FENCE}\n?\s*{FENCE}")
_ONE_LINE_LANGUAGE = re.compile(r"^[A-Za-z][\w+.-]*(?=[\s{\[\"'])")  # ```json{...}``` on one line
_WRAPPED = re.compile(rf"^\s*{_FENCE}\n(?P<body>.*?\n?)[ \t]*{FENCE}\s*$", re.DOTALL)


def opening_for(path: str) -> str:
    """The fence that opens a block of the file at `path` (Python's language named for a Python file)."""
    return f"{FENCE}python" if path.endswith((".py", ".pyi")) else FENCE


def fence_language(line: str) -> str | None:
    """The language of a fence line, lower-cased ("" for a bare fence); None when `line` is no fence."""
    found = FENCE_LINE.match(line)
    return found.group(1).lower() if found is not None else None


def reopens(language: str, written: Sequence[str]) -> bool:
    """Whether a fence line with `language`, inside a block whose non-blank lines so far are `written`,
    opens the block again rather than closing it: small models write "```python / path.py / ```python"."""
    return bool(language) and (not written or (len(written) == 1 and PATH_LINE.match(written[0]) is not None))


def wrapped_body(text: str) -> str | None:
    """The body of the one block `text` is wrapped in whole, or None when it is not."""
    found = _WRAPPED.match(text)
    return found.group("body") if found is not None else None


def unfence(text: str) -> str:
    """`text` stripped, without the fence that opens it and the one that closes it (if it has them)."""
    text = text.strip()
    if text.startswith(FENCE):
        newline = text.find("\n")
        if newline >= 0:
            text = text[newline + 1 :]
        else:
            text = _ONE_LINE_LANGUAGE.sub("", text[len(FENCE) :], count=1)
        text = text.rstrip()
        if text.endswith(FENCE):
            text = text[: -len(FENCE)]
    return text.strip()
