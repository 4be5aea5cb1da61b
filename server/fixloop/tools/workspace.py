"""Confinement: every path a tool touches goes through `Workspace.resolve`, the one gate to the project."""

from __future__ import annotations

import difflib
import fnmatch
import os
import subprocess
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from fixloop.errors import PathError
from fixloop.platform_support import CURRENT, Platform, drive_form
from fixloop.project import in_skipped_dir, is_test_path, walk
from fixloop.secret_files import PROTECTED_DIRS, refusal
from fixloop.tools.gitignore import GitIgnore

MAX_LISTED = 100_000  # a safety bound on a walk of a huge tree
MAX_PATH_CHARS = 1024  # longer paths are refused before they reach the file system
MAX_NAME_BYTES = 255  # the file systems' limit on one name
MAX_DEPTH = 64  # folders deeper than this are refused (no project nests so deep)
EXAMPLE = "e.g. 'src/app.py'"


class Workspace:
    """A project tree the tools are confined to; paths are given relative to its root."""

    def __init__(self, root: Path, platform: Platform = CURRENT) -> None:
        self.platform = platform  # how a path names a drive: only Windows has drives of its own
        self._given_root = Path(root).absolute()
        self.root = Path(root).resolve()
        self.generation = 0  # counts the changes the tools made (a test run of unchanged files is known)

    def changed(self) -> None:
        """A tool wrote a file."""
        self.generation += 1

    # -- confinement --------------------------------------------------------------------------------

    def resolve(self, path: str, *, must_exist: bool = False) -> Path:
        """The absolute path inside the root for `path`, or a PathError saying what is allowed.

        Rejects '..' escapes, absolute paths outside the root, symlinks that lead out of it, VCS
        internals (.git), secrets (.env, keys, credentials) and NUL bytes. '' and '.' are the root.
        """
        lexical = self._lexical(path, _plain_text(path, self.platform.windows))
        self._check_protected(lexical.relative_to(self.root), path)
        real = self._real(path, lexical)
        if must_exist and not real.exists():
            raise PathError(self._missing_message(path, lexical))
        return real

    def _lexical(self, path: str, text: str) -> Path:
        """`text` as a normalized path inside the root (a path under the root as given is moved onto the
        root's real location), or a PathError: it leads outside."""
        candidate = Path(text) if text else Path(".")
        if candidate.is_absolute():
            lexical = Path(os.path.normpath(candidate))
            inside = _under(lexical, self.root) or _under(lexical, self._given_root)
            if _under(lexical, self._given_root) and not _under(lexical, self.root):
                lexical = self.root / lexical.relative_to(self._given_root)
        else:
            lexical = Path(os.path.normpath(self.root / candidate))
            inside = _under(lexical, self.root)
        if not inside:
            raise _outside(path)
        return lexical

    def _real(self, path: str, lexical: Path) -> Path:
        """Where `lexical` really leads, links followed: inside the root and not protected, or a PathError."""
        try:
            real = lexical.resolve()
        except (OSError, RuntimeError):  # a symlink loop
            raise PathError(
                f"path {_shown(path)} is a symlink loop; use a real file inside the project"
            ) from None
        if not _under(real, self.root):
            raise PathError(
                f"path {_shown(path)} is a link that leads outside the project; only files "
                f"inside the project can be used"
            )
        self._check_protected(real.relative_to(self.root), path)
        return real

    def resolve_file(self, path: str, *, must_exist: bool = True) -> Path:
        """Like `resolve`, for a path that must name a file (not empty, not a folder)."""
        if isinstance(path, str) and path.strip() in ("", "."):
            raise PathError(f"path is empty; give a file path relative to the project root, {EXAMPLE}")
        resolved = self.resolve(path, must_exist=must_exist)
        if resolved.is_dir():
            raise PathError(
                f"'{self.relative(resolved)}' is a folder, not a file; use list_files to see what it holds"
            )
        return resolved

    def _check_protected(self, rel: Path, given: str) -> None:
        why = refusal(rel.as_posix())
        if why is not None:
            raise PathError(
                f"path {_shown(given)} is {why}; only the project's source, test and config files can be used"
            )

    def _missing_message(self, given: str, lexical: Path) -> str:
        rel = lexical.relative_to(self.root).as_posix()
        message = f"'{rel}' does not exist"
        try:
            files = self.list_files()
        except (OSError, PathError):
            files = []
        by_name: dict[str, list[str]] = {}
        for file in files:
            by_name.setdefault(PurePosixPath(file).name, []).append(file)
        same_name = by_name.get(PurePosixPath(rel).name, [])
        close = same_name[:3] or difflib.get_close_matches(rel, files, n=3, cutoff=0.6)
        if close:
            return f"{message}; did you mean {', '.join(repr(c) for c in close)}?"
        return f"{message}; use list_files to see the project's files"

    # -- naming -------------------------------------------------------------------------------------

    def relative(self, path: Path) -> str:
        """`path` relative to the root, with '/' separators ('.' for the root itself)."""
        path = Path(path)
        if not path.is_absolute():
            path = self.root / path
        path = Path(os.path.normpath(path))
        for base in (self.root, self._given_root):
            if _under(path, base):
                return path.relative_to(base).as_posix()
        resolved = path.resolve()
        if _under(resolved, self.root):
            return resolved.relative_to(self.root).as_posix()
        raise PathError(
            f"'{path}' is outside the project; use a path relative to the project root, {EXAMPLE}"
        )

    def is_test_file(self, rel: str) -> bool:
        """Whether `rel` is test code, by the project model's one rule (`fixloop.project.is_test_path`)."""
        return is_test_path(rel)

    # -- listing ------------------------------------------------------------------------------------

    def list_files(self, under: str = "", pattern: str | None = None) -> list[str]:
        """Files under `under` (relative, '/'-separated, sorted) that .gitignore keeps, matching `pattern`.

        `pattern` is a glob matched against the relative path and against the file name ('*.py',
        'tests/*', 'test_*.py'). VCS folders, caches, virtualenvs and secret files are left out.
        """
        base = self.resolve(under, must_exist=True)
        if base.is_file():
            files = [self.relative(base)]
        else:
            prefix = self.relative(base)
            prefix = "" if prefix == "." else prefix
            files = self._git_files(base, prefix)
            if not files:  # not a git repo, or a folder the enclosing repo ignores
                files = self._walk(base)
        files = [f for f in files if self._listable(f)]
        if pattern:
            files = [f for f in files if _glob_match(f, pattern)]
        return sorted(set(files))

    def _listable(self, rel: str) -> bool:
        """Whether a walked file may be shown: outside skipped folders, and allowed by the resolver (which
        looks at where a link leads, not only at its name)."""
        if in_skipped_dir(rel):
            return False
        try:
            self.resolve(rel)
        except PathError:
            return False
        return True

    def _git_files(self, base: Path, prefix: str) -> list[str] | None:
        """Files git tracks or would track (not ignored), or None when `base` is not in a git repo."""
        if not any((parent / ".git").exists() for parent in (base, *base.parents)):
            return None
        try:
            # No fsmonitor hook, no index lock: listing must never run project code or write into .git.
            done = subprocess.run(
                [
                    "git",
                    "-c",
                    "core.fsmonitor=false",
                    "ls-files",
                    "-z",
                    "--cached",
                    "--others",
                    "--exclude-standard",
                ],
                cwd=base,
                capture_output=True,
                timeout=30,
                check=False,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        files = []
        for raw in done.stdout.split(b"\0"):
            if not raw:
                continue
            rel = raw.decode("utf-8", errors="surrogateescape")
            full = base / rel
            if not full.is_file():  # deleted in the work tree, or a submodule
                continue
            if full.is_symlink() and not _links_inside(full, self.root):
                continue
            files.append(f"{prefix}/{rel}" if prefix else rel)
        return files

    def _walk(self, base: Path) -> list[str]:
        ignore = GitIgnore(self.root)
        # .gitignore files of the folders above `base` apply too.
        for folder in reversed([base, *base.parents]):
            if _under(folder, self.root) and folder != base and (folder / ".gitignore").is_file():
                ignore.add_file(folder / ".gitignore")
        if (base / ".gitignore").is_file():
            ignore.add_file(base / ".gitignore")
        prefix = self.relative(base)
        prefix = "" if prefix == "." else prefix + "/"

        def prune(rel: str, is_dir: bool) -> bool:
            full = base / rel
            if is_dir:
                if rel.rsplit("/", 1)[-1].lower() in PROTECTED_DIRS or ignore.ignored(prefix + rel, True):
                    return True
                if (full / ".gitignore").is_file():  # the folder's own rules apply inside it
                    ignore.add_file(full / ".gitignore")
                return False
            if full.is_symlink() and (full.is_dir() or not _links_inside(full, self.root)):
                return True  # never follow links into other trees
            return ignore.ignored(prefix + rel, False)

        files: list[str] = []
        for rel, _ in walk(base, prune=prune):
            files.append(prefix + rel)
            if len(files) >= MAX_LISTED:
                break
        return files


def _check_length(path: str) -> None:
    """Refuse paths no file system takes (too long, too deep) with a message, not an OSError."""
    if len(path) > MAX_PATH_CHARS:
        raise PathError(
            f"path {_shown(path)} is too long ({len(path)} characters, at most "
            f"{MAX_PATH_CHARS}); use a real path relative to the project root, {EXAMPLE}"
        )
    parts = path.replace("\\", "/").split("/")
    if len(parts) > MAX_DEPTH:
        raise PathError(
            f"path {_shown(path)} is {len(parts)} folders deep (at most {MAX_DEPTH}); use a real "
            f"path relative to the project root, {EXAMPLE}"
        )
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in parts):
        raise PathError(
            f"path {_shown(path)} has a name longer than {MAX_NAME_BYTES} bytes; use a real path "
            f"relative to the project root, {EXAMPLE}"
        )


