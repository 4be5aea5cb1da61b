"""Candidate fixes: a reply (corrected code, or an edit call) turned into changes to the baseline's files.

A candidate is applied to the files as they were when the run began, never to whatever the loop left in
the shadow, so each one is judged alone. Its `key` (the new texts, comments, blank lines and trailing
spaces ignored: live, a model's `max_length - 1  # Fixed the slicing` joined the pool beside the one-token
`max_length - 1` as a fix of its own) finds the duplicates; its `size` (lines added and removed) ranks the
verified ones.
"""

from __future__ import annotations

import difflib
import functools
import io
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.agent.call_protocols import ToolCall
from fixloop.errors import FixloopError
from fixloop.project import is_test_path
from fixloop.result import FileChange
from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.code_reply import ReplyEdit, apply_code_blocks, code_blocks
from fixloop.tools.edit_file import edit_text
from fixloop.tools.replace_function import replaced_function
from fixloop.tools.textfile import from_text, normalize_newlines
from fixloop.tools.write_file import written_text

_PATH = re.compile(r"[\w./-]+\.py\b")
_UNCHANGED = re.compile(r"\bchanges nothing\b")
MAX_FILES = 40  # files a reply may be applied to: those the conversation names


FixKey = tuple[tuple[str, str], ...]


def fix_key(changes: Sequence[FileChange]) -> FixKey:
    """Equal for change sets that leave the same files with the same code (comments, blank lines and
    trailing spaces aside)."""
    return tuple(sorted((change.path, _normalized(change.new_text or "")) for change in changes))


@dataclass(frozen=True)
class Candidate:
    """One candidate fix: the reply it came from and what it changes (empty, with `problem`, if nothing)."""

    number: int
    reply: str
    changes: tuple[FileChange, ...] = ()
    applied: tuple[str, ...] = ()  # one line per change, e.g. "pkg/x.py: replaced function f"
    problem: str = ""

    @property
    def key(self) -> FixKey:
        return fix_key(self.changes)

    @property
    def size(self) -> int:
        """Lines added plus lines removed."""
        return sum(_changed_lines(change) for change in self.changes)

    def describe(self) -> str:
        return describe_changes(self.changes, self.applied)

    @property
    def unchanged(self) -> bool:
        """It changes nothing because the code it gives is the code there (a copy back), not because it
        could not be read or placed."""
        problems = self.problem.split("; ") if self.problem else []
        return not self.changes and bool(problems) and all(_UNCHANGED.search(p) for p in problems)


@dataclass
class BaseFiles:
    """The baseline's code files (not tests) a reply may change, read on demand: `read(path)` gives the
    text as it was when the run began, or None when it is no file of the project."""

    read: Callable[[str], str | None]
    known: list[str] = field(default_factory=list)
    hints: PlacementHints | None = None  # the run's suspects: which of two definitions of one name to replace
    say: Callable[[str], None] | None = None  # told which one was chosen (a progress notice)
    _texts: dict[str, str | None] = field(default_factory=dict)

    def note_paths(self, texts: Sequence[str]) -> None:
        """Remember the code files named in `texts` (the prompt, the observations)."""
        for text in texts:
            for path in _PATH.findall(text):
                path = path.lstrip("./")
                if path not in self.known and not is_test_path(path) and len(self.known) < MAX_FILES:
                    self.known.append(path)

    def texts(self, extra: Sequence[str] = ()) -> dict[str, str]:
        """path -> baseline text of the known files and `extra`, those that exist."""
        found: dict[str, str] = {}
        for path in dict.fromkeys([*self.known, *extra]):
            if is_test_path(path):
                continue
            if path not in self._texts:
                self._texts[path] = self.read(path)
            text = self._texts[path]
            if text is not None:
                found[path] = text
        return found


def read_candidate(number: int, reply: str, calls: Sequence[ToolCall], base: BaseFiles) -> Candidate:
    """The candidate in one reply: its fenced code applied by AST, else its edit calls applied in turn."""
    blocks = code_blocks(reply)
    if blocks:
        edit = apply_code_blocks(blocks, base.texts([b.path for b in blocks if b.path]), base.hints)
        for choice in edit.choices if base.say is not None else ():
            base.say(f"candidate {number}: {choice}")
        return _candidate(number, reply, edit, base)
    edits = [call for call in calls if call.name in ("edit_file", "write_file", "replace_function")]
    if not edits:
        named = ", ".join(call.name for call in calls)
        return Candidate(
            number,
            reply,
            problem=f"no corrected code in the reply (it called {named})"
            if named
            else "no corrected code in the reply",
        )
    return _candidate(number, reply, _apply_calls(edits, base), base)


