"""The command line: `fixloop serve | fix | doctor | models | bench | model | demo`; errors are one line.

Exit codes (docs/contract.md): 0 fixed (doctor: ready), 1 not fixed (doctor: something
is missing), 2 bad input or configuration (an endpoint that cannot be used included), 3 nothing to fix (the
target tests already pass), 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from fixloop.cli.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_FIXED,
    EXIT_INTERRUPTED,
    EXIT_NOT_FIXED,
    EXIT_NOTHING_TO_FIX,
)
from fixloop.cli.fix_command import failed_json, fix_command, normalize_test_id, usage_errors_as_json
from fixloop.cli.parser import build_parser, overrides
from fixloop.errors import FixloopError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FIXED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_TO_FIX",
    "EXIT_NOT_FIXED",
    "build_parser",
    "main",
    "normalize_test_id",
]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if "fix" in argv and "--json" in argv:
        usage_errors_as_json(parser, argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        if args.command == "fix" and args.json:
            print(failed_json(args.test_ids, "cancelled", "interrupted"))
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
        return asyncio.run(fix_command(args))
    if args.command == "doctor":
        from fixloop.doctor import run_doctor

        return run_doctor(args.root, overrides(args))
    if args.command == "models":
        return asyncio.run(_models(args))
    if args.command == "bench":
        from fixloop.bench.running import run_bench

        return asyncio.run(run_bench(args, overrides(args)))
    if args.command == "demo":
        from fixloop.config import env_values
        from fixloop.demo import run_demo

        env = env_values(os.environ)
        return asyncio.run(
            run_demo(
                model=args.model or env.get("model") or "local", base_url=args.base_url or env.get("base_url")
            )
        )
    from fixloop.model.commands import run_model_command

    return run_model_command(args)


async def _models(args: argparse.Namespace) -> int:
    from fixloop.config import load_settings
    from fixloop.model.endpoint import Endpoint, list_models

    settings = load_settings(Path.cwd(), overrides(args))
    endpoint = Endpoint(settings.effective_base_url(), settings.api_key(), settings.api_version)
    names = await list_models(endpoint)
    print(f"{len(names)} model(s) at {endpoint.base_url}:", file=sys.stderr)
    for name in names:
        print(name)
    return EXIT_FIXED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
