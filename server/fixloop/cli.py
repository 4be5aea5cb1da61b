"""The command line: `fixloop serve | fix | bench | model | demo`; errors become one line and an exit code."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from fixloop import __version__
from fixloop.errors import FixloopError, PathError

EXIT_FIXED, EXIT_NOT_FIXED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fixloop", description="Fix failing pytest tests with a verified "
                                     "ReAct loop; as a language server or from the command line.")
    parser.add_argument("--version", action="version", version=f"fixloop {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("serve", help="run the language server on stdio")

    fix = sub.add_parser("fix", help="fix failing tests headless; prints the verified diff")
    fix.add_argument("test_ids", nargs="+", metavar="TEST_ID", help="pytest node id, relative to --root")
    _add_run_options(fix)
    fix.add_argument("--apply", action="store_true", help="write the verified fix into your files")
    fix.add_argument("--json", action="store_true", help="print the FixResult as JSON instead of the diff")
    fix.add_argument("-q", "--quiet", action="store_true", help="no live view on stderr")

    from fixloop.bench.options import add_bench_arguments

    bench = sub.add_parser("bench", help="fix bench cases in one or more modes; an independent judge scores "
                           "each run; prints the figures (exit 0 when it ran, 2 on bad input)")
    add_bench_arguments(bench)
    _add_run_options(bench, root=False)

    demo = sub.add_parser("demo", help="fix the bundled demo project through a real LSP session")
    demo.add_argument("--model", default=None, help="model (default: local)")
    demo.add_argument("--base-url", default=None)

    try:
        from fixloop.model.commands import add_model_parser
    except ImportError:  # pragma: no cover - the local model module is optional at import time
        pass
    else:
        add_model_parser(sub)
    return parser


def _add_run_options(parser: argparse.ArgumentParser, root: bool = True) -> None:
    if root:
        parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    parser.add_argument("--model", help="model name at the endpoint, or `local`")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint URL")
    parser.add_argument("--protocol", choices=["auto", "tools", "text"])
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--attempts", type=int)
    parser.add_argument("--test-timeout", type=float)
    parser.add_argument("--python", help="the project's interpreter (default: found: the project's .venv, …)")
    parser.add_argument("--allow-test-edits", action="store_true", default=None)


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
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if args.command == "serve":
            from fixloop.lsp import serve

            return serve()
        if args.command == "fix":
            return asyncio.run(_fix(args))
        if args.command == "bench":
            from fixloop.bench.running import run_bench

            return asyncio.run(run_bench(args, _overrides(args)))
        if args.command == "demo":
            from fixloop.demo import run_demo

            return asyncio.run(run_demo(model=args.model or "local", base_url=args.base_url))
        if args.command == "model":
            from fixloop.model.commands import run_model_command

            return run_model_command(args)
    except KeyboardInterrupt:
        print("fixloop: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except FixloopError as error:
        print(f"fixloop: {error.message}", file=sys.stderr)
        return error.exit_code
    parser.print_help(sys.stderr)
    return EXIT_BAD_INPUT


async def _fix(args: argparse.Namespace) -> int:
    from fixloop.config import load_settings
    from fixloop.engine import FixRequest, FixRun
    from fixloop.errors import NothingToFix
    from fixloop.render import LiveView
    from fixloop.shadow import apply_changes

    root = args.root.resolve()
    if not root.is_dir():
        raise PathError(f"project root {root} is not a directory")
    from fixloop.project_root import locate

    test_ids = tuple(normalize_test_id(root, raw) for raw in args.test_ids)
    settings = load_settings(root, _overrides(args), project=locate(root, test_ids).root)
    view = None if args.quiet else LiveView()
    run = FixRun(FixRequest(root, test_ids), settings, on_event=view.show if view else None)
    try:
        result = await run.execute()
    except NothingToFix as done:
        print(f"fixloop: {done.message}", file=sys.stderr)
        return EXIT_FIXED
    if view is not None:
        view.finish(result)
    if result.status == "fixed" and args.apply:
        apply_changes(root, list(result.changes))
        result = dataclasses.replace(result, applied=True)
        print(f"fixloop: applied the fix to {len(result.changes)} file(s)", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif result.diff:
        sys.stdout.write(result.diff)
    return EXIT_FIXED if result.status == "fixed" else EXIT_NOT_FIXED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
