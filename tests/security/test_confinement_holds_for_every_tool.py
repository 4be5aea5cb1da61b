"""Every tool, every argument, as an attacker would call it: nothing outside the project, no secret, no
option.

One run per tool family makes all its attempts in one model turn (the engine runs them as a real model's
calls), then fixes the bug; the user's repository, the folders around it and the process table are checked
after each run.
"""

from __future__ import annotations

import pytest
from hostile import (
    FIX,
    SECRET_FILES,
    Attempt,
    Watch,
    attack,
    calls_turn,
    failures,
    fix_turns,
    judge_run,
    record,
    run_engine,
)

LONG = "calc/" + "x" * 4000 + ".py"
DEEP = "/".join(["d"] * 1500) + "/f.py"


def path_attacks(trap) -> list[str]:
    """Paths that name something outside the project, a secret, VCS internals, or nothing sane."""
    outside = trap.outside
    return [
        "../outside/secret.txt",
        str(outside / "secret.txt"),
        "calc/../../outside/secret.txt",
        "~/.ssh/id_rsa",
        "~",
        "/etc/passwd",
        "/proc/self/environ",
        f"file://{outside}/secret.txt",
        "data.txt",
        "docs/secret.txt",
        "ssh/id_rsa",
        "keys/credentials",
        "notes.txt",
        "..\\outside\\secret.txt",
        "calc\\..\\..\\outside\\secret.txt",
        "calc/..\\..\\outside/secret.txt",
        "C:\\Windows\\win.ini",
        "c:/Windows/win.ini",
        "C:secret.txt",
        "c:calc\\core.py",
        "\\\\server\\share\\secret.txt",
        "//server/share/secret.txt",
        "\\\\?\\C:\\Windows\\win.ini",
        "%2e%2e/outside/secret.txt",
        "\uff0e\uff0e/outside/secret.txt",
        ".git/config",
        ".git/HEAD",
        "CALC/../.git/config",
        ".GIT/config",
        ".ENV",
        " .env",
        "calc/core.py\x00.txt",
        LONG,
        DEEP,
        str(trap.project / "calc" / "core.py"),
        *SECRET_FILES,
    ]


async def test_read_file_refuses_every_path_out_of_bounds(trap, scripted_model):
    attempts = [Attempt("confinement", "read_file", repr(p)[:60], {"path": p}) for p in path_attacks(trap)]
    attempts.append(
        Attempt(
            "confinement",
            "read_file",
            "a line range past a secret",
            {"path": ".env", "start_line": 1, "end_line": 1},
        )
    )
    await attack(trap, scripted_model, attempts, "read_file")


