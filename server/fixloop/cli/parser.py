"""The command line's parser: every command and option, the options that are settings, and their help."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixloop import __version__

# The options that are settings: flag, setting, argparse keywords, help. Each help ends with the setting's
# environment variables (read from the Settings model); a flag on the command line wins over them.
MODEL_OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    (
        "--model",
        "model",
        {"metavar": "NAME"},
        "model name at the endpoint (`fixloop models` lists them), or `local` / `local:NAME` for the managed "
        "local model",
    ),
    (
        "--base-url",
        "base_url",
        {"metavar": "URL"},
        "OpenAI-compatible endpoint, ending in /v1 (default: the OpenAI API)",
    ),
    (
        "--api-version",
        "api_version",
        {"metavar": "VERSION"},
        "Azure OpenAI's api-version (e.g. 2024-10-21); the key then goes in the api-key header",
    ),
)
LOOP_OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    (
        "--protocol",
        "protocol",
        {"choices": ["auto", "tools", "text"]},
        "how the model calls tools: tools (native calls), text (Thought/Action lines), auto (default)",
    ),
    ("--max-steps", "max_steps", {"type": int, "metavar": "N"}, "model turns per run (default 30)"),
    (
        "--attempts",
        "attempts",
        {"type": int, "metavar": "N"},
        "submissions the verification gate may reject before giving up (default 3)",
    ),
    (
        "--test-timeout",
        "test_timeout",
        {"type": float, "metavar": "SECONDS"},
        "seconds one test run may take; its process group is killed past it (default 60)",
    ),
    (
        "--temperature",
        "temperature",
        {"type": float},
        "sampling temperature (default: not sent, the endpoint's own; the managed local model: 0)",
    ),
    (
        "--python",
        "python",
        {"metavar": "PATH"},
        "the project's interpreter for its tests (default: found: the project's .venv, $VIRTUAL_ENV, …)",
    ),
    (
        "--allow-test-edits",
        "allow_test_edits",
        {"action": "store_true", "default": None},
        "let a fix change test files (default: a fix that does is rejected)",
    ),
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
    parser = argparse.ArgumentParser(
        prog="fixloop",
        description="Fix failing pytest tests with a verified "
        "ReAct loop; as a language server or from the command line.",
        epilog="`fixloop COMMAND --help` describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"fixloop {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    # -v after the command too; SUPPRESS keeps the subparser from resetting a -v given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging on stderr"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, text: str, **keywords: Any) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, parents=[common], **keywords)

    command("serve", "run the language server on stdio (what the editors start)")
    _add_fix(command)
    _add_checks(command)
    try:
        from fixloop.model.commands import add_model_parser
    except ImportError:  # pragma: no cover - the local model module is optional at import time
        pass
    else:
        add_model_parser(sub, parents=[common])
    return parser


Command = Callable[..., argparse.ArgumentParser]


def _add_fix(command: Command) -> None:
    """`fixloop fix`: test ids, the root, the model and loop settings, and how the result is given."""
    fix = command(
        "fix",
        "fix failing tests headless; prints the verified diff",
        epilog=FIX_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fix.add_argument(
        "test_ids",
        nargs="+",
        metavar="TEST_ID",
        help="pytest node id (tests/test_x.py::test_y), relative to --root or to the current folder",
    )
    add_root(fix)
    add_settings(fix, MODEL_OPTIONS + LOOP_OPTIONS)
    fix.add_argument(
        "--apply",
        action="store_true",
        help="write the verified fix into your files (refused if one changed meanwhile)",
    )
    fix.add_argument(
        "--json", action="store_true", help="print the FixResult as JSON instead of the diff, also on errors"
    )
    fix.add_argument("-q", "--quiet", action="store_true", help="no live view of the run on stderr")


def _add_checks(command: Command) -> None:
    """`doctor`, `models`, `bench` and `demo`."""
    doctor = command(
        "doctor",
        "check what a fix needs here: interpreter, pytest, git, endpoint, model, "
        "key, local model; exit 1 when something is missing",
    )
    add_root(doctor, "project whose settings and interpreter are checked (default: the current folder)")
    add_settings(doctor, MODEL_OPTIONS + tuple(o for o in LOOP_OPTIONS if o[1] == "python"))

    models = command("models", "list the models the endpoint serves (/v1/models; Ollama's /api/tags)")
    add_settings(models, MODEL_OPTIONS[1:])

    from fixloop.bench.options import add_bench_arguments

    bench = command(
        "bench",
        "fix bench cases in one or more modes; an independent judge scores each run; "
        "prints the figures (exit 0 when it ran, 2 on bad input)",
    )
    add_bench_arguments(bench)
    add_settings(bench, MODEL_OPTIONS + LOOP_OPTIONS)

    demo = command("demo", "fix the bundled demo project through a real LSP session, live")
    add_settings(demo, MODEL_OPTIONS[:2], {"model": "default: local"})


def add_root(
    parser: argparse.ArgumentParser,
    text: str = "project root; test ids are relative to it (default: the current folder)",
) -> None:
    parser.add_argument("--root", type=Path, default=Path.cwd(), metavar="DIR", help=text)


def add_settings(
    parser: argparse.ArgumentParser,
    options: tuple[tuple[str, str, dict[str, Any], str], ...],
    defaults: dict[str, str] | None = None,
) -> None:
    """Add options that are settings; each option's dest is the setting's name, its help names its env."""
    from fixloop.config import setting_env

    for flag, name, keywords, text in options:
        variables = setting_env(name)
        note = (defaults or {}).get(name)
        text = f"{text} ({note})" if note else text
        parser.add_argument(
            flag, dest=name, **keywords, help=f"{text} [env: {' or '.join(variables)}]" if variables else text
        )


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line: an option's dest is the setting's name (--max-steps)."""
    from fixloop.config import setting_names

    return {name: value for name in setting_names() if (value := getattr(args, name, None)) is not None}
