"""fixloop.server.runTests and run-on-save: pytest in the real project (no writes), then diagnostics."""

from __future__ import annotations

import asyncio
import inspect
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.commands import RUN_TESTS, error_json
from fixloop.lsp.diagnostics import failure_of, publish
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.targets import BadArguments, default_root, path_of, relpath, root_of
from fixloop.project import is_test_path

log = logging.getLogger(__name__)

SAVE_DEBOUNCE = 0.5  # seconds: a burst of saves (format-on-save, save-all) runs the tests once


async def run_and_publish(ls: FixloopServer, root: Path, test_ids: list[str],
                          files_in_scope: list[str]) -> dict[str, Any]:
    """Run `test_ids` (everything when empty) and publish what fails; returns the command's summary."""
    from fixloop.pytest_runner import PytestRunner

    await ls.settings.ready()
    settings, errors = ls.settings.resolve(root)
    for error in errors:
        ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
    runner = PytestRunner(root, list(settings.test_command), settings.test_timeout)
    outcome = runner.run(test_ids)
    run = await outcome if inspect.isawaitable(outcome) else outcome
    failures = [failure_of(root, run.results[tid]) for tid in run.failed_ids()]
    touched = ls.failures.update(root, run.results.keys(), failures, files_in_scope)
    touched.update(f.file for f in failures)
    publish(ls, root, touched)
    for error in run.errors:
        ls.trace(f"pytest: {error}", types.MessageType.Warning)
    return {
        "status": "ok",
        "passed": run.passed_ids(),
        "failed": run.failed_ids(),
        "timedOut": run.timed_out,
        "errors": list(run.errors),
        "summary": run.summary() if hasattr(run, "summary") else "",
    }


def parse_scope(ls: FixloopServer, args: tuple[Any, ...]) -> tuple[Path, list[str], list[str]]:
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


def register(server: FixloopServer) -> None:
    @server.command(RUN_TESTS)
    async def run_tests(ls: FixloopServer, *args: Any) -> dict[str, Any]:
        try:
            root, test_ids, scope = parse_scope(ls, args)
            return await run_and_publish(ls, root, test_ids, scope)
        except FixloopError as error:
            ls.show(f"fixloop: {error.message}", types.MessageType.Error)
            return error_json(error)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: FixloopServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        try:
            path = path_of(uri)
            root = root_of(ls, path)
        except FixloopError:
            return
        rel = relpath(root, path)
        if not is_test_path(rel) or not rel.endswith(".py"):
            return
        settings, _ = ls.settings.resolve(root)
        if not settings.run_tests_on_save:
            return
        if (pending := ls.save_timers.pop(uri, None)) is not None:
            pending.cancel()

        def fire() -> None:
            ls.save_timers.pop(uri, None)
            ls.spawn(run_and_publish(ls, root, [rel], [rel]), name=f"run tests on save {rel}")

        ls.save_timers[uri] = asyncio.get_running_loop().call_later(SAVE_DEBOUNCE, fire)
