"""git for the shadow: the user's repository is only read (no index refresh); the clone runs without hooks."""

from __future__ import annotations

from pathlib import Path

from git import Git, GitCommandError

from fixloop.errors import ShadowError

# GIT_OPTIONAL_LOCKS=0: `git status` in the user's repo must not refresh (rewrite) their index.
_USER_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
_SHADOW_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0"}
# Only the settings that decide how checked-out bytes look are carried over from the user's repo config.
CARRIED_CONFIG = ("core.autocrlf", "core.eol", "core.symlinks", "core.filemode", "core.ignorecase")
_SHADOW_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "commit.gpgsign=false",
    "-c", "user.name=fixloop",
    "-c", "user.email=fixloop@localhost",
    "-c", "advice.detachedHead=false",
    "-c", "core.fsmonitor=false",
)  # fmt: skip


def git(cwd: Path, *args: str, shadow: bool = False) -> bytes:
    command = ["git", *(_SHADOW_CONFIG if shadow else ()), *args]
    try:
        return Git(str(cwd)).execute(
            command,
            env=_SHADOW_GIT_ENV if shadow else _USER_GIT_ENV,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )  # type: ignore[return-value]
    except GitCommandError as error:
        detail = (error.stderr or "").strip().splitlines()
        raise ShadowError(
            f"could not set up the scratch copy: `git {' '.join(args[:2])}` failed"
            + (f": {detail[-1].strip()}" if detail else "")
        ) from error


def git_text(cwd: Path, *args: str, shadow: bool = False) -> str:
    return git(cwd, *args, shadow=shadow).decode("utf-8", "surrogateescape").strip()
