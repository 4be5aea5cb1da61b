"""ShadowWorkspace: the scratch copy where the agent edits and tests run; the user's files are never touched.

For a git project the shadow is `git clone --shared --no-checkout` of the user's repository, checked out
detached at HEAD, rather than `git worktree add`: a clone only *reads* the user's `.git` (objects are
shared through `objects/info/alternates`, so nothing large is copied), whereas a worktree registers
itself in the user's `.git/worktrees` and would leave an entry behind if fixloop were killed with
SIGKILL. With a clone the user's repository (files, index, refs, stash, worktree list, config) stays
byte-for-byte unchanged whatever happens to this process; a killed run leaves only a folder in the
cache directory, which `clean_stale_shadows()` removes at the next start. A clone also does not run
the user's hooks. The user's uncommitted state (changes to tracked files, deletions, untracked but not
ignored files) and unsaved editor buffers (overlays) are then copied in and committed *in the shadow*
as a baseline, so `changes()` is an exact `git status` against what the user had when the run began.
Folders that are not git repositories are copied whole, within a size cap.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

from fixloop.build_files import build_written_files
from fixloop.errors import ShadowError
from fixloop.project import in_skipped_dir, is_cache_path, is_environment, walk
from fixloop.result import FileChange
from fixloop.shadow.files import check_relpath, copy_entry, read_text
from fixloop.shadow.git_runner import CARRIED_CONFIG, git, git_text
from fixloop.shadow.lifetime import hold, new_container, release
from fixloop.shadow.patch import unified_diff


class ShadowWorkspace:
    """A scratch tree mirroring the user's project; edits and test runs happen here, then it is removed."""

    root: Path
    original: Path
    is_git: bool

    def __init__(self, container: Path, root: Path, original: Path, is_git: bool, run_id: str) -> None:
        self._container = container
        self.root = root
        self.original = original
        self.is_git = is_git
        self.run_id = run_id
        self._closed = False
        self.real_top = original  # the user's tree the shadow mirrors: the repository's top, else the project
        self.top = root  # the same folder in the shadow (imports bound for real_top are sent here)
        self._git_top: Path | None = None  # the shadow clone's top level (git projects)
        self._prefix = ""  # the project root's path inside its repository, '' or 'sub/dir/'
        self._snapshot: dict[str, tuple[int, int]] = {}  # non-git: rel -> (size, mtime_ns) after copying
        self._overlays: dict[str, str] = {}
        self._git_config = b""  # the shadow clone's .git/config as fixloop wrote it

    # -- creation ---------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        project_root: Path,
        overlays: Mapping[str, str] | None = None,
        *,
        run_id: str | None = None,
        max_copy_bytes: int = 200 * 2**20,
    ) -> ShadowWorkspace:
        """Make the shadow (synchronous: async callers use `asyncio.to_thread`)."""
        original = Path(project_root).resolve()
        if not original.is_dir():
            raise ShadowError(f"project root {original} is not a folder")
        run_id = run_id or uuid.uuid4().hex[:12]
        container = new_container(check_relpath(run_id).replace("/", "_"), original)
        toplevel = cls._git_toplevel(original)
        shadow = cls(container, container / "tree", original, toplevel is not None, run_id)
        try:
            checked = {check_relpath(rel): text for rel, text in (overlays or {}).items()}
            if toplevel is not None:
                shadow._create_from_git(toplevel, checked, max_copy_bytes)
            else:
                shadow._create_by_copy(checked, max_copy_bytes)
        except BaseException:
            shadow.close()
            raise
        hold(shadow)
        return shadow

    @staticmethod
    def _git_toplevel(path: Path) -> Path | None:
        if shutil.which("git") is None:
            return None
        try:
            inside = git(path, "rev-parse", "--is-inside-work-tree").strip()
        except ShadowError:
            return None
        if inside != b"true":
            return None
        return Path(git_text(path, "rev-parse", "--show-toplevel")).resolve()

    def _create_from_git(self, toplevel: Path, overlays: dict[str, str], max_copy_bytes: int) -> None:
        """A clone of the user's repository at HEAD, their uncommitted state and `overlays` on top, all of
        it committed as the shadow's baseline."""
        prefix = self.original.relative_to(toplevel).as_posix()
        self._prefix = "" if prefix == "." else prefix + "/"
        top = self._container / "tree"
        self._git_top = top
        self.real_top, self.top = toplevel, top
        self.root = top / self._prefix if self._prefix else top
        self._clone_at_head(toplevel, top)
        touched = self._copy_uncommitted(toplevel, top, max_copy_bytes)
        touched += self._copy_build_written_files()
        for rel, text in overlays.items():
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8", "surrogateescape"))
            touched.append(self._prefix + rel)
        self._commit_baseline(top, touched)
        self.root.mkdir(parents=True, exist_ok=True)
        self._git_config = (top / ".git" / "config").read_bytes()

    def _clone_at_head(self, toplevel: Path, top: Path) -> None:
        """A shared clone of `toplevel` in `top`, the carried config set, HEAD checked out (if any)."""
        head = (
            git_text(toplevel, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
            if self._has_head(toplevel)
            else ""
        )
        git(self._container, "clone", "--quiet", "--shared", "--no-checkout", str(toplevel), str(top))
        for key in CARRIED_CONFIG:
            with contextlib.suppress(ShadowError):
                value = git_text(toplevel, "config", "--get", key)
                if value:
                    git(top, "config", key, value)
        if head:
            # Writing the files is the whole cost of a shadow: let git use every core for it.
            git(top, "-c", "checkout.workers=0", "-c", "checkout.thresholdForParallelism=500",
                 "checkout", "--quiet", "--detach", head, shadow=True)  # fmt: skip

    def _copy_uncommitted(self, toplevel: Path, top: Path, max_copy_bytes: int) -> list[str]:
        """The user's uncommitted state, exactly as it is in their working tree, copied into `top`; the
        paths it touched. Untracked environments are left out; more than `max_copy_bytes` is an error."""
        status = git(
            self.original, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all", "--", ".",
        )  # fmt: skip
        touched: list[str] = []
        copied = 0
        for entry in status.split(b"\0"):
            if len(entry) < 4:
                continue
            rel = os.fsdecode(entry[3:])
            if rel.endswith("/"):
                continue  # a nested repository: not part of this one
            if entry[:2] == b"??" and self._in_environment(toplevel, rel):
                continue  # a virtualenv or cache nobody listed in .gitignore
            source = toplevel / rel
            target = top / rel
            if source.is_symlink() or source.is_file():
                if not source.is_symlink():
                    copied += source.stat().st_size
                    if copied > max_copy_bytes:
                        raise ShadowError(
                            f"the uncommitted and untracked files in {toplevel} exceed "
                            f"{max_copy_bytes // 2**20} MiB; commit or .gitignore the large ones"
                        )
                copy_entry(source, target)
            elif target.is_symlink() or target.is_file():
                target.unlink()
            touched.append(rel)
        return touched

    def _commit_baseline(self, top: Path, touched: list[str]) -> None:
        """The baseline commit inside the shadow: changes() is then an exact status against the user's
        state."""
        if touched:
            pathspec = self._container / "pathspec"
            pathspec.write_bytes(b"\0".join(os.fsencode(rel) for rel in dict.fromkeys(touched)))
            git(top, "add", "--all", "--force", f"--pathspec-from-file={pathspec}", "--pathspec-file-nul",
                 shadow=True)  # fmt: skip
            pathspec.unlink()
        git(top, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "fixloop baseline", shadow=True)

    def guard_git(self) -> None:
        """Undo what tests may have done to the shadow clone's git folder before fixloop runs git there:
        its config is put back as it was made (a planted `filter.*.clean` or `core.worktree` would make
        fixloop's own git run commands or look elsewhere), and redirections git honours are removed."""
        if self._git_top is None:
            return
        git_dir = self._git_top / ".git"
        if git_dir.is_symlink() or not git_dir.is_dir():
            raise ShadowError("a test replaced the scratch copy's .git folder; the run cannot go on safely")
        (git_dir / "config").write_bytes(self._git_config)
        for planted in ("commondir", "info/attributes", "config.worktree"):
            with contextlib.suppress(FileNotFoundError):
                (git_dir / planted).unlink()

    def _copy_build_written_files(self) -> list[str]:
        """The version files the build wrote (git ignores them, the package imports them); their paths."""
        copied = []
        for rel in build_written_files(self.original):
            for candidate in (rel, f"src/{rel}"):  # pdm writes relative to the package folder
                source, target = self.original / candidate, self.root / candidate
                if source.is_file() and not source.is_symlink() and not target.exists():
                    copy_entry(source, target)
                    copied.append(self._prefix + candidate)
        return copied

    def _in_environment(self, toplevel: Path, rel: str) -> bool:
        if in_skipped_dir(rel):
            return True
        parts = rel.split("/")[:-1]
        cache = self.__dict__.setdefault("_venv_dirs", {})
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in cache:
                cache[folder] = is_environment(toplevel / folder)
            if cache[folder]:
                return True
        return False

    @staticmethod
    def _has_head(toplevel: Path) -> bool:
        try:
            git(toplevel, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        except ShadowError:
            return False
        return True

    def _walk(self, base: Path) -> Iterator[tuple[str, Path]]:
        """The files to copy (symlinked folders are copied as links), without caches and bytecode."""
        for rel, path in walk(base):
            if not is_cache_path(rel) or (path.is_symlink() and path.is_dir()):
                yield rel, path

    def _create_by_copy(self, overlays: dict[str, str], max_copy_bytes: int) -> None:
        entries = list(self._walk(self.original))
        total = sum(path.lstat().st_size for _, path in entries)
        if total > max_copy_bytes:
            raise ShadowError(
                f"{self.original} holds {total / 2**20:.0f} MiB outside .venv/node_modules, over the "
                f"{max_copy_bytes // 2**20} MiB limit for copying a folder that is not a git repository; "
                "put the project under git (fixloop then copies only your uncommitted changes)"
            )
        self.root.mkdir(parents=True)
        for rel, path in entries:
            copy_entry(path, self.root / rel)
        for rel, text in overlays.items():
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8", "surrogateescape"))
        self._overlays = dict(overlays)
        self._snapshot = {rel: self._stat(path) for rel, path in self._walk(self.root)}

    @staticmethod
    def _stat(path: Path) -> tuple[int, int]:
        info = path.lstat()
        return info.st_size, info.st_mtime_ns

    # -- the result -------------------------------------------------------------------------------

    def changes(self) -> list[FileChange]:
        """What the agent changed: shadow vs the user's content when the run began, sorted by path."""
        if self._closed:
            raise ShadowError("the scratch copy has been removed")
        return self._git_changes() if self.is_git else self._copy_changes()

    def _git_changes(self) -> list[FileChange]:
        assert self._git_top is not None
        self.guard_git()
        top = self._git_top
        status = git(
            self.root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all", "--", ".", shadow=True,
        )  # fmt: skip
        result: list[FileChange] = []
        for entry in status.split(b"\0"):
            if len(entry) < 4:
                continue
            rel = os.fsdecode(entry[3:])
            if rel.endswith("/") or not rel.startswith(self._prefix) or is_cache_path(rel):
                continue
            old = None
            if entry[:2] != b"??":
                try:
                    old = git(top, "show", f"HEAD:{rel}", shadow=True).decode("utf-8")
                except (ShadowError, UnicodeDecodeError):
                    continue  # not text: nothing the agent could have meant to change
            new_path = top / rel
            new = read_text(new_path)
            if new is None and (new_path.is_symlink() or new_path.exists()):
                continue  # present but not text
            if old == new:
                continue
            result.append(FileChange(rel[len(self._prefix) :], old, new))
        return sorted(result, key=lambda change: change.path)

    def _copy_changes(self) -> list[FileChange]:
        current = {rel: path for rel, path in self._walk(self.root)}
        candidates = {rel for rel, path in current.items() if self._snapshot.get(rel) != self._stat(path)}
        candidates |= self._snapshot.keys() - current.keys()
        result: list[FileChange] = []
        for rel in sorted(candidates):
            old = self._overlays.get(rel) if rel in self._overlays else read_text(self.original / rel)
            if rel not in self._snapshot:
                old = None
            new = read_text(self.root / rel) if rel in current else None
            if old != new and not (rel in current and new is None):
                result.append(FileChange(rel, old, new))
        return result

    def unified_diff(self, changes: list[FileChange] | None = None) -> str:
        """The changes as a unified diff with a/ b/ prefixes that `git apply` and `patch -p1` accept."""
        return unified_diff(self.changes() if changes is None else changes)

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Remove everything the shadow made; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        release(self)

    @property
    def container(self) -> Path:
        """The folder holding the tree and the shadow's bookkeeping (removed on close)."""
        return self._container

    @property
    def git_top(self) -> Path | None:
        """The shadow clone's top folder (git projects), else None."""
        return self._git_top

    @property
    def prefix(self) -> str:
        """The project root's path inside its repository: '' or 'sub/dir/'."""
        return self._prefix

    def write_baseline(self, target: Path) -> None:
        """Non-git shadows: the files as they were when the run began, written under `target`."""
        for rel, stamp in self._snapshot.items():
            here = self.root / rel
            if rel in self._overlays:
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                (target / rel).write_bytes(self._overlays[rel].encode("utf-8", "surrogateescape"))
            elif (here.is_symlink() or here.exists()) and self._stat(here) == stamp:
                copy_entry(here, target / rel)
            elif (self.original / rel).is_symlink() or (self.original / rel).exists():
                copy_entry(self.original / rel, target / rel)

    @property
    def scratch(self) -> Path:
        """The run's scratch area, beside the tree and never in it: the tests' temp and home folders."""
        return self._container / "scratch"

    def __enter__(self) -> ShadowWorkspace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ShadowWorkspace(root={self.root!s}, original={self.original!s}, is_git={self.is_git})"


# -- diffs and applying them ----------------------------------------------------------------------
