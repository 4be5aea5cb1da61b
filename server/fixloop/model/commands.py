"""`fixloop model pull [NAME]` and `fixloop model list`: fetch, verify and show the local models."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
from rich.table import Table

from fixloop.model.catalog import DEFAULT_MODEL, MODELS, get_model
from fixloop.model.pull import model_path, models_dir, pull, status, verify_file


def add_model_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> None:
    """Add `model pull [NAME] [--force]` and `model list [--verify]` to the CLI's subparsers."""
    model = subparsers.add_parser(
        "model",
        help="download and list the local models (for `model: local`)",
        parents=list(parents),
        epilog=f"models are kept in {models_dir()} [env: FIXLOOP_MODELS_DIR]",
    )
    actions = model.add_subparsers(dest="model_command", metavar="{pull,list}")
    actions.required = True
    pull_parser = actions.add_parser("pull", help="download and verify a local model", parents=list(parents))
    pull_parser.add_argument(
        "name",
        nargs="?",
        default=DEFAULT_MODEL,
        help=f"model name (default {DEFAULT_MODEL}); see `fixloop model list`",
    )
    pull_parser.add_argument("--force", action="store_true", help="download again even if present")
    list_parser = actions.add_parser(
        "list", help="show the known models and which are downloaded", parents=list(parents)
    )
    list_parser.add_argument("--verify", action="store_true", help="hash downloaded files not verified yet")


def run_model_command(args: argparse.Namespace) -> int:
    """Run a `model` subcommand; FixloopError propagates to the CLI's one error handler."""
    if args.model_command == "pull":
        return pull_with_progress(args.name, force=args.force)
    return _list(verify=getattr(args, "verify", False))


def pull_with_progress(name: str | None, *, force: bool = False) -> int:
    """`fixloop model pull`: a rich progress bar on stderr, the verified path on stdout."""
    info = get_model(name)
    console = Console(stderr=True)
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(f"{info.name}", total=info.size)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        path = pull(info.name, progress=advance, force=force)
        bar.update(task, completed=info.size)
    console.print(f"[green]verified[/green] {info.name} (sha256 {info.sha256[:12]}…)")
    print(path)
    return 0


def _list(*, verify: bool) -> int:
    console = Console()
    table = Table(title=f"local models in {models_dir()}")
    for column in ("name", "size", "status", "description"):
        table.add_column(column)
    for info in MODELS:
        state = status(info)
        if verify and state == "unverified":
            state = "verified" if verify_file(info, model_path(info)) else "corrupt"
        label = {
            "missing": "not downloaded",
            "unverified": "downloaded (not verified: `--verify`)",
            "incomplete": "incomplete: pull again",
            "corrupt": "corrupt: pull --force",
        }.get(state, state)
        name = f"{info.name} (default)" if info.name == DEFAULT_MODEL else info.name
        table.add_row(name, f"{info.size_mb:,} MB", label, info.description)
    console.print(table)
    return 0