def _shown(path: str, limit: int = 80) -> str:
    """A path for a message: repr'd, and cut short when long."""
    return repr(path) if len(path) <= limit else repr(path[:limit]) + f"… ({len(path)} characters)"


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _links_inside(link: Path, root: Path) -> bool:
    try:
        return _under(link.resolve(), root)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _glob_match(rel: str, pattern: str) -> bool:
    pattern = pattern.strip().lstrip("./") if pattern.strip().startswith("./") else pattern.strip()
    name = rel.rsplit("/", 1)[-1]
    if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern):
        return True
    if "**/" in pattern and fnmatch.fnmatchcase(rel, pattern.replace("**/", "")):
        return True
    # A bare folder name or path prefix lists what is inside it.
    return not any(c in pattern for c in "*?[") and rel.startswith(pattern.rstrip("/") + "/")


def _plain_text(path: str, windows: bool) -> str:
    """`path` as a plain relative or absolute path text (a file:// URI unquoted, separators as '/'), or a
    PathError: not a string, a NUL byte, too long, a home folder, another drive or a network share."""
    if not isinstance(path, str):
        raise PathError(f"path must be a string, got {type(path).__name__}; {EXAMPLE}")
    if "\x00" in path:
        raise PathError(
            f"path {_shown(path)} contains a NUL byte; use a plain path relative to the "
            f"project root, {EXAMPLE}"
        )
    _check_length(path)
    text = path.strip()
    if text.startswith("file://"):
        text = unquote(text[len("file://") :])
    if text.startswith("~"):
        raise _outside(path)
    text = text.replace("\\", "/")  # a separator on Windows; in a name elsewhere, a confusion
    form = drive_form(text)
    if form in ("unc", "drive-relative") or (form == "drive" and not windows):
        raise PathError(
            f"path {_shown(path)} names another drive or a network share; use a path relative to the "
            f"project root, {EXAMPLE}"
        )
    return text


def _outside(path: str) -> PathError:
    return PathError(
        f"path {_shown(path)} is outside the project; use a path relative to the project root, {EXAMPLE}"
    )
