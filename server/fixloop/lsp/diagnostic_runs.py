"""Tests in the real project (no writes), their failures published: runTests, run-on-save, a first failure."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from lsprotocol import types

from fixloop.interpreter import find_interpreter
from fixloop.lsp.client_settings import folder_settings
from fixloop.lsp.diagnostics import Failure, failure_of, publish
from fixloop.lsp.documents import default_root, folder_of, inside, path_of, relpath, root_of
from fixloop.lsp.errors import BadArguments
from fixloop.lsp.server import FixloopServer
from fixloop.project_root import project_root
from fixloop.pytest_runner import PytestRunner, TestRun


async def run_and_publish(
    ls: FixloopServer, root: Path, test_ids: list[str], files_in_scope: list[str]
) -> dict[str, Any]:
    """Run `test_ids` of workspace folder `root` (everything when empty) and publish what fails; returns the
    command's summary. Each test runs in its project (a monorepo package: its interpreter, its pytest
    configuration); ids and files stay relative to the workspace folder."""
    ran: list[str] = []
    failures: list[Failure] = []
    passed: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    summaries: list[str] = []
    timed_out = False
    for project, ids in projects_of(root, test_ids).items():
        prefix = "" if project == root else relpath(root, project) + "/"
        run = await _run_in_project(ls, root, project, ids)
        ran += [prefix + test_id for test_id in run.results]
        failures += [
            _in_workspace(failure_of(project, run.results[test_id]), prefix) for test_id in run.failed_ids()
        ]
        passed += [prefix + test_id for test_id in run.passed_ids()]
        failed += [prefix + test_id for test_id in run.failed_ids()]
        errors += [prefix + error if prefix else error for error in run.errors]
        summaries.append(f"{prefix}: {run.summary()}" if prefix else run.summary())
        timed_out = timed_out or run.timed_out
    touched = ls.failures.update(root, ran, failures, files_in_scope)
    touched.update(f.file for f in failures)
    publish(ls, ls.failures, root, touched)
    for error in errors:
        ls.trace(f"pytest: {error}", types.MessageType.Warning)
    return {
        "status": "ok",
        "passed": passed,
        "failed": failed,
        "timedOut": timed_out,
        "errors": errors,
        "summary": "; ".join(summaries),
    }


def projects_of(root: Path, test_ids: list[str]) -> dict[Path, list[str]]:
    """project -> the ids (or paths) in it, relative to it; no ids: the workspace folder's own project."""
    if not test_ids:
        return {project_root(root, root): []}
    projects: dict[Path, list[str]] = {}
    for test_id in test_ids:
        file_part, sep, rest = test_id.partition("::")
        project = project_root(root, (root / file_part).resolve())
        inner = (root / file_part).resolve()
        relative = relpath(project, inner) if inner != project else ""
        projects.setdefault(project, []).append(relative + sep + rest if relative or sep else "")
    return {project: [] if "" in ids else ids for project, ids in projects.items()}


async def _run_in_project(ls: FixloopServer, root: Path, project: Path, test_ids: list[str]) -> TestRun:
    settings, errors = await folder_settings(ls, root, project)
    for error in errors:
        ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
    interpreter = await find_interpreter(
        project, root, test_command=settings.test_command, python=settings.python
    )
    ls.trace(interpreter.describe(root))
    runner = PytestRunner(
        project, interpreter.command, settings.test_timeout, missing_pytest=interpreter.missing_pytest(root)
    )
    return await runner.run(test_ids)


def _in_workspace(failure: Failure, prefix: str) -> Failure:
    if not prefix:
        return failure
    return dataclasses.replace(failure, test_id=prefix + failure.test_id, file=prefix + failure.file)


def parse_scope(ls: FixloopServer, args: tuple[Any, ...]) -> tuple[Path, list[str], list[str]]:
    """runTests' arguments as (root, test ids to run, files whose stored failures the run replaces)."""
    raw = args[0] if args else {}
    if len(args) > 1 or not isinstance(raw, dict):
        raise BadArguments(
            'runTests takes one optional object: {"uri"?: "file:///…", "testIds"?: [...], '
            '"root"?: "file:///folder"}'
        )
    uri, test_ids, root_uri = raw.get("uri"), raw.get("testIds"), raw.get("root")
    if root_uri is not None and not isinstance(root_uri, str):
        raise BadArguments(f"root must be a workspace folder's URI, got {root_uri!r}")
    folder = folder_of(ls, root_uri) if root_uri is not None else None
    ids_ok = test_ids is None or (isinstance(test_ids, list) and all(isinstance(t, str) for t in test_ids))
    if not ids_ok:
        raise BadArguments(f"testIds must be a list of pytest node ids, got {test_ids!r}")
    if uri is not None:
        if not isinstance(uri, str):
            raise BadArguments(f"uri must be a string, got {uri!r}")
        path = path_of(uri)
        root = root_of(ls, path) if folder is None else inside(folder, path)
        rel = relpath(root, path) if path != root else ""
        ids = list(test_ids or ([rel] if rel else []))
        return root, ids, [] if test_ids else [rel]
    root = folder or default_root(ls)
    return root, list(test_ids or []), [] if test_ids else [""]


async def first_failing(ls: FixloopServer, root: Path, path: Path) -> str | None:
    """The first failing test of a test file, running the file when nothing is known about it yet."""
    rel = relpath(root, path)
    known = ls.failures.in_file(root, rel)
    if not known:
        await run_and_publish(ls, root, [rel], [rel])
        known = ls.failures.in_file(root, rel)
    return min(known, key=lambda failure: failure.line).test_id if known else None
