"""The command line: `fixloop serve | fix | doctor | models | bench | model | demo`; errors are one line.

Exit codes (the README's command-line contract): 0 fixed (doctor: ready), 1 not fixed (doctor: something
is missing), 2 bad input or configuration (an endpoint that cannot be used included), 3 nothing to fix (the
target tests already pass), 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import sys
import threading
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, NoReturn

from fixloop import __version__
from fixloop.errors import FixloopError, PathError

EXIT_FIXED, EXIT_NOT_FIXED, EXIT_BAD_INPUT, EXIT_NOTHING_TO_FIX, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EARLY_CHECK_WAIT = 0.3  # seconds `fix` waits for the endpoint check before loading the engine

# The options that are settings: flag, setting, argparse keywords, help. Each help ends with the setting's
# environment variables (read from the Settings model); a flag on the command line wins over them.
MODEL_OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("--model", "model", {"metavar": "NAME"},
     "model name at the endpoint (`fixloop models` lists them), or `local` / `local:NAME` for the managed "
     "local model"),
    ("--base-url", "base_url", {"metavar": "URL"},
     "OpenAI-compatible endpoint, ending in /v1 (default: the OpenAI API)"),
    ("--api-version", "api_version", {"metavar": "VERSION"},
     "Azure OpenAI's api-version (e.g. 2024-10-21); the key then goes in the api-key header"),
)
LOOP_OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("--protocol", "protocol", {"choices": ["auto", "tools", "text"]},
     "how the model calls tools: tools (native calls), text (Thought/Action lines), auto (default)"),
    ("--max-steps", "max_steps", {"type": int, "metavar": "N"}, "model turns per run (default 30)"),
    ("--attempts", "attempts", {"type": int, "metavar": "N"},
     "submissions the verification gate may reject before giving up (default 3)"),
    ("--test-timeout", "test_timeout", {"type": float, "metavar": "SECONDS"},
     "seconds one test run may take; its process group is killed past it (default 60)"),
    ("--temperature", "temperature", {"type": float},
     "sampling temperature (default: not sent, the endpoint's own; the managed local model: 0)"),
    ("--python", "python", {"metavar": "PATH"},
     "the project's interpreter for its tests (default: found: the project's .venv, $VIRTUAL_ENV, …)"),
    ("--allow-test-edits", "allow_test_edits", {"action": "store_true", "default": None},
     "let a fix change test files (default: a fix that does is rejected)"),
)
FIX_EXAMPLES = """\
examples:
  fixloop fix tests/test_x.py::test_y                  print the verified diff (nothing is written)
  fixloop fix tests/test_x.py::test_y --apply          write the verified fix into your files
  fixloop fix tests/test_a.py::test_one tests/test_b.py::test_two --root ~/project
  FIXLOOP_MODEL=gpt-4o-mini FIXLOOP_API_KEY=sk-... fixloop fix tests/test_x.py::test_y
  fixloop fix tests/test_x.py::test_y --model local    no key: the managed local model (llama.cpp)
  fixloop fix tests/test_x.py::test_y --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b
  fixloop fix tests/test_x.py::test_y --json -q | jq .status