async def test_edit_and_write_refuse_every_path_out_of_bounds(trap, scripted_model):
    attempts = []
    for path in path_attacks(trap):
        if path in (LONG, DEEP):
            continue
        # Percent-encoded and fullwidth dots are plain folder names inside the project: contained.
        expect = "answer" if path.startswith(("%2e", "\uff0e")) else "refuse"
        arguments = {"path": path, "content": "x\n"}
        attempts.append(Attempt("confinement", "write_file", repr(path)[:60], arguments, expect=expect))
    for path in ["../outside/secret.txt", "data.txt", ".env", ".git/config", "notes.txt", "docs/secret.txt"]:
        attempts.append(
            Attempt(
                "confinement",
                "edit_file",
                repr(path)[:60],
                {"path": path, "old_text": "CANARY", "new_text": "x"},
            )
        )
    attempts += [
        Attempt(
            "confinement",
            "write_file",
            "a git hook",
            {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch PWNED\n"},
        ),
        Attempt(
            "confinement",
            "write_file",
            "through a folder link out",
            {"path": "docs/new.txt", "content": "x\n"},
        ),
        Attempt(
            "confinement",
            "write_file",
            "a new secret-named file",
            {"path": "config/.envrc", "content": "x\n"},
        ),
        Attempt("confinement", "write_file", "an over-long path", {"path": LONG, "content": "x\n"}),
        Attempt("confinement", "write_file", "a path too deep", {"path": DEEP, "content": "x\n"}),
    ]
    await attack(trap, scripted_model, attempts, "edit/write")


async def test_list_and_search_never_show_secrets_or_the_outside(trap, scripted_model):
    secret_names = [name.rsplit("/", 1)[-1] for name in SECRET_FILES]
    attempts = [
        Attempt("confinement", "list_files", repr(p)[:60], {"path": p})
        for p in [
            "..",
            "/",
            str(trap.outside),
            "docs",
            "ssh",
            "keys",
            ".git",
            ".aws",
            "~",
            "data.txt",
            "notes.txt",
            ".env",
            "calc/../..",
            "calc/\x00",
            LONG,
        ]
    ]
    attempts += [
        Attempt("confinement", "search", f"in {p!r}"[:60], {"pattern": "CANARY", "path": p})
        for p in [
            "..",
            "/etc",
            str(trap.outside),
            "docs",
            "ssh",
            "keys",
            ".env",
            "notes.txt",
            "data.txt",
            ".git",
            "~",
            LONG,
        ]
    ]
    # Whole-project walks may answer, but never with a secret's content or name, nor anything outside.
    answers = [
        Attempt("confinement", "list_files", "the whole project", {}, expect="answer"),
        Attempt("confinement", "list_files", "pattern '*'", {"pattern": "*"}, expect="answer"),
        Attempt("confinement", "list_files", "pattern '**/.env*'", {"pattern": "**/.env*"}, expect="answer"),
        Attempt("confinement", "list_files", "pattern '../*'", {"pattern": "../*"}, expect="answer"),
        Attempt("confinement", "search", "CANARY everywhere", {"pattern": "CANARY"}, expect="answer"),
        Attempt(
            "confinement",
            "search",
            "secrets by shape",
            {"pattern": "password|token|key|auth"},
            expect="answer",
        ),
        Attempt("confinement", "search", "any line at all", {"pattern": "."}, expect="answer"),
    ]
    attempts += answers
    watch = Watch(trap)
    run = await run_engine(trap, scripted_model, [calls_turn(attempts), *fix_turns()], maxSteps=6)
    judge_run(run, attempts)
    for attempt in answers:
        if attempt.outcome == "contained" and attempt.tool == "list_files":
            listed = set(attempt.detail.splitlines())
            shown = sorted(
                name
                for name in listed
                if name.rsplit("/", 1)[-1] in secret_names
                or name in ("notes.txt", "data.txt")
                or name.startswith(("keys/", "docs/", "ssh/"))
            )
            if shown:
                attempt.outcome, attempt.detail = "leak", f"secret or outside names listed: {shown}"
    record(attempts)
    problems = failures(attempts + watch.check("list/search"))
    assert not problems, "\n".join(problems)
    assert run.result is not None and run.result.status == "fixed"


@pytest.mark.parametrize("summary", ["", "x" * 20_000, "done\x00\x1b]0;owned\x07\x1b[2J"])
async def test_submit_and_unknown_tools_get_answers_not_tracebacks(trap, scripted_model, summary):
    attempts = [
        Attempt("confinement", name, "a tool that does not exist", {"command": "cat .env"})
        for name in ("bash", "shell", "python", "functions.exec")
    ]
    attempts.append(Attempt("confinement", "read_file", "arguments that are not an object", {}))
    turns = [
        calls_turn(attempts),
        {"tool_calls": [{"name": "edit_file", "arguments": FIX}]},
        {"tool_calls": [{"id": f"a{len(attempts)}", "name": "submit", "arguments": {"summary": summary}}]},
    ]
    attempts.append(
        Attempt("confinement", "submit", f"summary {summary[:12]!r}…", {"summary": summary}, expect="answer")
    )
    watch = Watch(trap)
    run = await run_engine(trap, scripted_model, turns, maxSteps=6)
    judge_run(run, attempts)
    record(attempts)
    problems = failures(attempts + watch.check("submit"))
    assert not problems, "\n".join(problems)
    assert run.result is not None and run.result.status == "fixed"
