"""Test helpers: copy fixture projects, read their recorded fixes, build model scripts that perform them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from project_python import python_of

REPO_ROOT = Path(__file__).resolve().parent.parent


def project_python() -> str:
    """The interpreter fixture projects run their tests with: the suite's venv of pytest alone, activated
    by conftest.py (see project_python.py), else the suite's own."""
    venv = os.environ.get("FIXLOOP_TEST_PROJECT_VENV")
    return str(python_of(Path(venv))) if venv else sys.executable


PROJECTS_DIR = REPO_ROOT / "fixtures" / "projects"
FIXES_DIR = REPO_ROOT / "fixtures" / "fixes"
TEXT_STYLES = ("react", "tool_call_tag", "json_fence")


def fixture_names() -> list[str]:
    """Every fixture project that has a recorded fix, sorted."""
    return sorted(p.stem for p in FIXES_DIR.glob("*.json") if (PROJECTS_DIR / p.stem).is_dir())


def load_fix(name: str) -> dict[str, Any]:
    """The recorded fix of fixtures/projects/<name> (fixtures/fixes/<name>.json)."""
    return json.loads((FIXES_DIR / f"{name}.json").read_text(encoding="utf-8"))


def copy_project(name: str, dest: Path, git: bool | None = None) -> Path:
    """Copy fixtures/projects/<name> to dest (the new project root) and return dest.

    With git (default: the fix's "git"), dest becomes a repository with one commit, "initial".
    """
    if git is None:
        git = bool(load_fix(name).get("git", True))
    shutil.copytree(
        PROJECTS_DIR / name,
        dest,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc"),
        dirs_exist_ok=True,
    )
    if git:
        commit_all(dest)
    return dest


