"""`fixloop fix`: test ids to node ids, the endpoint checked before the engine loads, the run, its diff
or JSON, and --apply."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import threading
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from fixloop.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FIXED, EXIT_NOT_FIXED
from fixloop.cli.parser import overrides
from fixloop.errors import FixloopError, PathError

if TYPE_CHECKING:
    from fixloop.config import Settings
    from fixloop.result import FixResult

EARLY_CHECK_WAIT = 0.3  # seconds `fix` waits for the endpoint check before loading the engine


def normalize_test_id(root: Path, raw: str) -> str:
    """A node id relative to root; a file part given relative to the cwd or absolute is converted."""
    path_part, sep, rest = raw.partition("::")
    candidate = Path(path_part)
    try:
        elsewhere = candidate.is_absolute() or (not (root / candidate).exists() and candidate.exists())
    except (OSError, ValueError) as error:  # a name too long, a NUL byte
        raise PathError(
            f"test id {raw[:80]!r}{'…' if len(raw) > 80 else ''} is not a usable path "
            f"({getattr(error, 'strerror', None) or error}); give a node id like "
            "tests/test_x.py::test_y"
        ) from None
    if elsewhere:
        absolute = candidate.resolve()
        try:
            path_part = absolute.relative_to(root.resolve()).as_posix()
        except ValueError:
            raise PathError(
                f"test file {path_part} is outside the project root {root}; "
                "pass --root or a test id relative to it"
            ) from None
    return path_part.replace(os.sep, "/") + sep + rest


def failed_json(
    test_ids: list[str], status: str, message: str, kind: str | None = None, run: Any = None
) -> str:
    """The FixResult (as --json prints it) of a run that ended before it had one: an error, Ctrl-C."""
    from fixloop.result import FixError, FixResult

    path = run.transcript_path if run is not None else None
    result = FixResult(
        run_id=run.run_id if run is not None else uuid.uuid4().hex[:12],
        status=status,
        test_ids=tuple(test_ids),
        summary=message,
        transcript=str(path) if path else None,
        error=FixError(kind, message) if kind else None,
    )
    return json.dumps(result.to_json(), indent=2)


def usage_errors_as_json(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """`fix --json` with a bad option still prints a FixResult (kind UsageError) before exiting 2."""
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    fix = subcommands.choices["fix"]

    def error(message: str) -> NoReturn:
        print(failed_json([arg for arg in argv if "::" in arg], "error", message, "UsageError"))
        fix.print_usage(sys.stderr)
        fix.exit(EXIT_BAD_INPUT, f"fixloop fix: error: {message}\n")

    fix.error = error  # type: ignore[method-assign]


async def fix_command(args: argparse.Namespace) -> int:
    run: Any = None

    def started(made: Any) -> None:
        nonlocal run
        run = made

    try:
        return await _fix_run(args, started)
    except FixloopError as error:
        if args.json:
            print(failed_json(args.test_ids, "error", error.message, type(error).__name__, run))
        print(f"fixloop: {error.message}", file=sys.stderr)
        return error.exit_code


def _check_endpoint_early(settings: Any) -> Future[None] | None:
    """The endpoint's preflight in a thread, started before the engine's libraries are imported (a second
    of CPU), which wait for it up to EARLY_CHECK_WAIT: a dead endpoint, a rejected key or a misnamed model
    fails the command before they have loaded; a slower check goes on beside the run (the engine's own
    check finds it passed, or fails the run as soon as it knows)."""
    if not settings.model or settings.model == "local" or settings.model.startswith("local:"):
        return None
    from fixloop.model.endpoint import Endpoint, preflight_now

    endpoint = Endpoint(settings.effective_base_url(), settings.api_key(), settings.api_version)
    checking: Future[None] = Future()

    def check() -> None:
        try:
            checking.set_result(preflight_now(endpoint, settings.model))
        except BaseException as error:  # handed to the main thread, which decides
            checking.set_exception(error)

    # a daemon: a slow 1-token call never holds up the command's exit
    threading.Thread(target=check, name="fixloop-preflight", daemon=True).start()
    return checking


async def _fix_run(args: argparse.Namespace, started: Any) -> int:
    root, test_ids, settings = _run_settings(args)
    from fixloop.engine import FixRequest, FixRun
    from fixloop.render import LiveView

    view = None if args.quiet else LiveView()
    run = FixRun(FixRequest(root, test_ids), settings, on_event=view.show if view else None)
    started(run)
    result = await run.execute()
    if view is not None:
        view.finish(result)
    failed: FixloopError | None = None
    if result.status == "fixed" and args.apply:
        result, failed = _applied(root, result)
    return _report(args, result, failed)


def _run_settings(args: argparse.Namespace) -> tuple[Path, tuple[str, ...], Settings]:
    """The project root, the test ids as pytest names them there, and the settings; an endpoint that
    fails its early check raises its one line here."""
    from fixloop.config import load_settings
    from fixloop.project_root import locate

    root = args.root.resolve()
    if not root.is_dir():
        raise PathError(f"project root {root} is not a directory")
    test_ids = tuple(normalize_test_id(root, raw) for raw in args.test_ids)
    settings = load_settings(root, overrides(args), project=locate(root, test_ids).root)
    checking = _check_endpoint_early(settings)
    if checking is not None:
        with contextlib.suppress(FutureTimeout):
            checking.result(timeout=EARLY_CHECK_WAIT)  # a failing endpoint raises its one line here
    return root, test_ids, settings


def _applied(root: Path, result: FixResult) -> tuple[FixResult, FixloopError | None]:
    """The verified fix written to the user's files (--apply), or why it was not (a file changed meanwhile:
    the fix is kept in the result, not written)."""
    from fixloop.shadow import apply_changes

    try:
        apply_changes(root, list(result.changes))
    except FixloopError as error:
        return dataclasses.replace(result, applied=False, failure_reason=error.message), error
    print(f"fixloop: applied the fix to {len(result.changes)} file(s)", file=sys.stderr)
    return dataclasses.replace(result, applied=True), None


def _report(args: argparse.Namespace, result: FixResult, failed: FixloopError | None) -> int:
    """The result on stdout (JSON, or the diff), an apply that failed on stderr; the exit code."""
    if failed is not None and not args.json:
        raise failed
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif result.diff:
        sys.stdout.write(result.diff)
    if failed is not None:
        print(f"fixloop: {failed.message}", file=sys.stderr)
        return failed.exit_code
    return EXIT_FIXED if result.status == "fixed" else EXIT_NOT_FIXED