def _candidate(number: int, reply: str, edit: ReplyEdit, base: BaseFiles) -> Candidate:
    if not edit.files:
        return Candidate(number, reply, problem="; ".join(edit.problems) or "the reply changes nothing")
    texts = base.texts(list(edit.files))
    changes = tuple(FileChange(path, texts.get(path), text) for path, text in sorted(edit.files.items()))
    return Candidate(number, reply, changes, edit.applied, "; ".join(edit.problems))


def _apply_calls(calls: Sequence[ToolCall], base: BaseFiles) -> ReplyEdit:
    files: dict[str, str] = {}
    applied: list[str] = []
    problems: list[str] = []
    for call in calls:
        arguments = call.shown_arguments()
        path = str(arguments.get("path", "")).lstrip("./")
        if is_test_path(path):
            problems.append(f"{call.name} of the test file {path} (tests are never changed)")
            continue
        current = files.get(path) or base.texts([path]).get(path)
        try:
            new, note = _apply_call(call.name, arguments, path, current, base.hints)
        except FixloopError as error:
            problems.append(f"{call.name} {path}: {error.message}")
            continue
        if new is not None and new != current:
            files[path] = new
            applied.append(f"{path}: {note}")
    return ReplyEdit(files, tuple(applied), tuple(problems))


def _apply_call(
    name: str, arguments: Mapping[str, object], path: str, current: str | None, hints: PlacementHints | None
) -> tuple[str, str]:
    """One edit call applied to `current` (None: no such file) by the tool's own code, as the loop would
    apply it: the new text, in the file's newline style, and what was done."""
    base = from_text(current) if current is not None else None
    if name == "write_file":
        text = written_text(str(arguments.get("content", "")), base, path)
        return (base.restyled(text) if base is not None else text), "rewritten whole"
    if base is None:
        raise FixloopError("no such code file in the project")
    if name == "edit_file":
        old, new = (normalize_newlines(str(arguments.get(key, ""))) for key in ("old_text", "new_text"))
        return base.restyled(edit_text(base, old, new, path).text), "edited"
    function = str(arguments.get("name", ""))
    text, _ = replaced_function(base.text, path, function, str(arguments.get("code", "")), hints)
    return base.restyled(text), f"replaced {function or 'the function'}"


def describe_changes(changes: Sequence[FileChange], applied: Sequence[str] = ()) -> str:
    """One line: what a change set did (per file or function), and its first changed line (old -> new)."""
    what = "; ".join(applied) or ", ".join(change.path for change in changes)
    first = _first_change(changes)
    return f"{what} ({first})" if first else what


@functools.lru_cache(maxsize=256)
def _normalized(text: str) -> str:
    """The text's code lines without comments and trailing spaces (as it is, those aside, where it does
    not tokenize)."""
    lines = text.splitlines()
    try:
        comments = [
            token.start
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, ValueError):
        comments = []
    for row, column in comments:
        lines[row - 1] = lines[row - 1][:column]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def _changed_lines(change: FileChange) -> int:
    old = (change.old_text or "").splitlines()
    new = (change.new_text or "").splitlines()
    return sum(
        1
        for line in difflib.unified_diff(old, new, n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def _first_change(changes: Sequence[FileChange]) -> str:
    for change in changes:
        old = (change.old_text or "").splitlines()
        new = (change.new_text or "").splitlines()
        removed = added = ""
        for line in difflib.unified_diff(old, new, n=0, lineterm=""):
            if line.startswith("-") and not line.startswith("---") and not removed:
                removed = line[1:].strip()
            elif line.startswith("+") and not line.startswith("+++") and not added:
                added = line[1:].strip()
        if removed or added:
            return f"`{removed[:80]}` -> `{added[:80]}`"
    return ""


def shadow_reader(root: Path, originals: Mapping[str, str | None]) -> Callable[[str], str | None]:
    """A `BaseFiles.read` for a shadow at `root`: a file the run changed is read as it was (`originals`,
    path -> text before the run), any other as it is."""

    def read(path: str) -> str | None:
        if path in originals:
            return originals[path]
        target = (root / path).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            return None
        try:
            with target.open(encoding="utf-8", newline="") as file:  # CRLF kept: the diff must apply
                return file.read()
        except (OSError, UnicodeDecodeError):
            return None

    return read
