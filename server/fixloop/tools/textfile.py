"""Text files as tools see them: binary detection, newline style, numbered lines, the Python syntax check."""

from __future__ import annotations

import codecs
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from fixloop.errors import FixloopError
from fixloop.python_syntax import parse
from fixloop.tools.fences import FENCE, opening_for, wrapped_body

BINARY_SNIFF = 8192
MAX_TEXT_BYTES = 2 * 1024 * 1024  # larger files are not read as text by the tools


class FileToolError(FixloopError):
    """A file cannot be read or changed the way a tool asked (binary, too large, no match…)."""


@dataclass(frozen=True)
class TextFile:
    """A file's text with '\\n' newlines, and what is needed to write it back the same way."""

    text: str
    newline: str  # '\r\n' or '\n'
    ends_with_newline: bool
    encoding: str = "utf-8"  # 'latin-1' when the bytes are not UTF-8
    bom: bool = False  # a UTF-8 byte order mark, kept on write

    @property
    def lines(self) -> list[str]:
        if not self.text:
            return []
        return self.text.split("\n")[:-1] if self.ends_with_newline else self.text.split("\n")

    def restyled(self, text: str) -> str:
        """`text` ('\\n' newlines) in this file's newline style."""
        if self.newline == "\r\n":
            return text.replace("\r\n", "\n").replace("\n", "\r\n")
        return text

    def encode(self, text: str) -> bytes:
        """`text` ('\\n' newlines) in this file's newline style, encoding and byte order mark."""
        text = self.restyled(text)
        try:
            data = text.encode(self.encoding)
        except UnicodeEncodeError as error:
            bad = error.object[error.start : error.end]
            raise FileToolError(
                f"the new text has characters ({bad!r}) that this {self.encoding} file "
                f"cannot hold; use only characters the file can store"
            ) from None
        return codecs.BOM_UTF8 + data if self.bom else data


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF]


def read_text(path: Path, rel: str) -> TextFile:
    """The file at `path` as text, or a FileToolError saying why it cannot be shown."""
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise FileToolError(
                f"'{rel}' is too large to read as text ({size} bytes); use search to find what you need in it"
            )
        data = path.read_bytes()
    except OSError as error:
        raise FileToolError(f"cannot read '{rel}': {error.strerror or error}") from None
    if is_binary(data):
        raise FileToolError(
            f"'{rel}' is a binary file ({len(data)} bytes), not text; only text files can be read or edited"
        )
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return from_text(data.decode("utf-8"), bom=bom)
    except UnicodeDecodeError:
        return from_text(data.decode("latin-1"), encoding="latin-1")


def from_text(raw: str, *, encoding: str = "utf-8", bom: bool = False) -> TextFile:
    crlf = raw.count("\r\n")
    newline = "\r\n" if crlf and crlf >= raw.count("\n") - crlf else "\n"
    text = raw.replace("\r\n", "\n")
    return TextFile(text, newline, text.endswith("\n"), encoding, bom)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_code_fence(text: str, path: Path) -> str:
    """`text` without a Markdown code fence wrapped around all of it (not for Markdown files)."""
    if path.suffix.lower() in (".md", ".markdown", ".rst", ".txt"):
        return text
    body = wrapped_body(text)
    return text if body is None else body


def count_lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def numbered(lines: list[str], first: int) -> str:
    """Lines shown as '   N | text', numbered from `first`."""
    width = max(4, len(str(first + len(lines) - 1)))
    return "\n".join(f"{number:>{width}} | {line}" for number, line in enumerate(lines, first))


GUTTER = re.compile(r"^[ \t]*\d+ \|(?: |$)", re.MULTILINE)
"""The gutter `numbered` puts before a line ("  12 | "), wherever it is read back (models copy it)."""


def fenced(lines: list[str], first: int, rel: str) -> str:
    """Lines of `rel` as they are in the file, in a fenced block under a header giving their numbers
    (code without line-number gutters: small models copy gutters into their edits)."""
    last = first + len(lines) - 1
    span = f"line {first}" if last <= first else f"lines {first}-{last}"
    return "\n".join([f"{rel} {span}:", opening_for(rel), *lines, FENCE])


def syntax_error(path: Path, text: str) -> SyntaxError | None:
    """The SyntaxError `text` would have as Python source, or None (non-Python files are not checked)."""
    if path.suffix not in (".py", ".pyi"):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse(text, filename=str(path))
    except SyntaxError as error:
        return error
    except ValueError as error:  # NUL bytes
        return SyntaxError(str(error))
    return None


def describe_syntax_error(error: SyntaxError, text: str) -> str:
    """'SyntaxError at line N: msg' and the offending line, numbered."""
    line = error.lineno or 0
    message = f"SyntaxError at line {line}: {error.msg}" if line else f"SyntaxError: {error.msg}"
    lines = text.split("\n")
    if 1 <= line <= len(lines):
        start = max(1, line - 1)
        message += "\n" + numbered(lines[start - 1 : line + 1], start)
    return message
