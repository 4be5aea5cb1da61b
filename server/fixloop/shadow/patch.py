"""The proposal as a unified diff `git apply` accepts, and writing it into the user's files (CLI --apply)."""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

from fixloop.errors import FixloopError
from fixloop.result import FileChange
from fixloop.shadow.files import check_relpath, read_text


def _lines(text: str) -> list[str]:
    """Split on '\\n' only, keeping it (a '\\r' stays part of its line, as git sees it)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(changes: list[FileChange]) -> str:
    """A git-style unified diff of `changes` (new and deleted files included)."""
    out: list[str] = []
    headers_only: list[str] = []
    for change in changes:
        old_lines = _lines(change.old_text or "")
        new_lines = _lines(change.new_text or "")
        if old_lines == new_lines:
            # An empty file created or deleted: only git's extended header can say so, and it must come
            # after the plain ---/+++ patches (git would read their headers as part of its own).
            if change.old_text is None or change.new_text is None:
                kind = "new" if change.old_text is None else "deleted"
                headers_only.append(f"diff --git a/{change.path} b/{change.path}\n{kind} file mode 100644\n")
            continue
        out.append("--- /dev/null\n" if change.old_text is None else f"--- a/{change.path}\n")
        out.append("+++ /dev/null\n" if change.new_text is None else f"+++ b/{change.path}\n")
        for line in list(difflib.unified_diff(old_lines, new_lines, n=3, lineterm="\n"))[2:]:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out + headers_only)


def apply_changes(root: Path, changes: list[FileChange]) -> None:
    """Write a proven fix into the user's files; refuses (changing nothing) if any file moved on since."""
    root = Path(root).resolve()
    stale: list[str] = []
    for change in changes:
        target = root / check_relpath(change.path)
        if not target.resolve().is_relative_to(root):
            raise FixloopError(f"cannot apply the fix: {change.path} is outside {root}")
        current = read_text(target)
        exists = target.exists() or target.is_symlink()
        if change.old_text is None and exists:
            stale.append(f"{change.path} now exists")
        elif change.old_text is not None and current != change.old_text:
            stale.append(f"{change.path} {'was deleted' if not exists else 'was edited'}")
    if stale:
        raise FixloopError(
            "cannot apply the fix: " + "; ".join(stale) + " since the fix was made; run fixloop again"
        )
    for change in changes:
        target = root / check_relpath(change.path)
        if change.new_text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.fixloop-tmp")
        temporary.write_bytes(change.new_text.encode("utf-8", "surrogateescape"))
        if target.exists():
            shutil.copymode(target, temporary)
        os.replace(temporary, target)