def commit_all(root: Path) -> None:
    """Make `root` a git repository whose one commit, "initial", holds every file in it."""
    for args in (
        ["init", "-q"],
        ["config", "user.name", "fixloop tests"],
        ["config", "user.email", "tests@fixloop.invalid"],
        ["config", "commit.gpgsign", "false"],
        ["config", "core.autocrlf", "false"],
        ["add", "-A"],
        ["commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def apply_edits(root: Path, edits: list[dict[str, str]]) -> None:
    """Apply recorded edits (each old_text must occur exactly once), keeping line endings byte for byte."""
    for edit in edits:
        path = root / edit["path"]
        with path.open(encoding="utf-8", newline="") as file:
            text = file.read()
        count = text.count(edit["old_text"])
        if count != 1:
            raise AssertionError(f"{edit['path']}: old_text occurs {count} times: {edit['old_text']!r}")
        with path.open("w", encoding="utf-8", newline="") as file:
            file.write(text.replace(edit["old_text"], edit["new_text"]))


def _fix_steps(name: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(thought, tool name, arguments) for each step of the recorded fix, one tool call per step."""
    fix = load_fix(name)
    paths = list(dict.fromkeys(edit["path"] for edit in fix["edits"]))
    steps: list[tuple[str, str, dict[str, Any]]] = []
    for path in paths:
        steps.append((f"The failure points into {path}; let me read it.", "read_file", {"path": path}))
    for edit in fix["edits"]:
        arguments = {"path": edit["path"], "old_text": edit["old_text"], "new_text": edit["new_text"]}
        steps.append((f"I see the bug in {edit['path']}; fixing it.", "edit_file", arguments))
    steps.append(("Now let me run the failing tests.", "run_tests", {"test_ids": list(fix["test_ids"])}))
    steps.append(("The tests pass.", "submit", {"summary": fix.get("summary") or fix["description"]}))
    return steps


def fix_script(name: str, *, stream: bool | None = None) -> list[dict[str, Any]]:
    """A scripted-model script that performs the recorded fix with native tool calls:
    a thought with read_file of each edited file, one edit_file per edit, run_tests, submit.

    stream None answers as each request asks; True/False forces every turn to stream or not.
    """
    steps = _fix_steps(name)
    reads = [step for step in steps if step[1] == "read_file"]
    turns: list[dict[str, Any]] = [
        {"content": reads[0][0], "tool_calls": [{"name": n, "arguments": a} for _, n, a in reads]}
    ]
    for thought, tool, arguments in steps[len(reads) :]:
        turns.append({"content": thought, "tool_calls": [{"name": tool, "arguments": arguments}]})
    if stream is not None:
        for turn in turns:
            turn["stream"] = stream
    return turns


def text_action(style: str, thought: str, tool: str, arguments: dict[str, Any]) -> str:
    """One action written the way a text-protocol model writes it, in the given style."""
    if style == "react":
        action_input = json.dumps(arguments, ensure_ascii=False)
        return f"Thought: {thought}\nAction: {tool}\nAction Input: {action_input}"
    call = {"name": tool, "arguments": arguments}
    if style == "tool_call_tag":
        return f"{thought}\n<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
    if style == "json_fence":
        return f"```json\n{json.dumps(call, ensure_ascii=False, indent=2)}\n```"
    raise ValueError(f"unknown text style {style!r}; expected one of {TEXT_STYLES}")


def text_fix_script(name: str, style: str = "react") -> list[dict[str, Any]]:
    """The recorded fix as text-protocol turns (one action per turn) in style react, tool_call_tag
    or json_fence (a bare fenced JSON call, as Qwen2.5-Coder-1.5B writes it)."""
    return [{"content": text_action(style, *step)} for step in _fix_steps(name)]


SCRIPTS_DIR = REPO_ROOT / "fixtures" / "scripts"


def script_files() -> dict[str, list[dict[str, Any]]]:
    """fixtures/scripts/<file>.json contents: every fix as tool calls, and the demo in each text style."""
    files = {f"{name}.json": fix_script(name) for name in fixture_names()}
    files.update({f"demo.{style}.json": text_fix_script("demo", style) for style in TEXT_STYLES})
    return files


if __name__ == "__main__":  # python tests/support.py rewrites fixtures/scripts after a fix changes
    SCRIPTS_DIR.mkdir(exist_ok=True)
    for file_name, script in script_files().items():
        text = json.dumps(script, indent=2, ensure_ascii=False) + "\n"
        (SCRIPTS_DIR / file_name).write_text(text, encoding="utf-8")


def repo_snapshot(repo: Path) -> dict[str, object]:
    """Everything about a repository that a run must leave exactly as it was: every file under it
    (.git included) byte for byte with mode and mtime, symlinks, refs, worktrees, stash, branches, config."""
    files: dict[str, object] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        info = path.lstat()
        if path.is_symlink():
            files[rel] = ("link", os.readlink(path))
        elif path.is_file():
            files[rel] = (info.st_mode, info.st_mtime_ns, path.read_bytes())
        else:
            files[rel] = ("dir", info.st_mode)

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        ).stdout

    return {
        "files": files,
        "refs": git("for-each-ref"),
        "worktrees": git("worktree", "list", "--porcelain"),
        "stash": git("stash", "list"),
        "branches": git("branch", "-a"),
        "config": (repo / ".git" / "config").read_bytes(),
    }


def write_project(root: Path, files: dict[str, str]) -> Path:
    """A small project from {relative path: source}; sources are dedented, so tests can indent them."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def scripted_model_env(base_url: str, cache: Path) -> dict[str, str]:
    """This process's environment for a `fixloop` child talking to a scripted model at `base_url`: no
    FIXLOOP_/OPENAI_ setting of the caller's leaks in, its cache is `cache`, no pytest plugin autoloads."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    env.update(
        FIXLOOP_BASE_URL=base_url,
        FIXLOOP_MODEL="scripted",
        FIXLOOP_MUTANTS="off",
        FIXLOOP_POOL_SHARE="0",
        FIXLOOP_API_KEY="none",
        XDG_CACHE_HOME=str(cache),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return env
