"""Tests in the real project (no writes), their failures published: runTests, run-on-save, a first failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from fixloop.interpreter import find_interpreter
from fixloop.lsp.diagnostics import failure_of, publish
from fixloop.lsp.documents import default_root, path_of, relpath, root_of
from fixloop.lsp.errors import BadArguments
from fixloop.lsp.server import FixloopServer
from fixloop.pytest_runner import PytestRunner


async def run_and_publish(ls: FixloopServer, root: Path, test_ids: list[str],
                          files_in_scope: list[str]) -> dict[str, Any]:
    """Run `test_ids` (everything when empty) and publish what fails; returns the command's summary."""
    await ls.settings.ready()
    settings, errors = ls.settings.resolve(root)
    for error in errors:
        ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
    interpreter = await find_interpreter(root, root, test_command=settings.test_command,
                                         python=settings.python)
    ls.trace(interpreter.describe(root))
    runner = PytestRunner(root, interpreter.command, settings.test_timeout,
                          missing_pytest=interpreter.missing_pytest(root))
    run = await runner.run(test_ids)
    failures = [failure_of(root, run.results[tid]) for tid in run.failed_ids()]
    touched = ls.failures.update(root, run.results.keys(), failures, files_in_scope)
    touched.update(f.file for f in failures)
    publish(ls, ls.failures, root, touched)
    for error in run.errors:
        ls.trace(f"pytest: {error}", types.MessageType.Warning)
    return {
        "status": "ok",
        "passed": run.passed_ids(),
        "failed": run.failed_ids(),
        "timedOut": run.timed_out,
        "errors": list(run.errors),
        "summary": run.summary(),
    }


def parse_scope(ls: FixloopServer, args: tuple[Any, ...]) -> tuple[Path, list[str], list[str]]:
    """runTests' arguments as (root, test ids to run, files whose stored failures the run replaces)."""
    raw = args[0] if args else {}
    if len(args) > 1 or not isinstance(raw, dict):
        raise BadArguments('runTests takes one optional object: {"uri"?: "file:///…", "testIds"?: [...]}')
    uri, test_ids = raw.get("uri"), raw.get("testIds")
    ids_ok = test_ids is None or (isinstance(test_ids, list) and all(isinstance(t, str) for t in test_ids))
    if not ids_ok:
        raise BadArguments(f"testIds must be a list of pytest node ids, got {test_ids!r}")
    if uri is not None:
        if not isinstance(uri, str):
            raise BadArguments(f"uri must be a string, got {uri!r}")
        path = path_of(uri)
        root = root_of(ls, path)
        rel = relpath(root, path) if path != root else ""
        ids = list(test_ids or ([rel] if rel else []))
        return root, ids, [] if test_ids else [rel]
    root = default_root(ls)
    return root, list(test_ids or []), [] if test_ids else [""]


async def first_failing(ls: FixloopServer, root: Path, path: Path) -> str | None:
    """The first failing test of a test file, running the file when nothing is known about it yet."""
    rel = relpath(root, path)
    known = ls.failures.in_file(root, rel)
    if not known:
        await run_and_publish(ls, root, [rel], [rel])
        known = ls.failures.in_file(root, rel)
    return min(known, key=lambda failure: failure.line).test_id if known else None