exit codes: 0 fixed, 1 not fixed, 2 bad input or configuration, 3 nothing to fix (the tests already
pass), 130 interrupted. With --json the FixResult is printed in every case, errors included
(status "error", error {kind, message})."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fixloop", description="Fix failing pytest tests with a verified "
                                     "ReAct loop; as a language server or from the command line.",
                                     epilog="`fixloop COMMAND --help` describes each command.")
    parser.add_argument("--version", action="version", version=f"fixloop {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    # -v after the command too; SUPPRESS keeps the subparser from resetting a -v given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, text: str, **keywords: Any) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, parents=[common], **keywords)

    command("serve", "run the language server on stdio (what the editors start)")

    fix = command("fix", "fix failing tests headless; prints the verified diff",
                  epilog=FIX_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    fix.add_argument("test_ids", nargs="+", metavar="TEST_ID",
                     help="pytest node id (tests/test_x.py::test_y), relative to --root or to the current "
                          "folder")
    _add_root(fix)
    _add_settings(fix, MODEL_OPTIONS + LOOP_OPTIONS)
    fix.add_argument("--apply", action="store_true",
                     help="write the verified fix into your files (refused if one changed meanwhile)")
    fix.add_argument("--json", action="store_true",
                     help="print the FixResult as JSON instead of the diff, also on errors")
    fix.add_argument("-q", "--quiet", action="store_true", help="no live view of the run on stderr")

    doctor = command("doctor", "check what a fix needs here: interpreter, pytest, git, endpoint, model, "
                     "key, local model; exit 1 when something is missing")
    _add_root(doctor, "project whose settings and interpreter are checked (default: the current folder)")
    _add_settings(doctor, MODEL_OPTIONS + tuple(o for o in LOOP_OPTIONS if o[1] == "python"))

    models = command("models", "list the models the endpoint serves (/v1/models; Ollama's /api/tags)")
    _add_settings(models, MODEL_OPTIONS[1:])

    from fixloop.bench.options import add_bench_arguments

    bench = command("bench", "fix bench cases in one or more modes; an independent judge scores each run; "
                    "prints the figures (exit 0 when it ran, 2 on bad input)")
    add_bench_arguments(bench)
    _add_settings(bench, MODEL_OPTIONS + LOOP_OPTIONS)

    demo = command("demo", "fix the bundled demo project through a real LSP session, live")
    _add_settings(demo, MODEL_OPTIONS[:2], {"model": "default: local"})

    try:
        from fixloop.model.commands import add_model_parser
    except ImportError:  # pragma: no cover - the local model module is optional at import time
        pass
    else:
        add_model_parser(sub, parents=[common])
    return parser


def _add_root(parser: argparse.ArgumentParser,
              text: str = "project root; test ids are relative to it (default: the current folder)") -> None:
    parser.add_argument("--root", type=Path, default=Path.cwd(), metavar="DIR", help=text)


def _add_settings(parser: argparse.ArgumentParser, options: tuple[tuple[str, str, dict[str, Any], str], ...],
                  defaults: dict[str, str] | None = None) -> None:
    """Add options that are settings; each option's dest is the setting's name, its help names its env."""
    from fixloop.config import setting_env

    for flag, name, keywords, text in options:
        variables = setting_env(name)
        note = (defaults or {}).get(name)
        text = f"{text} ({note})" if note else text
        parser.add_argument(flag, dest=name, **keywords,
                            help=f"{text} [env: {' or '.join(variables)}]" if variables else text)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line: an option's dest is the setting's name (--max-steps)."""
    from fixloop.config import setting_names

    return {name: value for name in setting_names() if (value := getattr(args, name, None)) is not None}


def normalize_test_id(root: Path, raw: str) -> str:
    """A node id relative to root; a file part given relative to the cwd or absolute is converted."""
    path_part, sep, rest = raw.partition("::")
    candidate = Path(path_part)
    try:
        elsewhere = candidate.is_absolute() or (not (root / candidate).exists() and candidate.exists())
    except (OSError, ValueError) as error:  # a name too long, a NUL byte
        raise PathError(f"test id {raw[:80]!r}{'…' if len(raw) > 80 else ''} is not a usable path "
                        f"({getattr(error, 'strerror', None) or error}); give a node id like "
                        "tests/test_x.py::test_y") from None
    if elsewhere:
        absolute = candidate.resolve()
        try:
            path_part = absolute.relative_to(root.resolve()).as_posix()
        except ValueError:
            raise PathError(f"test file {path_part} is outside the project root {root}; "
                            "pass --root or a test id relative to it") from None
    return path_part.replace(os.sep, "/") + sep + rest


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if "fix" in argv and "--json" in argv:
        _usage_errors_as_json(parser, argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        if args.command == "fix" and args.json:
            print(_failed_json(args.test_ids, "cancelled", "interrupted"))
        print("fixloop: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except FixloopError as error:
        print(f"fixloop: {error.message}", file=sys.stderr)
        return error.exit_code


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "serve":
        from fixloop.lsp import serve

        return serve()
    if args.command == "fix":
        return asyncio.run(_fix(args))
    if args.command == "doctor":
        from fixloop.doctor import run_doctor

        return run_doctor(args.root, _overrides(args))
    if args.command == "models":
        return asyncio.run(_models(args))
    if args.command == "bench":
        from fixloop.bench.running import run_bench

        return asyncio.run(run_bench(args, _overrides(args)))
    if args.command == "demo":
        from fixloop.config import env_values
        from fixloop.demo import run_demo

        env = env_values(os.environ)
        return asyncio.run(run_demo(model=args.model or env.get("model") or "local",
                                    base_url=args.base_url or env.get("base_url")))
    from fixloop.model.commands import run_model_command

    return run_model_command(args)


async def _models(args: argparse.Namespace) -> int:
    from fixloop.config import load_settings
    from fixloop.model.endpoint import Endpoint, list_models

    settings = load_settings(Path.cwd(), _overrides(args))
    endpoint = Endpoint(settings.effective_base_url(), settings.api_key(), settings.api_version)
    names = await list_models(endpoint)
    print(f"{len(names)} model(s) at {endpoint.base_url}:", file=sys.stderr)
    for name in names:
        print(name)
    return EXIT_FIXED


def _failed_json(test_ids: list[str], status: str, message: str, kind: str | None = None,
                 run: Any = None) -> str:
    """The FixResult (as --json prints it) of a run that ended before it had one: an error, Ctrl-C."""
    from fixloop.result import FixError, FixResult

    path = run.transcript_path if run is not None else None
    result = FixResult(run_id=run.run_id if run is not None else uuid.uuid4().hex[:12], status=status,
                       test_ids=tuple(test_ids), summary=message, transcript=str(path) if path else None,
                       error=FixError(kind, message) if kind else None)
    return json.dumps(result.to_json(), indent=2)


def _usage_errors_as_json(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """`fix --json` with a bad option still prints a FixResult (kind UsageError) before exiting 2."""
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    fix = subcommands.choices["fix"]

    def error(message: str) -> NoReturn:
        print(_failed_json([arg for arg in argv if "::" in arg], "error", message, "UsageError"))
        fix.print_usage(sys.stderr)
        fix.exit(EXIT_BAD_INPUT, f"fixloop fix: error: {message}\n")

    fix.error = error  # type: ignore[method-assign]


async def _fix(args: argparse.Namespace) -> int:
    run: Any = None

    def started(made: Any) -> None:
        nonlocal run
        run = made

    try:
        return await _fix_run(args, started)
    except FixloopError as error:
        if args.json:
            print(_failed_json(args.test_ids, "error", error.message, type(error).__name__, run))
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
    from fixloop.config import load_settings

    root = args.root.resolve()
    if not root.is_dir():
        raise PathError(f"project root {root} is not a directory")
    from fixloop.project_root import locate

    test_ids = tuple(normalize_test_id(root, raw) for raw in args.test_ids)
    settings = load_settings(root, _overrides(args), project=locate(root, test_ids).root)
    checking = _check_endpoint_early(settings)
    if checking is not None:
        with contextlib.suppress(FutureTimeout):
            checking.result(timeout=EARLY_CHECK_WAIT)  # a failing endpoint raises its one line here

    from fixloop.engine import FixRequest, FixRun
    from fixloop.render import LiveView
    from fixloop.shadow import apply_changes

    view = None if args.quiet else LiveView()
    run = FixRun(FixRequest(root, test_ids), settings, on_event=view.show if view else None)
    started(run)
    result = await run.execute()
    if view is not None:
        view.finish(result)
    failed: FixloopError | None = None
    if result.status == "fixed" and args.apply:
        try:
            apply_changes(root, list(result.changes))
        except FixloopError as error:  # a file changed meanwhile: the verified fix is kept, not written
            failed = error
            result = dataclasses.replace(result, applied=False, failure_reason=error.message)
        else:
            result = dataclasses.replace(result, applied=True)
            print(f"fixloop: applied the fix to {len(result.changes)} file(s)", file=sys.stderr)
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
